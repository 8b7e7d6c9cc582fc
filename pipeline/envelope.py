"""The envelope passed from role to role.

System attributes live on `Envelope` and only the runner changes them. Agents see a frozen `Payload` and a frozen
`Context`, and return an `AgentResult` holding a new payload; they never receive the envelope, so they cannot touch
system attributes by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, ClassVar, Protocol

from pipeline.messages.vocabulary import ProgressCallback as ProgressCallback
from pipeline.messages.vocabulary import Step as Step
from pipeline.messages.vocabulary import StepStatus as StepStatus
from pipeline.messages.vocabulary import StreamCallback as StreamCallback
from pipeline.types import (
    Answerability,
    ClarificationReason,
    ContextType,
    DocsGap,
    FailureKind,
    HistoryMessage,
    LLMUsage,
    QualityDecision,
    Reading,
    RefusalReason,
    Role,
    SearchHit,
    SearchQuality,
    SourceReference,
    StrategyUsed,
    SuggestedAction,
)


@dataclass(frozen=True, slots=True)
class Payload:
    """What the agents work on; attribute names follow the architecture seed."""

    text: str
    language: str | None = None
    confidence: float | None = None
    text_eng: str | None = None
    canonical_question: str | None = None
    context_type: ContextType | None = None
    within_scope: bool | None = None
    scope_reason: str | None = None
    search_results: tuple[SearchHit, ...] = ()
    search_quality: SearchQuality | None = None
    augmented_prompt: str | None = None
    source_references: tuple[SourceReference, ...] = ()
    response: str | None = None
    quality_decision: QualityDecision | None = None
    quality_notes: tuple[str, ...] = ()
    needs_clarification: bool = False
    clarification_reason: ClarificationReason | None = None
    clarification_message: str | None = None
    suggested_actions: tuple[SuggestedAction, ...] = ()
    refusal_reason: RefusalReason | None = None  # the question is out of scope or beyond the bot's capabilities
    chosen_action: SuggestedAction | None = None  # set when a conversation resumes from a button press
    # "the docs don't cover this", typed: why the response is the localized not-covered text; None for a real
    # answer. The manager makes it a no_coverage refusal.
    docs_insufficient: DocsGap | None = None
    answerability: Answerability | None = None  # set by the quality role: does the evidence answer the question?
    reading: Reading | None = None  # set by the augmentation role: the sources' passages read against the question

    def evolve(self, **changes: Any) -> Payload:
        """A copy with `changes` applied (the payload itself is immutable)."""
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Context:
    """Read-only facts about the conversation an agent may use."""

    history: tuple[HistoryMessage, ...] = ()  # earlier messages of the thread, oldest first, current excluded
    user_name: str = "user"
    collections: tuple[str, ...] = ("default",)
    docs_language: str = "en"
    deadline: float | None = None  # monotonic time by which the whole run must end
    stream: StreamCallback | None = None  # shown the answer text so far while the LLM writes it (LLM mode only)
    progress: ProgressCallback | None = None  # told each step as it starts and ends (a task timeline)


@dataclass(frozen=True, slots=True)
class AgentResult:
    payload: Payload
    decision: str  # short, human-readable summary for the trace, e.g. "language=ru (0.97)"
    usage: LLMUsage = LLMUsage()
    strategy: StrategyUsed = StrategyUsed.OFFLINE


class Agent(Protocol):
    """One role: one small class with one `run`."""

    role: ClassVar[Role]

    async def run(self, payload: Payload, context: Context) -> AgentResult: ...


@dataclass(frozen=True, slots=True)
class Hop:
    """One step of a run, as recorded in the trace."""

    role: Role
    decision: str
    started_at: datetime
    duration_ms: float
    wait_ms: float = 0.0  # time spent waiting for a free slot of the role
    strategy: StrategyUsed = StrategyUsed.OFFLINE
    usage: LLMUsage = LLMUsage()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class EnvelopeError:
    role: Role
    kind: FailureKind
    message: str  # operator-facing; never contains user text or secrets


@dataclass(slots=True)
class Envelope:
    """System attributes plus the payload. Mutated only by the runner."""

    conversation_id: str
    message_id: str
    payload: Payload
    create_ts: datetime
    update_ts: datetime
    process_count: int = 0
    total_processing_time: float = 0.0  # seconds spent inside agents
    sender_role: Role | None = None
    target_role: Role | None = None
    rounds: dict[str, int] = field(default_factory=dict)  # "research" / "regenerate" counters
    errors: list[EnvelopeError] = field(default_factory=list)
    hops: list[Hop] = field(default_factory=list)
