"""One deadline per question shared by the LLM roles, and the typed outcomes: the model's "the docs don't cover
this", a weak understanding that falls back instead of refusing, and results marked degraded."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from bench.fakes.openai_server import ScriptedOpenAI, hang, plausible_model
from pipeline.agents.base import StrategyFailed, run_with_fallback
from pipeline.agents.response import no_coverage_answer
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.llm.client import OpenAIChat
from pipeline.llm.strategies import build_strategies
from pipeline.llm.structured import FALLBACK_RESERVE_S, call_deadline, share
from pipeline.result import ResultKind
from pipeline.types import Role, StrategyUsed
from tests.pipeline.llm.conftest import FakeLLM
from tests.pipeline.llm.test_end_to_end import ask, build_runner
from tests.pipeline.llm.test_strategies import SOURCES, UNDERSTOOD
from tests.pipeline.test_runner import make_runner, run

CTX = Context(docs_language="en")


@pytest.mark.unit
def test_each_call_gets_its_weighted_share_of_what_is_left() -> None:
    assert share(Role.LANG) == pytest.approx(1 / 8)  # lang, translation, essence, guardrails, response x3, quality
    assert share(Role.RESPONSE) == pytest.approx(3 / 4)
    assert share(Role.QUALITY) == 1.0 and share(Role.CLARIFICATION) == 1.0
    assert share(Role.LANG, fast=True) == pytest.approx(4 / 8)  # the one understand call stands for four roles


@pytest.mark.unit
def test_the_offline_reserve_and_the_role_timeout_bound_every_call() -> None:
    now = 100.0
    # 60 s deadline, 8 s reserve: lang may use 52/8 = 6.5 s (plus the role's own fallback second)
    lang = call_deadline(now + 60, Role.LANG, role_timeout_s=20, offline_reserve_s=8, now=now)
    assert lang == pytest.approx(now + 6.5 + FALLBACK_RESERVE_S)
    # quality would get everything left, but it always leaves half its role's timeout to its offline strategy
    quality = call_deadline(now + 60, Role.QUALITY, role_timeout_s=20, offline_reserve_s=8, now=now)
    assert quality == pytest.approx(now + 10 + FALLBACK_RESERVE_S)
    # inside the reserve: no time for the model at all
    assert call_deadline(now + 5, Role.RESPONSE, role_timeout_s=20, offline_reserve_s=8, now=now) == now


@pytest.fixture
async def slow_server() -> AsyncIterator[ScriptedOpenAI]:
    async with ScriptedOpenAI(responder=lambda _request: hang(120)) as server:
        yield server


@pytest.mark.integration
async def test_a_model_slower_than_the_whole_deadline_still_gets_the_offline_answer(
    slow_server: ScriptedOpenAI,
) -> None:
    """The issue's case: roles with 20 s timeouts each, a 14 s question deadline, a model that never answers.
    Before, the first role used the whole deadline and the person got "took too long"."""
    chat = OpenAIChat(api_key="k", base_url=slow_server.base_url, timeout_s=300, max_retries=0)
    try:
        runner = build_runner(chat, fast=False, role_timeout_s=20.0)
        result = await ask(runner, "how do I pair the remote?", deadline_s=14.0)
    finally:
        await chat.close()
    assert result.kind is ResultKind.ANSWER and result.sources
    assert not result.envelope.errors  # no role hit its timeout or the deadline
    cut = [h for h in result.envelope.hops if h.strategy == StrategyUsed.LLM_FAILED]
    assert {h.role for h in cut} >= {Role.LANG, Role.ESSENCE, Role.GUARDRAILS, Role.RESPONSE}
    assert all("cut at" in h.decision or "no time left" in h.decision for h in cut)
    # cut calls are counted, with estimated tokens
    sent = [h for h in cut if h.usage.calls]
    assert sent and all(h.usage.estimated and h.usage.prompt_tokens > 0 for h in sent)
    assert result.degraded and "response: llm->offline" in result.fallback_notes


@pytest.mark.integration
async def test_a_healthy_model_leaves_the_result_unmarked() -> None:
    async with ScriptedOpenAI(responder=plausible_model) as server:
        chat = OpenAIChat(api_key="k", base_url=server.base_url, max_retries=0)
        try:
            result = await ask(build_runner(chat, fast=False), "how do I pair the remote?")
        finally:
            await chat.close()
    assert result.kind is ResultKind.ANSWER and not result.degraded and result.fallback_notes == ()


@pytest.mark.unit
async def test_the_models_insufficient_flag_is_typed_and_worded_by_us() -> None:
    llm = FakeLLM(lambda _title, _messages: {"answer": "Ich weiß es nicht, sorry!", "insufficient": True})
    payload = Payload(text="q", language="de", source_references=SOURCES)
    result = await build_strategies(llm, fast=False)[Role.RESPONSE](payload, CTX)
    assert result.payload.docs_insufficient == "model_says_insufficient"
    assert result.payload.response == no_coverage_answer("de", SOURCES)  # the localized text, not the model's
    assert "Ich weiß es nicht" not in (result.payload.response or "")


@pytest.mark.unit
async def test_a_real_answer_clears_an_earlier_insufficient_flag() -> None:
    llm = FakeLLM(lambda _title, _messages: {"answer": "Hold OK for 5 s [1].", "insufficient": False})
    payload = Payload(text="q", language="en", source_references=SOURCES, docs_insufficient="poor_search")
    result = await build_strategies(llm, fast=False)[Role.RESPONSE](payload, CTX)
    assert result.payload.docs_insufficient is None and result.payload.response == "Hold OK for 5 s [1]."


WEAK = {**UNDERSTOOD, "confidence": 0.0, "canonical_question": "en", "scope_verdict": "out_of_scope"}


@pytest.mark.unit
@pytest.mark.parametrize("role", [Role.LANG, Role.TRANSLATION, Role.ESSENCE, Role.GUARDRAILS])
async def test_a_weak_understanding_falls_back_instead_of_refusing(role: Role) -> None:
    llm = FakeLLM(lambda _title, _messages: WEAK)
    strategy = build_strategies(llm, fast=True)[role]
    with pytest.raises(StrategyFailed, match=r"weak understanding|unsure") as failed:
        await strategy(Payload(text="how do I pair the remote?", language="en"), CTX)
    assert failed.value.usage.calls in (0, 1)  # the one shared call is counted once, by the role that made it


@pytest.mark.unit
async def test_a_one_word_canonical_question_falls_back_in_the_default_configuration() -> None:
    decision = {"canonical_question": "en", "context_type": "new_topic", "needs_clarification": False,
                "clarification_reason": None}  # fmt: skip
    llm = FakeLLM(lambda _title, _messages: decision)
    with pytest.raises(StrategyFailed, match="canonical question"):
        await build_strategies(llm, fast=False)[Role.ESSENCE](Payload(text="how do I pair it?"), CTX)


@pytest.mark.integration
@pytest.mark.slow
async def test_a_slow_offline_answer_after_a_cut_llm_call_still_fits_in_the_role(slow_server: ScriptedOpenAI) -> None:
    """Seen with llama.cpp on a loaded box: the response's LLM call used all but 4 s of the role's 20 s, the offline
    answer needed more, and the role timed out ("took too long"). The call now leaves half the role's time."""
    chat = OpenAIChat(api_key="k", base_url=slow_server.base_url, timeout_s=300, max_retries=0)
    strategy = build_strategies(chat, fast=False, role_timeout_s=24.0)[Role.RESPONSE]
    offline_started: list[float] = []

    async def slow_offline(payload: Payload, context: Context) -> AgentResult:
        offline_started.append(1.0)
        await asyncio.sleep(7)  # more than the 4 s the role used to keep, less than the 12 s it keeps now
        return AgentResult(payload.evolve(response="Hold the key. [1]"), "extractive")

    async def response(payload: Payload, context: Context) -> AgentResult:
        return await run_with_fallback(payload, context, slow_offline, strategy)

    runner, _ = make_runner({Role.RESPONSE: response}, role_timeout_s=24.0)
    try:
        result = await run(runner, deadline=time.monotonic() + 300)
    finally:
        await chat.close()
    assert offline_started and result.kind is ResultKind.ANSWER
    assert not result.envelope.errors
    hop = next(h for h in result.envelope.hops if h.role is Role.RESPONSE)
    assert hop.strategy == StrategyUsed.LLM_FAILED and "cut at" in hop.decision
