"""The runner: drives one envelope from role to role as the manager decides, and alone changes its system attributes.

Every way a run can end becomes a `PipelineResult`: an answer, a clarification, a refusal, `busy` when a role's wait
queue is full, or `failure` (timeout, an agent raising, the circuit breaker, a routing dead end). Agent faults never
reach the caller; they are recorded on the envelope as `EnvelopeError`s without user text.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import traceback
from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType

import structlog

from pipeline.closest import out_of_scope_refusal
from pipeline.envelope import Agent, AgentResult, Context, Envelope, EnvelopeError, Hop, Payload, Step, StepStatus
from pipeline.limits import RoleBusy, RoleLimit, build_limits
from pipeline.locales import DEFAULT, texts
from pipeline.locales.base import Texts
from pipeline.manager import Manager, NoRoute, Outcome, Situation, Transition
from pipeline.result import PipelineResult, ResultKind, ResultReason, cited_sources
from pipeline.types import (
    ActionKind,
    ClarificationReason,
    Clock,
    ContextType,
    FailureKind,
    RefusalReason,
    Role,
    StrategyUsed,
    SuggestedAction,
)

log = structlog.get_logger(__name__)

AGENT_ROLES: tuple[Role, ...] = tuple(r for r in Role if r is not Role.MANAGER)


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class _Stop(Exception):
    """Ends a run early with a ready result (busy or failure)."""

    def __init__(self, result: PipelineResult) -> None:
        super().__init__(result.kind.value)
        self.result = result


class PipelineRunner:
    """Runs the ten roles over one envelope. Construct once per process; `run` and `resume` are concurrency-safe.

    `process_count` counts agent runs (the circuit breaker's measure); the manager's routing decisions are
    recorded as hops of role `manager` too, but not counted.
    """

    def __init__(
        self,
        agents: Mapping[Role, Agent],
        limits: Mapping[Role, int],
        *,
        max_waiting: int,
        role_timeout_s: float,
        max_process_count: int,
        max_research_rounds: int,
        max_regenerate_rounds: int,
        clock: Clock | None = None,
        manager: Manager | None = None,
        role_timeouts: Mapping[Role, float] | None = None,
    ) -> None:
        """`role_timeout_s` bounds every agent run; `role_timeouts` overrides it per role (e.g. a slower response)."""
        missing = [r.value for r in AGENT_ROLES if r not in agents]
        if missing:
            raise ValueError(f"no agent for roles: {', '.join(missing)}")
        if role_timeout_s <= 0 or max_process_count < 1 or max_research_rounds < 0 or max_regenerate_rounds < 0:
            raise ValueError("timeouts and process limits must be positive, round limits non-negative")
        self._agents = dict(agents)
        self._limits = build_limits(limits, max_waiting)
        self._role_timeouts = {role: (role_timeouts or {}).get(role, role_timeout_s) for role in Role}
        if min(self._role_timeouts.values()) <= 0:
            raise ValueError("role timeouts must be positive")
        self._max_process_count = max_process_count
        self._max_research_rounds = max_research_rounds
        self._max_regenerate_rounds = max_regenerate_rounds
        self._clock: Clock = clock or SystemClock()
        self._manager = manager or Manager()

    def limits(self) -> Mapping[Role, RoleLimit]:
        return MappingProxyType(self._limits)

    async def run(self, *, conversation_id: str, message_id: str, payload: Payload, context: Context) -> PipelineResult:
        now = self._clock.now()
        envelope = Envelope(
            conversation_id=conversation_id, message_id=message_id, payload=payload, create_ts=now, update_ts=now
        )
        return await self._drive(envelope, context)

    async def resume(
        self,
        envelope: Envelope,
        *,
        context: Context,
        chosen: SuggestedAction | None = None,
        reply_text: str | None = None,
    ) -> PipelineResult:
        """Continue a conversation waiting on a clarification, from its persisted envelope.

        A chosen SEARCH action searches again with its value as the topic; REPHRASE asks the person to rephrase;
        a free-text reply goes back through lang, translation and essence, which combines it with the question.
        """
        payload = _resumed_payload(envelope.payload, chosen, reply_text)
        resumed = dataclasses.replace(
            envelope,
            payload=payload,
            sender_role=None,
            target_role=None,
            rounds={},
            errors=list(envelope.errors),
            hops=list(envelope.hops),
            update_ts=self._clock.now(),
        )
        return await self._drive(resumed, context)

    # -- the loop -------------------------------------------------------------------------------------------------

    async def _drive(self, envelope: Envelope, context: Context) -> PipelineResult:
        started = self._clock.monotonic()
        first_count = envelope.process_count
        attempts: dict[Role, int] = {}  # runs of each role in this drive, for the progress shown to the person
        try:
            while True:
                route = await self._route(envelope)
                if isinstance(route.to, Outcome):
                    result = self._finish(envelope, route.to, context.docs_language)
                    break
                if envelope.process_count - first_count >= self._max_process_count:
                    message = f"circuit breaker: {self._max_process_count} agent runs without an outcome"
                    raise _Stop(self._fail(envelope, route.to, FailureKind.CIRCUIT_BREAKER, message))
                if route.counts_round is not None:
                    envelope.rounds[route.counts_round] = envelope.rounds.get(route.counts_round, 0) + 1
                envelope.target_role = route.to
                attempts[route.to] = attempts.get(route.to, 0) + 1
                await self._step(envelope, route.to, context, attempts[route.to])
        except _Stop as stop:
            result = stop.result
        log.info(
            "pipeline.run",
            conversation_id=envelope.conversation_id,
            message_id=envelope.message_id,
            kind=result.kind.value,
            reason=result.reason,
            hops=len(envelope.hops),
            process_count=envelope.process_count,
            seconds=round(self._clock.monotonic() - started, 4),
        )
        return result

    async def _route(self, envelope: Envelope) -> Transition:
        started_at = self._clock.now()
        begin = self._clock.monotonic()
        try:
            async with self._limits[Role.MANAGER].slot():
                entered = self._clock.monotonic()
                situation = Situation(
                    sender=envelope.sender_role,
                    payload=envelope.payload,
                    research_rounds=envelope.rounds.get("research", 0),
                    regenerate_rounds=envelope.rounds.get("regenerate", 0),
                    max_research_rounds=self._max_research_rounds,
                    max_regenerate_rounds=self._max_regenerate_rounds,
                )
                route = self._manager.route(situation)
        except RoleBusy as busy:
            raise _Stop(self._busy(envelope, busy)) from None
        except NoRoute as dead_end:
            raise _Stop(self._fail(envelope, Role.MANAGER, FailureKind.ROUTING, str(dead_end))) from None
        target = route.to.value
        envelope.hops.append(
            Hop(
                role=Role.MANAGER,
                decision=f"{route.when.value} -> {target}",
                started_at=started_at,
                duration_ms=(self._clock.monotonic() - entered) * 1000,
                wait_ms=(entered - begin) * 1000,
            )
        )
        return route

    async def _step(self, envelope: Envelope, role: Role, context: Context, attempt: int = 1) -> None:
        """Run one agent under its role's slot and timeout, then apply its result to the envelope."""
        agent = self._agents[role]
        await _report(context, Step(role, StepStatus.STARTED, attempt))
        started_at = self._clock.now()
        begin = self._clock.monotonic()
        entered = begin
        try:
            async with self._limits[role].slot():
                entered = self._clock.monotonic()
                timeout = self._timeout(role, context, entered)
                if timeout <= 0:
                    raise _Stop(self._fail(envelope, role, FailureKind.TIMEOUT, "the question's deadline passed"))
                async with asyncio.timeout(timeout):
                    result = await agent.run(envelope.payload, context)
        except RoleBusy as busy:
            await _report(context, Step(role, StepStatus.FAILED, attempt))
            raise _Stop(self._busy(envelope, busy)) from None
        except TimeoutError:
            await _report(context, Step(role, StepStatus.FAILED, attempt))
            self._record_failed_hop(envelope, role, started_at, begin, entered, "timeout")
            message = f"{role.value} did not finish within {self._timeout(role, context, entered):.3g}s"
            raise _Stop(self._fail(envelope, role, FailureKind.TIMEOUT, message)) from None
        except _Stop:
            await _report(context, Step(role, StepStatus.FAILED, attempt))
            raise
        except Exception as exc:  # an agent fault must never reach the caller
            await _report(context, Step(role, StepStatus.FAILED, attempt))
            self._record_failed_hop(envelope, role, started_at, begin, entered, type(exc).__name__)
            raise _Stop(self._fail(envelope, role, FailureKind.EXCEPTION, _describe(exc))) from None
        if not isinstance(result, AgentResult) or not isinstance(result.payload, Payload):
            await _report(context, Step(role, StepStatus.FAILED, attempt))
            self._record_failed_hop(envelope, role, started_at, begin, entered, "invalid result")
            message = f"{role.value} returned {type(result).__name__}, not an AgentResult with a Payload"
            raise _Stop(self._fail(envelope, role, FailureKind.INVALID_RESULT, message))
        finished = self._clock.monotonic()
        envelope.payload = result.payload
        envelope.process_count += 1
        envelope.total_processing_time += finished - entered
        envelope.sender_role = role
        envelope.target_role = None
        envelope.update_ts = self._clock.now()
        envelope.hops.append(
            Hop(
                role=role,
                decision=result.decision,
                started_at=started_at,
                duration_ms=(finished - entered) * 1000,
                wait_ms=(entered - begin) * 1000,
                strategy=result.strategy,
                usage=result.usage,
            )
        )
        await _report(context, _done(role, attempt, result.payload))

    def _timeout(self, role: Role, context: Context, now: float) -> float:
        if context.deadline is None:
            return self._role_timeouts[role]
        return min(self._role_timeouts[role], context.deadline - now)

    def _record_failed_hop(
        self, envelope: Envelope, role: Role, started_at: datetime, begin: float, entered: float, error: str
    ) -> None:
        finished = self._clock.monotonic()
        envelope.process_count += 1
        envelope.total_processing_time += finished - entered
        envelope.update_ts = self._clock.now()
        envelope.hops.append(
            Hop(
                role=role,
                decision="failed",
                started_at=started_at,
                duration_ms=(finished - entered) * 1000,
                wait_ms=(entered - begin) * 1000,
                error=error,
            )
        )

    # -- outcomes -------------------------------------------------------------------------------------------------

    def _finish(self, envelope: Envelope, outcome: Outcome, docs_language: str) -> PipelineResult:
        payload = envelope.payload
        language = payload.language or DEFAULT
        words = texts(language)
        note = _note(envelope, words)
        fallbacks = fallback_notes(envelope)
        if outcome is Outcome.NO_COVERAGE:
            body, sources = cited_sources(payload.response or words.no_coverage, payload.source_references)
            return PipelineResult(
                ResultKind.REFUSAL,
                body,
                language,
                envelope,
                sources=sources,
                reason=RefusalReason.NO_COVERAGE,
                note=note,
                fallback_notes=fallbacks,
            )
        if outcome is Outcome.ANSWER:
            body, sources = cited_sources(payload.response or words.no_coverage, payload.source_references)
            return PipelineResult(
                ResultKind.ANSWER, body, language, envelope, sources=sources, note=note, fallback_notes=fallbacks
            )
        if outcome is Outcome.CLARIFICATION:
            return PipelineResult(
                ResultKind.CLARIFICATION,
                payload.clarification_message or words.clarify[ClarificationReason.GENERIC],
                language,
                envelope,
                suggested_actions=payload.suggested_actions,
                reason=payload.clarification_reason,
                note=note,
                fallback_notes=fallbacks,
            )
        out_of_scope = payload.refusal_reason is RefusalReason.OUT_OF_SCOPE or (
            payload.refusal_reason is None and payload.within_scope is False
        )
        reason = RefusalReason.OUT_OF_SCOPE if out_of_scope else RefusalReason.CAPABILITY
        if out_of_scope:  # outside the docs: say so, with the sections that come reasonably close
            question = payload.text_eng or payload.canonical_question or payload.text
            text, sources = out_of_scope_refusal(
                question, payload.search_results, language=language, docs_language=docs_language
            )
        else:
            text, sources = words.refusal[reason], ()
        return PipelineResult(
            ResultKind.REFUSAL,
            text,
            language,
            envelope,
            sources=sources,
            reason=reason,
            note=note,
            fallback_notes=fallbacks,
        )

    def _busy(self, envelope: Envelope, busy: RoleBusy) -> PipelineResult:
        envelope.errors.append(EnvelopeError(busy.role, FailureKind.BUSY, str(busy)))
        envelope.update_ts = self._clock.now()
        language = envelope.payload.language or DEFAULT
        text = stop_text(ResultKind.BUSY, FailureKind.BUSY, language)
        busy_reason = FailureKind.BUSY
        return PipelineResult(ResultKind.BUSY, text, language, envelope, reason=busy_reason, fallback_notes=("busy",))

    def _fail(self, envelope: Envelope, role: Role, kind: FailureKind, message: str) -> PipelineResult:
        envelope.errors.append(EnvelopeError(role, kind, message))
        envelope.update_ts = self._clock.now()
        language = envelope.payload.language or DEFAULT
        text = stop_text(ResultKind.FAILURE, kind, language)
        log.warning("pipeline.failure", conversation_id=envelope.conversation_id, role=role.value, kind=kind.value)
        notes = (*fallback_notes(envelope), f"{role.value}: {kind}")
        return PipelineResult(ResultKind.FAILURE, text, language, envelope, reason=kind, fallback_notes=notes)


async def _report(context: Context, step: Step) -> None:
    """Tell the progress callback, if any; its failure never touches the run."""
    if context.progress is None:
        return
    try:
        await context.progress(step)
    except Exception as exc:
        log.warning("pipeline.progress_failed", role=step.role.value, error=type(exc).__name__)


def _done(role: Role, attempt: int, payload: Payload) -> Step:
    """The finished step with the facts the person may see (counts and grades, no text)."""
    if role is Role.LANG:
        return Step(role, StepStatus.DONE, attempt, language=payload.language)
    if role is Role.SEARCH:
        grade = payload.search_quality.value if payload.search_quality else None
        return Step(role, StepStatus.DONE, attempt, sections=len(payload.search_results), decision=grade)
    if role is Role.QUALITY:
        decision = payload.quality_decision.value if payload.quality_decision else None
        return Step(role, StepStatus.DONE, attempt, decision=decision)
    return Step(role, StepStatus.DONE, attempt)


def stop_text(kind: ResultKind, reason: ResultReason | None, language: str | None) -> str:
    """The notice of a run that stopped short (busy, a timeout, any other failure), in `language`."""
    words = texts(language)
    if kind is ResultKind.BUSY:
        return words.busy
    return words.timeout if reason is FailureKind.TIMEOUT else words.failure


def _describe(exc: Exception) -> str:
    """Operator-facing: the exception type and where it was raised, never its message (it may hold user text)."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}{where}"


def fallback_notes(envelope: Envelope) -> tuple[str, ...]:
    """Where this run fell short of its configuration, per role (operator-facing, no user text)."""
    notes: list[str] = []
    for hop in envelope.hops:
        if hop.strategy is StrategyUsed.LLM_FAILED:  # the reason is in the hop's decision, in the trace
            notes.append(f"{hop.role.value}: llm->offline")
        elif hop.strategy is StrategyUsed.KEYWORD_ONLY:
            notes.append(f"{hop.role.value}: keyword search only")
    return tuple(dict.fromkeys(notes))


def _note(envelope: Envelope, words: Texts) -> str | None:
    """What the person should know about how the answer was made (a fallback happened)."""
    strategies = {hop.strategy for hop in envelope.hops}
    wanted = ((StrategyUsed.LLM_FAILED, words.offline_note), (StrategyUsed.KEYWORD_ONLY, words.keyword_only_note))
    notes = [note for strategy, note in wanted if strategy in strategies]
    return " ".join(notes) or None


def _resumed_payload(previous: Payload, chosen: SuggestedAction | None, reply_text: str | None) -> Payload:
    question = previous.canonical_question or previous.text
    if chosen is not None:
        if chosen.kind not in (ActionKind.SEARCH, ActionKind.REPHRASE):
            raise ValueError(f"a {chosen.kind.value} action does not resume the pipeline")
        topic = chosen.value or chosen.label
        canonical = f"{topic}: {question}" if chosen.kind is ActionKind.SEARCH else question
        return Payload(
            text=previous.text,
            language=previous.language,
            confidence=previous.confidence,
            text_eng=previous.text_eng,
            canonical_question=canonical,
            context_type=ContextType.FOLLOW_UP,
            chosen_action=chosen,
        )
    if reply_text is None or not reply_text.strip():
        raise ValueError("resume needs a chosen action or a reply text")
    # essence sees a canonical question already set: the reply answers the clarification about that question
    return Payload(
        text=reply_text,
        language=previous.language,
        canonical_question=question,
        clarification_message=previous.clarification_message,
        context_type=ContextType.FOLLOW_UP,
    )
