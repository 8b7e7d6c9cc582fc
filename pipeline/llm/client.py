"""`OpenAIChat`: the `pipeline.types.LLM` protocol over any OpenAI-compatible endpoint, through `openai.AsyncOpenAI`.

Every failure ends in `StrategyFailed` (so the role's offline strategy answers): 429 / 5xx / timeouts / refused
connections after the SDK's own retries (which honour Retry-After), an invalid key at once, a refusal, and output
that is not a JSON object (`MalformedOutput`, which `pipeline.llm.structured.ask` repairs once).

Every request carries `max_tokens` (by decision, `pipeline.llm.schemas.MAX_TOKENS`). The endpoint's failures feed a
`CircuitBreaker`: while it is open, calls fail at once with `EndpointSkipped` and send nothing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import urlsplit

import openai
import structlog
from pydantic import SecretStr

from pipeline.agents.base import StrategyFailed
from pipeline.llm.breaker import CircuitBreaker
from pipeline.llm.leak_guard import repeats_system_prompt
from pipeline.llm.schemas import max_tokens_for
from pipeline.types import ChatMessage, LLMResult, LLMUsage, Role

log = structlog.get_logger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "not-needed"  # local servers (Ollama, vLLM, llama.cpp) accept any key
StructuredMode = Literal["json_schema", "json_object"]


class MalformedOutput(StrategyFailed):
    """The model answered, but not with what the schema asked for; `raw` is the text it sent."""

    def __init__(self, reason: str, raw: str, usage: LLMUsage) -> None:
        super().__init__(reason, usage)
        self.raw = raw


class EndpointSkipped(StrategyFailed):
    """The endpoint's circuit breaker is open: no request was sent."""


class CutOff(MalformedOutput):
    """The reply hit `max_tokens` (a runaway generation): not worth a repair attempt."""


def estimated_prompt_tokens(messages: Sequence[ChatMessage]) -> int:
    """About four characters per token, plus a few per message for the chat template."""
    return sum(len(m.content) // 4 + 4 for m in messages)


@dataclass(slots=True)
class StreamStats:
    """Filled while a stream runs: tokens (when the endpoint reports them) and the text so far."""

    usage: LLMUsage = LLMUsage()
    text: str = ""


class OpenAIChat:
    """Chat completions with one model per role.

    `models` maps roles to model names; roles missing from it use `default_model`. `timeout_s` bounds each HTTP
    attempt and `max_retries` the SDK's retries; the caller bounds the whole call by the question's deadline.
    `structured_mode="json_object"` is for servers without `json_schema` support: the schema goes into the prompt.
    """

    def __init__(
        self,
        *,
        api_key: SecretStr | str | None,
        base_url: str | None = None,
        models: Mapping[Role, str] | None = None,
        default_model: str = "gpt-4o-mini",
        temperature: float = 0.1,
        timeout_s: float = 30.0,
        max_retries: int = 2,
        structured_mode: StructuredMode = "json_schema",
        default_headers: Mapping[str, str] | None = None,
        breaker: CircuitBreaker | None = None,
        max_tokens: Mapping[str, int] | None = None,
    ) -> None:
        key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self.base_url = base_url or OPENAI_BASE_URL
        self.models = dict(models or {})
        self.default_model = default_model
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.structured_mode: StructuredMode = structured_mode
        self.breaker = breaker or CircuitBreaker()
        self.max_tokens = dict(max_tokens or {})  # overrides of MAX_TOKENS, by schema title
        self._client = openai.AsyncOpenAI(
            api_key=key or NO_KEY,
            base_url=self.base_url,
            organization=None,
            timeout=timeout_s,
            max_retries=max_retries,
            default_headers=dict(default_headers or {}),
        )

    def __repr__(self) -> str:
        return f"OpenAIChat(host={self._host!r}, models={self.models!r}, default_model={self.default_model!r})"

    @property
    def _host(self) -> str:
        return urlsplit(self.base_url).netloc or self.base_url

    def model_for(self, role: Role) -> str:
        return self.models.get(role, self.default_model)

    async def close(self) -> None:
        await self._client.close()

    def cap(self, schema: dict[str, Any] | None) -> int:
        title = "answer" if schema is None else str(schema.get("title") or "")
        return self.max_tokens.get(title) or max_tokens_for(schema)

    def _admit(self, role: Role) -> None:
        if not self.breaker.allow():
            status = self.breaker.status()
            log.info("llm.skipped_breaker_open", host=self._host, role=str(role), retry_in_s=round(status.retry_in_s))
            raise EndpointSkipped(f"llm endpoint skipped: circuit open for {status.retry_in_s:.0f}s more")

    async def probe(self, role: Role = Role.RESPONSE) -> LLMUsage:
        """One one-token completion with `role`'s model: proves the endpoint, the key and the model name work."""
        try:
            completion = await self._client.chat.completions.create(
                model=self.model_for(role), messages=[{"role": "user", "content": "Reply with OK."}], max_tokens=1
            )
        except openai.OpenAIError as exc:
            raise self._failure(exc, role) from None
        except Exception as exc:
            raise self._unexpected(exc, role) from None
        return _usage(completion.usage)

    async def list_models(self) -> list[str]:
        """The model ids the endpoint lists (`GET /models`), for `docbot doctor`."""
        try:
            page = await self._client.models.list()
        except openai.OpenAIError as exc:
            raise self._failure(exc, Role.MANAGER) from None
        except Exception as exc:
            raise self._unexpected(exc, Role.MANAGER) from None
        return [model.id for model in page.data]

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: Role,
        schema: dict[str, Any] | None = None,
        temperature: float | None = None,
    ) -> LLMResult:
        request: dict[str, Any] = {
            "model": self.model_for(role),
            "messages": self._wire_messages(messages, schema),
            "temperature": self.temperature if temperature is None else temperature,
            "max_tokens": self.cap(schema),
        }
        if schema is not None:
            request["response_format"] = self._response_format(schema)
        self._admit(role)
        try:
            completion = await self._client.chat.completions.create(**request)
        except openai.APITimeoutError as exc:  # the server worked on it: count the call, its prompt estimated
            failure = self._failure(exc, role)
            cut = LLMUsage(prompt_tokens=estimated_prompt_tokens(messages), calls=1, estimated=True)
            raise StrategyFailed(failure.reason, cut) from None
        except openai.OpenAIError as exc:
            raise self._failure(exc, role) from None
        except asyncio.CancelledError:
            self.breaker.abandoned()  # cut at the pipeline's deadline: no verdict on the endpoint
            raise
        except Exception as exc:  # anything else from the HTTP stack still ends in the offline fallback
            raise self._unexpected(exc, role) from None
        self.breaker.succeeded()
        usage = _usage(completion.usage)
        if not completion.choices:
            raise StrategyFailed("llm returned no choices")
        choice = completion.choices[0]
        message = choice.message
        if message.refusal:
            log.info("llm.refused", role=str(role))
            raise StrategyFailed("the model refused")
        text = message.content or ""
        system = "\n".join(m.content for m in messages if m.role == "system")
        if repeats_system_prompt(text, system):
            log.warning("llm.output_repeats_system_prompt", role=str(role))
            raise StrategyFailed("the reply repeated the system prompt", usage=usage)
        if schema is None:
            return LLMResult(text=text, data=None, usage=usage)
        if choice.finish_reason == "length":
            raise CutOff(f"structured output cut off at max_tokens={self.cap(schema)}", text, usage)
        try:
            data = json.loads(text)
        except ValueError:
            raise MalformedOutput("structured output is not valid JSON", text, usage) from None
        if not isinstance(data, dict):
            raise MalformedOutput("structured output is not a JSON object", text, usage)
        return LLMResult(text=text, data=data, usage=usage)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: Role,
        temperature: float | None = None,
        stats: StreamStats | None = None,
    ) -> AsyncIterator[str]:
        """Text deltas of a plain completion; `stats` receives the usage when the endpoint reports it."""
        stats = stats if stats is not None else StreamStats()
        self._admit(role)
        verdict = False
        try:
            chunks = await self._client.chat.completions.create(
                model=self.model_for(role),
                messages=cast(Any, self._wire_messages(messages, None)),
                temperature=self.temperature if temperature is None else temperature,
                max_tokens=self.cap(None),
                stream=True,
                stream_options={"include_usage": True},
            )
            self.breaker.succeeded()
            verdict = True
            async for chunk in chunks:
                if chunk.usage is not None:
                    stats.usage = stats.usage + _usage(chunk.usage)
                for choice in chunk.choices:
                    if choice.delta.refusal:
                        raise StrategyFailed("the model refused")
                    if choice.delta.content:
                        stats.text += choice.delta.content
                        yield choice.delta.content
        except openai.OpenAIError as exc:
            raise self._failure(exc, role) from None
        except StrategyFailed:
            raise
        except Exception as exc:
            raise self._unexpected(exc, role) from None
        finally:
            if stats.usage.calls == 0:  # no usage chunk (the endpoint sent none, or the stream was cut): estimate
                estimate = LLMUsage(
                    prompt_tokens=estimated_prompt_tokens(messages),
                    completion_tokens=len(stats.text) // 4,
                    calls=1,
                    estimated=True,
                )
                stats.usage = stats.usage + estimate
            if not verdict:
                self.breaker.abandoned()

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.structured_mode == "json_object":
            return {"type": "json_object"}
        name = str(schema.get("title") or "output")
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}

    def _wire_messages(self, messages: Sequence[ChatMessage], schema: dict[str, Any] | None) -> list[dict[str, Any]]:
        wire: list[dict[str, Any]] = [{"role": m.role, "content": m.content} for m in messages]
        if schema is not None and self.structured_mode == "json_object":
            hint = "Reply with one JSON object only, matching this JSON schema:\n" + json.dumps(schema)
            wire.insert(0, {"role": "system", "content": hint})
        return wire

    def _failure(self, exc: openai.OpenAIError, role: Role) -> StrategyFailed:
        """Map an SDK error to an operator-facing reason (no user text, no secrets); the endpoint's own failures
        (unreachable, timeouts, 429, 5xx, rejected key) count towards its circuit breaker."""
        if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
            self.breaker.abandoned()  # this request was wrong, not the endpoint
        else:
            self.breaker.failed()
        model = self.model_for(role)
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            log.error(
                "llm.credentials_rejected",
                host=self._host,
                status=exc.status_code,
                hint="check OPENAI_API_KEY (and OPENAI_BASE_URL) for this endpoint",
            )
            return StrategyFailed(f"llm endpoint rejected the credentials ({exc.status_code})")
        if isinstance(exc, openai.NotFoundError):
            log.error("llm.model_not_found", host=self._host, model=model)
            return StrategyFailed(f"llm model {model!r} not found at {self._host}")
        if isinstance(exc, openai.RateLimitError):
            reason = f"llm rate limited (429) after {self.max_retries} retries"
        elif isinstance(exc, openai.APITimeoutError):
            reason = f"llm timed out after {self.timeout_s:g}s per attempt"
        elif isinstance(exc, openai.APIConnectionError):
            reason = f"llm endpoint unreachable ({self._host})"
        elif isinstance(exc, openai.APIStatusError):
            reason = f"llm endpoint error ({exc.status_code})"
        else:
            reason = f"llm error ({type(exc).__name__})"
        log.warning("llm.call_failed", host=self._host, model=model, role=str(role), reason=reason)
        return StrategyFailed(reason)

    def _unexpected(self, exc: Exception, role: Role) -> StrategyFailed:
        self.breaker.failed()
        errors = _error_types(exc)
        log.error("llm.client_error", host=self._host, role=str(role), errors=errors)
        return StrategyFailed(f"llm client error ({errors})")


def _error_types(exc: BaseException) -> str:
    """Exception type names, with the leaves of exception groups (messages may hold request data)."""
    if isinstance(exc, BaseExceptionGroup):
        return ",".join(_error_types(inner) for inner in exc.exceptions)
    return type(exc).__name__


def _usage(usage: Any) -> LLMUsage:
    if usage is None:
        return LLMUsage(calls=1)
    return LLMUsage(
        prompt_tokens=int(usage.prompt_tokens or 0),
        completion_tokens=int(usage.completion_tokens or 0),
        calls=1,
    )
