"""Tables of the document store: documents, their chunks, chunk embeddings and a per-collection corpus version."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import JSON, ForeignKey, Index, Integer, LargeBinary, String, Text
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


DOC_TABLES: tuple[Any, ...] = (
    DocumentRow.__table__,
    ChunkRow.__table__,
    EmbeddingRow.__table__,
    CorpusVersionRow.__table__,
)
