"""`HybridRetriever`: dense + keyword + crumbs + summary levels, fused adaptively, one hit per section."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from pipeline.types import Embedder, SearchHit, SearchQuality, SearchRequest, SearchResponse
from storage.doc_tables import SessionFactory
from storage.search.corpus import SearchCorpus
from storage.search.fusion import (
    MAX_TITLES,
    adaptive_weights,
    dense_to_unit,
    dispersion,
    fuse,
    is_cross_language,
    title_path,
    with_titles,
)
from storage.search.quality import FITTED, QualityThresholds, grade
from storage.search.tokenize import stopword_share, tokenize
from storage.vector_index import VectorIndex, VectorIndexUnavailable

log = logging.getLogger(__name__)


def _top(scores: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_], k: int) -> npt.NDArray[np.int64]:
    """Rows of the k best positive scores among the allowed rows."""
    masked = np.where(mask, scores, 0.0)
    k = min(k, int(np.count_nonzero(masked > 0)))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    return np.argpartition(-masked, k - 1)[:k].astype(np.int64)


def _relative(values: npt.NDArray[np.float32], best: float) -> npt.NDArray[np.float32]:
    return (values / best).astype(np.float32) if best > 0 else np.zeros_like(values)


class HybridRetriever:
    """Implements `pipeline.types.Retriever` over the document store, the vector index and in-memory BM25 levels.

    Call `load()` at start and `reload()` after an ingest that changed something (the Ingestor's `on_change`).
    """

    def __init__(
        self,
        db: SessionFactory,
        embedder: Embedder,
        index: VectorIndex,
        *,
        candidates: int = 50,
        thresholds: QualityThresholds = FITTED,
        docs_language: str = "en",
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._db = db
        self._embedder = embedder
        self._index = index
        self._candidates = candidates
        self._thresholds = thresholds
        self._docs_language = docs_language
        self._clock = clock
        self._corpus: SearchCorpus | None = None
        self._reload_lock = asyncio.Lock()
        self._title_vectors: dict[str, npt.NDArray[np.float32]] = {}  # title path -> passage vector (title level)

    async def load(self) -> None:
        """(Re)build the keyword levels from the database, in a worker thread; searches use the old snapshot
        until the new one is ready."""
        async with self._reload_lock:
            chunks, docs = await SearchCorpus.fetch(self._db)
            corpus = await asyncio.to_thread(SearchCorpus, chunks, docs)
            await self._embed_titles(corpus)
            self._corpus = corpus
            log.info("search corpus loaded", extra={"chunks": len(chunks), "documents": len(docs)})

    async def _embed_titles(self, corpus: SearchCorpus) -> None:
        """Embed each section's title path once (kept across reloads); skipped past `MAX_TITLES` distinct paths."""
        paths = list(dict.fromkeys(title_path(c.crumbs, c.title) for c in corpus.chunks))
        missing = [p for p in paths if p not in self._title_vectors]
        if not missing or len(paths) > MAX_TITLES:
            return
        vectors = await self._embedder.embed_passages(missing)
        self._title_vectors.update(zip(missing, vectors, strict=True))

    reload = load

    @property
    def corpus(self) -> SearchCorpus | None:
        """The current snapshot (None before `load`); read-only use, e.g. keyword-only baselines in benchmarks."""
        return self._corpus

    async def search(self, request: SearchRequest) -> SearchResponse:
        timer = _Timer(self._clock)
        if self._corpus is None:
            await self.load()
        corpus = self._corpus
        assert corpus is not None
        mask = corpus.mask(request.collections)
        if len(corpus) == 0 or not mask.any():
            return SearchResponse(hits=(), quality=SearchQuality.POOR, timings_ms=timer.done())
        pool = max(self._candidates, request.top_k * 4)

        # dense: the original text, plus the English form when the pipeline has one
        queries = [request.text] + ([request.text_eng] if request.text_eng and request.text_eng != request.text else [])
        vectors = await self._embedder.embed_queries(queries)
        timer.lap("embed")
        dense_hits = await self._dense_matches(vectors, request.collections, pool)
        timer.lap("dense")

        # keyword levels score every chunk (sparse, fast); collections are masked before choosing candidates
        tokens = tokenize(request.text_eng or request.text)
        text_scores = corpus.text_level.scores(tokens) * mask
        timer.lap("keywords")
        crumbs_scores = corpus.crumbs_level.scores(tokens) * mask
        timer.lap("crumbs")
        doc_scores = corpus.summary_level.scores(tokens)
        summary_scores = np.where(corpus.chunk_doc >= 0, doc_scores[np.maximum(corpus.chunk_doc, 0)], 0.0) * mask
        timer.lap("summary")

        rows = {corpus.row_of[i] for i in (dense_hits or {}) if i in corpus.row_of}
        for scores in (text_scores, crumbs_scores, summary_scores):
            rows.update(int(r) for r in _top(scores.astype(np.float32), mask, pool))
        candidates = np.array(sorted(r for r in rows if mask[r]), dtype=np.int64)  # strict even if an index is not
        if candidates.size == 0:
            return SearchResponse(hits=(), quality=SearchQuality.POOR, timings_ms=timer.done())
        cosine = self._cosines(corpus, candidates, vectors, dense_hits)
        coverage = corpus.text_level.coverage(tokens)
        cross_language = not request.text_eng and is_cross_language(  # an English form restores monolingual scores
            request.language, self._docs_language, stopword_share=stopword_share(request.text), coverage=coverage
        )
        if dense_hits is not None and cross_language:
            cosine = with_titles(cosine, self._title_cosines(corpus, candidates, vectors))
        weights = adaptive_weights(
            coverage,
            dispersion(text_scores[mask]),
            cross_language=cross_language,
            dense_available=dense_hits is not None,
        )
        levels = {
            "dense": dense_to_unit(cosine, cross_language=cross_language),
            "keywords": _relative(text_scores[candidates], float(text_scores.max())),
            "crumbs": _relative(crumbs_scores[candidates], float(crumbs_scores.max())),
            "summary": _relative(summary_scores[candidates], float(summary_scores.max())),
        }
        fused = fuse(levels, weights)
        hits = _one_per_section(corpus, candidates, fused, cosine, levels, request.top_k)
        timer.lap("fusion")
        log.debug(
            "search fused",
            extra={"keyword_weight": round(weights.keywords, 3), "cross_language": cross_language, "hits": len(hits)},
        )
        top = hits[0].score if hits else 0.0
        margin = top - hits[1].score if len(hits) > 1 else top
        return SearchResponse(
            hits=hits,
            quality=grade(top, margin, self._thresholds),
            timings_ms=timer.done(),
            keyword_only=dense_hits is None,
        )

    async def _dense_matches(
        self, vectors: npt.NDArray[np.float32], collections: tuple[str, ...], pool: int
    ) -> dict[str, float] | None:
        """Best cosine per chunk over the query vectors; None when the vector index is unavailable."""
        matches: dict[str, float] = {}
        try:
            for vector in vectors:
                for match in await self._index.query(vector, top_k=pool, collections=collections):
                    matches[match.id] = max(match.score, matches.get(match.id, -1.0))
        except VectorIndexUnavailable as exc:
            log.warning("vector index unavailable, keyword-only search", extra={"reason": exc.reason})
            return None
        return matches

    def _cosines(
        self,
        corpus: SearchCorpus,
        candidates: npt.NDArray[np.int64],
        vectors: npt.NDArray[np.float32],
        dense_hits: dict[str, float] | None,
    ) -> npt.NDArray[np.float32]:
        """Cosine of every candidate; ones found only by keywords are scored exactly when the index can
        (the local one), else count as unrelated."""
        if dense_hits is None:
            return np.zeros(candidates.size, dtype=np.float32)
        known = dict(dense_hits)
        missing = [corpus.chunks[r].id for r in candidates if corpus.chunks[r].id not in known]
        scores_for = getattr(self._index, "scores_for", None)
        if missing and callable(scores_for):
            for vector in vectors:
                for chunk_id, score in scores_for(vector, missing).items():
                    known[chunk_id] = max(score, known.get(chunk_id, -1.0))
        return np.array([known.get(corpus.chunks[r].id, 0.0) for r in candidates], dtype=np.float32)

    def _title_cosines(
        self, corpus: SearchCorpus, candidates: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32] | None:
        """Best cosine between the query vectors and each candidate's title path; None when titles are not embedded."""
        chunks = corpus.chunks
        titles = [self._title_vectors.get(title_path(chunks[r].crumbs, chunks[r].title)) for r in candidates]
        if any(t is None for t in titles) or not titles:
            return None
        matrix = np.vstack([t for t in titles if t is not None])
        return np.asarray((matrix @ vectors.T).max(axis=1), dtype=np.float32)


class _Timer:
    """Milliseconds per step, for `SearchResponse.timings_ms`."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._started = self._last = clock()
        self.timings: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = self._clock()
        self.timings[name] = round((now - self._last) * 1000, 3)
        self._last = now

    def done(self) -> dict[str, float]:
        self.timings["total"] = round((self._clock() - self._started) * 1000, 3)
        return self.timings


def _one_per_section(
    corpus: SearchCorpus,
    candidates: npt.NDArray[np.int64],
    fused: npt.NDArray[np.float32],
    cosine: npt.NDArray[np.float32],
    levels: dict[str, npt.NDArray[np.float32]],
    top_k: int,
) -> tuple[SearchHit, ...]:
    """The best chunk of each section, best first; ties (e.g. all zero) fall back on the embedding."""
    hits: list[SearchHit] = []
    seen: set[tuple[str, str]] = set()
    for i in np.lexsort((-cosine, -fused)):
        info = corpus.chunks[int(candidates[i])]
        if (info.doc_id, info.section) in seen:
            continue
        seen.add((info.doc_id, info.section))
        hits.append(
            SearchHit(
                chunk_id=info.id,
                doc_id=info.doc_id,
                section=info.section,
                title=info.title,
                crumbs=info.crumbs,
                url=info.url,
                text=info.text,
                score=float(fused[i]),
                collection=info.collection,
                level_scores={
                    "dense": float(cosine[i]),
                    "keywords": float(levels["keywords"][i]),
                    "crumbs": float(levels["crumbs"][i]),
                    "summary": float(levels["summary"][i]),
                },
            )
        )
        if len(hits) == top_k:
            break
    return tuple(hits)
