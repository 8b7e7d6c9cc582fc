"""Tables of the document store: documents, their chunks, chunk embeddings and a per-collection corpus version."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from storage.base import Base, UTCDateTime


class SessionFactory(Protocol):
    """What the document store needs from `storage.db.Database`: a session inside one transaction, committed
    when the block ends."""

    def session(self) -> AbstractAsyncContextManager[AsyncSession]: ...


class DocumentRow(Base):
    """One ingested document (a file, a web page or one seed record)."""

    __tablename__ = "documents"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    collection: Mapped[str] = mapped_column(String(100), index=True)
    origin: Mapped[str] = mapped_column(String(2000))  # the ingest input it came from (folder, file, URL)
    source: Mapped[str] = mapped_column(String(2000))  # citation URL of the document
    title: Mapped[str] = mapped_column(String(500), default="")
    crumbs: Mapped[list[str]] = mapped_column(JSON, default=list)
    description: Mapped[str] = mapped_column(Text, default="")
    content: Mapped[str] = mapped_column(Text, default="")
    summary: Mapped[str] = mapped_column(Text, default="")
    keypoints: Mapped[list[str]] = mapped_column(JSON, default=list)
    keywords: Mapped[list[str]] = mapped_column(JSON, default=list)
    content_hash: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (Index("ix_documents_collection_origin", "collection", "origin"),)


class ChunkRow(Base):
    """A section-sized piece of a document: the unit that is searched and cited."""

    __tablename__ = "chunks"

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    doc_id: Mapped[str] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    collection: Mapped[str] = mapped_column(String(100), index=True)
    section: Mapped[str] = mapped_column(String(300), default="")  # GitHub-style anchor
    title: Mapped[str] = mapped_column(String(500), default="")
    crumbs: Mapped[list[str]] = mapped_column(JSON, default=list)
    url: Mapped[str] = mapped_column(String(2300))
    text: Mapped[str] = mapped_column(Text)
    ord: Mapped[int] = mapped_column(Integer)


class EmbeddingRow(Base):
    """A chunk's passage embedding (float32 bytes), the local index's durable copy."""

    __tablename__ = "embeddings"

    chunk_id: Mapped[str] = mapped_column(ForeignKey("chunks.id", ondelete="CASCADE"), primary_key=True)
    model: Mapped[str] = mapped_column(String(200))
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)


class CorpusVersionRow(Base):
    """Bumped on every ingest that changes a collection, so searchers and caches know to refresh."""

    __tablename__ = "corpus_versions"

    collection: Mapped[str] = mapped_column(String(100), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class CrawlPageRow(Base):
    """What the last crawl of a site learnt about one of its URLs: the document it gave, the validators for a
    conditional request next time, and how many crawls in a row it answered 404/410."""

    __tablename__ = "crawl_pages"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # of (collection, origin, url)
    collection: Mapped[str] = mapped_column(String(100))
    origin: Mapped[str] = mapped_column(String(2000))  # the site's start URL (the ingest input)
    url: Mapped[str] = mapped_column(String(2000))
    doc_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    page_url: Mapped[str | None] = mapped_column(String(2000), nullable=True)  # the URL its document is known by
    body_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)  # tells `dir/` from `dir/index.html`
    etag: Mapped[str | None] = mapped_column(String(500), nullable=True)
    last_modified: Mapped[str | None] = mapped_column(String(100), nullable=True)
    missing: Mapped[int] = mapped_column(Integer, default=0)
    in_sitemap: Mapped[bool] = mapped_column(Boolean, default=False)
    depth: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[int] = mapped_column(Integer, default=0)  # the last answer's HTTP status, 0 for none
    error: Mapped[str] = mapped_column(String(300), default="")  # the last fault, "" when it was read
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (Index("ix_crawl_pages_collection_origin", "collection", "origin"),)


class IngestRunRow(Base):
    """One ingest of one input (a site, a folder, a file): when, what it found and what failed, for `docbot
    doctor`. The newest few per input are kept."""

    __tablename__ = "ingest_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    collection: Mapped[str] = mapped_column(String(100))
    origin: Mapped[str] = mapped_column(String(2000))
    kind: Mapped[str] = mapped_column(String(20))  # "site" or "files"
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime())
    documents: Mapped[int] = mapped_column(Integer, default=0)  # of this input in the index afterwards
    found: Mapped[int] = mapped_column(Integer, default=0)
    fetched: Mapped[int] = mapped_column(Integer, default=0)
    unchanged: Mapped[int] = mapped_column(Integer, default=0)
    changed: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    removed: Mapped[int] = mapped_column(Integer, default=0)
    skipped: Mapped[int] = mapped_column(Integer, default=0)
    requests: Mapped[int] = mapped_column(Integer, default=0)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    errors: Mapped[list[str]] = mapped_column(JSON, default=list)  # the first few "url: why"

    __table_args__ = (Index("ix_ingest_runs_collection_origin", "collection", "origin"),)


DOC_TABLES: tuple[Any, ...] = (
    DocumentRow.__table__,
    ChunkRow.__table__,
    EmbeddingRow.__table__,
    CorpusVersionRow.__table__,
    CrawlPageRow.__table__,
    IngestRunRow.__table__,
)
