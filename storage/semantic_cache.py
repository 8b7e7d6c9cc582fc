"""The semantic cache: a canonical question close enough (cosine >= threshold) to one whose answer was approved,
for the same collections and corpus version, gets that answer at once.

Vectors are held in memory per (collections, corpus version) and persisted in the `semantic_cache` table; a bucket
is loaded from the table the first time it is asked for. Re-ingesting bumps the corpus version, so old entries stop
matching; `forget_older` deletes them.

Embeddings barely see numbers ("set the volume to 20" and "... to 80" are 0.96 apart with E5), so a match also
needs the same numbers and codes (any word with a digit) in both questions, and the same language of the asker (a
German question never gets a cached English answer). Entries are grouped by (language, numbers and codes): a lookup
is one matrix product over its group, not a scan over every cached question.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import structlog
from sqlalchemy import delete, or_, select, update

from pipeline.types import Embedder, QualityDecision, SourceReference, Vector
from storage.doc_tables import SessionFactory
from storage.tables import SemanticCacheRow

log = structlog.get_logger(__name__)

BucketKey = tuple[str, int]


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    """An approved answer to replay: the text with its [n] markers, the sources they refer to, its language."""

    question: str
    response: str
    language: str
    sources: tuple[SourceReference, ...] = ()
    similarity: float = 1.0  # of the question that found it


GroupKey = tuple[str, frozenset[str]]  # (language, identifiers)


@dataclass(slots=True)
class _Group:
    vectors: np.ndarray[Any, np.dtype[np.float32]]
    answers: list[CachedAnswer] = field(default_factory=list)
    row_ids: list[int | None] = field(default_factory=list)

    def add(self, vector: Vector, answer: CachedAnswer, row_id: int | None) -> None:
        self.vectors = np.vstack([self.vectors, vector[None, :]]) if self.answers else vector[None, :]
        self.answers.append(answer)
        self.row_ids.append(row_id)


@dataclass(slots=True)
class _Bucket:
    groups: dict[GroupKey, _Group] = field(default_factory=dict)

    def add(self, vector: Vector, answer: CachedAnswer, row_id: int | None) -> None:
        key = (answer.language, identifiers(answer.question))
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _Group(vectors=np.zeros((0, vector.shape[0]), dtype=np.float32))
        group.add(vector, answer, row_id)


_IDENTIFIER = re.compile(r"\w*\d[\w.-]*")


def identifiers(text: str) -> frozenset[str]:
    """Numbers, versions and codes in a question (`E-2041`, `v2.1`, `20`): they must match exactly."""
    return frozenset(token.strip(".-") for token in _IDENTIFIER.findall(text.lower()))


def collections_key(collections: Sequence[str], answerer: str = "offline") -> str:
    """The stored key of a cache partition: who made the answers (offline, or which model) and over which
    collections. Answers of one answerer are never served in another's place (switching LLM mode on must not
    replay the offline answers cached before, nor the other way round)."""
    return f"{answerer}|" + ",".join(sorted(set(collections)))


def _to_json(answer: CachedAnswer) -> dict[str, Any]:
    return {
        "response": answer.response,
        "language": answer.language,
        "sources": [asdict(s) | {"crumbs": list(s.crumbs)} for s in answer.sources],
    }


def _from_json(question: str, data: dict[str, Any]) -> CachedAnswer:
    sources = tuple(SourceReference(**(s | {"crumbs": tuple(s["crumbs"])})) for s in data.get("sources", []))
    return CachedAnswer(question=question, response=data["response"], language=data["language"], sources=sources)


class SemanticCache:
    """`db` is `storage.db.Database` (or None: memory only); `embedder` embeds the canonical questions."""

    def __init__(
        self, db: SessionFactory | None, embedder: Embedder, threshold: float = 0.95, *, answerer: str = "offline"
    ) -> None:
        """`answerer` names what makes the answers (`"offline"`, or the models in LLM mode): a partition of its own."""
        if not 0 < threshold <= 1:
            raise ValueError("threshold must be in (0, 1]")
        self.answerer = answerer
        self.db = db
        self.embedder = embedder
        self.threshold = threshold
        self._buckets: dict[BucketKey, _Bucket] = {}
        self._lock = asyncio.Lock()

    async def lookup(
        self,
        question: str,
        collections: Sequence[str],
        corpus_version: int,
        *,
        language: str,
        vector: Vector | None = None,
    ) -> CachedAnswer | None:
        """The approved answer, in `language` (the asker's), of the most similar cached question with the same
        numbers and codes, if it is within the threshold. `vector`: the question's embedding when already known."""
        bucket = await self._bucket((collections_key(collections, self.answerer), corpus_version))
        group = bucket.groups.get((language, identifiers(question)))
        if group is None:
            return None
        vector = await self._embed(question) if vector is None else np.asarray(vector, dtype=np.float32)
        scores = group.vectors @ vector
        best = int(np.argmax(scores))
        similarity = float(scores[best])
        if similarity < self.threshold:
            return None
        await self._count_hit(group.row_ids[best])
        found = group.answers[best]
        return CachedAnswer(found.question, found.response, found.language, found.sources, similarity)

    async def store(
        self,
        question: str,
        collections: Sequence[str],
        corpus_version: int,
        *,
        response: str,
        language: str,
        sources: Sequence[SourceReference],
        quality_decision: QualityDecision | None,
        vector: Vector | None = None,
    ) -> bool:
        """Cache an answer; only approved answers are kept (returns whether it was stored). The caller keeps
        degraded answers (made by a fallback) out."""
        if quality_decision is not QualityDecision.APPROVE or not response.strip():
            return False
        key = (collections_key(collections, self.answerer), corpus_version)
        bucket = await self._bucket(key)
        vector = await self._embed(question) if vector is None else np.asarray(vector, dtype=np.float32)
        answer = CachedAnswer(question, response, language, tuple(sources))
        row_id = await self._insert(key, answer, vector)
        async with self._lock:
            bucket.add(vector, answer, row_id)
        return True

    async def forget_older(self, collections: Sequence[str], corpus_version: int) -> int:
        """Delete entries of older corpus versions of these collections, whoever answered them (a stale answer of
        another mode is as stale), and those stored before the key named its answerer; returns how many rows went."""
        key = collections_key(collections, self.answerer)
        plain = key.split("|", 1)[1]
        async with self._lock:
            for stale in [k for k in self._buckets if k[0] == key and k[1] < corpus_version]:
                del self._buckets[stale]
        if self.db is None:
            return 0
        async with self.db.session() as session:
            result = await session.execute(
                delete(SemanticCacheRow).where(
                    or_(
                        SemanticCacheRow.collections_key.endswith(f"|{plain}", autoescape=True),
                        SemanticCacheRow.collections_key == plain,
                    ),
                    SemanticCacheRow.corpus_version < corpus_version,
                )
            )
        return int(getattr(result, "rowcount", 0) or 0)

    async def _embed(self, question: str) -> Vector:
        matrix = await self.embedder.embed_queries([question])
        return np.asarray(matrix[0], dtype=np.float32)

    async def _bucket(self, key: BucketKey) -> _Bucket:
        async with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = await self._load(key)
                # a newer corpus version retires the older buckets of the same collections from memory
                for stale in [k for k in self._buckets if k[0] == key[0] and k[1] < key[1]]:
                    del self._buckets[stale]
                self._buckets[key] = bucket
            return bucket

    async def _load(self, key: BucketKey) -> _Bucket:
        bucket = _Bucket()
        if self.db is None:
            return bucket
        async with self.db.session() as session:
            rows = await session.execute(
                select(SemanticCacheRow.id, SemanticCacheRow.question, SemanticCacheRow.vector, SemanticCacheRow.reply)
                .where(SemanticCacheRow.collections_key == key[0], SemanticCacheRow.corpus_version == key[1])
                .order_by(SemanticCacheRow.id)
            )
            loaded = rows.all()
        for row_id, question, blob, reply in loaded:
            vector = np.frombuffer(blob, dtype=np.float32)
            if vector.shape == (self.embedder.dim,):  # else another model's vector
                bucket.add(vector, _from_json(question, reply), row_id)
        if bucket.groups:
            log.info("semantic_cache.loaded", collections=key[0], corpus_version=key[1], entries=len(loaded))
        return bucket

    async def _insert(self, key: BucketKey, answer: CachedAnswer, vector: Vector) -> int | None:
        if self.db is None:
            return None
        row = SemanticCacheRow(
            collections_key=key[0],
            corpus_version=key[1],
            question=answer.question,
            vector=np.asarray(vector, dtype=np.float32).tobytes(),
            reply=_to_json(answer),
        )
        async with self.db.session() as session:
            session.add(row)
            await session.flush()
            return row.id

    async def _count_hit(self, row_id: int | None) -> None:
        if self.db is None or row_id is None:
            return
        async with self.db.session() as session:
            await session.execute(
                update(SemanticCacheRow).where(SemanticCacheRow.id == row_id).values(hits=SemanticCacheRow.hits + 1)
            )
