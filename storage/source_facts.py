"""What a citation says about its source besides where it is: when the document last changed, and for an approved
team answer who gave it, where and when. One read per reply, by primary keys."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from storage.answer_tables import TeamAnswerRow
from storage.answers.model import answer_id_of
from storage.doc_tables import DocumentRow, SessionFactory


@dataclass(frozen=True, slots=True)
class Attribution:
    """Who answered in which channel, and when: "answered by @person in #channel on 2026-11-20"."""

    author: str
    channel: str
    answered_at: datetime


@dataclass(frozen=True, slots=True)
class SourceFacts:
    changed_at: datetime  # the document's last change (see storage.ingest.model.SourceDoc.changed_at)
    attribution: Attribution | None = None  # set for an approved team answer


async def source_facts(db: SessionFactory, doc_ids: Sequence[str]) -> dict[str, SourceFacts]:
    """Facts of the documents among `doc_ids` that exist (a document removed since the search has none)."""
    wanted = list(dict.fromkeys(doc_ids))
    if not wanted:
        return {}
    answer_ids = [a for a in (answer_id_of(d) for d in wanted) if a is not None]
    async with db.session() as session:
        rows = await session.execute(select(DocumentRow.id, DocumentRow.updated_at).where(DocumentRow.id.in_(wanted)))
        changed = {doc_id: updated_at for doc_id, updated_at in rows.all()}
        answers = {
            row.id: row
            for row in (
                await session.scalars(select(TeamAnswerRow).where(TeamAnswerRow.id.in_(answer_ids)))
                if answer_ids
                else ()
            )
        }
    facts: dict[str, SourceFacts] = {}
    for doc_id, changed_at in changed.items():
        answer_id = answer_id_of(doc_id)
        row = answers.get(answer_id) if answer_id is not None else None
        if row is None:
            facts[doc_id] = SourceFacts(changed_at=changed_at)
        else:
            by = Attribution(row.author_name, row.channel_name or row.channel_id, row.answered_at)
            facts[doc_id] = SourceFacts(changed_at=row.answered_at, attribution=by)
    return facts
