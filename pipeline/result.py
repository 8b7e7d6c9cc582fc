"""What a run produces: one `PipelineResult` that says what happened, whatever happened."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pipeline import text as textutil
from pipeline.envelope import Envelope
from pipeline.types import ClarificationReason, FailureKind, RefusalReason, SourceReference, SuggestedAction


class ResultKind(StrEnum):
    ANSWER = "answer"
    CLARIFICATION = "clarification"
    REFUSAL = "refusal"
    BUSY = "busy"
    FAILURE = "failure"


ResultReason = RefusalReason | ClarificationReason | FailureKind
"""A refusal's, a clarification's, or a busy or failed run's reason (its value is what the reply and logs carry)."""


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """The outcome of one run.

    `text` uses the neutral markup of `pipeline.messages.Reply`; its `[n]` markers refer to `sources`, which holds only
    the cited sources, renumbered 1..n. `reason` is machine-readable (refusal and failure kinds, clarification
    reason); `note` is a short user-facing remark (e.g. answered without the language model).

    `fallback_notes` say, per role, where the run fell short of its configuration: an LLM strategy that fell
    back to offline (`"response: llm->offline"`; the reason is in the trace), a search that ran on keywords only.
    A result with any is `degraded`: shown to the person, but never cached (the model may be back for the next asker).
    """

    kind: ResultKind
    text: str
    language: str
    envelope: Envelope
    sources: tuple[SourceReference, ...] = ()
    suggested_actions: tuple[SuggestedAction, ...] = ()
    reason: ResultReason | None = None
    note: str | None = None
    fallback_notes: tuple[str, ...] = ()

    @property
    def degraded(self) -> bool:
        """A fallback shaped this result (see `fallback_notes`): do not cache it."""
        return bool(self.fallback_notes)


def cited_sources(text: str, sources: tuple[SourceReference, ...]) -> tuple[str, tuple[SourceReference, ...]]:
    """Keep only the sources `text` cites, renumbered 1..n in order of first citation; markers follow suit.

    Markers that point at no source are dropped from the text.
    """
    by_number = {s.number: s for s in sources}
    mapping: dict[int, int] = {}
    kept: list[SourceReference] = []
    for number in textutil.citations(text):
        if number in by_number and number not in mapping:
            mapping[number] = len(kept) + 1
            source = by_number[number]
            kept.append(
                SourceReference(
                    number=mapping[number],
                    chunk_id=source.chunk_id,
                    doc_id=source.doc_id,
                    title=source.title,
                    crumbs=source.crumbs,
                    url=source.url,
                    text=source.text,
                    confidence=source.confidence,
                )
            )
    return textutil.renumber_citations(text, mapping), tuple(kept)
