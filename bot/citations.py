"""A reply's citations: the numbered sources with how old each is, and an approved team answer cited by who gave it,
where and when ("answered by @person in #channel on 2026-11-20") instead of its question."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pipeline.locales import texts
from pipeline.messages import Citation
from pipeline.types import SourceReference
from storage.source_facts import SourceFacts

PASSAGE_CHARS = 300


def cite(sources: Sequence[SourceReference], facts: Mapping[str, SourceFacts], language: str) -> tuple[Citation, ...]:
    """Citations in the sources' order; a source without facts (its document removed since) is cited without a
    date."""
    t = texts(language)
    citations = []
    for source in sources:
        found = facts.get(source.doc_id)
        title, crumbs, changed_on = source.title, source.crumbs, ""
        if found is not None and found.attribution is not None:
            by = found.attribution
            title = t.answered_by.format(
                person=f"@{by.author}", channel=f"#{by.channel}", date=f"{by.answered_at:%Y-%m-%d}"
            )
            crumbs = ()
        elif found is not None:
            changed_on = f"{found.changed_at:%Y-%m-%d}"
        citations.append(
            Citation(
                number=source.number,
                title=title,
                crumbs=crumbs,
                url=source.url,
                chunk_id=source.chunk_id,
                confidence=source.confidence,
                text=shorten(source.text, PASSAGE_CHARS),
                changed_on=changed_on,
            )
        )
    return tuple(citations)


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
