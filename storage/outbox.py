"""The outbox: every reply is stored before it is posted, and marked sent with the platform's message id.

A row is claimed for sending with one atomic UPDATE that pushes its `next_attempt_at` forward by a lease
(`storage.leased_queue.LeasedQueue`, shared with the inbox), so two replicas never post the same row at the same
time; a sender that dies mid-post leaves the row to be picked up again when the lease lapses. Transient failures are
retried with capped, jittered exponential backoff for as long as the row is younger than the horizon (a day by
default: a platform outage of hours loses no answer); past it, or on a permanent failure, the row is marked failed,
where `docbot outbox retry` (`retry_failed`) can queue it again.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from pipeline.codec import from_json, to_json
from pipeline.messages import Reply, ThreadRef
from storage.db import Database, utc_now
from storage.leased_queue import LeasedQueue
from storage.tables import OutboxRow, OutboxStatus

OUTBOX: Table = OutboxRow.__table__  # type: ignore[assignment]
ERROR_CHARS = 500


# -- the store ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OutgoingReply:
    """A reply to store; `inbox_key` ties it to the event it answers (or names a job's note for idempotency)."""

    ref: ThreadRef
    reply: Reply
    inbox_key: str | None = None


@dataclass(frozen=True, slots=True)
class OutboxItem:
    id: int
    inbox_key: str | None
    ref: ThreadRef
    reply: Reply
    attempts: int  # including the claim that returned this item
    created_at: datetime  # when the reply was stored (or queued again): the horizon counts from here


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """A row an operator looks at (`docbot outbox list`): never the reply's text."""

    id: int
    platform: str
    status: str
    attempts: int
    created_at: datetime
    next_attempt_at: datetime
    error: str | None


def equal_jitter(delay_s: float) -> float:
    """Half the delay fixed, half random: replicas and rows that failed together do not retry together."""
    return delay_s / 2 + random.uniform(0, delay_s / 2)


def outbox_values(message: OutgoingReply, now: datetime) -> dict[str, Any]:
    """Column values of a new pending row (used by the inbox to store a reply in the same transaction)."""
    return {
        "inbox_key": message.inbox_key,
        "platform": message.ref.platform,
        "target": to_json(message.ref),
        "reply": to_json(message.reply),
        "status": OutboxStatus.PENDING.value,
        "attempts": 0,
        "next_attempt_at": now,
        "created_at": now,
    }


async def insert_replies(session: AsyncSession, messages: Sequence[OutgoingReply], now: datetime) -> list[int]:
    ids: list[int] = []
    for message in messages:
        result = await session.execute(OUTBOX.insert().values(outbox_values(message, now)).returning(OUTBOX.c.id))
        ids.append(int(result.scalar_one()))
    return ids


class Outbox:
    """Durable delivery of replies. `now` is injectable so tests can move time."""

    def __init__(
        self,
        db: Database,
        *,
        horizon: timedelta = timedelta(hours=24),
        base_backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        jitter: Callable[[float], float] = equal_jitter,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        """`max_backoff_s` bounds how long after a platform's recovery a waiting reply is posted."""
        self._db = db
        self.horizon = horizon
        self._jitter = jitter
        self._now = now
        self._queue = LeasedQueue(db, OUTBOX, key=OUTBOX.c.id, not_before=OUTBOX.c.next_attempt_at,
                                  base_backoff_s=base_backoff_s, max_backoff_s=max_backoff_s, now=now)  # fmt: skip

    async def add(self, message: OutgoingReply) -> int:
        async with self._db.session() as session:
            (row_id,) = await insert_replies(session, [message], self._now())
        return row_id

    async def exists(self, inbox_key: str) -> bool:
        async with self._db.session() as session:
            found = await session.execute(select(OUTBOX.c.id).where(OUTBOX.c.inbox_key == inbox_key).limit(1))
            return found.first() is not None

    async def claim(
        self,
        lease_s: float,
        *,
        limit: int = 20,
        row_id: int | None = None,
        platforms: Sequence[str] | None = None,
    ) -> list[OutboxItem]:
        """Pending rows whose time has come (or the one row `row_id`), leased for `lease_s` seconds; only rows for
        `platforms` when given (a replica claims only what it can post)."""
        now = self._now()
        where = [OUTBOX.c.status == OutboxStatus.PENDING.value, OUTBOX.c.next_attempt_at <= now]
        if row_id is not None:
            where.append(OUTBOX.c.id == row_id)
        if platforms is not None:
            where.append(OUTBOX.c.platform.in_(list(platforms)))
        rows = await self._queue.claim(
            where, now=now, lease_s=lease_s, limit=limit, order_by=(OUTBOX.c.id,), values={},
            returning=(OUTBOX.c.id, OUTBOX.c.inbox_key, OUTBOX.c.target, OUTBOX.c.reply, OUTBOX.c.attempts,
                       OUTBOX.c.created_at),
        )  # fmt: skip
        items = [
            OutboxItem(
                id=row.id,
                inbox_key=row.inbox_key,
                ref=from_json(ThreadRef, row.target),
                reply=from_json(Reply, row.reply),
                attempts=row.attempts,
                created_at=row.created_at,
            )
            for row in rows
        ]
        return sorted(items, key=lambda item: item.id)

    async def mark_sent(self, item: OutboxItem, platform_message_id: str) -> bool:
        """Record the delivery; False when the row was no longer ours (its lease lapsed and it was re-claimed)."""
        values = {"status": OutboxStatus.SENT.value, "platform_message_id": platform_message_id,
                  "sent_at": self._now(), "error": None}  # fmt: skip
        return await self._queue.update_held(self._held(item), values)

    async def mark_failed(self, item: OutboxItem, error: str, *, permanent: bool = False) -> bool:
        """Schedule a retry with backoff (never past the horizon), or give up when the failure is permanent or the
        row is older than the horizon. Returns True when the row is now failed."""
        now = self._now()
        deadline = item.created_at + self.horizon
        give_up = permanent or now >= deadline
        values: dict[str, Any] = {"error": error[:ERROR_CHARS]}
        if give_up:
            values["status"] = OutboxStatus.FAILED.value
        else:
            retry_at = now + timedelta(seconds=self._jitter(self.backoff_s(item.attempts)))
            values["next_attempt_at"] = min(retry_at, deadline)
        await self._queue.update_held(self._held(item), values)
        return give_up

    def _held(self, item: OutboxItem) -> tuple[ColumnElement[bool], ...]:
        return self._queue.held(item.id, item.attempts, OUTBOX.c.status == OutboxStatus.PENDING.value)

    def backoff_s(self, attempts: int) -> float:
        """Before jitter."""
        return self._queue.backoff_s(attempts)

    async def counts(self) -> dict[str, int]:
        """Rows per status."""
        return await self._queue.counts()

    async def undelivered(self) -> dict[str, int]:
        """Pending and failed rows (both 0 when there are none): what doctor and the metrics show. Reads only
        those two statuses, through the status index, not the sent history."""
        return await self._queue.counts((OutboxStatus.PENDING.value, OutboxStatus.FAILED.value))

    async def entries(self, *, statuses: Sequence[str], limit: int = 100) -> list[OutboxEntry]:
        """The oldest rows with these statuses (for an operator: ids, platform, attempts, times, last error)."""
        statement = (
            select(
                OUTBOX.c.id, OUTBOX.c.platform, OUTBOX.c.status, OUTBOX.c.attempts, OUTBOX.c.created_at,
                OUTBOX.c.next_attempt_at, OUTBOX.c.error,
            )
            .where(OUTBOX.c.status.in_(list(statuses)))
            .order_by(OUTBOX.c.id)
            .limit(limit)
        )  # fmt: skip
        async with self._db.session() as session:
            rows = (await session.execute(statement)).all()
        return [OutboxEntry(*row) for row in rows]

    async def retry_failed(self, ids: Sequence[int] | None = None) -> int:
        """Queue failed rows again (all, or those of `ids`), due now, with a fresh horizon; returns how many.
        A running bot's sweep posts them (whichever replica has the platform's sink)."""
        now = self._now()
        statement = update(OUTBOX).where(OUTBOX.c.status == OutboxStatus.FAILED.value)
        if ids is not None:
            statement = statement.where(OUTBOX.c.id.in_(list(ids)))
        statement = statement.values(status=OutboxStatus.PENDING.value, next_attempt_at=now, created_at=now)
        async with self._db.session() as session:
            result = await session.execute(statement)
        return int(result.rowcount)  # type: ignore[attr-defined]

    async def purge(self, older_than: datetime) -> int:
        """Delete sent and failed rows created before `older_than`; pending rows are kept."""
        return await self._queue.purge((OutboxStatus.SENT.value, OutboxStatus.FAILED.value), older_than)
