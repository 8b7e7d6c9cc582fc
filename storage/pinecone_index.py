"""Pinecone as the vector index for large corpora, through the official SDK's asyncio client.

One namespace per document collection; every vector carries `chunk_id, doc_id, section, crumbs, url, title,
collection` as metadata, and every query names its namespace and filters on `collection`, so per-channel
collections are enforced inside Pinecone, never after it. Every call runs under a deadline with retries (tenacity);
what cannot be done in time raises `VectorIndexUnavailable`, on which search falls back to its keyword side.
See docs/pinecone.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import defaultdict
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
from pinecone import AsyncIndex, AsyncPinecone, IndexModel, PineconeConfig, RetryConfig
from pinecone.errors.exceptions import (
    ApiError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    PineconeConnectionError,
    PineconeError,
    PineconeTimeoutError,
    RateLimitError,
    ServiceError,
    UnauthorizedError,
)
from pydantic import SecretStr
from sqlalchemy import select
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_delay, wait_exponential_jitter

from pipeline.types import Vector
from storage.doc_tables import ChunkRow, EmbeddingRow, SessionFactory
from storage.vector_index import VectorIndexUnavailable, VectorMatch, VectorRecord

log = logging.getLogger(__name__)

T = TypeVar("T")

PUBLIC_CONTROL_PLANE = "https://api.pinecone.io"
DENSE_FIELD = "_values"  # the schema field name the vectors API addresses dense values by
METRIC = "cosine"
# Pinecone's request limits: at most 1000 vectors and 2 MB per upsert, 1000 ids per delete, top_k <= 10000.
MAX_VECTORS_PER_UPSERT = 1000
MAX_UPSERT_BYTES = 2 * 1024 * 1024
UPSERT_BODY_BUDGET = 1_900_000  # our own cap, ~150 KB under MAX_UPSERT_BYTES, as the size is an estimate
MAX_IDS_PER_DELETE = 1000
MAX_TOP_K = 10_000
# Values are sent rounded to 7 decimals: each component moves by <= 5e-8, a cosine by < 1e-6 (Pinecone stores float32
# anyway), and a 384-dim vector shrinks from ~8 KB of JSON to <= 4.2 KB, so one request carries ~440 instead of ~230.
WIRE_DECIMALS = 7
_MAX_CHARS_PER_VALUE = 11  # "-0.1234567" and a comma


class PineconeIndexMismatch(Exception):
    """The named index exists with another dimension or metric than docbot's embedder needs."""

    def __init__(
        self, index_name: str, *, expected_dimension: int, actual_dimension: int | None, actual_metric: str | None
    ) -> None:
        self.index_name = index_name
        self.expected_dimension = expected_dimension
        self.actual_dimension = actual_dimension
        self.expected_metric = METRIC
        self.actual_metric = actual_metric
        super().__init__(
            f"Pinecone index {index_name!r} has dimension {actual_dimension} and metric {actual_metric}, "
            f"but docbot needs dimension {expected_dimension} and metric {METRIC}: "
            "configure another index name, or delete that index"
        )


@dataclass(frozen=True, slots=True)
class IndexHealth:
    """What `docbot doctor` prints about the vector index."""

    backend: str
    index_name: str
    exists: bool
    ready: bool
    dimension: int | None
    metric: str | None
    vector_count: int | None
    namespaces: dict[str, int] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def describe(self) -> str:
        """One line for `docbot doctor`."""
        if not self.exists:
            return "; ".join(self.problems)
        shape = f"index {self.index_name!r}: dimension {self.dimension}, metric {self.metric}"
        count = (
            "" if self.vector_count is None else f", {self.vector_count} vectors in {len(self.namespaces)} collections"
        )
        return shape + count + ("" if self.ok else " - " + "; ".join(self.problems))


@dataclass(slots=True)
class PineconeStats:
    """Requests this instance sent, for tests, `docbot reindex` and the metrics."""

    upsert_requests: int = 0
    vectors_upserted: int = 0
    delete_requests: int = 0
    query_requests: int = 0
    retries: int = 0


@dataclass(frozen=True, slots=True)
class ReindexReport:
    read: int
    upserted: int
    skipped_wrong_dimension: int
    upsert_requests: int
    per_collection: dict[str, int]
    seconds: float
    target_count: int | None  # what Pinecone reported afterwards; may lag (eventual consistency)


class PineconeIndex:
    """`VectorIndex` on Pinecone (serverless, cosine). Open lazily on first use, or with `await index.open()`.

    `host` points the control plane somewhere else than the public API (Pinecone Local, a gateway, the test fake);
    the data plane is the host the control plane reports for the index unless `index_host` says otherwise.
    """

    def __init__(
        self,
        *,
        api_key: SecretStr,
        index_name: str,
        dimension: int,
        cloud: str = "aws",
        region: str = "us-east-1",
        host: str | None = None,
        index_host: str | None = None,
        query_deadline_s: float = 3.0,
        write_deadline_s: float = 60.0,
        request_timeout_s: float = 10.0,
        create_timeout_s: float = 300.0,
        ready_poll_s: float = 2.0,
        upsert_concurrency: int = 4,
    ) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self._api_key = api_key
        self.index_name = index_name
        self.dimension = dimension
        self.cloud = cloud
        self.region = region
        self._host = host or PUBLIC_CONTROL_PLANE
        self._index_host = index_host
        self.query_deadline_s = query_deadline_s
        self.write_deadline_s = write_deadline_s
        self._request_timeout_s = request_timeout_s
        self._create_timeout_s = create_timeout_s
        self._ready_poll_s = ready_poll_s
        self._upsert_slots = asyncio.Semaphore(max(1, upsert_concurrency))
        self._client: AsyncPinecone | None = None
        self._index: AsyncIndex | None = None
        self._open_lock = asyncio.Lock()
        self.stats = PineconeStats()

    def __repr__(self) -> str:
        return f"PineconeIndex(index_name={self.index_name!r}, host={self._host!r}, dimension={self.dimension})"

    @property
    def name(self) -> str:
        return "pinecone"

    # ---- lifecycle -------------------------------------------------------------------------------------------

    async def open(self) -> None:
        """Make sure the index exists with the right shape (creating it when missing) and connect its data plane.

        Raises `PineconeIndexMismatch` for an index of another dimension or metric, `VectorIndexUnavailable` when
        Pinecone cannot be reached in time or the index does not become ready within `create_timeout_s`.
        """
        await self._data_plane(self.write_deadline_s, ready_within_s=self._create_timeout_s)

    async def close(self) -> None:
        index, client = self._index, self._client
        self._index = self._client = None
        if index is not None:
            await index.close()
        if client is not None:
            await client.close()

    async def __aenter__(self) -> PineconeIndex:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _control_plane(self) -> AsyncPinecone:
        if self._client is None:
            # Retries are ours (tenacity, under a deadline), so the SDK's own are off on the control plane.
            self._client = AsyncPinecone(
                api_key=self._api_key.get_secret_value(),
                host=self._host,
                timeout=self._request_timeout_s,
                retry_config=RetryConfig(max_retries=0),
                source_tag="docbot",
            )
        return self._client

    async def _data_plane(self, deadline_s: float, *, ready_within_s: float | None = None) -> AsyncIndex:
        """The connected data plane; the first call opens it (a write may wait for a new index to become ready,
        a query only within its own deadline)."""
        if self._index is not None:
            return self._index
        ready_within = deadline_s if ready_within_s is None else ready_within_s
        try:
            async with asyncio.timeout(deadline_s + ready_within), self._open_lock:
                if self._index is None:
                    model = await self._call("open", self._describe_or_create, deadline_s)
                    self._check_shape(*_dense_shape(model))
                    started = time.monotonic()
                    while not (model.status.ready and model.host):
                        if time.monotonic() - started > ready_within:
                            raise TimeoutError
                        await asyncio.sleep(self._ready_poll_s)
                        model = await self._call("open", self._describe, deadline_s)
                    host = self._index_host or str(model.host)
                    self._index = _without_sdk_retries(await self._control_plane().index(host=host))
                    log.info("pinecone index ready", extra={"index": self.index_name, "dimension": self.dimension})
        except TimeoutError as exc:
            raise VectorIndexUnavailable(
                self.index_name, "open", "timeout", detail=f"index not ready within {ready_within:g}s"
            ) from exc
        return self._index

    async def _describe(self) -> IndexModel:
        return await self._control_plane().indexes.describe(self.index_name)

    async def _describe_or_create(self) -> IndexModel:
        """The index's description, after creating it (serverless, cosine, our dimension) when it is missing."""
        try:
            return await self._describe()
        except NotFoundError:
            pass
        log.info("creating pinecone index", extra={"index": self.index_name, "dimension": self.dimension})
        dense = {"type": "dense_vector", "dimension": self.dimension, "metric": METRIC}
        try:
            return await self._control_plane().indexes.create(
                name=self.index_name,
                schema={"fields": {DENSE_FIELD: dense}},
                deployment={"deployment_type": "managed", "cloud": self.cloud, "region": self.region},
                timeout=-1,
            )
        except ConflictError:  # another replica created it first
            return await self._describe()

    def _check_shape(self, dimension: int | None, metric: str | None) -> None:
        if dimension != self.dimension or metric != METRIC:
            raise PineconeIndexMismatch(
                self.index_name, expected_dimension=self.dimension, actual_dimension=dimension, actual_metric=metric
            )

    # ---- VectorIndex -----------------------------------------------------------------------------------------

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or overwrite by chunk id (idempotent), one namespace per collection, in batches within limits."""
        if not records:
            return
        index = await self._data_plane(self.write_deadline_s, ready_within_s=self._create_timeout_s)
        by_collection: dict[str, list[VectorRecord]] = defaultdict(list)
        for record in records:
            by_collection[record.collection].append(record)
        batches: list[tuple[str, list[dict[str, Any]]]] = []
        for collection, group in by_collection.items():
            items = await asyncio.to_thread(self._wire_items, group)
            batches.extend((collection, batch) for batch in pack_batches(items))

        async def send(collection: str, batch: list[dict[str, Any]]) -> None:
            async with self._upsert_slots:
                await self._call(
                    "upsert", lambda: index.upsert(vectors=batch, namespace=collection), self.write_deadline_s
                )
                self.stats.upsert_requests += 1
                self.stats.vectors_upserted += len(batch)

        await asyncio.gather(*(send(collection, batch) for collection, batch in batches))
        log.info("pinecone upsert", extra={"vectors": len(records), "requests": len(batches)})

    async def delete(self, ids: Sequence[str], collection: str) -> None:
        """Delete chunk vectors by id; ids that are not there are fine (idempotent)."""
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), MAX_IDS_PER_DELETE):
            await self._delete(collection, ids=unique[start : start + MAX_IDS_PER_DELETE])

    async def delete_documents(self, doc_ids: Sequence[str], collection: str) -> None:
        """Delete every vector of these documents by metadata filter, whatever their chunk ids were."""
        unique = list(dict.fromkeys(doc_ids))
        for start in range(0, len(unique), MAX_IDS_PER_DELETE):
            await self._delete(collection, flt={"doc_id": {"$in": unique[start : start + MAX_IDS_PER_DELETE]}})

    async def _delete(
        self, collection: str, *, ids: list[str] | None = None, flt: dict[str, Any] | None = None
    ) -> None:
        index = await self._data_plane(self.write_deadline_s)
        await self._call(
            "delete", lambda: index.delete(ids=ids, filter=flt, namespace=collection), self.write_deadline_s
        )
        self.stats.delete_requests += 1

    async def query(
        self, vector: Vector, *, top_k: int, collections: Sequence[str], deadline_s: float | None = None
    ) -> list[VectorMatch]:
        """The `top_k` nearest chunks over the given collections: one filtered query per namespace, merged by score.

        Vectors upserted a moment ago may not be visible yet (Pinecone is eventually consistent); that gives fewer
        matches, never an error.
        """
        wanted = list(dict.fromkeys(collections))
        if not wanted or top_k < 1:
            return []
        deadline = self.query_deadline_s if deadline_s is None else deadline_s
        started = time.monotonic()
        try:
            index = await self._data_plane(deadline)
        except PineconeIndexMismatch as exc:  # a question must still get its keyword answer
            raise VectorIndexUnavailable(self.index_name, "query", "misconfigured", detail=str(exc)) from exc
        values = _wire_values(vector)
        if len(values) != self.dimension:
            raise ValueError(f"query vector has dimension {len(values)}, the index {self.dimension}")
        k = min(top_k, MAX_TOP_K)
        remaining = max(0.001, deadline - (time.monotonic() - started))

        async def one(collection: str) -> list[VectorMatch]:
            response = await self._call(
                "query",
                lambda: index.query(
                    vector=values, top_k=k, namespace=collection, filter={"collection": {"$eq": collection}}
                ),
                remaining,
            )
            self.stats.query_requests += 1
            return [VectorMatch(id=m.id, score=float(m.score)) for m in response.matches]

        results = await asyncio.gather(*(one(c) for c in wanted))
        best: dict[str, VectorMatch] = {}
        for match in (m for part in results for m in part):
            if match.id not in best or match.score > best[match.id].score:
                best[match.id] = match
        return sorted(best.values(), key=lambda m: m.score, reverse=True)[:top_k]

    async def scores_for_ids(
        self, vector: Vector, ids: Sequence[str], collections: Sequence[str], *, deadline_s: float | None = None
    ) -> dict[str, float]:
        """Cosine scores of given chunks (fusion candidates other levels found), computed inside Pinecone by a query
        restricted to those ids; the async counterpart of the local index's `scores_for`."""
        wanted = list(dict.fromkeys(ids))[:MAX_TOP_K]
        if not wanted or not collections:
            return {}
        deadline = self.query_deadline_s if deadline_s is None else deadline_s
        index = await self._data_plane(deadline)
        values = _wire_values(vector)

        async def one(collection: str) -> dict[str, float]:
            flt = {"$and": [{"collection": {"$eq": collection}}, {"chunk_id": {"$in": wanted}}]}
            response = await self._call(
                "query",
                lambda: index.query(vector=values, top_k=len(wanted), namespace=collection, filter=flt),
                deadline,
            )
            self.stats.query_requests += 1
            return {m.id: float(m.score) for m in response.matches}

        merged: dict[str, float] = {}
        for part in await asyncio.gather(*(one(c) for c in dict.fromkeys(collections))):
            merged.update(part)
        return merged

    async def count(self) -> int:
        """Vectors across all collections, as Pinecone reports them (lags writes by seconds)."""
        index = await self._data_plane(self.query_deadline_s)
        stats = await self._call("count", index.describe_index_stats, self.query_deadline_s)
        return int(stats.total_vector_count)

    # ---- doctor ----------------------------------------------------------------------------------------------

    async def check(self) -> IndexHealth:
        """Exists, ready, dimension, metric, vector count, and what is wrong, in words. Never creates anything."""
        try:
            model = await self._call("check", self._describe, self.query_deadline_s)
        except VectorIndexUnavailable as exc:
            if exc.reason == "not_found":
                return self._absent(f"index {self.index_name!r} does not exist yet; the first ingest creates it")
            return self._absent(f"Pinecone unreachable: {exc.reason} ({exc.detail})")
        dimension, metric = _dense_shape(model)
        problems: list[str] = []
        if dimension != self.dimension:
            problems.append(f"dimension is {dimension}, the embedder produces {self.dimension}")
        if metric != METRIC:
            problems.append(f"metric is {metric}, docbot needs {METRIC}")
        if not model.status.ready:
            problems.append(f"index is not ready (state {model.status.state})")
        vector_count: int | None = None
        namespaces: dict[str, int] = {}
        if model.status.ready and model.host:
            try:
                index = _without_sdk_retries(
                    await self._control_plane().index(host=self._index_host or str(model.host))
                )
                async with index:
                    stats = await self._call("check", index.describe_index_stats, self.query_deadline_s)
                vector_count = int(stats.total_vector_count)
                namespaces = {ns: int(s.vector_count) for ns, s in stats.namespaces.items()}
            except VectorIndexUnavailable as exc:
                problems.append(f"data plane unreachable: {exc.reason} ({exc.detail})")
        return IndexHealth(
            backend=self.name,
            index_name=self.index_name,
            exists=True,
            ready=bool(model.status.ready),
            dimension=dimension,
            metric=metric,
            vector_count=vector_count,
            namespaces=namespaces,
            problems=tuple(problems),
        )

    def _absent(self, problem: str) -> IndexHealth:
        return IndexHealth(
            backend=self.name,
            index_name=self.index_name,
            exists=False,
            ready=False,
            dimension=None,
            metric=None,
            vector_count=None,
            problems=(problem,),
        )

    # ---- plumbing --------------------------------------------------------------------------------------------

    def _wire_items(self, records: Sequence[VectorRecord]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for record in records:
            values = _wire_values(record.vector)
            if len(values) != self.dimension:
                raise ValueError(f"vector {record.id!r} has dimension {len(values)}, the index {self.dimension}")
            items.append({"id": record.id, "values": values, "metadata": vector_metadata(record)})
        return items

    async def _call(self, operation: str, fn: Callable[[], Awaitable[T]], deadline_s: float) -> T:
        """`fn()` with retries on transient failures, all within `deadline_s`; else `VectorIndexUnavailable`."""
        errors: list[BaseException] = []

        async def attempt() -> T:
            try:
                return await fn()
            except (PineconeError, TimeoutError, OSError) as exc:
                errors.append(exc)
                raise

        def count_retry(state: RetryCallState) -> None:
            self.stats.retries += 1

        retrying = AsyncRetrying(
            stop=stop_after_delay(deadline_s),
            wait=wait_exponential_jitter(multiplier=0.05, max=1.0, jitter=0.05),
            retry=retry_if_exception(_is_transient),
            before_sleep=count_retry,
            reraise=True,
        )
        try:
            async with asyncio.timeout(deadline_s):
                return await retrying(attempt)
        except PineconeIndexMismatch:
            raise
        except (PineconeError, TimeoutError, OSError) as exc:
            last = errors[-1] if errors else exc
            reason = "timeout" if isinstance(exc, TimeoutError) and not errors else _reason(last)
            unavailable = VectorIndexUnavailable(
                self.index_name, operation, reason, attempts=max(1, len(errors)), detail=_detail(last)
            )
            log.warning(
                "pinecone unavailable",
                extra={"index": self.index_name, "operation": operation, "reason": reason, "attempts": len(errors)},
            )
            raise unavailable from exc


def vector_metadata(record: VectorRecord) -> dict[str, Any]:
    """The metadata stored with each vector: enough to filter by collection and to find the chunk again."""
    return {
        "chunk_id": record.id,
        "doc_id": record.doc_id,
        "section": record.section,
        "crumbs": list(record.crumbs),
        "url": record.url,
        "title": record.title,
        "collection": record.collection,
    }


def pack_batches(items: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Greedy batches of at most 1000 vectors and `UPSERT_BODY_BUDGET` bytes of JSON each (an upper-bound estimate)."""
    batches: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = 64  # the envelope: {"vectors":[...],"namespace":"..."}
    for item in items:
        item_size = estimated_json_bytes(item)
        if current and (len(current) >= MAX_VECTORS_PER_UPSERT or size + item_size > UPSERT_BODY_BUDGET):
            batches.append(current)
            current, size = [], 64
        current.append(item)
        size += item_size
    if current:
        batches.append(current)
    return batches


def estimated_json_bytes(item: dict[str, Any]) -> int:
    """An upper bound of the item's JSON size: values at <= 11 characters each, id and metadata measured exactly."""
    rest = {k: v for k, v in item.items() if k != "values"}
    return len(json.dumps(rest, ensure_ascii=False).encode()) + _MAX_CHARS_PER_VALUE * len(item["values"]) + 16


async def reindex_to_pinecone(
    source: Iterable[VectorRecord] | AsyncIterable[VectorRecord],
    target: PineconeIndex,
    *,
    chunk_size: int = 2000,
) -> ReindexReport:
    """Copy stored vectors (e.g. the local index's embeddings table) into Pinecone: no source re-read, no re-embedding.

    Idempotent: ids are chunk ids, so running it twice overwrites. Vectors of another dimension are skipped and counted.
    """
    started = time.monotonic()
    before = target.stats.upsert_requests
    read = upserted = skipped = 0
    per_collection: dict[str, int] = defaultdict(int)
    pending: list[VectorRecord] = []

    async def flush() -> None:
        nonlocal upserted
        if pending:
            await target.upsert(pending)
            upserted += len(pending)
            for record in pending:
                per_collection[record.collection] += 1
            pending.clear()

    async for record in _aiter(source):
        read += 1
        if int(np.asarray(record.vector).shape[-1]) != target.dimension:
            skipped += 1
            continue
        pending.append(record)
        if len(pending) >= chunk_size:
            await flush()
    await flush()
    try:
        target_count: int | None = await target.count()
    except VectorIndexUnavailable:
        target_count = None
    return ReindexReport(
        read=read,
        upserted=upserted,
        skipped_wrong_dimension=skipped,
        upsert_requests=target.stats.upsert_requests - before,
        per_collection=dict(per_collection),
        seconds=time.monotonic() - started,
        target_count=target_count,
    )


async def embedding_records(db: SessionFactory, *, dim: int, page: int = 2000) -> AsyncIterator[VectorRecord]:
    """The stored chunk embeddings of one dimension with their chunk's citation data, page by page, in id order."""
    after = ""
    while True:
        async with db.session() as session:
            rows = (
                await session.execute(
                    select(
                        EmbeddingRow.chunk_id,
                        EmbeddingRow.vector,
                        ChunkRow.doc_id,
                        ChunkRow.section,
                        ChunkRow.title,
                        ChunkRow.crumbs,
                        ChunkRow.url,
                        ChunkRow.collection,
                    )
                    .join(ChunkRow, ChunkRow.id == EmbeddingRow.chunk_id)
                    .where(EmbeddingRow.dim == dim, EmbeddingRow.chunk_id > after)
                    .order_by(EmbeddingRow.chunk_id)
                    .limit(page)
                )
            ).all()
        for chunk_id, blob, doc_id, section, title, crumbs, url, collection in rows:
            yield VectorRecord(
                id=chunk_id,
                vector=np.frombuffer(blob, dtype=np.float32),
                doc_id=doc_id,
                section=section,
                title=title,
                crumbs=tuple(crumbs),
                url=url,
                collection=collection,
            )
        if len(rows) < page:
            return
        after = rows[-1][0]


async def reindex_from_database(db: SessionFactory, target: PineconeIndex) -> ReindexReport:
    """`docbot reindex --to pinecone`: move the embeddings table (the local index's durable copy) into Pinecone."""
    return await reindex_to_pinecone(embedding_records(db, dim=target.dimension), target)


async def _aiter(source: Iterable[VectorRecord] | AsyncIterable[VectorRecord]) -> AsyncIterable[VectorRecord]:
    if isinstance(source, AsyncIterable):
        async for record in source:
            yield record
    else:
        for record in source:
            yield record


def _without_sdk_retries(index: AsyncIndex) -> AsyncIndex:
    """Turn off the SDK's own data-plane retries, which `AsyncIndex` does not let callers configure.

    They sleep from 0.25 s up to 60 s (honouring Retry-After) inside one call, which would spend a question's deadline
    blind and hide why it failed; our `_call` retries under the deadline instead. This reaches into the SDK's HTTP
    client before its first request; if a future SDK moves that, the SDK keeps retrying and we are merely less precise.
    """
    http = getattr(index, "_http", None)
    config = getattr(http, "_config", None)
    if isinstance(config, PineconeConfig) and getattr(http, "_client", "missing") is None:
        http._config = replace(config, retry_config=RetryConfig(max_retries=0))  # type: ignore[union-attr]
    return index


def _wire_values(vector: Vector) -> list[float]:
    values: list[float] = np.round(np.asarray(vector, dtype=np.float64).ravel(), WIRE_DECIMALS).tolist()
    return values


def _dense_shape(model: Any) -> tuple[int | None, str | None]:
    """Dimension and metric of the index's single dense vector field, from its 2026-07 schema."""
    fields = getattr(getattr(model, "schema", None), "fields", None) or {}
    dense = [f for f in fields.values() if type(f).__name__ == "DenseVectorField"]
    if len(dense) != 1:
        return None, None
    return int(dense[0].dimension), str(dense[0].metric)


def _is_transient(exc: BaseException) -> bool:
    """Worth another attempt: timeouts, connection faults, 408, 429 and 5xx. Auth and bad requests are not."""
    if isinstance(exc, PineconeTimeoutError | PineconeConnectionError | RateLimitError | ServiceError):
        return True
    if isinstance(exc, ApiError):
        return exc.status_code in (408, 429)
    return isinstance(exc, TimeoutError | OSError)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnauthorizedError | ForbiddenError):
        return "auth"
    if isinstance(exc, RateLimitError):
        return "rate_limited"
    if isinstance(exc, ServiceError):
        return "server_error"
    if isinstance(exc, PineconeTimeoutError | TimeoutError):
        return "timeout"
    if isinstance(exc, PineconeConnectionError | OSError):
        return "connection"
    if isinstance(exc, NotFoundError):
        return "not_found"
    if isinstance(exc, ApiError) and exc.status_code in (408, 429):
        return "rate_limited" if exc.status_code == 429 else "timeout"
    return "rejected"


def _detail(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    text = f"{type(exc).__name__}" + (f" {status}" if status else "")
    return text[:200]
