"""response: offline, an extractive answer that quotes the passage that answers, first and whole, with its citation.

The augmentation role has read the sources against the question (`payload.reading`, pipeline/reading.py): their
passages best first. The first passage leads the answer, whole: a list, table or code block as it is; a paragraph
whole when it fits in `LEAD_CHARS`, else the sentences that answer with those after (then before) them, so the
answer reads in context. Another passage
follows only when it adds something: words of the question the ones before lack, or a second section nearly as
good as the first (never the same text twice, as when a manual repeats a section). A short paragraph is quoted as
`> text [n]`; a list, table or code block comes under a caption line `**Page › Section** [n]`. In a regenerate
round the passages already quoted are left out, so the answer changes. A poor search gets "the docs don't cover
this" and the closest sections instead.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from pipeline import text as textutil
from pipeline.agents.base import OfflineResult, Strategy, keep_or_overrule
from pipeline.agents.guardrails import beyond_capability
from pipeline.agents.quality import untraceable_lines
from pipeline.closest import close_sections, closest_list
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import UNSUPPORTED_LANGUAGE, is_supported, lexicon, texts
from pipeline.reading import Reader
from pipeline.types import (
    DocsGap,
    Embedder,
    Passage,
    PassageKind,
    QualityDecision,
    Role,
    SearchQuality,
    SourceReference,
    is_team_answer,
)

MAX_ANSWER_CHARS = 2600
LEAD_CHARS = 800  # a paragraph that leads is quoted whole up to this length, else around its answering sentences
SECOND_SOURCE_SHARE = 0.7  # another section is quoted too when its best passage scores this share of the lead's


def caption(source: SourceReference) -> str:
    """`Page › Section` for a block's caption line."""
    crumbs = [c for c in source.crumbs if c] or [source.title]
    if crumbs[-1] != source.title and source.title:
        crumbs.append(source.title)
    return " › ".join(crumbs[-2:])


def in_context(passage: Passage, source: SourceReference, limit: int = LEAD_CHARS) -> Passage:
    """A paragraph passage grown to its whole paragraph when that fits in `limit` characters, else with the
    sentences that follow it (then those before it) up to `limit`; other passages unchanged."""
    if passage.kind is not PassageKind.PARAGRAPH or len(passage.text) >= limit:
        return passage
    blocks = textutil.blocks(source.text)
    position, first = divmod(passage.block, 1000)
    if position >= len(blocks) or blocks[position].kind not in ("paragraph", "quote"):
        return passage
    body = "\n".join(line.lstrip("> ").rstrip() for line in blocks[position].text.splitlines())
    said = textutil.sentences(body)
    if any(beyond_capability(sentence) == "injection" for sentence in said):
        return passage  # a paragraph carrying instructions to an assistant: only its own clean sentences are quoted
    if not said or textutil.comparable(said[min(first, len(said) - 1)])[:60] not in textutil.comparable(passage.text):
        return passage  # not a window of this block (a changed source)
    start = stop = min(first, len(said) - 1)
    size = len(said[start])
    while stop + 1 < len(said) and size + len(said[stop + 1]) + 1 <= limit:
        stop += 1
        size += len(said[stop]) + 1
    while start > 0 and size + len(said[start - 1]) + 1 <= limit:
        start -= 1
        size += len(said[start]) + 1
    return dataclasses.replace(passage, text=" ".join(said[start : stop + 1]))


def no_coverage_answer(
    language: str | None,
    sources: tuple[SourceReference, ...],
    limit: int = 3,
    *,
    question: str | None = None,
    docs_language: str = "en",
) -> str:
    """ "The docs don't seem to cover this" in the person's language, then the closest sections labelled with their
    page as cited bullets; with `question`, only the sections reasonably close to it (`pipeline.closest`)."""
    words = texts(language)
    opening = "" if is_supported(language) else f"{UNSUPPORTED_LANGUAGE}\n\n"  # first, as the answer's framing
    listed = (
        list(sources[:limit])
        if question is None
        else close_sections(question, sources, language=language, docs_language=docs_language, limit=limit)
    )
    if not listed:
        return opening + words.no_coverage
    return f"{opening}{words.no_coverage}\n\n{closest_list(language, listed)}"


REDRAFT_MIN_OVERLAP = 0.6  # the quality role's default: a model's redraft must pass the same check


class ResponseAgent:
    role: ClassVar[Role] = Role.RESPONSE

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        max_quotes: int = 3,
        min_relative: float = 0.6,
        llm: Strategy | None = None,
    ) -> None:
        """`embedder` reads the sources when the payload arrives without a reading (an agent run on its own)."""
        self._reader = Reader(embedder)
        self._max_quotes = max_quotes
        self._min_relative = min_relative
        self._llm = llm

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        async def overrule(model: AgentResult, _offline: OfflineResult) -> str | None:
            # The model's draft is not taken when it cites no source although there are some, or when a redraft
            # (after a review asked for one) still fails the offline check: a weak model repeats the same draft, and
            # two rejected drafts would end in a clarification where the offline answer quotes the sources.
            if model.payload.docs_insufficient or not payload.source_references:
                return None
            flaw = self._model_draft_flaw(model.payload, payload, context)
            return None if flaw is None else f"llm draft not taken: {flaw}"

        return await keep_or_overrule(payload, context, self._offline, self._llm, overrule)

    @staticmethod
    def _model_draft_flaw(drafted: Payload, asked: Payload, context: Context) -> str | None:
        answer = drafted.response or ""
        known = {s.number for s in asked.source_references}
        if not known & set(textutil.citations(answer)):
            return "it cites no source"
        if asked.quality_decision is not QualityDecision.REGENERATE:
            return None  # a first draft goes to review as it is
        faults = untraceable_lines(
            answer,
            asked.source_references,
            language=drafted.language,
            docs_language=context.docs_language,
            min_overlap=REDRAFT_MIN_OVERLAP,
        )
        return f"the redraft still fails the offline check ({faults[0]})" if faults else None

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        sources = payload.source_references
        asked = payload.text_eng or payload.canonical_question or payload.text
        if not sources or payload.search_quality is SearchQuality.POOR:
            answer = no_coverage_answer(payload.language, sources, question=asked, docs_language=context.docs_language)
            reason = DocsGap.NO_SOURCES if not sources else DocsGap.POOR_SEARCH
            return AgentResult(payload.evolve(response=answer, docs_insufficient=reason), "documents insufficient")
        question = payload.canonical_question or payload.text
        reading = payload.reading or await self._reader.read(question, payload.language, context.docs_language, sources)
        ranked = list(reading.passages)
        if payload.quality_decision is QualityDecision.REGENERATE and payload.response:
            # a regenerate round: what was quoted did not pass, so the next-best passages are quoted instead
            previous = textutil.comparable(payload.response)
            ranked = [p for p in ranked if textutil.comparable(p.text)[:120] not in previous]
        picked = self._pick(ranked, question, payload.language, context.docs_language, sources)
        if not picked:
            answer = no_coverage_answer(payload.language, sources, question=asked, docs_language=context.docs_language)
            uncovered = payload.evolve(response=answer, docs_insufficient=DocsGap.NO_QUOTABLE_BLOCK)
            return AgentResult(uncovered, "no quotable block")
        by_number = {s.number: s for s in sources}
        # what the team answered in earlier threads comes below the docs when both answer (stable: the lead stays
        # first among the docs' passages)
        picked.sort(key=lambda p: is_team_answer(by_number[p.source].doc_id))
        body = "\n\n".join(self._quote(p, by_number[p.source]) for p in picked)
        words = texts(payload.language)
        only_team = all(is_team_answer(by_number[p.source].doc_id) for p in picked)
        answer = f"{words.team_answer_lead_in if only_team else words.answer_lead_in}\n\n{body}"
        if not is_supported(payload.language):
            answer = f"{UNSUPPORTED_LANGUAGE}\n\n{answer}"
        cited = list(dict.fromkeys(p.source for p in picked))
        kinds = ", ".join(p.kind.value for p in picked)
        decision = f"extractive, {len(picked)} passages ({kinds}) citing {cited}"
        return AgentResult(payload.evolve(response=answer, docs_insufficient=None, reading=reading), decision)

    @staticmethod
    def _quote(passage: Passage, source: SourceReference) -> str:
        if passage.kind is PassageKind.PARAGRAPH:
            return f"> {passage.text} [{passage.source}]"
        return f"**{caption(source)}** [{passage.source}]\n{passage.text}"

    def _pick(
        self,
        ranked: list[Passage],
        question: str,
        language: str | None,
        docs_language: str,
        sources: tuple[SourceReference, ...],
    ) -> list[Passage]:
        """The lead passage in its context, then others only when they bring words of the question the ones before
        lack, or come from another section nearly as good; never a text already quoted (a manual that repeats a
        section). The lead stays first; the rest follow best first."""
        if not ranked:
            return []
        by_number = {s.number: s for s in sources}
        stop = lexicon(language).stopwords | lexicon(docs_language).stopwords
        wanted = textutil.features(question, stop, docs_language, asked=True)
        floor = ranked[0].score * self._min_relative
        picked: list[Passage] = []
        quoted: list[str] = []
        covered: set[str] = set()
        used: set[tuple[int, int]] = set()
        size = 0
        for passage in ranked:
            if passage.score < floor or len(picked) == self._max_quotes:
                break
            block_key = (passage.source, passage.block // 1000)
            same = textutil.comparable(passage.text)
            if block_key in used or any(same in q or q in same for q in quoted):
                continue
            if not picked:
                passage = in_context(passage, by_number[passage.source], LEAD_CHARS)
            elif size + len(passage.text) > MAX_ANSWER_CHARS:
                continue
            own = textutil.features(passage.text, stop, docs_language) & wanted
            other_section = all(passage.source != p.source for p in picked)
            close = passage.score >= ranked[0].score * SECOND_SOURCE_SHARE
            if picked and not own - covered and not (other_section and close):
                continue  # adds nothing the question asked for (a second section only when nearly as good)
            picked.append(passage)
            quoted.append(textutil.comparable(passage.text))
            used.add(block_key)
            covered |= own
            size += len(passage.text)
        return picked
