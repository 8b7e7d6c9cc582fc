"""The ingestor: reads inputs, fills derived fields, and stores only what changed (DB rows, embeddings, index)."""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from pipeline.types import Embedder
from storage.doc_tables import ChunkRow, CorpusVersionRow, DocumentRow, EmbeddingRow, SessionFactory
from storage.errors import EmbeddingUnavailable
from storage.ingest.errors import IngestError
from storage.ingest.model import IngestReport, SkippedSource, SourceDoc
from storage.ingest.readers import (
    SEED_SUFFIXES,
    iter_files,
    pretty,
    read_document_text,
    require_readable,
    sections_to_doc,
    seed_records,
    seed_to_doc,
)
from storage.ingest.text import keypoints_of, keywords_of, summary_of
from storage.vector_index import VectorIndex, VectorRecord

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int, str], None]


@dataclass(slots=True)
class _Batch:
    """Documents read from one input, remembered under that input (`origin`) to find vanished ones later."""

    origin: str
    docs: list[SourceDoc] = field(default_factory=list)
    skipped: list[SkippedSource] = field(default_factory=list)


def document_id(collection: str, key: str) -> str:
    return hashlib.sha1(f"{collection}\0{key}".encode()).hexdigest()[:24]  # noqa: S324 - an id, not security


def chunk_url(source: str, section: str) -> str:
    return f"{source.split('#', 1)[0]}#{section}" if section else source


def embedding_text(crumbs: Sequence[str], text: str) -> str:
    return f"{' > '.join(crumbs)}\n{text}" if crumbs else text


def fill_derived(doc: SourceDoc) -> None:
    """Compute the seed's derived fields that the source left empty."""
    body = "\n\n".join(c.text for c in doc.chunks) or doc.content
    doc.summary = doc.summary or summary_of(body)
    doc.keypoints = doc.keypoints or keypoints_of(body)
    doc.keywords = doc.keywords or keywords_of(f"{doc.title}\n{body}")
    doc.description = doc.description or doc.summary[:200]


EMBED_GROUP_CHUNKS = 64  # changed documents are embedded and written in groups of about this many chunks


def _fill_all(docs: list[SourceDoc]) -> None:
    for doc in docs:
        fill_derived(doc)


def _groups(changed: list[tuple[SourceDoc, str]], chunks: int) -> list[list[tuple[SourceDoc, str]]]:
    """Consecutive documents with about `chunks` chunks per group (a large document is a group of its own)."""
    groups: list[list[tuple[SourceDoc, str]]] = []
    size = 0
    for item in changed:
        if not groups or size >= chunks:
            groups.append([])
            size = 0
        groups[-1].append(item)
        size += len(item[0].chunks)
    return groups


def _http_date(value: str | None) -> datetime | None:
    """An HTTP date header (RFC 9110 IMF-fixdate) as aware UTC; None when absent or unreadable."""
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _is_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


class Ingestor:
    """Ingests folders, files, seed JSON/JSONL and web pages into a collection, incrementally by content hash."""

    def __init__(
        self,
        db: SessionFactory,
        embedder: Embedder,
        index: VectorIndex,
        *,
        on_change: Callable[[], Awaitable[None]] | None = None,
        http_timeout_s: float = 20.0,
    ) -> None:
        self._db = db
        self._embedder = embedder
        self._index = index
        self._on_change = on_change
        self._http_timeout_s = http_timeout_s
        self._model = str(getattr(embedder, "model_name", type(embedder).__name__))
        self._running = asyncio.Lock()  # one ingest at a time in this process (CLI, scheduler and API may overlap)

    async def ingest(
        self,
        paths_or_urls: Sequence[str],
        *,
        collection: str = "default",
        base_url: str | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> IngestReport:
        async with self._running:
            started = time.perf_counter()
            batches = [await self._read(item, collection, base_url) for item in paths_or_urls]
            report = await self._ingest(batches, collection, on_progress, started)
        await self._changed(report)
        return report

    async def ingest_documents(self, origin: str, docs: Sequence[SourceDoc], *, collection: str) -> IngestReport:
        """Store documents made elsewhere as the whole content of `origin` (its own namespace, e.g. an approved
        team answer's `answers/<id>`), by the same rules as read ones: unchanged ones cost nothing, and documents
        stored before under `origin` that are not in `docs` are removed (no `docs`: the origin is emptied)."""
        async with self._running:
            started = time.perf_counter()
            copies = [dataclasses.replace(doc) for doc in docs]  # derived fields are filled in on copies
            report = await self._ingest([_Batch(origin=origin, docs=copies)], collection, None, started)
        await self._changed(report)
        return report

    async def _changed(self, report: IngestReport) -> None:
        """Tell the listener after the ingest let go of its lock: it may ingest in turn (an answer withdrawn
        because a document it relies on changed)."""
        if report.changed and self._on_change is not None:
            await self._on_change()

    async def _ingest(
        self,
        batches: list[_Batch],
        collection: str,
        on_progress: ProgressCallback | None,
        started: float,
    ) -> IngestReport:
        total = sum(len(b.docs) for b in batches)
        counts = {"added": 0, "updated": 0, "unchanged": 0, "removed": 0, "chunks": 0, "embedded": 0}
        done = 0
        failed: list[SkippedSource] = []
        for batch in batches:
            known = await self._known_hashes(collection, batch.origin)
            kept: set[str] = set()
            changed: list[tuple[SourceDoc, str]] = []
            for doc in batch.docs:
                if doc.id in kept:
                    continue
                kept.add(doc.id)
                digest = doc.content_hash()  # of what the source gave: the derived fields are a function of it
                if known.get(doc.id) == digest:
                    counts["unchanged"] += 1
                    done += 1
                    if on_progress is not None:
                        on_progress(done, total, doc.title or doc.source)
                else:
                    changed.append((doc, digest))
            if changed:  # derived fields only for the documents that changed, off the event loop
                await asyncio.to_thread(_fill_all, [doc for doc, _ in changed])
            for group in _groups(changed, EMBED_GROUP_CHUNKS):
                try:
                    stored, embedded = await self._store(group, collection, batch.origin, known)
                except EmbeddingUnavailable as exc:  # before any write: the group is as it was, tried next time
                    failed.extend(SkippedSource(doc.title or doc.source, str(exc)) for doc, _ in group)
                    stored = embedded = 0
                    group_failed = True
                else:
                    group_failed = False
                counts["chunks"] += stored
                counts["embedded"] += embedded
                for doc, _ in group:
                    if not group_failed:
                        counts["updated" if doc.id in known else "added"] += 1
                    done += 1
                    if on_progress is not None:
                        on_progress(done, total, doc.title or doc.source)
            vanished = [doc_id for doc_id in known if doc_id not in kept]
            if vanished:
                await self._remove(vanished, collection)
                counts["removed"] += len(vanished)
        report = IngestReport(
            skipped=tuple(s for b in batches for s in b.skipped),
            failed=tuple(failed),
            seconds=time.perf_counter() - started,
            **counts,
        )
        if report.changed:
            await self._bump_version(collection)
        log.info(
            "ingest finished",
            extra={
                "collection": collection,
                "added": report.added,
                "updated": report.updated,
                "unchanged": report.unchanged,
                "removed": report.removed,
                "skipped": len(report.skipped),
                "failed": len(report.failed),
                "seconds": round(report.seconds, 3),
            },
        )
        return report

    # ---- reading ---------------------------------------------------------------------------------------------

    async def _read(self, item: str, collection: str, base_url: str | None) -> _Batch:
        if _is_url(item):
            return await self._read_url(item, collection)
        return await asyncio.to_thread(self._read_path, Path(item), collection, base_url)

    def _read_path(self, path: Path, collection: str, base_url: str | None) -> _Batch:
        root = path.resolve()
        if not root.exists():
            raise IngestError(f"{path} does not exist", source=str(path), reason="missing")
        batch = _Batch(origin=str(root))
        base = root if root.is_dir() else root.parent
        files = list(iter_files(root))
        for file in files:
            rel = file.relative_to(base)
            url = f"{base_url.rstrip('/')}/{rel.as_posix()}" if base_url else file.as_uri()
            try:
                raw = file.read_bytes()
                if file.suffix.lower() in SEED_SUFFIXES:
                    for record in seed_records(raw.decode("utf-8-sig"), str(file)):
                        key = str(record.get("id") or record.get("source") or len(batch.docs))
                        doc_id = document_id(collection, f"seed:{key}")
                        batch.docs.append(seed_to_doc(record, doc_id=doc_id, default_source=url))
                    continue
                title_hint, sections = read_document_text(raw, file.suffix.lower())
                modified = datetime.fromtimestamp(file.stat().st_mtime, UTC)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                reason = type(exc).__name__ if isinstance(exc, UnicodeDecodeError) else str(exc)
                log.warning("skipped unreadable file %s: %s", file, reason)
                batch.skipped.append(SkippedSource(name=str(file), reason=reason))
                continue
            if not sections:
                batch.skipped.append(SkippedSource(name=str(file), reason="empty"))
                continue
            path_crumbs = tuple(pretty(part) for part in rel.parent.parts)
            doc = sections_to_doc(
                sections,
                doc_id=document_id(collection, url),
                source=url,
                fallback_title=title_hint or pretty(file.stem),
                path_crumbs=path_crumbs,
            )
            doc.changed_at = modified
            batch.docs.append(doc)
        require_readable(str(path), batch.docs, len(batch.skipped), len(files))
        return batch

    async def _read_url(self, url: str, collection: str) -> _Batch:
        import aiohttp  # only for URLs: a process that never fetches a page does not load the HTTP client

        timeout = aiohttp.ClientTimeout(total=self._http_timeout_s)
        try:
            async with aiohttp.ClientSession(timeout=timeout) as http, http.get(url) as response:
                if response.status >= 400:
                    raise IngestError(f"{url} answered HTTP {response.status}", source=url, reason="http error")
                raw = await response.read()
                content_type = response.headers.get("Content-Type", "")
                modified = _http_date(response.headers.get("Last-Modified"))
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise IngestError(f"cannot fetch {url}: {type(exc).__name__}", source=url, reason="unreachable") from exc
        suffix = ".md" if "markdown" in content_type else ".txt" if "text/plain" in content_type else ".html"
        try:
            title_hint, sections = read_document_text(raw, suffix)
        except UnicodeDecodeError as exc:
            raise IngestError(f"{url} is not UTF-8 text", source=url, reason="undecodable") from exc
        if not sections:
            raise IngestError(f"{url} has no text", source=url, reason="empty")
        doc = sections_to_doc(
            sections,
            doc_id=document_id(collection, url),
            source=url,
            fallback_title=title_hint or url.rstrip("/").rsplit("/", 1)[-1],
            path_crumbs=(),
        )
        doc.changed_at = modified
        return _Batch(origin=url, docs=[doc])

    # ---- storing ---------------------------------------------------------------------------------------------

    async def _known_hashes(self, collection: str, origin: str) -> dict[str, str]:
        """Stored documents of this input by content hash; one with vectors of another embedder (model or
        dimension) counts as changed, so switching the embedder and ingesting again re-embeds it."""
        other_space = (
            select(ChunkRow.id)
            .join(EmbeddingRow, EmbeddingRow.chunk_id == ChunkRow.id)
            .where(ChunkRow.doc_id == DocumentRow.id, EmbeddingRow.model != self._model)
            .exists()
        )
        async with self._db.session() as session:
            rows = await session.execute(
                select(DocumentRow.id, DocumentRow.content_hash, other_space).where(
                    DocumentRow.collection == collection, DocumentRow.origin == origin
                )
            )
            return {doc_id: "" if stale else digest for doc_id, digest, stale in rows.all()}

    async def _old_vectors(self, doc_ids: list[str]) -> dict[str, np.ndarray]:
        """Stored vectors of the current chunks of `doc_ids`, by embedding text (this model's only)."""
        if not doc_ids:
            return {}
        async with self._db.session() as session:
            rows = await session.execute(
                select(ChunkRow.crumbs, ChunkRow.text, EmbeddingRow.vector)
                .join(EmbeddingRow, EmbeddingRow.chunk_id == ChunkRow.id)
                .where(ChunkRow.doc_id.in_(doc_ids), EmbeddingRow.model == self._model)
            )
            return {
                embedding_text(crumbs, text): np.frombuffer(blob, dtype=np.float32) for crumbs, text, blob in rows.all()
            }

    async def _store(
        self, group: list[tuple[SourceDoc, str]], collection: str, origin: str, known: dict[str, str]
    ) -> tuple[int, int]:
        """Replace the group's rows and vectors; returns (chunks stored, passages embedded). A chunk whose text is
        unchanged keeps its stored vector; the others are embedded in one call for the whole group."""
        replaced = [doc.id for doc, _ in group if doc.id in known]
        reuse = await self._old_vectors(replaced)
        texts = {doc.id: [embedding_text(c.crumbs, c.text) for c in doc.chunks] for doc, _ in group}
        missing = list(dict.fromkeys(t for ts in texts.values() for t in ts if t not in reuse))
        fresh = np.asarray(await self._embedder.embed_passages(missing), dtype=np.float32) if missing else None
        vector_of = dict(reuse)
        if fresh is not None:
            vector_of.update(zip(missing, fresh, strict=True))
        records: list[VectorRecord] = []
        documents: list[dict[str, Any]] = []
        chunks: list[dict[str, Any]] = []
        embeddings: list[dict[str, Any]] = []
        now = datetime.now(UTC)
        for doc, digest in group:
            documents.append(
                {
                    "id": doc.id,
                    "collection": collection,
                    "origin": origin,
                    "source": doc.source,
                    "title": doc.title,
                    "crumbs": list(doc.crumbs),
                    "description": doc.description,
                    "content": doc.content,
                    "summary": doc.summary,
                    "keypoints": doc.keypoints,
                    "keywords": doc.keywords,
                    "content_hash": digest,
                    "updated_at": min(doc.changed_at, now) if doc.changed_at is not None else now,
                }
            )
            for ord_, (chunk, text) in enumerate(zip(doc.chunks, texts[doc.id], strict=True)):
                chunk_id = f"{doc.id}-{ord_:04d}"
                url = chunk_url(doc.source, chunk.section)
                vector = vector_of[text]
                records.append(
                    VectorRecord(chunk_id, vector, doc.id, chunk.section, chunk.title, chunk.crumbs, url, collection)
                )
                chunks.append(
                    {
                        "id": chunk_id,
                        "doc_id": doc.id,
                        "collection": collection,
                        "section": chunk.section,
                        "title": chunk.title,
                        "crumbs": list(chunk.crumbs),
                        "url": url,
                        "text": chunk.text,
                        "ord": ord_,
                    }
                )
                embeddings.append(
                    {
                        "chunk_id": chunk_id,
                        "model": self._model,
                        "dim": int(vector.shape[0]),
                        "vector": vector.tobytes(),
                    }
                )
        # Vectors first: if the index fails, the database still holds the old version (or nothing), so the next
        # ingest sees the documents as changed and tries again; an upsert is idempotent by chunk id.
        await self._index.upsert(records)
        old_ids: list[str] = []
        async with self._db.session() as session:
            if replaced:
                old_ids = list(await session.scalars(select(ChunkRow.id).where(ChunkRow.doc_id.in_(replaced))))
                await _delete_documents(session, replaced)
            await session.execute(insert(DocumentRow), documents)  # bulk: one statement per table
            if chunks:
                await session.execute(insert(ChunkRow), chunks)
                await session.execute(insert(EmbeddingRow), embeddings)
        new_ids = {c["id"] for c in chunks}
        stale = [i for i in old_ids if i not in new_ids]
        if stale:
            await self._index.delete(stale, collection)
        return len(chunks), len(missing)

    async def _remove(self, doc_ids: list[str], collection: str) -> None:
        async with self._db.session() as session:
            chunk_ids = list(await session.scalars(select(ChunkRow.id).where(ChunkRow.doc_id.in_(doc_ids))))
            await _delete_documents(session, doc_ids)
        if chunk_ids:
            await self._index.delete(chunk_ids, collection)

    async def _bump_version(self, collection: str) -> None:
        async with self._db.session() as session:
            row = await session.get(CorpusVersionRow, collection)
            now = datetime.now(UTC)
            if row is None:
                session.add(CorpusVersionRow(collection=collection, version=1, updated_at=now))
            else:
                row.version += 1
                row.updated_at = now


async def _delete_documents(session: AsyncSession, doc_ids: list[str]) -> None:
    """Delete documents with their chunks and embeddings (explicitly: SQLite may run without foreign keys)."""
    chunk_ids = select(ChunkRow.id).where(ChunkRow.doc_id.in_(doc_ids)).scalar_subquery()
    await session.execute(delete(EmbeddingRow).where(EmbeddingRow.chunk_id.in_(chunk_ids)))
    await session.execute(delete(ChunkRow).where(ChunkRow.doc_id.in_(doc_ids)))
    await session.execute(delete(DocumentRow).where(DocumentRow.id.in_(doc_ids)))


async def corpus_version(db: SessionFactory, collection: str) -> int:
    async with db.session() as session:
        row = await session.get(CorpusVersionRow, collection)
        return row.version if row is not None else 0
