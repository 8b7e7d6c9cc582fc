"""The ingestor: reads inputs (folders, files, seed files, whole sites), fills derived fields, and stores only what
changed (DB rows, embeddings, index); a site's pages are stored while it is still being crawled."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from pipeline.types import Embedder
from storage.doc_tables import ChunkRow, CorpusVersionRow, DocumentRow, EmbeddingRow, IngestRunRow, SessionFactory
from storage.errors import EmbeddingUnavailable
from storage.ingest.errors import IngestError
from storage.ingest.model import CrawlReport, IngestProgress, IngestReport, SkippedSource, SourceDoc
from storage.ingest.readers import (
    SEED_SUFFIXES,
    iter_files,
    pretty,
    read_document_text,
    require_readable,
    seed_records,
    seed_to_doc,
    text_to_doc,
)
from storage.ingest.site.limits import CrawlLimits
from storage.ingest.text import keypoints_of, keywords_of, summary_of
from storage.vector_index import VectorIndex, VectorRecord

log = logging.getLogger(__name__)

ProgressCallback = Callable[[IngestProgress], None]
RUNS_KEPT = 20  # ingest runs remembered per input (docbot doctor shows the newest)


@dataclass(slots=True)
class FolderReading:
    """A folder, a file or a seed file as an ingest input: read whole, then handed out; a document not read again
    is gone."""

    origin: str
    docs: list[SourceDoc] = field(default_factory=list)
    skipped: list[SkippedSource] = field(default_factory=list)
    kind: str = "files"

    async def documents(self) -> AsyncGenerator[SourceDoc, None]:
        for doc in self.docs:
            yield doc

    def stored(self, doc_ids: Iterable[str]) -> None:
        return None

    def not_stored(self, doc_ids: Iterable[str]) -> None:
        return None

    def vanished(self, known: Iterable[str], kept: set[str]) -> list[str]:
        return [doc_id for doc_id in known if doc_id not in kept]

    def unchanged_unread(self, kept: set[str]) -> int:
        return 0

    async def finish(self) -> CrawlReport | None:
        return None


class Reading(Protocol):
    """One ingest input being read: a folder (`FolderReading`) or a site (`storage.ingest.site.SiteReading`)."""

    origin: str
    kind: str
    skipped: list[SkippedSource]

    def documents(self) -> AsyncGenerator[SourceDoc, None]: ...

    def stored(self, doc_ids: Iterable[str]) -> None: ...

    def not_stored(self, doc_ids: Iterable[str]) -> None: ...

    def unchanged_unread(self, kept: set[str]) -> int: ...

    def vanished(self, known: Iterable[str], kept: set[str]) -> list[str]: ...

    async def finish(self) -> CrawlReport | None: ...


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


def _is_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


@dataclass(slots=True)
class _Tally:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks: int = 0
    embedded: int = 0
    failed: list[SkippedSource] = field(default_factory=list)
    skipped: list[SkippedSource] = field(default_factory=list)
    crawls: list[CrawlReport] = field(default_factory=list)


class Ingestor:
    """Ingests folders, files, seed JSON/JSONL and whole sites (crawled from a URL) into a collection, incrementally:
    pages by conditional requests, then everything by content hash."""

    def __init__(
        self,
        db: SessionFactory,
        embedder: Embedder,
        index: VectorIndex,
        *,
        on_change: Callable[[], Awaitable[None]] | None = None,
        crawl: CrawlLimits | None = None,
    ) -> None:
        self._db = db
        self._embedder = embedder
        self._index = index
        self._on_change = on_change
        self._crawl = crawl or CrawlLimits()
        self._model = str(getattr(embedder, "model_name", type(embedder).__name__))
        self._running = asyncio.Lock()  # one ingest at a time in this process (CLI, scheduler and API may overlap)

    async def ingest(
        self,
        paths_or_urls: Sequence[str],
        *,
        collection: str = "default",
        base_url: str | None = None,
        on_progress: ProgressCallback | None = None,
        crawl: CrawlLimits | None = None,
    ) -> IngestReport:
        async with self._running:
            report = await self._ingest(paths_or_urls, collection, base_url, on_progress, crawl or self._crawl)
        await self._changed(report)
        return report

    async def ingest_documents(self, origin: str, docs: Sequence[SourceDoc], *, collection: str) -> IngestReport:
        """Store documents made elsewhere as the whole content of `origin` (its own namespace, e.g. an approved
        team answer's `answers/<id>`), by the same rules as read ones: unchanged ones cost nothing, and documents
        stored before under `origin` that are not in `docs` are removed (no `docs`: the origin is emptied). Not
        remembered as an ingest run (`docbot doctor` lists the inputs people ingest)."""
        async with self._running:
            started = time.perf_counter()
            reading = FolderReading(origin=origin, docs=[dataclasses.replace(doc) for doc in docs], kind="documents")
            tally = _Tally()
            await self._ingest_one(reading, collection, IngestProgress(), tally, lambda: None, remember=False)
            report = await self._finish(tally, collection, started)
        await self._changed(report)
        return report

    async def _changed(self, report: IngestReport) -> None:
        """Tell the listener once the ingest let go of its lock: it may ingest in turn (a team answer withdrawn
        because a section it relies on changed)."""
        if report.changed and self._on_change is not None:
            await self._on_change()

    async def _ingest(
        self,
        paths_or_urls: Sequence[str],
        collection: str,
        base_url: str | None,
        on_progress: ProgressCallback | None,
        crawl: CrawlLimits,
    ) -> IngestReport:
        started = time.perf_counter()
        progress = IngestProgress()
        tally = _Tally()

        def tell() -> None:
            if on_progress is not None:
                on_progress(progress)

        for item in paths_or_urls:
            progress.source = item
            tell()
            reading = await self._open(item, collection, base_url, progress, crawl)
            await self._ingest_one(reading, collection, progress, tally, tell)
        return await self._finish(tally, collection, started)

    async def _finish(self, tally: _Tally, collection: str, started: float) -> IngestReport:
        report = IngestReport(
            added=tally.added,
            updated=tally.updated,
            unchanged=tally.unchanged,
            removed=tally.removed,
            skipped=tuple(tally.skipped),
            failed=tuple(tally.failed),
            chunks=tally.chunks,
            embedded=tally.embedded,
            seconds=time.perf_counter() - started,
            crawls=tuple(tally.crawls),
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

    async def _ingest_one(
        self,
        reading: Reading,
        collection: str,
        progress: IngestProgress,
        tally: _Tally,
        tell: Callable[[], None],
        *,
        remember: bool = True,
    ) -> None:
        """Store what one input gives, a group of changed documents at a time, while a site is still being crawled;
        then remove what is gone and remember the run."""
        started_at = datetime.now(UTC)
        known = await self._known_hashes(collection, reading.origin)
        kept: set[str] = set()
        changed: list[tuple[SourceDoc, str]] = []
        waiting = 0
        removed: list[str] = []
        crawl: CrawlReport | None = None

        async def store(group: list[tuple[SourceDoc, str]]) -> None:
            await asyncio.to_thread(_fill_all, [doc for doc, _ in group])  # derived fields, off the event loop
            try:
                stored, embedded = await self._store(group, collection, reading.origin, known)
            except EmbeddingUnavailable as exc:  # before any write: the group is as it was, tried next time
                tally.failed.extend(SkippedSource(doc.title or doc.source, str(exc)) for doc, _ in group)
                reading.not_stored(doc.id for doc, _ in group)
                progress.failed += len(group)
            else:
                tally.chunks += stored
                tally.embedded += embedded
                progress.chunks_embedded += embedded
                reading.stored(doc.id for doc, _ in group)
                replaced = sum(doc.id in known for doc, _ in group)
                tally.updated += replaced
                tally.added += len(group) - replaced
                progress.changed += len(group)
            progress.chunks_waiting -= sum(len(doc.chunks) for doc, _ in group)
            tell()

        async def take(doc: SourceDoc) -> None:
            nonlocal changed, waiting
            if doc.id in kept:
                return
            kept.add(doc.id)
            progress.current = doc.title or doc.source
            digest = doc.content_hash()  # of what the source gave: the derived fields are a function of it
            if known.get(doc.id) == digest:
                tally.unchanged += 1
                progress.unchanged += 1
                reading.stored([doc.id])
            else:
                changed.append((doc, digest))
                waiting += len(doc.chunks)
                progress.chunks_waiting += len(doc.chunks)
            tell()
            if waiting >= EMBED_GROUP_CHUNKS:
                group, changed, waiting = changed, [], 0
                await store(group)

        try:
            # closed on the way out, also on an error: a crawl's requests and workers stop with it
            async with contextlib.aclosing(reading.documents()) as documents:
                async for doc in documents:
                    await take(doc)
            if changed:
                await store(changed)
            tally.unchanged += reading.unchanged_unread(kept)
            removed = reading.vanished(known, kept)
            if removed:
                await self._remove(removed, collection)
                tally.removed += len(removed)
                progress.removed += len(removed)
                tell()
        finally:
            crawl = await reading.finish()
        tally.skipped.extend(reading.skipped)
        if crawl is not None:
            tally.crawls.append(crawl)
            log.info(
                "site crawled",
                extra={
                    "site": crawl.site,
                    "found": crawl.found,
                    "fetched": crawl.fetched,
                    "not_modified": crawl.not_modified,
                    "failed": len(crawl.failed),
                    "gone": crawl.gone,
                    "removed": len(removed),
                    "not_pages": crawl.not_pages,
                    "skipped": crawl.skipped,
                    "requests": crawl.requests,
                    "bytes": crawl.bytes,
                    "seconds": round(crawl.seconds, 3),
                    "problem": crawl.problem,
                },
            )
        if remember:
            await self._remember_run(reading, collection, started_at, progress, crawl, len(removed))

    # ---- reading ---------------------------------------------------------------------------------------------

    async def _open(
        self, item: str, collection: str, base_url: str | None, progress: IngestProgress, crawl: CrawlLimits
    ) -> Reading:
        if _is_url(item):
            from storage.ingest.site.reading import SiteReading  # HTTP and HTML code load only for a site

            try:
                return SiteReading(
                    self._db, collection, item, crawl, progress, lambda url: document_id(collection, url)
                )
            except ValueError as exc:
                raise IngestError(str(exc), source=item, reason="bad url") from exc
        reading = await asyncio.to_thread(self._read_path, Path(item), collection, base_url)
        progress.found += len(reading.docs) + len(reading.skipped)
        progress.fetched += len(reading.docs)
        progress.skipped += len(reading.skipped)
        return reading

    def _read_path(self, path: Path, collection: str, base_url: str | None) -> FolderReading:
        root = path.resolve()
        if not root.exists():
            raise IngestError(f"{path} does not exist", source=str(path), reason="missing")
        batch = FolderReading(origin=str(root))
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
                read = read_document_text(raw, file.suffix.lower())
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                reason = type(exc).__name__ if isinstance(exc, UnicodeDecodeError) else str(exc)
                log.warning("skipped unreadable file %s: %s", file, reason)
                batch.skipped.append(SkippedSource(name=str(file), reason=reason))
                continue
            if read.draft:
                batch.skipped.append(SkippedSource(name=str(file), reason="a draft (front matter draft: true)"))
                continue
            if not read.sections:
                batch.skipped.append(SkippedSource(name=str(file), reason="empty"))
                continue
            path_crumbs = tuple(pretty(part) for part in rel.parent.parts)
            doc = text_to_doc(
                read,
                doc_id=document_id(collection, url),
                source=url,
                fallback_title=pretty(file.stem),
                path_crumbs=path_crumbs,
            )
            doc.changed_at = doc.changed_at or datetime.fromtimestamp(file.stat().st_mtime, UTC)
            batch.docs.append(doc)
        require_readable(str(path), batch.docs, len(batch.skipped), len(files))
        return batch

    async def _remember_run(
        self,
        reading: Reading,
        collection: str,
        started_at: datetime,
        progress: IngestProgress,
        crawl: CrawlReport | None,
        removed: int,
    ) -> None:
        """One row per input and ingest for `docbot doctor`; the newest `RUNS_KEPT` per input are kept."""
        async with self._db.session() as session:
            documents = await session.scalar(
                select(func.count()).select_from(DocumentRow).where(
                    DocumentRow.collection == collection, DocumentRow.origin == reading.origin
                )
            )
            failures = [f"{f.name}: {f.reason}" for f in (crawl.failed if crawl is not None else ())]
            if crawl is not None and crawl.problem:
                failures.insert(0, f"robots.txt: {crawl.problem}")
            session.add(
                IngestRunRow(
                    collection=collection,
                    origin=reading.origin,
                    kind=reading.kind,
                    started_at=started_at,
                    finished_at=datetime.now(UTC),
                    documents=int(documents or 0),
                    found=crawl.found if crawl is not None else progress.found,
                    fetched=crawl.fetched if crawl is not None else progress.fetched,
                    unchanged=crawl.not_modified if crawl is not None else 0,
                    changed=0,
                    failed=len(failures),
                    removed=removed,
                    skipped=(crawl.skipped + crawl.not_pages) if crawl is not None else len(reading.skipped),
                    requests=crawl.requests if crawl is not None else 0,
                    bytes=crawl.bytes if crawl is not None else 0,
                    errors=failures[:10],
                )
            )
            old = (
                select(IngestRunRow.id)
                .where(IngestRunRow.collection == collection, IngestRunRow.origin == reading.origin)
                .order_by(IngestRunRow.id.desc())
                .offset(RUNS_KEPT)
            )
            stale = list(await session.scalars(old))
            if stale:
                await session.execute(delete(IngestRunRow).where(IngestRunRow.id.in_(stale)))

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
