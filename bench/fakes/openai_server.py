"""A scripted OpenAI-compatible HTTP server on an ephemeral loopback port.

It speaks the real wire format the `openai` SDK expects: `POST /v1/chat/completions` (plain, `json_schema`
response format, and `stream=true` server-sent events with an optional usage chunk) and
`POST /v1/embeddings` (float or base64 vectors, as asked by `encoding_format`; the SDK asks for base64 by
default), with scripted `EmbeddingStep`s.
Tests queue `Step`s (a reply, a 429 with Retry-After, a 500, a hang, malformed JSON, a refusal, a 401); when the
queue is empty the `responder` answers, by default `plausible_model`, which plays a cooperative model for docbot's
schemas. Every request body is recorded.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

Request = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted answer to one chat request."""

    content: str | None = None
    refusal: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: str | None = None  # sent as-is instead of a completion (errors)
    delay_s: float = 0.0  # wait before answering (a hang past the client's timeout)
    finish_reason: str = "stop"
    chunk_delay_s: float = 0.0  # between streamed chunks
    cut_after: int | None = None  # streaming: drop the connection after this many content chunks


@dataclass(frozen=True, slots=True)
class EmbeddingStep:
    """One scripted answer to one embeddings request; the default is a correct reply."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: str | None = None
    content_type: str = "application/json"
    delay_s: float = 0.0
    reset: bool = False  # close the connection without a reply
    dim: int | None = None  # vectors of this size instead of the server's
    shuffle: bool = False  # list the vectors in reverse order (each keeps its `index`)


def embedding_rate_limited(retry_after_s: float = 0.1) -> EmbeddingStep:
    return EmbeddingStep(
        status=429,
        headers={"retry-after": str(retry_after_s)},
        raw_body=_error_body("Rate limit reached", "rate_limit_exceeded"),
    )


def embedding_html_error(status: int = 500) -> EmbeddingStep:
    """What a proxy in front of the model server sends: an HTML page, not the API's JSON error."""
    page = f"<html><head><title>{status} Internal Server Error</title></head><body><h1>oops</h1></body></html>"
    return EmbeddingStep(status=status, raw_body=page, content_type="text/html")


def reply(content: str) -> Step:
    return Step(content=content)


def json_reply(data: dict[str, Any]) -> Step:
    return Step(content=json.dumps(data, ensure_ascii=False))


def rate_limited(retry_after_s: float = 0.1) -> Step:
    return Step(
        status=429,
        headers={"retry-after": str(retry_after_s)},
        raw_body=_error_body("Rate limit reached", "rate_limit_exceeded"),
    )


def server_error(status: int = 500) -> Step:
    return Step(status=status, raw_body=_error_body("The server had an error", "server_error"))


def unauthorized() -> Step:
    return Step(status=401, raw_body=_error_body("Incorrect API key provided", "invalid_api_key"))


def hang(seconds: float) -> Step:
    return Step(content="{}", delay_s=seconds)


def malformed() -> Step:
    return Step(content='{"language": "en", "confidence": ')


def refusal(text: str = "I can't help with that.") -> Step:
    return Step(refusal=text)


def _error_body(message: str, code: str) -> str:
    return json.dumps({"error": {"message": message, "type": "api_error", "code": code, "param": None}})


def approx_tokens(text: str) -> int:
    """About four characters per token, as a stand-in for a tokenizer."""
    return max(1, (len(text) + 3) // 4)


def prompt_text(request: Request) -> str:
    return "\n".join(str(m.get("content") or "") for m in request.get("messages", []))


def schema_name(request: Request) -> str | None:
    response_format = request.get("response_format") or {}
    if response_format.get("type") != "json_schema":
        return None
    name = response_format.get("json_schema", {}).get("name")
    return str(name) if name is not None else None


class ScriptedOpenAI:
    """`async with ScriptedOpenAI() as server:` then point the SDK at `server.base_url`."""

    def __init__(self, responder: Callable[[Request], Step] | None = None, *, embedding_dim: int = 64) -> None:
        self.responder = responder or plausible_model
        self.embedding_dim = embedding_dim
        self.steps: deque[Step] = deque()
        self.requests: list[Request] = []
        self.embedding_requests: list[Request] = []
        self.embedding_steps: deque[EmbeddingStep] = deque()
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    def queue(self, *steps: Step) -> None:
        self.steps.extend(steps)

    def queue_embeddings(self, *steps: EmbeddingStep) -> None:
        self.embedding_steps.extend(steps)

    @property
    def embedded_inputs(self) -> int:
        """Inputs of every embeddings request received (including ones answered with an error)."""
        return sum(len(r["input"]) if isinstance(r["input"], list) else 1 for r in self.embedding_requests)

    @property
    def chat_calls(self) -> int:
        return len(self.requests)

    async def __aenter__(self) -> ScriptedOpenAI:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body: Request = await request.json()
        self.requests.append(body)
        step = self.steps.popleft() if self.steps else self.responder(body)
        if step.delay_s:
            await asyncio.sleep(step.delay_s)
        if step.raw_body is not None or step.status != 200:
            return web.Response(
                status=step.status,
                text=step.raw_body or "",
                headers=step.headers,
                content_type="application/json",
            )
        if body.get("stream"):
            return await self._stream(request, body, step)
        return web.json_response(self._completion(body, step), headers=step.headers)

    def _usage(self, body: Request, completion: str) -> dict[str, int]:
        prompt, done = approx_tokens(prompt_text(body)), approx_tokens(completion)
        return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}

    def _completion(self, body: Request, step: Step) -> dict[str, Any]:
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": step.content, "refusal": step.refusal},
                    "finish_reason": step.finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": self._usage(body, step.content or step.refusal or ""),
        }

    async def _stream(self, request: web.Request, body: Request, step: Step) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": int(time.time())}
        base["model"] = body.get("model", "scripted")

        async def send(data: dict[str, Any]) -> None:
            await response.write(f"data: {json.dumps(data)}\n\n".encode())

        content = step.content or ""
        await send(base | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
        if step.refusal:
            await send(base | {"choices": [{"index": 0, "delta": {"refusal": step.refusal}, "finish_reason": None}]})
        for index, piece in enumerate(re.findall(r"\S+\s*|\s+", content)):
            if step.cut_after is not None and index >= step.cut_after:
                assert request.transport is not None
                request.transport.close()  # the connection breaks mid-answer
                return response
            if step.chunk_delay_s:
                await asyncio.sleep(step.chunk_delay_s)
            await send(base | {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
        await send(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": step.finish_reason}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            await send(base | {"choices": [], "usage": self._usage(body, content)})
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _embeddings(self, request: web.Request) -> web.Response:
        body: Request = await request.json()
        self.embedding_requests.append(body)
        step = self.embedding_steps.popleft() if self.embedding_steps else EmbeddingStep()
        if step.delay_s:
            await asyncio.sleep(step.delay_s)
        if step.reset:
            assert request.transport is not None
            request.transport.close()  # the connection drops before any reply
            return web.Response(status=500)
        if step.status != 200:
            return web.Response(
                status=step.status,
                text=step.raw_body or "",
                headers=step.headers,
                content_type=step.content_type,
            )
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dim = step.dim or self.embedding_dim
        vectors = [self.embed(str(text), dim) for text in inputs]
        # the SDK asks for base64 (little-endian float32 bytes) unless told otherwise; "float" gives JSON numbers
        base64_wanted = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode() if base64_wanted else v.tolist(),
            }
            for i, v in enumerate(vectors)
        ]
        if step.shuffle:
            data.reverse()  # the wire format orders by `index`, not by position
        tokens = sum(approx_tokens(str(text)) for text in inputs)
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "scripted-embedding"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    def embed(self, text: str, dim: int | None = None) -> np.ndarray[Any, np.dtype[np.float32]]:
        """A deterministic bag-of-words vector: texts sharing words are close."""
        dim = dim or self.embedding_dim
        vector = np.zeros(dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "little") % dim] += 1.0
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector


# --- a cooperative model for docbot's schemas -------------------------------------------------------------------

_LANGUAGE_WORDS = {
    "de": {"wie", "ich", "der", "die", "das", "nicht", "kann", "meine", "mein", "ist"},
    "es": {"cómo", "como", "el", "la", "los", "mi", "puedo", "qué", "por", "una"},
    "fr": {"comment", "je", "le", "les", "mon", "ma", "est", "pourquoi", "une", "puis"},
}


def guess_language(text: str) -> str:
    if re.search(r"[а-яё]", text.lower()):
        return "ru"
    words = set(re.findall(r"\w+", text.lower()))
    best = max(_LANGUAGE_WORDS, key=lambda lang: len(words & _LANGUAGE_WORDS[lang]))
    return best if len(words & _LANGUAGE_WORDS[best]) >= 2 else "en"


def _tag(text: str, name: str) -> str:
    match = re.search(rf"<{name}>\s*(.*?)\s*</{name}>", text, re.S)
    return match.group(1) if match else ""


def _source_numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r'<document number="(\d+)"', text)]


def plausible_model(request: Request) -> Step:
    """Answers each docbot schema with a valid, sensible decision; plain prompts get a cited sentence."""
    text = prompt_text(request)
    said = "\n".join(str(m.get("content") or "") for m in request.get("messages", []) if m.get("role") == "user")
    question = _tag(said, "question") or _tag(said, "message")
    name = schema_name(request)
    sources = _source_numbers(text)
    language = guess_language(question)
    if name == "language_decision":
        return json_reply({"language": language, "confidence": 0.93})
    if name == "translation":
        return json_reply({"text_eng": f"(en) {question}"})
    if name == "essence_decision":
        return json_reply(
            {
                "canonical_question": question,
                "context_type": "new_topic",
                "needs_clarification": False,
                "clarification_reason": None,
            }
        )
    if name == "guardrails_decision":
        return json_reply({"verdict": "in_scope", "reason": "about the product"})
    if name == "understanding":
        return json_reply(
            {
                "language": language,
                "confidence": 0.93,
                "text_eng": question if language == "en" else f"(en) {question}",
                "canonical_question": question,
                "context_type": "new_topic",
                "needs_clarification": False,
                "clarification_reason": None,
                "scope_verdict": "in_scope",
                "scope_reason": "about the product",
            }
        )
    if name == "answer":
        cite = f" [{sources[0]}]" if sources else ""
        return json_reply({"answer": f"Here is what the documentation says.{cite}", "insufficient": not sources})
    if name == "quality_verdict":
        return json_reply({"decision": "approve", "unsupported_claims": [], "notes": "all claims supported"})
    if name == "clarification":
        return json_reply({"message": "Which device do you mean?", "options": ["The remote", "The TV"]})
    cite = f" [{sources[0]}]" if sources else ""
    return reply(f"Here is what the documentation says about it.{cite}")
