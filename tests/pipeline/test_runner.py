"""PipelineRunner with plain fake agents: routing, bounds, failures, limits under concurrency, resume."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.settings import DEFAULT_ROLE_LIMITS
from pipeline.envelope import AgentResult, Context, Envelope, Payload, StepStatus
from pipeline.envelope import Step as StepEvent
from pipeline.locales import texts
from pipeline.result import ResultKind
from pipeline.runner import AGENT_ROLES, PipelineRunner
from pipeline.types import (
    ActionKind,
    Answerability,
    AnswerabilityReason,
    QualityDecision,
    Role,
    SearchQuality,
    SourceReference,
    StrategyUsed,
    SuggestedAction,
)
from tests.pipeline.fakes import FnAgent, Step, hit, passing

pytestmark = pytest.mark.unit

SOURCE = SourceReference(1, "remote#0", "remote", "Pairing the remote", ("Guide",), "https://d/remote", "Hold it.", 0.9)


def happy_steps(delay: float = 0.0) -> dict[Role, Step]:
    async def guardrails(payload: Payload, context: Context) -> AgentResult:
        if delay:
            await asyncio.sleep(delay)
        if payload.search_quality is None:
            return AgentResult(payload, "capable")
        return AgentResult(payload.evolve(within_scope=True), "in scope")

    return {
        Role.LANG: passing({"language": "en", "confidence": 0.9}, delay=delay),
        Role.TRANSLATION: passing({"text_eng": "q"}, delay=delay),
        Role.ESSENCE: passing({"canonical_question": "how do I pair the remote?"}, delay=delay),
        Role.GUARDRAILS: guardrails,
        Role.SEARCH: passing(
            {"search_results": (hit("Pairing", 0.8),), "search_quality": SearchQuality.GOOD}, delay=delay
        ),
        Role.AUGMENTATION: passing({"source_references": (SOURCE,)}, delay=delay),
        Role.RESPONSE: passing({"response": "Hold the key. [1]"}, delay=delay),
        Role.QUALITY: passing({"quality_decision": QualityDecision.APPROVE}, delay=delay),
        Role.CLARIFICATION: passing(
            {"needs_clarification": True, "clarification_message": "Which one?", "clarification_reason": "ambiguous"},
            delay=delay,
        ),
    }


def make_runner(
    steps: dict[Role, Step] | None = None, *, limits: dict[Role, int] | None = None, **options: Any
) -> tuple[PipelineRunner, dict[Role, FnAgent]]:
    chosen = happy_steps() | (steps or {})
    agents = {role: FnAgent(role, chosen[role]) for role in AGENT_ROLES}
    settings: dict[str, Any] = {
        "max_waiting": 100,
        "role_timeout_s": 2.0,
        "max_process_count": 30,
        "max_research_rounds": 1,
        "max_regenerate_rounds": 1,
    } | options
    return PipelineRunner(agents, limits or dict(DEFAULT_ROLE_LIMITS), **settings), agents


async def run(runner: PipelineRunner, text: str = "how do I pair the remote?", **context: Any) -> Any:
    payload = Payload(text=text)
    return await runner.run(conversation_id="c1", message_id="m1", payload=payload, context=Context(**context))


class SteppedClock:
    """A clock that moves only when a step says it took time: hop durations become exact, whatever the machine."""

    def __init__(self) -> None:
        self.elapsed = 0.0

    def now(self) -> datetime:
        return datetime(2026, 11, 22, 9, 0, tzinfo=UTC) + timedelta(seconds=self.elapsed)

    def monotonic(self) -> float:
        return self.elapsed


async def test_happy_path_answers_and_records_every_hop() -> None:
    clock = SteppedClock()
    answer = passing({"response": "Hold the key. [1]"})

    async def slow_response(payload: Payload, context: Context) -> AgentResult:
        clock.elapsed += 0.25  # the response role takes 250 ms
        return await answer(payload, context)

    runner, agents = make_runner({Role.RESPONSE: slow_response}, clock=clock)
    result = await run(runner)
    assert result.kind is ResultKind.ANSWER
    assert result.text == "Hold the key. [1]"
    assert [s.title for s in result.sources] == ["Pairing the remote"]
    env = result.envelope
    agent_hops = [h for h in env.hops if h.role is not Role.MANAGER]
    assert [h.role for h in agent_hops] == [
        Role.LANG, Role.TRANSLATION, Role.ESSENCE, Role.GUARDRAILS, Role.SEARCH, Role.GUARDRAILS,
        Role.AUGMENTATION, Role.RESPONSE, Role.QUALITY,
    ]
    assert env.process_count == len(agent_hops) == 9
    assert all(h.decision for h in env.hops)
    assert {h.role: h.duration_ms for h in env.hops if h.duration_ms} == {Role.RESPONSE: pytest.approx(250.0)}
    assert env.sender_role is Role.QUALITY and env.update_ts - env.create_ts == timedelta(seconds=0.25)
    assert env.total_processing_time == pytest.approx(0.25)
    assert agents[Role.CLARIFICATION].calls == 0


@pytest.mark.parametrize(
    "asking", [Role.LANG, Role.TRANSLATION, Role.ESSENCE, Role.GUARDRAILS, Role.SEARCH, Role.AUGMENTATION,
               Role.RESPONSE, Role.QUALITY]
)
async def test_any_role_can_ask_to_clarify(asking: Role) -> None:
    ask = passing({"needs_clarification": True, "clarification_reason": "vague", "search_quality": SearchQuality.GOOD})
    runner, agents = make_runner({asking: ask})
    result = await run(runner)
    assert result.kind is ResultKind.CLARIFICATION
    assert result.text == "Which one?"
    assert agents[Role.CLARIFICATION].calls == 1
    hops = [h.role for h in result.envelope.hops if h.role is not Role.MANAGER]
    assert hops[-2:] == [asking, Role.CLARIFICATION]


@pytest.mark.parametrize("rounds", [0, 1, 3])
async def test_research_rounds_are_bounded(rounds: int) -> None:
    runner, agents = make_runner(
        {Role.QUALITY: passing({"quality_decision": QualityDecision.RESEARCH})}, max_research_rounds=rounds
    )
    result = await run(runner)
    assert result.kind is ResultKind.ANSWER
    assert agents[Role.SEARCH].calls == rounds + 1
    assert result.envelope.rounds.get("research", 0) == rounds


@pytest.mark.parametrize("rounds", [0, 2])
async def test_regenerate_rounds_are_bounded_then_clarify(rounds: int) -> None:
    runner, agents = make_runner(
        {Role.QUALITY: passing({"quality_decision": QualityDecision.REGENERATE})}, max_regenerate_rounds=rounds
    )
    result = await run(runner)
    assert agents[Role.RESPONSE].calls == rounds + 1
    assert result.kind is ResultKind.CLARIFICATION
    assert result.envelope.rounds.get("regenerate", 0) == rounds


async def test_circuit_breaker_trips() -> None:
    runner, _ = make_runner(max_process_count=3)
    result = await run(runner)
    assert result.kind is ResultKind.FAILURE and result.reason == "circuit_breaker"
    assert result.envelope.process_count == 3
    assert result.envelope.errors[-1].kind == "circuit_breaker"
    assert result.text == texts("en").failure


async def test_hanging_agent_times_out_and_the_result_says_so() -> None:
    async def hang(payload: Payload, context: Context) -> AgentResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    runner, _ = make_runner({Role.SEARCH: hang}, role_timeout_s=0.05)
    result = await run(runner)  # returns at all only because the hang was cut
    assert result.kind is ResultKind.FAILURE and result.reason == "timeout"
    assert result.text == texts("en").timeout
    error = result.envelope.errors[-1]
    assert (error.role, error.kind) == (Role.SEARCH, "timeout")
    assert result.envelope.hops[-1].error == "timeout"


async def test_a_role_may_have_its_own_timeout() -> None:
    # its own limit is far above the 0.1 s it takes (a loaded box cannot reach it), the default far below
    runner, _ = make_runner({Role.RESPONSE: passing(delay=0.1)}, role_timeout_s=0.05, role_timeouts={Role.RESPONSE: 30})
    assert (await run(runner)).kind is not ResultKind.FAILURE  # the slow response finished within its own limit
    strict, _ = make_runner({Role.RESPONSE: passing(delay=0.1)}, role_timeout_s=1, role_timeouts={Role.RESPONSE: 0.05})
    result = await run(strict)
    assert result.reason == "timeout" and result.envelope.errors[-1].role is Role.RESPONSE


async def test_the_question_deadline_caps_role_timeouts() -> None:
    runner, _ = make_runner({Role.SEARCH: passing(delay=0.5)}, role_timeout_s=5.0)
    result = await run(runner, deadline=time.monotonic() + 0.1)
    assert result.kind is ResultKind.FAILURE and result.reason == "timeout"


async def test_raising_agent_becomes_a_failure_with_the_error_on_the_envelope() -> None:
    async def boom(payload: Payload, context: Context) -> AgentResult:
        raise ValueError(f"cannot handle {payload.text}")

    runner, _ = make_runner({Role.ESSENCE: boom})
    result = await run(runner, text="my secret question")
    assert result.kind is ResultKind.FAILURE and result.reason == "exception"
    error = result.envelope.errors[-1]
    assert error.role is Role.ESSENCE and error.kind == "exception"
    assert "ValueError" in error.message
    assert "secret" not in error.message  # operator message without user text


async def test_an_agent_returning_garbage_is_a_failure() -> None:
    async def garbage(payload: Payload, context: Context) -> Any:
        return {"payload": payload}

    runner, _ = make_runner({Role.LANG: garbage})
    result = await run(runner)
    assert result.kind is ResultKind.FAILURE and result.reason == "invalid_result"


async def test_agents_cannot_change_system_attributes() -> None:
    received: list[tuple[type, type]] = []

    class EvilPayload(Payload):
        process_count = 10_000
        sender_role = Role.QUALITY

    async def evil(payload: Payload, context: Context) -> AgentResult:
        received.append((type(payload), type(context)))
        with pytest.raises(AttributeError):
            payload.text = "changed"  # type: ignore[misc]
        forged = EvilPayload(**{f: getattr(payload, f) for f in Payload.__dataclass_fields__})
        return AgentResult(forged, "forged")

    runner, _ = make_runner({Role.TRANSLATION: evil})
    result = await run(runner)
    assert received == [(Payload, Context)]  # never the envelope
    env = result.envelope
    assert env.process_count == len([h for h in env.hops if h.role is not Role.MANAGER])
    assert env.process_count < 100
    assert result.kind is ResultKind.ANSWER


async def test_fifty_concurrent_runs_hold_every_role_limit() -> None:
    limits = dict(DEFAULT_ROLE_LIMITS)
    steps = happy_steps()
    slow = {role: 0.2 if limits[role] > 1 else 0.003 for role in AGENT_ROLES}  # long enough for runs to overlap

    def delayed(role: Role) -> Step:
        async def step(payload: Payload, context: Context) -> AgentResult:
            await asyncio.sleep(slow[role])
            result = await steps[role](payload, context)
            if role is Role.QUALITY and payload.text.endswith("odd"):
                return AgentResult(result.payload.evolve(quality_decision=QualityDecision.CLARIFY), "clarify")
            return result

        return step

    # generous timeouts: what is checked is the limits, and a loaded box must not turn waits into timeouts
    runner, _ = make_runner({role: delayed(role) for role in AGENT_ROLES}, limits=limits, role_timeout_s=120)
    texts = [f"q{i} {'odd' if i % 2 else 'even'}" for i in range(50)]
    results = await asyncio.gather(*(run(runner, text=t, deadline=time.monotonic() + 600) for t in texts))
    assert {r.kind for r in results} == {ResultKind.ANSWER, ResultKind.CLARIFICATION}
    for role, limit in runner.limits().items():
        assert 1 <= limit.peak_running <= limits[role], role  # never above its limit
        assert limit.running == 0 and limit.waiting == 0
    # and the limit is reached, not only respected: runs leave the one-instance lang role every few milliseconds
    # into translation, which holds each for 0.2 s, so it fills up (roles further on see runs spaced out by the
    # one-instance roles before them, so how full they get depends on the machine's load)
    assert limits[Role.TRANSLATION] > 1
    assert runner.limits()[Role.TRANSLATION].peak_running == limits[Role.TRANSLATION]


async def test_full_wait_queue_gives_a_localized_busy_result() -> None:
    runner, _ = make_runner(
        {
            Role.LANG: passing({"language": "es"}),
            Role.SEARCH: passing({"search_quality": SearchQuality.GOOD}, delay=0.2),
        },
        limits=dict(DEFAULT_ROLE_LIMITS) | {Role.SEARCH: 1},
        max_waiting=0,
    )
    first, second = await asyncio.gather(run(runner), run(runner))
    kinds = sorted([first.kind, second.kind])
    assert kinds == [ResultKind.ANSWER, ResultKind.BUSY]
    busy = first if first.kind is ResultKind.BUSY else second
    assert busy.text == texts("es").busy and busy.language == "es"
    assert busy.envelope.errors[-1].kind == "busy"


def test_missing_agents_are_rejected() -> None:
    with pytest.raises(ValueError, match="no agent for roles"):
        PipelineRunner(
            {}, {}, max_waiting=1, role_timeout_s=1, max_process_count=5, max_research_rounds=1, max_regenerate_rounds=1
        )


async def _waiting_envelope(runner: PipelineRunner) -> Envelope:
    result = await run(runner)
    assert result.kind is ResultKind.CLARIFICATION
    return result.envelope


async def test_resume_with_a_chosen_section_searches_again_with_it() -> None:
    seen: list[Payload] = []

    async def search(payload: Payload, context: Context) -> AgentResult:
        seen.append(payload)
        return AgentResult(payload.evolve(search_quality=SearchQuality.GOOD), "searched")

    ask = passing({"needs_clarification": True, "clarification_reason": "vague"})
    runner, agents = make_runner({Role.ESSENCE: ask, Role.SEARCH: search})
    waiting = await _waiting_envelope(runner)
    hops_before = len(waiting.hops)
    choice = SuggestedAction("Remote batteries", ActionKind.SEARCH, "Remote › Remote batteries")
    result = await runner.resume(waiting, context=Context(), chosen=choice)
    assert result.kind is ResultKind.ANSWER
    assert agents[Role.LANG].calls == 1  # not again
    assert seen[-1].chosen_action == choice
    assert "Remote › Remote batteries" in (seen[-1].canonical_question or "")
    assert not seen[-1].needs_clarification
    assert len(result.envelope.hops) > hops_before and len(waiting.hops) == hops_before  # the input is not mutated


async def test_resume_with_a_reply_goes_back_through_essence() -> None:
    seen: list[Payload] = []
    calls = {"n": 0}

    async def essence(payload: Payload, context: Context) -> AgentResult:
        calls["n"] += 1
        seen.append(payload)
        if calls["n"] == 1:
            return AgentResult(payload.evolve(needs_clarification=True, canonical_question="it broke"), "vague")
        return AgentResult(payload.evolve(canonical_question=f"{payload.canonical_question}: {payload.text}"), "ok")

    runner, agents = make_runner({Role.ESSENCE: essence})
    waiting = await _waiting_envelope(runner)
    result = await runner.resume(waiting, context=Context(), reply_text="the remote")
    assert result.kind is ResultKind.ANSWER
    assert agents[Role.LANG].calls == 2
    assert seen[-1].text == "the remote" and seen[-1].canonical_question == "it broke"
    assert result.envelope.payload.canonical_question == "it broke: the remote"


async def test_resume_needs_something_to_resume_with() -> None:
    runner, _ = make_runner({Role.ESSENCE: passing({"needs_clarification": True})})
    waiting = await _waiting_envelope(runner)
    with pytest.raises(ValueError):
        await runner.resume(waiting, context=Context())
    with pytest.raises(ValueError):
        await runner.resume(waiting, context=Context(), chosen=SuggestedAction("Helpful", ActionKind.HELPFUL))


async def test_a_fallback_strategy_adds_the_offline_note() -> None:
    async def fell_back(payload: Payload, context: Context) -> AgentResult:
        return AgentResult(payload.evolve(response="Hold the key. [1]"), "extractive", strategy=StrategyUsed.LLM_FAILED)

    runner, _ = make_runner({Role.RESPONSE: fell_back})
    result = await run(runner)
    assert result.note == texts("en").offline_note


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"refusal_reason": "capability"}, "capability"),
        ({"refusal_reason": "beyond_capabilities", "within_scope": False}, "capability"),
        ({"within_scope": False}, "out_of_scope"),
    ],
)
async def test_refusals_say_why_in_the_persons_language(changes: dict[str, object], reason: str) -> None:
    runner, _ = make_runner({Role.LANG: passing({"language": "de"}), Role.GUARDRAILS: passing(changes)})
    result = await run(runner)
    assert (result.kind, result.reason, result.language) == (ResultKind.REFUSAL, reason, "de")
    assert result.text == texts("de").refusal[reason]


async def test_the_typed_docs_insufficient_flag_makes_a_no_coverage_refusal() -> None:
    uncovered = {"response": texts("en").no_coverage, "docs_insufficient": "poor_search"}
    runner, _ = make_runner({Role.RESPONSE: passing(uncovered)})
    result = await run(runner)
    assert result.kind is ResultKind.REFUSAL and result.reason == "no_coverage"


async def test_words_alone_never_make_a_refusal() -> None:
    """An answer that happens to start like the not-covered sentence is still an answer: no prefix matching."""
    worded = {"response": f"{texts('en').no_coverage} Still, [1] says to hold the key."}
    runner, _ = make_runner({Role.RESPONSE: passing(worded)})
    result = await run(runner)
    assert result.kind is ResultKind.ANSWER and result.sources


async def test_a_fallback_marks_the_result_degraded() -> None:
    async def fell_back(payload: Payload, context: Context) -> AgentResult:
        return AgentResult(payload.evolve(response="Hold the key. [1]"), "extractive", strategy=StrategyUsed.LLM_FAILED)

    runner, _ = make_runner({Role.RESPONSE: fell_back})
    result = await run(runner)
    assert result.kind is ResultKind.ANSWER and result.degraded
    assert result.fallback_notes == ("response: llm->offline",)
    clean, _ = make_runner()
    assert not (await run(clean)).degraded


# -- progress: the steps a person may see while the question runs -----------------------------------------------------


async def test_the_docs_do_not_answer_is_a_no_coverage_refusal_that_keeps_its_fallback_notes() -> None:
    """An answerability "no" ends the run as the typed "not covered" outcome, like a `docs_insufficient` response:
    one path, with the fallback notes, so a refusal written while the model was down is degraded (never cached)."""

    async def fell_back(payload: Payload, context: Context) -> AgentResult:
        return AgentResult(payload.evolve(response="Hold the key. [1]"), "extractive", strategy=StrategyUsed.LLM_FAILED)

    refusal = "The documentation doesn't say this: [1]"
    unanswerable = {
        "quality_decision": QualityDecision.APPROVE,
        "response": refusal,
        "answerability": Answerability(False, 0.1, AnswerabilityReason.MISSING_TERMS),
    }
    runner, _ = make_runner({Role.RESPONSE: fell_back, Role.QUALITY: passing(unanswerable)})
    result = await run(runner)
    assert (result.kind, result.reason) == (ResultKind.REFUSAL, "no_coverage")
    assert result.text.startswith("The documentation doesn't say this") and result.sources
    assert result.degraded and result.fallback_notes == ("response: llm->offline",)


class Seen:
    """A progress callback that records the steps it is told."""

    def __init__(self, fail: bool = False) -> None:
        self.steps: list[StepEvent] = []
        self.fail = fail

    async def __call__(self, step: StepEvent) -> None:
        self.steps.append(step)
        if self.fail:
            raise RuntimeError("the platform is down")


async def test_every_step_is_reported_as_it_starts_and_ends_with_its_facts() -> None:
    seen = Seen()
    result = await run(make_runner()[0], progress=seen)
    assert result.kind is ResultKind.ANSWER
    roles = [Role.LANG, Role.TRANSLATION, Role.ESSENCE, Role.GUARDRAILS, Role.SEARCH, Role.GUARDRAILS,
             Role.AUGMENTATION, Role.RESPONSE, Role.QUALITY]  # fmt: skip
    assert [(s.role, s.status) for s in seen.steps] == [(r, status) for r in roles
                                                        for status in (StepStatus.STARTED, StepStatus.DONE)]
    done = {s.role: s for s in seen.steps if s.status is StepStatus.DONE}
    assert done[Role.LANG].language == "en"
    assert (done[Role.SEARCH].sections, done[Role.SEARCH].decision) == (1, "good")
    assert done[Role.QUALITY].decision == "approve"
    assert [s.attempt for s in seen.steps if s.role is Role.GUARDRAILS] == [1, 1, 2, 2]


async def test_a_search_again_asked_by_the_quality_role_is_a_second_attempt() -> None:
    decisions = iter([QualityDecision.RESEARCH, QualityDecision.APPROVE])

    async def quality(payload: Payload, context: Context) -> AgentResult:
        return AgentResult(payload.evolve(quality_decision=next(decisions)), "checked")

    seen = Seen()
    result = await run(make_runner({Role.QUALITY: quality})[0], progress=seen)
    assert result.kind is ResultKind.ANSWER
    done = [(s.role, s.attempt, s.decision) for s in seen.steps if s.status is StepStatus.DONE]
    assert (Role.QUALITY, 1, "research") in done and (Role.QUALITY, 2, "approve") in done
    assert [a for r, a, _ in done if r is Role.SEARCH] == [1, 2]


async def test_a_failing_step_is_reported_failed_and_a_broken_callback_changes_nothing() -> None:
    async def broken(payload: Payload, context: Context) -> AgentResult:
        raise ValueError("search index unreadable")

    seen = Seen(fail=True)
    result = await run(make_runner({Role.SEARCH: broken})[0], progress=seen)
    assert result.kind is ResultKind.FAILURE and result.reason == "exception"
    assert (seen.steps[-1].role, seen.steps[-1].status) == (Role.SEARCH, StepStatus.FAILED)
    quiet = await run(make_runner()[0], progress=Seen(fail=True))
    assert quiet.kind is ResultKind.ANSWER  # every report raised; the run did not notice
