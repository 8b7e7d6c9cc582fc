"""What a run produces: one `PipelineResult` that says what happened, whatever happened."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pipeline import text as textutil
from pipeline.envelope import Envelope
from pipeline.types import SourceReference, SuggestedAction


class ResultKind(StrEnum):
    ANSWER = "answer"
    CLARIFICATION = "clarification"
    REFUSAL = "refusal"
    BUSY = "busy"
    FAILURE = "failure"


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """The outcome of one run.

    `text` uses the neutral markup of `bot.messages.Reply`; its `[n]` markers refer to `sources`, which holds only
    the cited sources, renumbered 1..n. `reason` is machine-readable (refusal and failure kinds, clarification
    reason); `note` is a short user-facing remark (e.g. answered without the language model).
    """

    kind: ResultKind
    text: str
    language: str
    envelope: Envelope
    sources: tuple[SourceReference, ...] = ()
    suggested_actions: tuple[SuggestedAction, ...] = ()
    reason: str | None = None
    note: str | None = None
    degraded: bool = False  # a fallback made it (offline instead of the LLM, keyword-only search): never cached


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
