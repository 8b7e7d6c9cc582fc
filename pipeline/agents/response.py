"""response: offline, an extractive answer that quotes the block that answers, with its citation.

A source is cut into its Markdown blocks (pipeline.text.blocks): paragraphs, numbered steps, bullet lists, tables,
code. Each becomes a quotable unit: a short paragraph, list or code block whole; a long paragraph as windows of
consecutive sentences; a table as its header with the rows that match the question (or whole when small and none
does). Units are scored against the question by word overlap (the section's crumbs count half), or, when the
question is in another language than the docs and an `Embedder` is given, by embeddings; weighted by the source's
search rank. An exact identifier the question names (DOCBOT_LLM_MODEL, E-2041, ZX-42) narrows the units to those
that contain it, when any does. The best unit is quoted; others only when they add words of the question the first
ones lack. A short paragraph is quoted as `> text [n]`; a list, table or code block comes under a caption line
`**Page › Section** [n]`. In a regenerate round the units already quoted are left out, so the answer changes.
A poor search gets "the docs don't cover this" and the closest sections instead.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from pipeline import text as textutil
from pipeline.agents.base import LLM_OVERRULED, Strategy, run_with_fallback
from pipeline.agents.guardrails import beyond_capability
from pipeline.agents.quality import untraceable_lines
from pipeline.closest import close_sections, closest_list
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import UNSUPPORTED_LANGUAGE, is_supported, lexicon, texts
from pipeline.types import Embedder, QualityDecision, Role, SearchQuality, SourceReference

MIN_SENTENCE_WORDS = 3
SENTENCE_ENDS = (".", "!", "?", "。", "！", "？")


@dataclass(frozen=True, slots=True)
class Unit:
    """A quotable piece of a source: a block, part of a block, or a table's header with some rows."""

    source: SourceReference
    block: int  # 1000 x the block's position in the source, plus the first sentence of a window
    kind: str  # paragraph, list, table, code, quote
    text: str  # Markdown, as in the source
    ordered: bool = False
    score: float = 0.0


MAX_WHOLE_PARAGRAPH = 700
MAX_WINDOW_CHARS = 450
MAX_WHOLE_BLOCK = 2400
MAX_TABLE_ROWS = 14
MAX_ANSWER_CHARS = 2600
LONG_UNIT = 500
SECOND_SOURCE_SHARE = 0.8
_HOW_TO = ("how ", "steps", "set up", "setup", "install", "configure", "create", "connect", "enable", "add ")


def caption(source: SourceReference) -> str:
    """`Page › Section` for a block's caption line."""
    crumbs = [c for c in source.crumbs if c] or [source.title]
    if crumbs[-1] != source.title and source.title:
        crumbs.append(source.title)
    return " › ".join(crumbs[-2:])


def _defines(unit: Unit, name: str) -> bool:
    """Whether `unit` defines `name`: a table row or list item that opens with it (`| `NAME` | ...`, `- **NAME**`)."""
    for line in unit.text.splitlines():
        head = line.strip().lstrip("|-*+0123456789.) ").lstrip("`*").lower()
        if head.startswith(name.lower()):
            return True
    return False


def _items_naming(unit: Unit, names: set[str]) -> Unit:
    """A bullet list (a definition list, a list of codes) cut to its intro and the items that mention one of
    `names`: "what does ZX-42 mean?" quotes the ZX-42 item, not ZX-17 before it; a table to its header and the rows
    naming it (`KETTLE_KEEP_WARM` shares "kettle" with every row). Numbered steps stay whole."""
    if unit.kind == "table":
        lead, header, rows = textutil.table_rows(unit.text)
        named = [r for r in rows if any(textutil.mentions_identifier(r, n) for n in names)]
        if not header or not named or len(named) == len(rows):
            return unit
        return dataclasses.replace(unit, text="\n".join([*lead, *header, *named]))
    if unit.kind != "list" or unit.ordered:
        return unit
    intro: list[str] = []
    items: list[list[str]] = []
    for line in unit.text.splitlines():
        if line[:1] in "-*+" and line[1:2] == " ":
            items.append([line])
        elif items:
            items[-1].append(line)  # a nested item or a continuation line belongs to its item
        else:
            intro.append(line)
    kept = [item for item in items if any(textutil.mentions_identifier("\n".join(item), n) for n in names)]
    if not kept or len(kept) == len(items):
        return unit
    text = "\n".join([*intro, *(line for item in kept for line in item)])
    return dataclasses.replace(unit, text=text)


def _units_of(source: SourceReference, wanted: set[str], stop: frozenset[str], language: str) -> list[Unit]:
    units: list[Unit] = []
    for position, block in enumerate(textutil.blocks(source.text)):
        if block.kind in ("paragraph", "quote"):
            body = "\n".join(line.lstrip("> ").rstrip() for line in block.text.splitlines())
            flat = textutil.one_line(body)
            if textutil.word_count(flat) < MIN_SENTENCE_WORDS or flat.strip() == source.title.strip():
                continue
            planted = [s for s in textutil.sentences(body) if beyond_capability(s) == "injection"]
            if planted:  # a paragraph carrying instructions to an assistant: only its other sentences are quotable
                units.extend(
                    Unit(source, position * 1000 + i, "paragraph", sentence)
                    for i, sentence in enumerate(textutil.sentences(body))
                    if sentence not in planted and textutil.word_count(sentence) >= MIN_SENTENCE_WORDS
                )
                continue
            if len(flat) <= MAX_WHOLE_PARAGRAPH:
                units.append(Unit(source, position * 1000, "paragraph", flat))
                continue
            parts = textutil.sentences(body)
            for i in range(len(parts)):
                window = parts[i]
                for following in parts[i + 1 :]:
                    if len(window) + len(following) + 1 > MAX_WINDOW_CHARS:
                        break
                    window = f"{window} {following}"
                if textutil.word_count(window) >= MIN_SENTENCE_WORDS:
                    units.append(Unit(source, position * 1000 + i, "paragraph", window))
        elif block.kind == "table":
            intro, header, rows = textutil.table_rows(block.text)
            if not header:
                continue
            matching = [r for r in rows if wanted & textutil.features(r, stop, language)]
            chosen = (matching if matching and len(matching) < len(rows) else rows)[:MAX_TABLE_ROWS]
            lead = [line for line in intro if line.strip()]
            lead = textutil.reflow("\n".join(lead)).splitlines()
            units.append(Unit(source, position * 1000, "table", "\n".join([*lead, *header, *chosen])))
        elif block.kind in ("list", "code"):
            text = textutil.reflow(block.text) if block.kind == "list" else block.text
            text = "\n".join(line for line in text.splitlines() if line.strip())
            if len(text) > MAX_WHOLE_BLOCK:
                text = text[:MAX_WHOLE_BLOCK].rsplit("\n", 1)[0]
            units.append(Unit(source, position * 1000, block.kind, text, ordered=block.ordered))
    return units


def no_coverage_answer(
    language: str | None,
    sources: tuple[SourceReference, ...],
    limit: int = 3,
    *,
    question: str | None = None,
    docs_language: str = "en",
) -> str:
    """"The docs don't seem to cover this" in the person's language, then the closest sections labelled with their
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


MIN_RELATIVE_SIMILARITY = 0.5
REDRAFT_MIN_OVERLAP = 0.6  # the quality role's default: a model's redraft must pass the same check


class ResponseAgent:
    role: ClassVar[Role] = Role.RESPONSE

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        max_quotes: int = 3,
        max_quote_chars: int = 320,
        min_relative: float = 0.6,
        max_embedded: int = 32,
        llm: Strategy | None = None,
    ) -> None:
        self._embedder = embedder
        self._max_quotes = max_quotes
        self._max_quote_chars = max_quote_chars
        self._min_relative = min_relative
        self._max_embedded = max_embedded
        self._llm = llm

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        result = await run_with_fallback(payload, context, self._offline, self._llm)
        if result.strategy != "llm" or result.payload.docs_insufficient or not payload.source_references:
            return result
        flaw = self._model_draft_flaw(result.payload, payload, context)
        if flaw is None:
            return result
        # The model's draft is not taken when it cites no source although there are some, or when a redraft (after
        # a review asked for one) still fails the offline check: a weak model repeats the same draft, and two
        # rejected drafts would end in a clarification where the offline answer quotes the sources.
        offline = await self._offline(payload, context)
        return AgentResult(
            payload=offline.payload,
            decision=f"{offline.decision} (llm draft not taken: {flaw})",
            usage=result.usage,
            strategy=LLM_OVERRULED,
        )

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
            answer = no_coverage_answer(
                payload.language, sources, question=asked, docs_language=context.docs_language
            )
            reason = "no_sources" if not sources else "poor_search"
            return AgentResult(payload.evolve(response=answer, docs_insufficient=reason), "documents insufficient")
        question = payload.canonical_question or payload.text
        ranked = await self._scored(question, payload.language, context.docs_language, sources)
        if payload.quality_decision is QualityDecision.REGENERATE and payload.response:
            # a regenerate round: what was quoted did not pass, so the next-best units are quoted instead
            previous = textutil.comparable(payload.response)
            ranked = [u for u in ranked if textutil.comparable(u.text)[:120] not in previous]
        picked = self._pick(ranked, question, payload.language, context.docs_language)
        if not picked:
            answer = no_coverage_answer(
                payload.language, sources, question=asked, docs_language=context.docs_language
            )
            uncovered = payload.evolve(response=answer, docs_insufficient="no_quotable_block")
            return AgentResult(uncovered, "no quotable block")
        body = "\n\n".join(self._quote(u) for u in picked)
        answer = f"{texts(payload.language).answer_lead_in}\n\n{body}"
        if not is_supported(payload.language):
            answer = f"{UNSUPPORTED_LANGUAGE}\n\n{answer}"
        cited = sorted({u.source.number for u in picked})
        kinds = ", ".join(u.kind for u in picked)
        decision = f"extractive, {len(picked)} blocks ({kinds}) citing {cited}"
        return AgentResult(payload.evolve(response=answer, docs_insufficient=None), decision)

    @staticmethod
    def _quote(unit: Unit) -> str:
        if unit.kind == "paragraph":
            return f"> {unit.text} [{unit.source.number}]"
        return f"**{caption(unit.source)}** [{unit.source.number}]\n{unit.text}"

    async def _scored(
        self, question: str, language: str | None, docs_language: str, sources: tuple[SourceReference, ...]
    ) -> list[Unit]:
        wanted_codes = textutil.codes(question)
        if wanted_codes and any(wanted_codes & textutil.codes(s.text) for s in sources):
            # the question names a code the docs have: sources about other codes are not the answer
            sources = tuple(s for s in sources if wanted_codes & textutil.codes(s.text))
        stop = lexicon(language).stopwords | lexicon(docs_language).stopwords
        wanted = textutil.features(question, stop, docs_language)
        units = [u for s in sources for u in _units_of(s, wanted, stop, docs_language)]
        names = textutil.identifiers(question)
        named = [u for u in units if any(textutil.mentions_identifier(u.text, n) for n in names)]
        if named:
            units = [_items_naming(u, names) for u in named]  # an exact name the docs have: only what contains it
        defines = {id(u): any(_defines(u, n) for n in names) for u in units}
        if not units:
            return []
        similarity = await self._similarity(question, language, docs_language, units, stop)
        top_confidence = max(s.confidence for s in sources) or 1.0
        best_sim = max(similarity, default=0.0)
        how_to = question.casefold().startswith(_HOW_TO) or any(f" {w}" in question.casefold() for w in _HOW_TO[1:])
        scored = []
        for unit, sim in zip(units, similarity, strict=True):
            if sim < best_sim * MIN_RELATIVE_SIMILARITY:
                continue  # far less about the question than the best unit: noise, whatever its source
            rank_prior = unit.source.confidence / top_confidence
            bonus = (0.08 if how_to and unit.ordered else 0.0) + (0.15 if defines[id(unit)] else 0.0)
            score = 0.5 * sim + 0.4 * rank_prior + bonus
            scored.append(Unit(unit.source, unit.block, unit.kind, unit.text, unit.ordered, score))
        return sorted(scored, key=lambda u: u.score, reverse=True)

    async def _similarity(
        self, question: str, language: str | None, docs_language: str, units: list[Unit], stop: frozenset[str]
    ) -> list[float]:
        wanted = textutil.features(question, stop, docs_language)
        lexical = []
        for unit in units:
            own = textutil.features(unit.text, stop, docs_language)
            context = own | textutil.features(" ".join(unit.source.crumbs), stop, docs_language)
            share = 0.6 * textutil.overlap(wanted, own) + 0.4 * textutil.overlap(wanted, context)
            lexical.append(share * min(1.0, (LONG_UNIT / max(len(unit.text), 1)) ** 0.35))  # long blocks match by size
        if self._embedder is None or (language in (None, docs_language) and max(lexical, default=0.0) > 0):
            return lexical
        # another language than the docs (or no shared word): embeddings, for the first units only
        head = [u.text[:600] for u in units[: self._max_embedded]]
        query = await self._embedder.embed_queries([question])
        vectors = await self._embedder.embed_passages(head)
        cosine = vectors @ query[0]
        spread = float(cosine.max() - cosine.min())
        # e5 cosines crowd into a narrow band; stretch them so relevance weighs as much as word overlap
        dense = [float(v) for v in ((cosine - cosine.min()) / spread if spread > 1e-6 else np.ones_like(cosine))]
        return dense + [0.0] * (len(units) - len(head))

    def _pick(self, ranked: list[Unit], question: str, language: str | None, docs_language: str) -> list[Unit]:
        """The best unit, then others only when they bring words of the question the ones before lack."""
        if not ranked:
            return []
        stop = lexicon(language).stopwords | lexicon(docs_language).stopwords
        wanted = textutil.features(question, stop, docs_language)
        floor = ranked[0].score * self._min_relative
        picked: list[Unit] = []
        covered: set[str] = set()
        used: set[tuple[str, int]] = set()
        size = 0
        for unit in ranked:
            if unit.score < floor or len(picked) == self._max_quotes:
                break
            block_key = (unit.source.chunk_id, unit.block // 1000)
            if block_key in used or (picked and size + len(unit.text) > MAX_ANSWER_CHARS):
                continue
            own = textutil.features(unit.text, stop, docs_language) & wanted
            other_section = all(unit.source.chunk_id != u.source.chunk_id for u in picked)
            close = unit.score >= ranked[0].score * SECOND_SOURCE_SHARE
            if picked and not own - covered and not (other_section and close):
                continue  # adds nothing the question asked for (a second section only when nearly as good)
            picked.append(unit)
            used.add(block_key)
            covered |= own
            size += len(unit.text)
        return sorted(picked, key=lambda u: (u.source.number, u.block))
