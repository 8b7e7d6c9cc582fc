"""The closest sections under a refusal: listed only when they share a topic with the question.

Search always returns something: asked "how do I bake sourdough bread?", the nearest sections of a bot's docs are
benchmarks and model notes, which help nobody. A refusal lists a section only when it is *reasonably close*: its
page or section title shares a content word of the question, or its text shares at least two of them (all of them
when the question has one). A word found in the text of most candidates (the product's own name, "docbot")
says nothing about closeness there and is not counted. Words are compared stemmed in the docs' language, function
words of the question's and the docs' language left out; names and identifiers ("Slack", "DOCBOT_LLM_MODEL") match
in any language.
Each is labelled with its page, "Slack › Creating the app", never a bare heading ("Results").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from pipeline import text as textutil
from pipeline.locales import lexicon, texts
from pipeline.types import RefusalReason, SearchHit, SourceReference

MAX_CLOSEST = 3
MIN_SHARED_IN_TEXT = 2
UBIQUITOUS_FROM = 4  # with this many candidates, a word in more than half of them is not a topic


class Section(Protocol):
    @property
    def title(self) -> str: ...

    @property
    def crumbs(self) -> tuple[str, ...]: ...

    @property
    def text(self) -> str: ...


S = TypeVar("S", bound=Section)


def section_label(section: Section) -> str:
    """`Page › Section` (the last two crumbs, the section's own title last); the page alone for a page's intro."""
    trail = [c for c in section.crumbs if c] or [section.title]
    if section.title and trail[-1] != section.title:
        trail.append(section.title)
    return " › ".join(trail[-2:])


def topic_words(question: str, language: str | None, docs_language: str) -> frozenset[str]:
    """The question's content words as the docs write them (stemmed in the docs' language), function and pointing
    words of both languages left out."""
    lex, docs_lex = lexicon(language), lexicon(docs_language)
    stop = lex.stopwords | docs_lex.stopwords | frozenset(lex.deictics) | frozenset(docs_lex.deictics)
    return frozenset(textutil.features(question, stop, docs_language, asked=True))


def close_sections(
    question: str,
    sections: Sequence[S],
    *,
    language: str | None,
    docs_language: str,
    limit: int = MAX_CLOSEST,
) -> list[S]:
    """The sections (in their given order, one per label) reasonably close to `question`, at most `limit`."""
    wanted = topic_words(question, language, docs_language)
    words = [
        (
            textutil.features(" ".join((*s.crumbs, s.title)), (), docs_language),
            textutil.features(s.text, (), docs_language),
        )
        for s in sections
    ]
    in_text = wanted
    if len(sections) >= UBIQUITOUS_FROM:
        in_text = frozenset(w for w in wanted if sum(w in body for _, body in words) * 2 <= len(sections))
    if not wanted:
        return []
    needed_in_text = min(MIN_SHARED_IN_TEXT, len(wanted))
    kept: list[S] = []
    labels: set[str] = set()
    for section, (path, body) in zip(sections, words, strict=True):
        label = section_label(section)
        if label in labels:
            continue
        if wanted & path or len(in_text & body) >= needed_in_text:
            kept.append(section)
            labels.add(label)
        if len(kept) == limit:
            break
    return kept


def numbered(hits: Sequence[SearchHit]) -> tuple[SourceReference, ...]:
    """Search hits as sources [1]..[n], so a refusal can cite (link) them."""
    return tuple(
        SourceReference(
            number=i,
            chunk_id=h.chunk_id,
            doc_id=h.doc_id,
            title=h.title,
            crumbs=h.crumbs,
            url=h.url,
            text=h.text,
            confidence=round(h.score, 4),
        )
        for i, h in enumerate(hits, start=1)
    )


def closest_list(language: str | None, sources: Sequence[SourceReference]) -> str:
    """"The closest sections I found:" and one cited bullet per source, in the person's language ("" for none)."""
    if not sources:
        return ""
    bullets = "\n".join(f"- **{section_label(s)}** [{s.number}]" for s in sources)
    return f"{texts(language).closest_sections}\n{bullets}"


def out_of_scope_refusal(
    question: str, hits: Sequence[SearchHit], *, language: str | None, docs_language: str
) -> tuple[str, tuple[SourceReference, ...]]:
    """The out-of-scope refusal in the person's language, with the reasonably close sections as cited bullets
    when there are any (else the refusal alone), and the sources those bullets cite."""
    ranked = sorted(hits, key=lambda h: h.score, reverse=True)
    sources = numbered(close_sections(question, ranked, language=language, docs_language=docs_language))
    refusal = texts(language).refusal[RefusalReason.OUT_OF_SCOPE]
    listed = closest_list(language, sources)
    return (f"{refusal}\n\n{listed}" if listed else refusal), sources
