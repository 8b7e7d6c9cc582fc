"""OpenAIChat through the real openai SDK against the scripted server: structured output, usage, and every
failure ending in StrategyFailed within the deadline."""

from __future__ import annotations

import socket
import time

import pytest
from structlog.testing import capture_logs

from bench.fakes.openai_server import (
    ScriptedOpenAI,
    Step,
    hang,
    json_reply,
    malformed,
    rate_limited,
    refusal,
    server_error,
    unauthorized,
)
from pipeline.agents.base import StrategyFailed
from pipeline.llm.breaker import BreakerState, CircuitBreaker
from pipeline.llm.client import EndpointSkipped, MalformedOutput, OpenAIChat
from pipeline.llm.schemas import (
    MAX_TOKENS,
    Answer,
    Clarification,
    EssenceDecision,
    GuardrailsDecision,
    LanguageDecision,
    QualityVerdict,
    Translation,
    Understanding,
    strict_schema,
)
from pipeline.llm.structured import LLMFailed, ask
from pipeline.types import ChatMessage, Role

pytestmark = pytest.mark.integration

HELLO = [ChatMessage("user", "<message>hello there</message>")]
SCHEMA = strict_schema(LanguageDecision)
DECISIONS = (
    LanguageDecision,
    Translation,
    EssenceDecision,
    GuardrailsDecision,
    Understanding,
    Answer,
    QualityVerdict,
    Clarification,
)


async def test_structured_output_is_requested_parsed_and_counted(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(json_reply({"language": "de", "confidence": 0.8}))
    result = await chat.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert result.data == {"language": "de", "confidence": 0.8}
    assert result.usage.calls == 1 and result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    sent = server.requests[0]
    assert sent["model"] == "small-model"
    fmt = sent["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "language_decision" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False


async def test_response_role_uses_its_own_model(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    await chat.complete(HELLO, role=Role.RESPONSE)
    assert server.requests[0]["model"] == "big-model"
    assert "response_format" not in server.requests[0]


async def test_rate_limit_honours_retry_after_then_succeeds(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(rate_limited(0.3), json_reply({"language": "en", "confidence": 1.0}))
    result = await chat.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert result.data == {"language": "en", "confidence": 1.0}
    assert server.chat_calls == 2


async def test_persistent_rate_limit_fails_after_the_retries(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(*[rate_limited(0.05)] * 3)
    with pytest.raises(StrategyFailed, match="429"):
        await chat.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert server.chat_calls == 3  # the first attempt and max_retries=2


async def test_server_error_is_retried(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(server_error(500), json_reply({"language": "fr", "confidence": 0.7}))
    result = await chat.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert result.data == {"language": "fr", "confidence": 0.7}


async def test_persistent_server_error_fails(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(*[server_error(503)] * 3)
    with pytest.raises(StrategyFailed, match="503"):
        await chat.complete(HELLO, role=Role.LANG, schema=SCHEMA)


async def test_hang_past_the_timeout_fails(server: ScriptedOpenAI) -> None:
    client = OpenAIChat(api_key="k", base_url=server.base_url, timeout_s=0.3, max_retries=0)
    server.queue(hang(5))
    with pytest.raises(StrategyFailed, match="timed out") as failed:
        await client.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert server.chat_calls == 1  # given up after the HTTP timeout, not retried
    assert failed.value.usage.calls == 1 and failed.value.usage.estimated  # the server still worked on it
    await client.close()


async def test_deadline_bounds_retries_that_would_wait_longer(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(rate_limited(60))  # the SDK would sleep 60 s before retrying
    # 4 s: 1 s kept for the offline fallback, 3 s for the call, so even a loaded box sends it before the cut
    with pytest.raises(LLMFailed, match="cut at") as cut:
        await ask(chat, HELLO, LanguageDecision, role=Role.LANG, deadline=time.monotonic() + 4.0)
    assert server.chat_calls == 1  # the retry never went out: the call was cut at the deadline
    # the cut call is still counted, with an estimate of its prompt marked as such
    assert cut.value.usage.calls == 1 and cut.value.usage.prompt_tokens > 0 and cut.value.usage.estimated


async def test_no_time_left_fails_without_a_call(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    with pytest.raises(StrategyFailed, match="no time left"):
        await ask(chat, HELLO, LanguageDecision, role=Role.LANG, deadline=time.monotonic() + 0.5)
    assert server.chat_calls == 0


async def test_malformed_json_is_repaired_once(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(malformed(), json_reply({"language": "es", "confidence": 0.9}))
    found, usage = await ask(chat, HELLO, LanguageDecision, role=Role.LANG, deadline=None)
    assert found == LanguageDecision(language="es", confidence=0.9)
    assert usage.calls == 2  # both calls' tokens are counted
    repair = server.requests[1]["messages"]
    assert repair[-2]["role"] == "assistant" and repair[-2]["content"].startswith('{"language"')
    assert "not valid" in repair[-1]["content"]


async def test_schema_violation_is_repaired_with_the_validation_error(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(json_reply({"language": "en", "confidence": 7}), json_reply({"language": "en", "confidence": 0.7}))
    found, _ = await ask(chat, HELLO, LanguageDecision, role=Role.LANG, deadline=None)
    assert found.confidence == 0.7
    assert "confidence" in server.requests[1]["messages"][-1]["content"]


async def test_malformed_twice_gives_up_after_two_calls(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(malformed(), malformed())
    with pytest.raises(LLMFailed, match="after one repair") as failure:
        await ask(chat, HELLO, LanguageDecision, role=Role.LANG, deadline=None)
    assert server.chat_calls == 2
    assert failure.value.usage.calls == 2


async def test_refusal_fails_without_repair(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(refusal())
    with pytest.raises(StrategyFailed, match="refused"):
        await ask(chat, HELLO, LanguageDecision, role=Role.LANG, deadline=None)
    assert server.chat_calls == 1


async def test_invalid_key_fails_at_once_with_an_operator_log_line(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(unauthorized())
    with capture_logs() as logs, pytest.raises(StrategyFailed, match="credentials"):
        await chat.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert server.chat_calls == 1  # a 401 is not retried
    assert [e["event"] for e in logs] == ["llm.credentials_rejected"]
    assert "sk-test-do-not-log" not in repr(logs)


async def test_connection_refused_fails() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the call: nothing listens
    client = OpenAIChat(api_key="k", base_url=f"http://127.0.0.1:{port}/v1", timeout_s=0.5, max_retries=1)
    with pytest.raises(StrategyFailed, match="unreachable"):
        await client.complete(HELLO, role=Role.LANG)
    await client.close()


async def test_json_object_mode_puts_the_schema_in_the_prompt(server: ScriptedOpenAI) -> None:
    client = OpenAIChat(api_key=None, base_url=server.base_url, structured_mode="json_object")
    server.queue(json_reply({"language": "en", "confidence": 0.5}))
    result = await client.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert result.data == {"language": "en", "confidence": 0.5}
    sent = server.requests[0]
    assert sent["response_format"] == {"type": "json_object"}
    assert sent["messages"][0]["role"] == "system" and '"confidence"' in sent["messages"][0]["content"]
    await client.close()


async def test_non_object_json_is_malformed(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(json_reply({"x": 1}))
    server.steps[0] = type(server.steps[0])(content="[1, 2]")
    with pytest.raises(MalformedOutput):
        await chat.complete(HELLO, role=Role.LANG, schema=SCHEMA)


def test_repr_never_shows_the_key() -> None:
    client = OpenAIChat(api_key="sk-very-secret", base_url="http://127.0.0.1:1/v1")
    assert "sk-very-secret" not in repr(client)
    assert "127.0.0.1:1" in repr(client)


async def test_a_real_provider_is_never_reached_in_tests() -> None:
    """The conftest guard refuses non-loopback connects; the client turns that into StrategyFailed."""
    client = OpenAIChat(api_key="k", base_url="http://203.0.113.7/v1", timeout_s=1.0, max_retries=0)
    with capture_logs() as logs, pytest.raises(StrategyFailed, match="RuntimeError"):
        await client.complete(HELLO, role=Role.LANG)
    assert logs[-1]["event"] == "llm.client_error" and logs[-1]["errors"] == "RuntimeError"  # the guard's error
    await client.close()


async def test_every_request_carries_the_decisions_max_tokens(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(json_reply({"language": "de", "confidence": 0.8}))
    await chat.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    await chat.complete(HELLO, role=Role.RESPONSE)
    assert server.requests[0]["max_tokens"] == MAX_TOKENS["language_decision"]
    assert server.requests[1]["max_tokens"] == MAX_TOKENS["answer"]


def test_every_schema_bounds_its_strings_lists_and_numbers() -> None:
    def unbounded(node: object, path: str) -> list[str]:
        found: list[str] = []
        if isinstance(node, dict):
            kind = node.get("type")
            if kind == "string" and "enum" not in node and "maxLength" not in node:
                found.append(path)
            if kind == "array" and "maxItems" not in node:
                found.append(path)
            if kind == "number" and not {"minimum", "maximum"} <= node.keys():
                found.append(path)
            for key, value in node.items():
                found += unbounded(value, f"{path}.{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                found += unbounded(value, f"{path}[{index}]")
        return found

    for output in DECISIONS:
        assert unbounded(strict_schema(output), output.__name__) == []
        assert str(strict_schema(output)["title"]) in MAX_TOKENS


async def test_a_runaway_generation_cut_at_max_tokens_is_not_repaired(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(Step(content='{"language": "en", "confidence": 0.5000000000000', finish_reason="length"))
    with pytest.raises(LLMFailed, match="max_tokens") as failed:
        await ask(chat, HELLO, LanguageDecision, role=Role.LANG, deadline=None)
    assert server.chat_calls == 1 and failed.value.usage.calls == 1


async def test_the_breaker_opens_after_repeated_failures_and_skips_the_endpoint(server: ScriptedOpenAI) -> None:
    now = [0.0]
    breaker = CircuitBreaker(threshold=2, cooldown_s=30, clock=lambda: now[0])
    client = OpenAIChat(api_key="k", base_url=server.base_url, max_retries=0, breaker=breaker)
    server.responder = lambda _request: server_error(500)
    for _ in range(2):
        with pytest.raises(StrategyFailed, match="500"):
            await client.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert breaker.status().state is BreakerState.OPEN
    for role in (Role.ESSENCE, Role.RESPONSE, Role.QUALITY):
        with pytest.raises(EndpointSkipped):
            await client.complete(HELLO, role=role, schema=SCHEMA)
    assert server.chat_calls == 2 and breaker.status().skipped == 3  # nothing sent while open
    now[0] = 31.0  # after the cool-down, one trial call; it succeeds and closes the breaker
    server.responder = lambda _request: json_reply({"language": "en", "confidence": 0.9})
    result = await client.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert result.data is not None and breaker.status().state is BreakerState.CLOSED
    assert server.chat_calls == 3
    await client.close()


async def test_a_failed_trial_call_reopens_the_breaker(server: ScriptedOpenAI) -> None:
    now = [0.0]
    breaker = CircuitBreaker(threshold=1, cooldown_s=10, clock=lambda: now[0])
    client = OpenAIChat(api_key="k", base_url=server.base_url, max_retries=0, breaker=breaker)
    server.responder = lambda _request: server_error(503)
    with pytest.raises(StrategyFailed):
        await client.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    now[0] = 11.0
    with pytest.raises(StrategyFailed, match="503"):  # the trial goes out and fails
        await client.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    with pytest.raises(EndpointSkipped):  # open again for a new cool-down
        await client.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert server.chat_calls == 2 and breaker.status().opened == 2
    await client.close()


async def test_a_bad_request_does_not_count_against_the_endpoint(server: ScriptedOpenAI) -> None:
    breaker = CircuitBreaker(threshold=1, cooldown_s=10)
    client = OpenAIChat(api_key="k", base_url=server.base_url, max_retries=0, breaker=breaker)
    server.queue(server_error(400), json_reply({"language": "en", "confidence": 0.9}))
    with pytest.raises(StrategyFailed, match="400"):
        await client.complete(HELLO, role=Role.LANG, schema=SCHEMA)
    assert breaker.status().state is BreakerState.CLOSED
    assert (await client.complete(HELLO, role=Role.LANG, schema=SCHEMA)).data is not None
    await client.close()
