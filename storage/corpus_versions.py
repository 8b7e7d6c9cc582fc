"""The corpus version: one number per collection that grows whenever an ingest changes it (written by the ingestor),
read here as one number over several collections, which keys the semantic cache."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select

from storage.db import Database
from storage.doc_tables import CorpusVersionRow


async def corpus_version(db: Database, collections: Sequence[str] | None = None) -> int:
    """One number that grows whenever any of the collections changes (all of them with None); one statement."""
    query = select(func.coalesce(func.sum(CorpusVersionRow.version), 0))
    if collections is not None:
        query = query.where(CorpusVersionRow.collection.in_(list(collections)))
    async with db.session() as session:
        return int(await session.scalar(query) or 0)
