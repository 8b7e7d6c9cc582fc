"""The manager: the only router. One transition table maps (sender role, payload facts) to the next step.

Rows are tried in order; the first whose sender and condition match decides. A step is either the next role
(optionally counting a research/regenerate round) or a terminal outcome. The runner applies the decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from pipeline.envelope import Payload
from pipeline.types import ActionKind, QualityDecision, Role


class Outcome(StrEnum):
    """How a run ends when the manager routes to no further role."""

    ANSWER = "answer"
    CLARIFICATION = "clarification"
    REFUSAL = "refusal"
    NO_COVERAGE = "no_coverage"  # a refusal: the run ends on the localized "not covered" text, a docs gap


class Sender(StrEnum):
    """Sender patterns besides a concrete role."""

    START = "start"  # nothing ran yet (a new question or a resumed conversation)
    ANY = "any"
    ANY_BUT_CLARIFICATION = "any but clarification"


@dataclass(frozen=True, slots=True)
class Situation:
    """What the manager may look at: who spoke last, the payload, and how many rounds are spent."""

    sender: Role | None
    payload: Payload
    research_rounds: int
    regenerate_rounds: int
    max_research_rounds: int
    max_regenerate_rounds: int


class Condition(StrEnum):
    ALWAYS = "always"
    REFUSED = "refused"
    NEEDS_CLARIFICATION = "needs clarification"
    RESUME_SEARCH = "resumed with a search choice"
    RESUME_REPHRASE = "resumed with a rephrase choice"
    NOT_SEARCHED = "not searched yet"
    SEARCHED = "searched and within scope"
    APPROVED = "quality: approve"
    RESEARCH = "quality: research, rounds left"
    RESEARCH_EXHAUSTED = "quality: research, no rounds left"
    REGENERATE = "quality: regenerate, rounds left"
    REGENERATE_EXHAUSTED = "quality: regenerate, no rounds left"
    CLARIFY = "quality: clarify"
    UNANSWERABLE = "quality: the docs do not answer it"
    NOT_COVERED = "quality: approve, or research with no rounds left, of a 'not covered' or empty response"


def _decision(s: Situation) -> QualityDecision | None:
    return s.payload.quality_decision


def _ends_on(s: Situation) -> bool:
    """The quality role's decision ends the run (approve, or research with no rounds left)."""
    decision = _decision(s)
    return decision is QualityDecision.APPROVE or (
        decision is QualityDecision.RESEARCH and s.research_rounds >= s.max_research_rounds
    )


def _not_covered(s: Situation) -> bool:
    """"The docs don't cover this", typed (`docs_insufficient`, never recognised by the response's words), or no
    response at all."""
    return s.payload.docs_insufficient is not None or not s.payload.response


def _chosen(s: Situation) -> ActionKind | None:
    return s.payload.chosen_action.kind if s.payload.chosen_action is not None else None


CONDITIONS: Mapping[Condition, Callable[[Situation], bool]] = {
    Condition.ALWAYS: lambda s: True,
    Condition.REFUSED: lambda s: s.payload.refusal_reason is not None or s.payload.within_scope is False,
    Condition.NEEDS_CLARIFICATION: lambda s: s.payload.needs_clarification,
    Condition.RESUME_SEARCH: lambda s: _chosen(s) is ActionKind.SEARCH,
    Condition.RESUME_REPHRASE: lambda s: _chosen(s) is ActionKind.REPHRASE,
    Condition.NOT_SEARCHED: lambda s: s.payload.search_quality is None,
    Condition.SEARCHED: lambda s: s.payload.search_quality is not None,
    Condition.APPROVED: lambda s: _decision(s) is QualityDecision.APPROVE,
    Condition.RESEARCH: lambda s: _decision(s) is QualityDecision.RESEARCH
    and s.research_rounds < s.max_research_rounds,
    Condition.RESEARCH_EXHAUSTED: lambda s: _decision(s) is QualityDecision.RESEARCH,
    Condition.REGENERATE: lambda s: _decision(s) is QualityDecision.REGENERATE
    and s.regenerate_rounds < s.max_regenerate_rounds,
    Condition.REGENERATE_EXHAUSTED: lambda s: _decision(s) is QualityDecision.REGENERATE,
    Condition.CLARIFY: lambda s: _decision(s) is QualityDecision.CLARIFY,
    Condition.UNANSWERABLE: lambda s: s.payload.answerability is not None and not s.payload.answerability.answerable,
    Condition.NOT_COVERED: lambda s: _ends_on(s) and _not_covered(s),
}


@dataclass(frozen=True, slots=True)
class Transition:
    sender: Role | Sender
    when: Condition
    to: Role | Outcome
    counts_round: str | None = None  # "research" / "regenerate": the runner adds one to that counter

    def matches(self, situation: Situation) -> bool:
        if self.sender is Sender.ANY:
            sender_ok = True
        elif self.sender is Sender.ANY_BUT_CLARIFICATION:
            sender_ok = situation.sender is not Role.CLARIFICATION
        elif self.sender is Sender.START:
            sender_ok = situation.sender is None
        else:
            sender_ok = situation.sender is self.sender
        return sender_ok and CONDITIONS[self.when](situation)


R, Out, S, C = Role, Outcome, Sender, Condition

TABLE: tuple[Transition, ...] = (
    # universal rules: any role may refuse or ask to clarify
    Transition(S.ANY, C.REFUSED, Out.REFUSAL),
    Transition(S.ANY_BUT_CLARIFICATION, C.NEEDS_CLARIFICATION, R.CLARIFICATION),
    # a new question, or a conversation resumed from a clarification
    Transition(S.START, C.RESUME_SEARCH, R.SEARCH),
    Transition(S.START, C.RESUME_REPHRASE, R.CLARIFICATION),
    Transition(S.START, C.ALWAYS, R.LANG),
    # understanding the question
    Transition(R.LANG, C.ALWAYS, R.TRANSLATION),
    Transition(R.TRANSLATION, C.ALWAYS, R.ESSENCE),
    Transition(R.ESSENCE, C.ALWAYS, R.GUARDRAILS),
    # guardrails twice: capability before search, scope from the evidence after it
    Transition(R.GUARDRAILS, C.NOT_SEARCHED, R.SEARCH),
    Transition(R.SEARCH, C.ALWAYS, R.GUARDRAILS),
    Transition(R.GUARDRAILS, C.SEARCHED, R.AUGMENTATION),
    # answering and checking
    Transition(R.AUGMENTATION, C.ALWAYS, R.RESPONSE),
    Transition(R.RESPONSE, C.ALWAYS, R.QUALITY),
    Transition(R.QUALITY, C.UNANSWERABLE, Out.NO_COVERAGE),  # "the docs don't say" with the closest sections
    Transition(R.QUALITY, C.NOT_COVERED, Out.NO_COVERAGE),  # before the rows that end on an answer
    Transition(R.QUALITY, C.APPROVED, Out.ANSWER),
    Transition(R.QUALITY, C.RESEARCH, R.SEARCH, counts_round="research"),
    Transition(R.QUALITY, C.RESEARCH_EXHAUSTED, Out.ANSWER),
    Transition(R.QUALITY, C.REGENERATE, R.RESPONSE, counts_round="regenerate"),
    Transition(R.QUALITY, C.REGENERATE_EXHAUSTED, R.CLARIFICATION),
    Transition(R.QUALITY, C.CLARIFY, R.CLARIFICATION),
    Transition(R.CLARIFICATION, C.ALWAYS, Out.CLARIFICATION),
)


class NoRoute(Exception):
    """No row of the table matched: a bug in an agent or the table, reported as a failure."""

    def __init__(self, sender: Role | None) -> None:
        super().__init__(f"no transition from {sender.value if sender else 'start'}")
        self.sender = sender


class Manager:
    """Routes by the table. Pure and synchronous: it reads a `Situation` and returns the matching row."""

    def __init__(self, table: tuple[Transition, ...] = TABLE) -> None:
        self.table = table

    def route(self, situation: Situation) -> Transition:
        for row in self.table:
            if row.matches(situation):
                return row
        raise NoRoute(situation.sender)
