"""The team-answer store: candidates drafted from resolved threads and every review step, each one conditional
UPDATE so that concurrent presses, replicas and CLI calls settle on exactly one outcome.

Statuses: draft (awaiting review) → approved → expired (back to review); draft / expired / approved → rejected.
Only approved answers are ever indexed (storage/answers/publish.py keeps the index equal to that set).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from storage.answer_tables import TeamAnswerActionRow, TeamAnswerRow
from storage.answers.model import (
    AnswerDraft,
    AnswerStatus,
    DocMention,
    ExpiryCause,
    Outcome,
    Reviewer,
    ReviewKind,
    TeamAnswer,
    Transition,
)
from storage.db import Database, utc_now
from storage.tables import new_action_token

# the states each step may start from; any other state is NOT_ALLOWED (or UNCHANGED when it is the target)
_APPROVE_FROM = (AnswerStatus.DRAFT, AnswerStatus.EXPIRED, AnswerStatus.REJECTED)
_REJECT_FROM = (AnswerStatus.DRAFT, AnswerStatus.EXPIRED, AnswerStatus.APPROVED)
_EDIT_FROM = (AnswerStatus.DRAFT, AnswerStatus.EXPIRED, AnswerStatus.APPROVED)
_EXPIRE_FROM = (AnswerStatus.APPROVED,)
MAX_LIST = 500
Answers = list[TeamAnswer]  # (the store has a `list` method: annotations say Answers)


def _answer(row: TeamAnswerRow) -> TeamAnswer:
    return TeamAnswer(
        id=row.id,
        status=AnswerStatus(row.status),
        revision=row.revision,
        question=row.question,
        answer=row.answer,
        platform=row.platform,
        workspace_id=row.workspace_id,
        channel_id=row.channel_id,
        channel_name=row.channel_name,
        thread_key=row.thread_key,
        thread_url=row.thread_url,
        answer_message_id=row.answer_message_id,
        author_id=row.author_id,
        author_name=row.author_name,
        answered_at=row.answered_at,
        collection=row.collection,
        created_at=row.created_at,
        updated_at=row.updated_at,
        mentions=tuple(DocMention.from_json(m) for m in row.mentions or ()),
        captured_answer=row.captured_answer,
        reviewer_id=row.reviewer_id,
        reviewer_name=row.reviewer_name,
        reviewed_at=row.reviewed_at,
        reason=row.reason,
        expired_by=ExpiryCause(row.expired_by) if row.expired_by else None,
        diff=row.diff,
        expires_at=row.expires_at,
    )


@dataclass(frozen=True, slots=True)
class ReviewButton:
    """One stored review button: its opaque id (the only thing the platform button carries) and what it does."""

    id: str
    kind: ReviewKind


@dataclass(frozen=True, slots=True)
class ReviewPress:
    """What a review button id stands for."""

    answer_id: str
    kind: ReviewKind
    revision: int


class AnswerStore:
    def __init__(self, db: Database, clock: Callable[[], datetime] = utc_now) -> None:
        self._db = db
        self._now = clock

    # -- drafting and reading ------------------------------------------------------------------------------------

    async def draft(self, draft: AnswerDraft) -> tuple[TeamAnswer, bool]:
        """Store a candidate; (the candidate, True) when new, (the existing one, False) when this expert message was
        captured before (a ✅ and a "Solved" on one thread, a retried event): drafting is idempotent."""
        now = self._now()
        values: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "status": AnswerStatus.DRAFT.value,
            "revision": 1,
            "question": draft.question,
            "answer": draft.answer,
            "platform": draft.platform,
            "workspace_id": draft.workspace_id,
            "channel_id": draft.channel_id,
            "channel_name": draft.channel_name,
            "thread_key": draft.thread_key,
            "thread_url": draft.thread_url,
            "answer_message_id": draft.answer_message_id,
            "author_id": draft.author_id,
            "author_name": draft.author_name,
            "answered_at": draft.answered_at,
            "collection": draft.collection,
            "mentions": [m.to_json() for m in draft.mentions],
            "created_at": now,
            "updated_at": now,
        }
        async with self._db.session() as session:
            inserted = await session.execute(
                self._db.insert(TeamAnswerRow)
                .values(**values)
                .on_conflict_do_nothing(index_elements=["platform", "workspace_id", "channel_id", "answer_message_id"])
            )
            created = inserted.rowcount == 1  # type: ignore[attr-defined]
            row = await session.scalar(
                select(TeamAnswerRow).where(
                    TeamAnswerRow.platform == draft.platform,
                    TeamAnswerRow.workspace_id == draft.workspace_id,
                    TeamAnswerRow.channel_id == draft.channel_id,
                    TeamAnswerRow.answer_message_id == draft.answer_message_id,
                )
            )
            assert row is not None
            return _answer(row), created

    async def get(self, answer_id: str) -> TeamAnswer | None:
        async with self._db.session() as session:
            row = await session.get(TeamAnswerRow, answer_id)
            return _answer(row) if row is not None else None

    async def find(self, id_or_prefix: str) -> Answers:
        """The answer with this id, or those whose id starts with it (the CLI accepts the first characters)."""
        exact = await self.get(id_or_prefix)
        if exact is not None:
            return [exact]
        if len(id_or_prefix) < 4:
            return []
        async with self._db.session() as session:
            rows = await session.scalars(
                select(TeamAnswerRow).where(TeamAnswerRow.id.startswith(id_or_prefix, autoescape=True)).limit(10)
            )
            return [_answer(row) for row in rows]

    async def list(
        self, statuses: Collection[AnswerStatus] | None = None, *, limit: int = MAX_LIST
    ) -> Answers:
        """Answers in these states (all when None), newest first."""
        query = select(TeamAnswerRow).order_by(TeamAnswerRow.created_at.desc(), TeamAnswerRow.id).limit(limit)
        if statuses is not None:
            query = query.where(TeamAnswerRow.status.in_([s.value for s in statuses]))
        async with self._db.session() as session:
            return [_answer(row) for row in await session.scalars(query)]

    async def awaiting_review(self, *, limit: int = MAX_LIST) -> Answers:
        return await self.list((AnswerStatus.DRAFT, AnswerStatus.EXPIRED), limit=limit)

    async def approved_for_collections(self, collections: Sequence[str]) -> Answers:
        """The approved answers a channel that sees `collections` may be answered from."""
        async with self._db.session() as session:
            rows = await session.scalars(
                select(TeamAnswerRow)
                .where(
                    TeamAnswerRow.status == AnswerStatus.APPROVED.value,
                    TeamAnswerRow.collection.in_(list(collections)),
                )
                .order_by(TeamAnswerRow.created_at)
            )
            return [_answer(row) for row in rows]

    async def approved(self) -> Answers:
        return await self.list((AnswerStatus.APPROVED,), limit=1_000_000)

    async def due_for_expiry(self, now: datetime) -> Answers:
        """Approved answers whose time is up."""
        async with self._db.session() as session:
            rows = await session.scalars(
                select(TeamAnswerRow).where(
                    TeamAnswerRow.status == AnswerStatus.APPROVED.value,
                    TeamAnswerRow.expires_at.is_not(None),
                    TeamAnswerRow.expires_at <= now,
                )
            )
            return [_answer(row) for row in rows]

    async def counts(self) -> dict[AnswerStatus, int]:
        async with self._db.session() as session:
            rows = await session.execute(
                select(TeamAnswerRow.status, func.count()).group_by(TeamAnswerRow.status)
            )
            found = {AnswerStatus(status): int(n) for status, n in rows.all()}
        return {status: found.get(status, 0) for status in AnswerStatus}

    # -- review steps --------------------------------------------------------------------------------------------

    async def approve(
        self,
        answer_id: str,
        reviewer: Reviewer,
        *,
        expires_at: datetime | None,
        mentions: Sequence[DocMention] | None = None,
        collection: str | None = None,
        revision: int | None = None,
    ) -> Transition:
        """Approve (again, after an expiry or a rejection). `mentions` refreshes the texts it is checked against to
        the documents as they are now (what the reviewer approved it against)."""
        now = self._now()
        values: dict[str, Any] = {
            "status": AnswerStatus.APPROVED.value,
            "reviewer_id": reviewer.id,
            "reviewer_name": reviewer.name,
            "reviewed_at": now,
            "expires_at": expires_at,
            "reason": None,
            "expired_by": None,
            "diff": None,
        }
        if mentions is not None:
            values["mentions"] = [m.to_json() for m in mentions]
        if collection is not None:
            values["collection"] = collection
        return await self._step(answer_id, AnswerStatus.APPROVED, _APPROVE_FROM, values, revision, now)

    async def reject(self, answer_id: str, reviewer: Reviewer, reason: str = "", *, revision: int | None = None
                     ) -> Transition:  # fmt: skip
        """Reject a draft or an expired answer, or withdraw an approved one."""
        now = self._now()
        values = {
            "status": AnswerStatus.REJECTED.value,
            "reviewer_id": reviewer.id,
            "reviewer_name": reviewer.name,
            "reviewed_at": now,
            "reason": reason or None,
        }
        return await self._step(answer_id, AnswerStatus.REJECTED, _REJECT_FROM, values, revision, now)

    async def edit(
        self,
        answer_id: str,
        reviewer: Reviewer,
        *,
        answer: str | None = None,
        question: str | None = None,
        revision: int | None = None,
    ) -> Transition:
        """Change the answer's text or question; its status stays (an approved answer is re-published). The text as
        first captured is kept in `captured_answer`."""
        if answer is None and question is None:
            raise ValueError("edit needs a new answer or question")
        now = self._now()
        async with self._db.session() as session:
            row = await session.get(TeamAnswerRow, answer_id)
            if row is None:
                return Transition(Outcome.UNKNOWN)
            current = AnswerStatus(row.status)
            if current not in _EDIT_FROM:
                return Transition(Outcome.NOT_ALLOWED, _answer(row), current)
            values: dict[str, Any] = {"reviewer_id": reviewer.id, "reviewer_name": reviewer.name, "reviewed_at": now}
            if answer is not None and answer != row.answer:
                values["answer"] = answer
                values["captured_answer"] = row.captured_answer or row.answer
            if question is not None and question != row.question:
                values["question"] = question
            if len(values) == 3:
                return Transition(Outcome.UNCHANGED, _answer(row), current)
        return await self._step(answer_id, None, _EDIT_FROM, values, revision, now)

    async def expire(
        self, answer_id: str, cause: ExpiryCause, reason: str, *, diff: str | None = None
    ) -> Transition:
        """Send an approved answer back to review (too old, or a document it relies on changed, with the diff)."""
        now = self._now()
        values = {"status": AnswerStatus.EXPIRED.value, "expired_by": cause.value, "reason": reason, "diff": diff}
        return await self._step(answer_id, AnswerStatus.EXPIRED, _EXPIRE_FROM, values, None, now)

    async def update_mentions(self, answer_id: str, mentions: Sequence[DocMention], *, revision: int) -> bool:
        """Record that the documents it relies on changed elsewhere only (their hashes moved, its sections did
        not), without counting as a change of the answer. False when the answer changed meanwhile."""
        async with self._db.session() as session:
            result = await session.execute(
                update(TeamAnswerRow)
                .where(TeamAnswerRow.id == answer_id, TeamAnswerRow.revision == revision)
                .values(mentions=[m.to_json() for m in mentions])
                .execution_options(synchronize_session=False)
            )
            return bool(result.rowcount == 1)  # type: ignore[attr-defined]

    async def _step(
        self,
        answer_id: str,
        target: AnswerStatus | None,
        allowed: tuple[AnswerStatus, ...],
        values: dict[str, Any],
        revision: int | None,
        now: datetime,
    ) -> Transition:
        """One conditional UPDATE (state allowed, and the revision the caller saw when given); the outcome read
        back in the same transaction."""
        conditions: list[ColumnElement[bool]] = [
            TeamAnswerRow.id == answer_id,
            TeamAnswerRow.status.in_([s.value for s in allowed]),
        ]
        if revision is not None:
            conditions.append(TeamAnswerRow.revision == revision)
        async with self._db.session() as session:
            before = await self._status(session, answer_id)
            result = await session.execute(
                update(TeamAnswerRow)
                .where(*conditions)
                .values(**values, revision=TeamAnswerRow.revision + 1, updated_at=now)
                .execution_options(synchronize_session=False)
            )
            changed = result.rowcount == 1  # type: ignore[attr-defined]
            row = await session.get(TeamAnswerRow, answer_id, populate_existing=True)
        if row is None:
            return Transition(Outcome.UNKNOWN)
        answer = _answer(row)
        if changed:
            return Transition(Outcome.DONE, answer, before)
        if target is not None and answer.status is target:
            return Transition(Outcome.UNCHANGED, answer, answer.status)
        if answer.status not in allowed:
            return Transition(Outcome.NOT_ALLOWED, answer, answer.status)
        return Transition(Outcome.STALE, answer, answer.status)

    @staticmethod
    async def _status(session: AsyncSession, answer_id: str) -> AnswerStatus | None:
        status = await session.scalar(select(TeamAnswerRow.status).where(TeamAnswerRow.id == answer_id))
        return AnswerStatus(status) if status is not None else None

    # -- review buttons ------------------------------------------------------------------------------------------

    async def review_buttons(self, answer: TeamAnswer) -> tuple[ReviewButton, ...]:
        """Approve / Edit / Reject buttons for the answer as it is now (its revision): pressed after someone else
        changed it, they do nothing (STALE)."""
        rows = [
            TeamAnswerActionRow(
                id=new_action_token(), answer_id=answer.id, kind=kind.value, revision=answer.revision,
                created_at=self._now(),
            )
            for kind in (ReviewKind.APPROVE, ReviewKind.EDIT, ReviewKind.REJECT)
        ]  # fmt: skip
        async with self._db.session() as session:
            session.add_all(rows)
        return tuple(ReviewButton(row.id, ReviewKind(row.kind)) for row in rows)

    async def review_press(self, button_id: str) -> ReviewPress | None:
        """What a review button stands for; None when the id is not a review button (another kind of action)."""
        async with self._db.session() as session:
            row = await session.get(TeamAnswerActionRow, button_id)
            return ReviewPress(row.answer_id, ReviewKind(row.kind), row.revision) if row is not None else None
