"""Approved answers as documents: each is ingested, by the ordinary ingestion path, as one document in its own source
namespace (`answers/<id>`) of its channel's collection, so search, ranking, the answer decision and the channels'
collections treat it as they treat the documentation. Anything not approved is withdrawn from the index.

The document: title and crumbs are the question (as a FAQ entry's heading would be), the text is the answer, the
source is the thread's link. Its id starts with `pipeline.types.TEAM_ANSWER_DOC_PREFIX`, the one thing the pipeline
knows about it (such sources are numbered after the documentation's).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import select

from storage.answers.model import TeamAnswer, answer_id_of
from storage.doc_tables import DocumentRow, SessionFactory
from storage.ingest.model import IngestReport, SourceChunk, SourceDoc
from storage.ingest.text import split_long

log = logging.getLogger(__name__)

ORIGIN_PREFIX = "answers/"


class DocumentIngest(Protocol):
    """What publishing needs of `storage.ingest.Ingestor`."""

    async def ingest_documents(self, origin: str, docs: Sequence[SourceDoc], *, collection: str) -> IngestReport: ...


def answer_document(answer: TeamAnswer) -> SourceDoc:
    """The document an approved answer becomes."""
    question = " ".join(answer.question.split())
    crumbs = (question,)
    chunks = [SourceChunk(section="", title=question, crumbs=crumbs, text=piece)
              for piece in split_long(answer.answer.strip()) if piece.strip()]  # fmt: skip
    return SourceDoc(
        id=answer.doc_id,
        source=answer.thread_url or f"{ORIGIN_PREFIX}{answer.id}",
        title=question,
        crumbs=crumbs,
        content=answer.answer,
        chunks=chunks,
        changed_at=answer.answered_at,
    )


@dataclass(frozen=True, slots=True)
class SyncReport:
    published: int = 0  # approved answers (re-)ingested because they were missing or had changed
    withdrawn: int = 0  # indexed answers that are no longer approved (or moved to another collection)


class AnswerPublisher:
    def __init__(self, db: SessionFactory, ingest: DocumentIngest) -> None:
        self._db = db
        self._ingest = ingest

    async def publish(self, answer: TeamAnswer) -> IngestReport:
        """Index an approved answer in its collection (out of any other it was in before)."""
        for collection in await self._indexed_in(answer.id):
            if collection != answer.collection:
                await self._ingest.ingest_documents(answer.origin, (), collection=collection)
        report = await self._ingest.ingest_documents(
            answer.origin, [answer_document(answer)], collection=answer.collection
        )
        log.info("team answer published", extra={"answer": answer.id, "collection": answer.collection,
                                                 "changed": report.changed})  # fmt: skip
        return report

    async def withdraw(self, answer_id: str) -> int:
        """Take an answer out of every collection; how many held it."""
        collections = await self._indexed_in(answer_id)
        for collection in collections:
            await self._ingest.ingest_documents(f"{ORIGIN_PREFIX}{answer_id}", (), collection=collection)
        if collections:
            log.info("team answer withdrawn", extra={"answer": answer_id, "collections": len(collections)})
        return len(collections)

    async def sync(self, approved: Sequence[TeamAnswer]) -> SyncReport:
        """Make the index hold exactly `approved` (the store's approved answers): withdraw the others, publish
        the missing and changed ones (an unchanged one costs a hash comparison). Repairs what a crash between a
        review step and its index change left behind."""
        wanted = {answer.id: answer for answer in approved}
        indexed = await self._indexed()
        withdrawn = 0
        for answer_id, collections in indexed.items():
            answer = wanted.get(answer_id)
            stray = collections if answer is None else collections - {answer.collection}
            for collection in stray:
                await self._ingest.ingest_documents(f"{ORIGIN_PREFIX}{answer_id}", (), collection=collection)
                withdrawn += 1
        published = 0
        for answer in approved:
            report = await self._ingest.ingest_documents(
                answer.origin, [answer_document(answer)], collection=answer.collection
            )
            published += report.added + report.updated
        return SyncReport(published=published, withdrawn=withdrawn)

    async def _indexed_in(self, answer_id: str) -> set[str]:
        async with self._db.session() as session:
            rows = await session.scalars(
                select(DocumentRow.collection)
                .where(DocumentRow.origin == f"{ORIGIN_PREFIX}{answer_id}")
                .distinct()
            )
            return set(rows)

    async def _indexed(self) -> dict[str, set[str]]:
        """Indexed answers: answer id -> collections holding it."""
        async with self._db.session() as session:
            rows = await session.execute(
                select(DocumentRow.id, DocumentRow.collection).where(DocumentRow.origin.startswith(ORIGIN_PREFIX))
            )
            found: dict[str, set[str]] = {}
            for doc_id, collection in rows.all():
                answer_id = answer_id_of(doc_id)
                if answer_id is not None:
                    found.setdefault(answer_id, set()).add(collection)
            return found
