"""What the weekly docs digest reads (`bot.jobs.digest`): the period's questions the docs did not serve (refused,
clarified, rated not helpful), the answers rated not helpful, the stale pages the answers cited, and where each
conversation's thread is."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, and_, func, select

from pipeline.types import is_team_answer
from storage.db import Database
from storage.doc_tables import ChunkRow, DocumentRow
from storage.tables import ConversationRow, FeedbackRow, MessageRow, RunRow

RUNS: Table = RunRow.__table__  # type: ignore[assignment]
MESSAGES: Table = MessageRow.__table__  # type: ignore[assignment]
FEEDBACK: Table = FeedbackRow.__table__  # type: ignore[assignment]
GAP_KINDS = ("refusal", "clarification")
MAX_STALE_PAGES = 5
MAX_RATED_DOWN = 8
STALE_AFTER = timedelta(days=180)  # a page unchanged this long is stale


@dataclass(frozen=True, slots=True)
class Gap:
    question: str
    reason: str  # refusal | clarification | not_helpful
    conversation_id: str = ""
    asked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class StalePage:
    doc_id: str
    title: str
    url: str
    changed_at: datetime
    answers: int  # answers of the period that cited it


@dataclass(frozen=True, slots=True)
class RatedDown:
    question: str
    answer: str  # the reply's text, shortened
    votes: int
    conversation_id: str


def _question_of() -> Any:
    return (
        select(MESSAGES.c.text)
        .where(
            and_(
                MESSAGES.c.conversation_id == RUNS.c.conversation_id,
                MESSAGES.c.platform_message_id == RUNS.c.message_id,
            )
        )
        .limit(1)
        .scalar_subquery()
    )


async def collect_gaps(db: Database, *, since: datetime, until: datetime) -> list[Gap]:
    """The period's gaps, one per question (a question both clarified and rated down counts once, as not helpful)."""
    question = _question_of()
    gap_runs = select(
        RUNS.c.id, RUNS.c.reply_kind, RUNS.c.conversation_id, RUNS.c.started_at, question.label("question")
    ).where(RUNS.c.started_at >= since, RUNS.c.started_at < until, RUNS.c.reply_kind.in_(GAP_KINDS))
    rated_down = (
        select(RUNS.c.id, RUNS.c.conversation_id, RUNS.c.started_at, question.label("question"))
        .join(FEEDBACK, FEEDBACK.c.run_id == RUNS.c.id)
        .where(FEEDBACK.c.created_at >= since, FEEDBACK.c.created_at < until, FEEDBACK.c.helpful.is_(False))
    )
    by_run: dict[str, Gap] = {}
    async with db.session() as session:
        for row in (await session.execute(gap_runs)).all():
            if row.question:
                by_run[row.id] = Gap(row.question, row.reply_kind, row.conversation_id, row.started_at)
        for rated in (await session.execute(rated_down)).all():
            if rated.question:
                by_run[rated.id] = Gap(rated.question, "not_helpful", rated.conversation_id, rated.started_at)
    return sorted(by_run.values(), key=lambda g: (g.asked_at is None, g.asked_at))


async def collect_rated_down(db: Database, *, since: datetime, until: datetime) -> list[RatedDown]:
    """Answers rated not helpful in the period, most votes first."""
    question = _question_of()
    votes = (
        select(FEEDBACK.c.run_id, func.count().label("votes"))
        .where(FEEDBACK.c.created_at >= since, FEEDBACK.c.created_at < until, FEEDBACK.c.helpful.is_(False))
        .group_by(FEEDBACK.c.run_id)
        .subquery()
    )
    query = (
        select(RUNS.c.id, RUNS.c.conversation_id, RUNS.c.reply, question.label("question"), votes.c.votes)
        .join(votes, votes.c.run_id == RUNS.c.id)
        .where(RUNS.c.reply_kind == "answer")
    )
    async with db.session() as session:
        rows = (await session.execute(query)).all()
    found = [
        RatedDown(row.question or "", str((row.reply or {}).get("text", "")), int(row.votes), row.conversation_id)
        for row in rows
    ]
    return sorted(found, key=lambda r: -r.votes)[:MAX_RATED_DOWN]


async def collect_stale_pages(
    db: Database, *, since: datetime, until: datetime, stale_after: timedelta = STALE_AFTER
) -> list[StalePage]:
    """Pages unchanged for `stale_after` that the period's answers cited, most cited first."""
    async with db.session() as session:
        replies = (
            await session.scalars(
                select(RUNS.c.reply).where(
                    RUNS.c.started_at >= since, RUNS.c.started_at < until, RUNS.c.reply_kind == "answer"
                )
            )
        ).all()
        cited: list[set[str]] = [
            {str(c.get("chunk_id")) for c in (reply or {}).get("citations", ()) if c.get("chunk_id")}
            for reply in replies
        ]
        chunk_ids = list(set().union(*cited)) if cited else []
        doc_of: dict[str, str] = {}
        for start in range(0, len(chunk_ids), 500):
            rows = await session.execute(
                select(ChunkRow.id, ChunkRow.doc_id).where(ChunkRow.id.in_(chunk_ids[start : start + 500]))
            )
            doc_of.update({chunk_id: doc_id for chunk_id, doc_id in rows.all()})
        counts: Counter[str] = Counter()
        for chunks in cited:
            counts.update({doc_of[c] for c in chunks if c in doc_of})
        docs = (
            await session.execute(
                select(DocumentRow.id, DocumentRow.title, DocumentRow.source, DocumentRow.updated_at).where(
                    DocumentRow.id.in_(list(counts)), DocumentRow.updated_at < until - stale_after
                )
            )
        ).all() if counts else []  # fmt: skip
    pages = [StalePage(d.id, d.title, d.source, d.updated_at, counts[d.id]) for d in docs if not is_team_answer(d.id)]
    return sorted(pages, key=lambda p: (-p.answers, p.changed_at))[:MAX_STALE_PAGES]


@dataclass(frozen=True, slots=True)
class ThreadPlace:
    conversation_id: str
    platform: str
    workspace_id: str
    channel_id: str
    thread_id: str


async def thread_places(db: Database, conversation_ids: set[str]) -> list[ThreadPlace]:
    """Where each conversation's thread is (for links to it)."""
    if not conversation_ids:
        return []
    async with db.session() as session:
        rows = await session.execute(
            select(ConversationRow.id, ConversationRow.platform, ConversationRow.workspace_id,
                   ConversationRow.channel_id, ConversationRow.thread_id)
            .where(ConversationRow.id.in_(list(conversation_ids)))
        )  # fmt: skip
        return [ThreadPlace(*row) for row in rows.all()]
