"""What `docbot doctor` and the Messages tab read about the index: whether the database answers and holds a migrated
index, each ingested input's newest run, and the documents' breadcrumbs with their section counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import create_async_engine

from storage.db import Database
from storage.doc_tables import ChunkRow, DocumentRow, IngestRunRow


@dataclass(frozen=True, slots=True)
class IndexState:
    """`reachable` False: no connection (`error` names the exception type); `migrated` False: no index tables yet."""

    reachable: bool
    migrated: bool = False
    documents: int = 0
    chunks: int = 0
    error: str = ""


async def index_state(url: str) -> IndexState:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            try:
                documents = (await conn.execute(text("SELECT count(*) FROM documents"))).scalar_one()
                chunks = (await conn.execute(text("SELECT count(*) FROM chunks"))).scalar_one()
            except Exception:
                return IndexState(reachable=True)
            return IndexState(reachable=True, migrated=True, documents=int(documents), chunks=int(chunks))
    except Exception as exc:
        return IndexState(reachable=False, error=type(exc).__name__)
    finally:
        await engine.dispose()


async def newest_ingest_runs(db: Database) -> list[IngestRunRow]:
    """Each ingested input's (collection and origin) newest run."""
    newest = (
        select(IngestRunRow.collection, IngestRunRow.origin, func.max(IngestRunRow.id).label("id"))
        .group_by(IngestRunRow.collection, IngestRunRow.origin)
        .subquery()
    )
    async with db.session() as session:
        return list(await session.scalars(select(IngestRunRow).join(newest, IngestRunRow.id == newest.c.id)))


async def documents_with_sections(db: Database, collections: Sequence[str]) -> list[tuple[list[str], int]]:
    """(breadcrumb path with the title last, number of sections) per document of the collections."""
    query = (
        select(DocumentRow.title, DocumentRow.crumbs, func.count(ChunkRow.id))
        .join(ChunkRow, ChunkRow.doc_id == DocumentRow.id)
        .where(DocumentRow.collection.in_(list(collections)))
        .group_by(DocumentRow.id, DocumentRow.title, DocumentRow.crumbs)
    )
    async with db.session() as session:
        rows = (await session.execute(query)).all()
    documents = []
    for title, crumbs, sections in rows:
        path = [str(c) for c in (crumbs or []) if str(c).strip()]
        if title and (not path or path[-1] != title):
            path.append(str(title))
        if path:
            documents.append((path, int(sections)))
    return documents
