"""`HybridRetriever`: dense + keyword + crumbs + summary levels, fused adaptively, one hit per section; for a question
in another language than the docs, the dense level also reads each section's title path and each chunk's units
(sentences, table rows, list items); the keyword levels read a question in the docs' language as the docs spell it."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from pipeline.types import Embedder, SearchHit, SearchQuality, SearchRequest, SearchResponse
from storage.doc_tables import EmbeddingRow, SessionFactory
from storage.errors import EmbeddingUnavailable
from storage.local_index import LocalVectorIndex
from storage.search.corpus import FetchedDocuments, SearchCorpus, document_hashes, fetch_documents
from storage.search.fusion import (
    MAX_TITLES,
    MAX_UNITS,
    ORDER_UNIT_WEIGHT,
    TITLE_BATCH,
    adaptive_weights,
    dense_to_unit,
    dispersion,
    fuse,
    is_cross_language,
    short_text_lowered,
    title_path,
    with_phrases,
    with_titles,
    with_units,
)
from storage.search.quality import FITTED, QualityThresholds, grade
from storage.search.spelling import spelled_as_docs
from storage.search.tokenize import overlap_tail, stopword_share, tokenize
from storage.search.units import text_units
from storage.search.vocabulary import unknown_terms
from storage.vector_index import VectorIndex, VectorIndexUnavailable, VectorRecord

log = logging.getLogger(__name__)
MAX_TERM_VERDICTS = 20_000  # per snapshot and collections; past it they start afresh (a few MB at most)


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

    Call `load()` at start and `reload()` after an ingest that changed something (the Ingestor's `on_change`) or
    when another replica moved the corpus version. Both bring the in-memory snapshot up to date by a diff of
    document content hashes: only added, changed and removed documents are read, and the keyword levels are
    re-indexed from stored token ids in a worker thread. With `snapshot_dir`, the snapshot (and the local index's
    vectors) are saved there after each change and restored from there at start, so start-up reads no chunk rows.
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
        snapshot_dir: Path | None = None,
        freeze_snapshots: bool = False,
    ) -> None:
        """`freeze_snapshots`: after each snapshot is in place (and its title and unit levels are embedded), move
        every object then alive out of the cyclic garbage collector's sight (`gc.freeze`). A snapshot is ~10
        long-lived objects per chunk; at 100k chunks a full collection that walks them held the GIL for 130 ms in
        the middle of an update, stalling the event loop. They are still freed by reference counting when a newer
        snapshot replaces them (a snapshot holds no reference cycles: tests/storage/test_search_snapshot.py). The
        composition root turns it on; it is process-wide, so a library user decides."""
        self._db = db
        self._embedder = embedder
        self._index = index
        self._candidates = candidates
        self._thresholds = thresholds
        self._docs_language = docs_language
        self._clock = clock
        self._corpus: SearchCorpus | None = None
        self._reload_lock = asyncio.Lock()
        self._snapshot_dir = snapshot_dir
        self._title_vectors: dict[str, npt.NDArray[np.float32]] = {}  # title path -> passage vector (title level)
        self._unit_vectors: dict[str, npt.NDArray[np.float32]] = {}  # sentence -> passage vector (unit level)
        self._chunk_units: dict[str, tuple[str, ...]] = {}  # chunk id -> its units, once all of them are embedded
        self._titles_task: asyncio.Task[None] | None = None
        self._freeze = freeze_snapshots
        # each term's "used by the docs" verdict per snapshot and collections: the answerability decision asks about
        # a question's words and then its names, and a word no document uses costs a scan of the vocabulary
        self._term_verdicts: tuple[SearchCorpus | None, dict[tuple[str, ...], dict[str, bool]]] = (None, {})

    async def load(self) -> None:
        """Bring the snapshot up to date with the database (restoring the saved one first, at start); searches use
        the old snapshot until the new one is ready. Nothing heavy runs on the event loop."""
        async with self._reload_lock:
            corpus = self._corpus
            starting = corpus is None
            if corpus is None:
                corpus = await asyncio.to_thread(self._restore)
            diff = corpus.diff(await document_hashes(self._db))
            if diff.empty:
                self._corpus = corpus
                self._settle(full=starting)
                self._start_titles(corpus)
                return
            fetched = await fetch_documents(self._db, diff.fetch)
            gone = diff.removed | {d.id for d in fetched.docs}
            old_chunk_ids = await asyncio.to_thread(corpus.chunk_ids_of, frozenset(gone))
            updated = await asyncio.to_thread(corpus.updated, diff.removed, fetched)
            if isinstance(self._index, LocalVectorIndex):
                await self._index.replace(old_chunk_ids, await self._vector_records(fetched))
            self._corpus = updated
            self._settle(full=starting)
            self._start_titles(updated)
            log.info(
                "search corpus updated",
                extra={"chunks": len(updated), "removed_docs": len(diff.removed), "read_docs": len(fetched.docs)},
            )
            await self._save(updated)

    def _start_titles(self, corpus: SearchCorpus) -> None:
        """Embed the title paths and units the title and unit levels lack, in the background: loading never waits
        for them, and a question asked meanwhile is ranked without those levels (each applies once every
        candidate's titles, or units, are in)."""
        if self._titles_task is not None and not self._titles_task.done():
            self._titles_task.cancel()
        self._titles_task = asyncio.get_running_loop().create_task(self._embed_levels(corpus))

    async def wait_for_levels(self) -> None:
        """For benchmarks, tests and the CLI: until the background title and unit embedding has finished."""
        if self._titles_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._titles_task

    wait_for_titles = wait_for_levels  # the earlier name (the title level came first)

    async def close(self) -> None:
        """Stop embedding the title and unit levels in the background (at shutdown, or once no question that they
        rank will be asked). A level is saved only once complete, so the next start embeds what is missing."""
        task, self._titles_task = self._titles_task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task])

    def reads_cross_language(self, request: SearchRequest) -> bool:
        """Whether `request` is ranked as a question in another language than the docs': the only questions the
        title and unit levels rank (False before `load`)."""
        corpus = self._corpus
        if corpus is None:
            return False
        return self._cross_language(request, corpus.text_level.coverage(tokenize(request.text_eng or request.text)))

    def _cross_language(self, request: SearchRequest, coverage: float) -> bool:
        return not request.text_eng and is_cross_language(  # an English form restores monolingual scores
            request.language, self._docs_language, stopword_share=stopword_share(request.text), coverage=coverage
        )

    def _settle(self, *, full: bool = False) -> None:
        """The objects alive now are long-lived: out of the cyclic collector's walks (see `freeze_snapshots`).
        Cyclic garbage frozen with them would never be freed, so it is collected first: all of it at start (before
        anything is served: start-up's migrations and imports leave ~60 MB of it at 100k chunks), the young
        generations only after an update (a full collection then is the stall this avoids)."""
        if self._freeze:
            gc.collect(2 if full else 1)
            gc.freeze()

    async def _embed_levels(self, corpus: SearchCorpus) -> None:
        await self._embed_titles(corpus)
        await self._embed_units(corpus)
        self._settle()

    async def _embed_titles(self, corpus: SearchCorpus) -> None:
        """Embed each section's title path once (kept across reloads and, with a snapshot folder, across restarts),
        a small batch at a time so a question's own embedding never queues behind many titles; skipped past
        `MAX_TITLES` distinct paths."""
        paths = await asyncio.to_thread(_title_paths, corpus)  # a pass over every chunk: off the loop
        if len(paths) > MAX_TITLES:
            return
        if not self._title_vectors:
            self._title_vectors.update(await asyncio.to_thread(self._read_titles))
        known = self._title_vectors
        missing = await asyncio.to_thread(lambda: [p for p in paths if p not in known])
        if not missing:
            return
        try:
            for start in range(0, len(missing), TITLE_BATCH):
                batch = missing[start : start + TITLE_BATCH]
                vectors = await self._embedder.embed_passages(batch)
                self._title_vectors.update(zip(batch, vectors, strict=True))
        except Exception as exc:  # best effort: without titles the level is skipped, never the search
            log.warning("title level not embedded", extra={"error": type(exc).__name__})
            return
        await asyncio.to_thread(self._write_titles)

    async def _embed_units(self, corpus: SearchCorpus) -> None:
        """Embed each chunk's units (`storage.search.units`) once, after the titles, the same way: small batches,
        kept across reloads and restarts; skipped past `MAX_UNITS` units."""
        units_of = await asyncio.to_thread(_units_of, corpus)
        if units_of is None:
            self._chunk_units = {}
            return
        # until the new units are in, a candidate whose text changed (or is new) leaves the level out
        current = self._chunk_units
        self._chunk_units = await asyncio.to_thread(
            lambda: {c: u for c, u in current.items() if units_of.get(c) == u}
        )
        if not self._unit_vectors:
            self._unit_vectors.update(await asyncio.to_thread(self._read_vectors, "units"))
        known = self._unit_vectors
        missing = await asyncio.to_thread(
            lambda: list(dict.fromkeys(u for units in units_of.values() for u in units if u not in known))
        )
        try:
            for start in range(0, len(missing), TITLE_BATCH):
                batch = missing[start : start + TITLE_BATCH]
                vectors = await self._embedder.embed_passages(batch)
                self._unit_vectors.update(zip(batch, vectors, strict=True))
        except Exception as exc:  # best effort, as the titles
            log.warning("unit level not embedded", extra={"error": type(exc).__name__})
            return
        self._chunk_units = units_of
        held = self._unit_vectors
        self._unit_vectors = await asyncio.to_thread(_kept_units, held, units_of)  # drop those of old texts
        if missing:
            await asyncio.to_thread(self._write_units)

    def _vectors_file(self, level: str) -> Path | None:
        return None if self._snapshot_dir is None else self._snapshot_dir / f"{level}-{self._embedder.dim}.npz"

    def _titles_file(self) -> Path | None:
        return self._vectors_file("titles")

    def _read_titles(self) -> dict[str, npt.NDArray[np.float32]]:
        return self._read_vectors("titles")

    def _read_vectors(self, level: str) -> dict[str, npt.NDArray[np.float32]]:
        path = self._vectors_file(level)
        if path is None or not path.is_file():
            return {}
        try:
            with np.load(path) as saved:
                names = [str(n) for n in saved["paths"]]
                return dict(zip(names, saved["vectors"].astype(np.float32), strict=True))
        except (OSError, ValueError, KeyError) as exc:
            log.warning("level vectors unreadable", extra={"level": level, "error": type(exc).__name__})
            return {}

    def _write_titles(self) -> None:
        self._write_vectors("titles", self._title_vectors)

    def _write_units(self) -> None:
        self._write_vectors("units", self._unit_vectors)

    def _write_vectors(self, level: str, vectors_of: dict[str, npt.NDArray[np.float32]]) -> None:
        path = self._vectors_file(level)
        if path is None or not vectors_of:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_name(f".{path.name}-{uuid.uuid4().hex}.npz")
            names, vectors = list(vectors_of), np.vstack(list(vectors_of.values()))
            np.savez(temp, paths=np.array(names), vectors=vectors)
            os.replace(temp, path)
        except OSError as exc:
            log.warning("level vectors not saved", extra={"level": level, "error": type(exc).__name__})

    reload = load

    async def _vector_records(self, fetched: FetchedDocuments) -> list[VectorRecord]:
        """The stored embeddings of the fetched chunks (for the local index of a replica that did not ingest)."""
        assert isinstance(self._index, LocalVectorIndex)
        info = {c.id: c for c, _ in fetched.chunks}
        ids = list(info)
        records: list[VectorRecord] = []
        for start in range(0, len(ids), 1000):
            async with self._db.session() as session:
                rows = await session.execute(
                    select(EmbeddingRow.chunk_id, EmbeddingRow.vector).where(
                        EmbeddingRow.chunk_id.in_(ids[start : start + 1000]), EmbeddingRow.dim == self._index.dim
                    )
                )
                for chunk_id, blob in rows.all():
                    c = info[chunk_id]
                    vector = np.frombuffer(blob, dtype=np.float32)
                    records.append(
                        VectorRecord(c.id, vector, c.doc_id, c.section, c.title, c.crumbs, c.url, c.collection)
                    )
        return records

    # ---- snapshot files ----------------------------------------------------------------------------------------

    def _restore(self) -> SearchCorpus:
        """The saved snapshot (with the local index's vectors), or an empty one (blocking)."""
        folder = self._current_folder()
        if folder is None:
            return SearchCorpus.empty_levels()
        try:
            corpus = SearchCorpus.load(folder)
            if isinstance(self._index, LocalVectorIndex):
                if not self._index.restore(folder):  # both or neither: the diff assumes the vectors are there
                    return SearchCorpus.empty_levels()
                self._index.keep_only(set(corpus.row_of))
        except (OSError, ValueError, KeyError) as exc:
            log.warning("search snapshot unreadable, rebuilding", extra={"error": type(exc).__name__})
            shutil.rmtree(folder, ignore_errors=True)  # so the rebuilt one (same content, same name) replaces it
            return SearchCorpus.empty_levels()
        log.info("search snapshot restored", extra={"chunks": len(corpus), "snapshot": folder.name})
        return corpus

    def _current_folder(self) -> Path | None:
        if self._snapshot_dir is None:
            return None
        try:
            name = (self._snapshot_dir / "current").read_text().strip()
        except OSError:
            return None
        folder = self._snapshot_dir / name
        return folder if name and folder.is_dir() else None

    async def _save(self, corpus: SearchCorpus) -> None:
        """Write the snapshot to a fresh folder, then point `current` at it (atomic renames: a replica sharing the
        folder never reads half a snapshot); older folders are removed."""
        root = self._snapshot_dir
        if root is None:
            return
        content = "\n".join(sorted(f"{d}:{h}" for d, h in corpus.doc_hashes.items())).encode()
        name = hashlib.blake2b(content, digest_size=10).hexdigest()
        temp = root / f".tmp-{uuid.uuid4().hex}"
        try:
            await asyncio.to_thread(corpus.save, temp)
            if isinstance(self._index, LocalVectorIndex):
                await self._index.save(temp)
            await asyncio.to_thread(_publish, root, temp, name)
        except OSError as exc:
            log.warning("search snapshot not saved", extra={"error": type(exc).__name__})
            await asyncio.to_thread(shutil.rmtree, temp, True)

    @property
    def corpus(self) -> SearchCorpus | None:
        """The current snapshot (None before `load`); read-only use, e.g. keyword-only baselines in benchmarks."""
        return self._corpus

    def unknown_terms(self, text: str, collections: tuple[str, ...]) -> tuple[str, ...]:
        """`pipeline.types.Vocabulary`: the search terms of `text` that no chunk, title path or document summary
        of `collections` in the current snapshot uses, not even misspelt (blocking; () before `load`)."""
        corpus = self._corpus
        if corpus is None or len(corpus) == 0:
            return ()
        chunks = corpus.mask(collections)
        docs = corpus.doc_mask(chunks)
        levels = ((corpus.text_level, chunks), (corpus.crumbs_level, chunks), (corpus.summary_level, docs))
        return unknown_terms(levels, text, self._verdicts(corpus, collections))

    def _verdicts(self, corpus: SearchCorpus, collections: tuple[str, ...]) -> dict[str, bool]:
        """The term verdicts of this snapshot and these collections (a new snapshot starts afresh)."""
        if self._term_verdicts[0] is not corpus:
            self._term_verdicts = (corpus, {})
        verdicts = self._term_verdicts[1].setdefault(collections, {})
        if len(verdicts) > MAX_TERM_VERDICTS:
            verdicts.clear()
        return verdicts

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
        try:
            vectors = await self._embedder.embed_queries(queries)
        except EmbeddingUnavailable as exc:  # a remote embedder failed: keyword levels only (never the bundled
            # model instead: its vectors would not be comparable with the index's)
            log.warning("query not embedded, keyword-only search", extra={"failure": exc.failure.value})
            vectors = np.zeros((len(queries), self._embedder.dim), dtype=np.float32)
            dense_hits = None
        else:
            timer.lap("embed")
            dense_hits = await self._dense_matches(vectors, request.collections, pool)
        timer.lap("dense")
        # scoring every chunk of a large corpus takes milliseconds: off the event loop
        return await asyncio.to_thread(self._rank, corpus, request, vectors, dense_hits, mask, pool, timer)

    def _rank(
        self,
        corpus: SearchCorpus,
        request: SearchRequest,
        vectors: npt.NDArray[np.float32],
        dense_hits: dict[str, float] | None,
        mask: npt.NDArray[np.bool_],
        pool: int,
        timer: _Timer,
    ) -> SearchResponse:
        # keyword levels score every chunk (sparse, fast); collections are masked before choosing candidates
        text = request.text_eng or request.text
        tokens = tokenize(text)
        coverage = corpus.text_level.coverage(tokens)  # of the words as typed: how much of them the docs use
        cross_language = self._cross_language(request, coverage)
        if not cross_language:  # "wifi", "blue tooth", "offere": the terms as the docs spell them
            tokens = spelled_as_docs(text, corpus.text_level)
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
        text_scores = with_phrases(corpus.text_level, tokens, text_scores, candidates)
        cosine = self._cosines(corpus, candidates, vectors, dense_hits)
        if dense_hits is not None and cross_language:
            cosine = with_titles(cosine, self._title_cosines(corpus, candidates, vectors))
            cosine = with_units(cosine, self._unit_cosines(corpus, candidates, vectors))
            cosine = short_text_lowered(cosine, corpus.token_counts(candidates))
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
        ranking = fused
        if dense_hits is not None and not cross_language:
            # ordered by each chunk's best unit too; graded without it, so the poor-search cut keeps its calibration
            raised = with_units(cosine, self._unit_cosines(corpus, candidates, vectors), ORDER_UNIT_WEIGHT)
            ranking = fuse(levels | {"dense": dense_to_unit(raised)}, weights)
        hits = _one_per_section(corpus, candidates, ranking, cosine, levels, request.top_k)
        timer.lap("fusion")
        log.debug(
            "search fused",
            extra={"keyword_weight": round(weights.keywords, 3), "cross_language": cross_language, "hits": len(hits)},
        )
        top, runner_up = _best_two_sections(corpus, candidates, fused)
        margin = top - runner_up
        return SearchResponse(
            hits=hits,
            quality=grade(top, margin, self._thresholds),
            timings_ms=timer.done(),
            keyword_only=dense_hits is None,
            top_score=top,
            margin=margin,
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

    def _unit_cosines(
        self, corpus: SearchCorpus, candidates: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32] | None:
        """Per candidate, the best cosine between the query vectors and one of its units; None when the units are
        not (all) embedded. A chunk without units gets -1 (nothing to raise toward)."""
        chunk_units = self._chunk_units
        per_chunk = [chunk_units.get(corpus.chunks[r].id) for r in candidates]
        if not per_chunk or any(u is None for u in per_chunk):
            return None
        units = [u for us in per_chunk if us is not None for u in us]
        out = np.full(candidates.size, -1.0, dtype=np.float32)
        if not units:
            return out
        sims = (np.vstack([self._unit_vectors[u] for u in units]) @ vectors.T).max(axis=1)
        start = 0
        for i, us in enumerate(per_chunk):
            count = len(us or ())
            if count:
                out[i] = sims[start : start + count].max()
            start += count
        return out


def _title_paths(corpus: SearchCorpus) -> list[str]:
    """Every section's title path once, in corpus order."""
    return list(dict.fromkeys(title_path(c.crumbs, c.title) for c in corpus.chunks))


def _kept_units(
    vectors: dict[str, npt.NDArray[np.float32]], units_of: dict[str, tuple[str, ...]]
) -> dict[str, npt.NDArray[np.float32]]:
    """The unit vectors still used by some chunk."""
    kept = {u for units in units_of.values() for u in units}
    return {u: v for u, v in vectors.items() if u in kept}


def _units_of(corpus: SearchCorpus) -> dict[str, tuple[str, ...]] | None:
    """Chunk id -> its units, or None past `MAX_UNITS` units (blocking: reads the chunk texts)."""
    out: dict[str, tuple[str, ...]] = {}
    total = 0
    for row, chunk in enumerate(corpus.chunks):
        units = tuple(text_units(corpus.text(row)))
        total += len(units)
        if total > MAX_UNITS:
            return None
        out[chunk.id] = units
    return out


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


SECTION_CHARS = 2000  # a hit carries its whole section up to this length, else its best chunk with the chunks around


def _section_text(corpus: SearchCorpus, row: int, limit: int = SECTION_CHARS) -> str:
    """The text of `row`'s section: its chunk with the chunks of the same section next to it (rows of a document
    are in chunk order), the following first, while the whole stays within `limit`; the overlap the chunker repeats
    at the start of a chunk is dropped."""
    info = corpus.chunks[row]

    def same(other: int) -> bool:
        if not 0 <= other < len(corpus.chunks):
            return False
        neighbour = corpus.chunks[other]
        return neighbour.doc_id == info.doc_id and neighbour.section == info.section

    text, start, stop = corpus.text(row), row, row
    grew = True
    while grew:
        grew = False
        if same(stop + 1) and len(joined := _joined(text, corpus.text(stop + 1))) <= limit:
            stop, text, grew = stop + 1, joined, True
        if same(start - 1) and len(joined := _joined(corpus.text(start - 1), text)) <= limit:
            start, text, grew = start - 1, joined, True
    return text


def _joined(first: str, second: str) -> str:
    """Two consecutive chunks as one text, without the tail of `first` that `second` opens with."""
    tail = overlap_tail(first)
    if tail and second.startswith(tail):  # a long paragraph cut at a sentence: it goes on after the overlap
        return f"{first}\n\n{second[len(tail):].strip()}"
    return f"{first}\n\n{second}"  # cut between blocks


def _best_two_sections(
    corpus: SearchCorpus, candidates: npt.NDArray[np.int64], fused: npt.NDArray[np.float32]
) -> tuple[float, float]:
    """The best score of the best section and of the next one (0.0 where there is none: the margin is then the
    whole score)."""
    best: list[float] = []
    seen: set[tuple[str, str]] = set()
    for i in np.argsort(-fused, kind="stable"):
        info = corpus.chunks[int(candidates[i])]
        if (info.doc_id, info.section) not in seen:
            seen.add((info.doc_id, info.section))
            best.append(float(fused[i]))
            if len(best) == 2:
                break
    best += [0.0, 0.0]
    return best[0], best[1]


def _one_per_section(
    corpus: SearchCorpus,
    candidates: npt.NDArray[np.int64],
    fused: npt.NDArray[np.float32],
    cosine: npt.NDArray[np.float32],
    levels: dict[str, npt.NDArray[np.float32]],
    top_k: int,
) -> tuple[SearchHit, ...]:
    """The best chunk of each section, best first, with the rest of its section (`_section_text`); ties (e.g. all
    zero) fall back on the embedding."""
    hits: list[SearchHit] = []
    seen: set[tuple[str, str]] = set()
    for i in np.lexsort((-cosine, -fused)):
        row = int(candidates[i])
        info = corpus.chunks[row]
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
                text=_section_text(corpus, row),
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


def _publish(root: Path, temp: Path, name: str) -> None:
    """Move `temp` to `root/name` (unless that snapshot exists already), point `current` at it, prune the rest."""
    final = root / name
    if final.exists():
        shutil.rmtree(temp, ignore_errors=True)
    else:
        os.replace(temp, final)
    pointer = root / f".current-{uuid.uuid4().hex}"
    pointer.write_text(name)
    os.replace(pointer, root / "current")
    for other in root.iterdir():
        if other.is_dir() and other.name != name and not other.name.startswith(".tmp-"):
            shutil.rmtree(other, ignore_errors=True)
