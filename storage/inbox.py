"""The inbox: every accepted platform event, written once per platform-stable key before or at the acknowledgement.

Workers claim events atomically with a lease (`storage.leased_queue.LeasedQueue`, shared with the outbox), extend it
with heartbeats, and settle an event by storing its answer (`storage.settlement`) and its reply's outbox row in the
same transaction that marks the event done — only while they still hold the claim, so an event whose lease lapsed
and was taken over is answered once. A failure does not burn the key: the event goes back to
pending with a backoff (`lease_until` doubles as "not before"), and after `max_attempts` the caller gives up with an
apology and a parked retry the person can resume with a button.

Writes of new events are group-committed: the `put`s that arrive while one transaction is being written go into
the next one, a single multi-row `INSERT ... ON CONFLICT DO NOTHING RETURNING`, and each caller returns only once
the transaction holding its row has committed. Under a burst, an acknowledgement waits for one commit instead of
queueing for SQLite's single write lock behind every other acknowledgement.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, and_, exists, func, or_, select, update
from sqlalchemy.sql.elements import ColumnElement

from pipeline.codec import from_json, to_json
from pipeline.messages import Inbound, ThreadRef
from storage.db import Database, utc_now
from storage.leased_queue import LeasedQueue
from storage.outbox import OutgoingReply, insert_replies
from storage.settlement import Answer, write_answer
from storage.tables import InboxRow, InboxStatus

log = logging.getLogger(__name__)
INBOX: Table = InboxRow.__table__  # type: ignore[assignment]
PUT_BATCH = 100  # new events written in one transaction at most
PARKED = "parked"  # a given-up event waiting for its retry button
RETRY_PREFIX = "retry-"  # action ids of retry buttons
RETRY_KEY_PREFIX = "retry:"
ERROR_CHARS = 500
_LIVE = (InboxStatus.PENDING.value, InboxStatus.CLAIMED.value)


RETRY_SEPARATOR = "~"


def retry_inbound(original: Inbound, token: str) -> Inbound:
    """The event a retry button re-runs: same thread and text under a fresh message id, so it is not a duplicate.
    The id is no platform id (`is_retry`): nothing may fetch or react to it on the platform."""
    return replace(
        original,
        thread_id=original.thread_id or original.message_id,
        message_id=f"{original.message_id}{RETRY_SEPARATOR}{token}",
    )


def is_retry(inbound: Inbound) -> bool:
    return RETRY_SEPARATOR in inbound.message_id


@dataclass(frozen=True, slots=True)
class InboxItem:
    key: str
    inbound: Inbound
    ref: ThreadRef
    attempts: int  # including the claim that returned this item
    claimed_by: str | None


class Inbox:
    """Durable, deduplicated intake of platform events. `now` is injectable so tests can move time."""

    def __init__(
        self,
        db: Database,
        *,
        max_attempts: int = 5,
        base_backoff_s: float = 2.0,
        max_backoff_s: float = 120.0,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self._db = db
        self.max_attempts = max_attempts
        self._now = now
        self._queue = LeasedQueue(db, INBOX, key=INBOX.c.dedup_key, not_before=INBOX.c.lease_until,
                                  base_backoff_s=base_backoff_s, max_backoff_s=max_backoff_s, now=now)  # fmt: skip
        self._queued: list[tuple[Inbound, ThreadRef, asyncio.Future[bool]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def put(self, inbound: Inbound, ref: ThreadRef) -> bool:
        """Store the event; False when its key was seen before (a platform retry or the twin of a mention). Returns
        after the commit that holds the row; raises when it could not be written (the caller must not ack)."""
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._queued.append((inbound, ref, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_queued())
        return await asyncio.shield(done)  # a caller that gives up does not cancel the others' transaction

    async def _write_queued(self) -> None:
        """Write what is queued, one transaction at a time, until nothing is left (the group commit)."""
        while self._queued:
            batch, self._queued = self._queued[:PUT_BATCH], self._queued[PUT_BATCH:]
            try:
                await self._write(batch)
            except BaseException as exc:  # never leave a caller waiting
                for _, _, done in batch:
                    if not done.done():
                        done.set_exception(exc if isinstance(exc, Exception) else RuntimeError("inbox write stopped"))
                if not isinstance(exc, Exception):
                    raise

    async def _write(self, batch: list[tuple[Inbound, ThreadRef, asyncio.Future[bool]]]) -> None:
        rows: dict[str, dict[str, Any]] = {}
        for inbound, ref, _ in batch:
            rows.setdefault(inbound.dedup_key, self._row(inbound, ref))
        try:
            stored = await self._insert(list(rows.values()))
        except Exception as exc:
            if len(rows) == 1:
                for _, _, done in batch:
                    done.set_exception(exc)
                return
            # one row's fault must not fail its neighbours: write each on its own
            log.warning("inbox batch failed, writing its events one by one", extra={"events": len(rows)})
            stored, failed = set(), {}
            for key, row in rows.items():
                try:
                    stored |= await self._insert([row])
                except Exception as single:
                    failed[key] = single
            for inbound, _, done in batch:
                if inbound.dedup_key in failed:
                    done.set_exception(failed[inbound.dedup_key])
        for inbound, _, done in batch:  # the first caller of a key stored it; a twin in the same batch did not
            if not done.done():
                done.set_result(inbound.dedup_key in stored)
                stored.discard(inbound.dedup_key)

    async def _insert(self, rows: list[dict[str, Any]]) -> set[str]:
        """Insert the rows whose key is new, in one transaction; the keys inserted."""
        statement = (
            self._db.insert(INBOX)
            .values(rows)
            .on_conflict_do_nothing(index_elements=[INBOX.c.dedup_key])
            .returning(INBOX.c.dedup_key)
        )
        async with self._db.session() as session:
            return set((await session.execute(statement)).scalars().all())

    def _row(self, inbound: Inbound, ref: ThreadRef) -> dict[str, Any]:
        return {
            "dedup_key": inbound.dedup_key,
            "platform": inbound.platform,
            "payload": {"inbound": to_json(inbound), "ref": to_json(ref)},
            "status": InboxStatus.PENDING.value,
            "attempts": 0,
            "created_at": self._now(),
            "thread_key": inbound.thread_key,
            "sent_at": inbound.ts,
            "claimed_by": None,
            "lease_until": None,
            "done_at": None,
            "error": None,
        }

    def _claimable(self, now: datetime) -> ColumnElement[bool]:
        return (INBOX.c.status.in_(_LIVE)) & or_(INBOX.c.lease_until.is_(None), INBOX.c.lease_until <= now)

    @staticmethod
    def _next_in_its_conversation(now: datetime) -> ColumnElement[bool]:
        """No other event of the same conversation runs (a live claim) or comes before it (an earlier message
        not yet done, pending or backing off): the messages of one thread run one at a time, in the platform's
        order, on every replica. A follow-up stored before the thread's first message still waits for it. The
        settling relies on it (`storage.settlement`): the service reads a conversation and writes nothing until
        the event's own transaction, since no other event of that conversation can run in between."""
        other = INBOX.alias("other")
        earlier = or_(
            other.c.sent_at < INBOX.c.sent_at,
            and_(other.c.sent_at == INBOX.c.sent_at, other.c.dedup_key < INBOX.c.dedup_key),
        )
        running = and_(other.c.status == InboxStatus.CLAIMED.value, other.c.lease_until > now)
        return ~exists().where(
            other.c.thread_key == INBOX.c.thread_key,
            other.c.dedup_key != INBOX.c.dedup_key,
            other.c.status.in_(_LIVE),
            or_(earlier, running),
        )

    async def claim(self, worker_id: str, lease_s: float, *, limit: int = 1) -> list[InboxItem]:
        """Up to `limit` events that are pending or whose lease lapsed, oldest first, leased to `worker_id`.

        Events out of attempts are left to `exhausted()`, so a message that crashes workers cannot loop forever."""
        now = self._now()
        rows = await self._queue.claim(
            (self._claimable(now), INBOX.c.attempts < self.max_attempts, self._next_in_its_conversation(now)),
            now=now, lease_s=lease_s, limit=limit, order_by=(INBOX.c.created_at,),
            values={"status": InboxStatus.CLAIMED.value, "claimed_by": worker_id},
            returning=(INBOX.c.dedup_key, INBOX.c.payload, INBOX.c.attempts, INBOX.c.created_at),
        )  # fmt: skip
        rows = sorted(rows, key=lambda row: row.created_at)
        return [_item(row.dedup_key, row.payload, row.attempts, worker_id) for row in rows]

    async def heartbeat(self, worker_id: str, keys: Sequence[str], lease_s: float) -> set[str]:
        """Extend the leases `worker_id` still holds; returns those keys (a missing key was taken over)."""
        if not keys:
            return set()
        statement = (
            update(INBOX)
            .where(
                INBOX.c.dedup_key.in_(list(keys)),
                INBOX.c.claimed_by == worker_id,
                INBOX.c.status == InboxStatus.CLAIMED.value,
            )
            .values(lease_until=self._now() + timedelta(seconds=lease_s))
            .returning(INBOX.c.dedup_key)
        )
        async with self._db.session() as session:
            return set((await session.execute(statement)).scalars())

    async def remember(self, item: InboxItem, inbound: Inbound, ref: ThreadRef) -> bool:
        """Store what the claim's holder did on the platform (a posted /ask question, a placeholder) with the event,
        so a worker taking it over after a crash replaces that placeholder instead of posting a second one."""
        statement = (
            update(INBOX)
            .where(*self._held(item))
            .values(payload={"inbound": to_json(inbound), "ref": to_json(ref)})
        )
        async with self._db.session() as session:
            return bool((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]

    async def complete(
        self, item: InboxItem, replies: Sequence[OutgoingReply] = (), answer: Answer | None = None
    ) -> list[int] | None:
        """Settle the event in one transaction: the claim still held, the event done, the `answer` the service
        decided written (`storage.settlement`) and its replies stored in the outbox; None when the claim was lost
        (nothing is written: the worker that took the event over answers it)."""
        return await self._settle(item, InboxStatus.DONE.value, replies, error=None, answer=answer)

    async def fail(self, item: InboxItem, error: str) -> datetime | None:
        """Give the event back for a later retry (with backoff); returns when, or None when the claim was lost."""
        retry_at = self._now() + timedelta(seconds=self.backoff_s(item.attempts))
        values = {"status": InboxStatus.PENDING.value, "claimed_by": None, "lease_until": retry_at,
                  "error": error[:ERROR_CHARS]}  # fmt: skip
        return retry_at if await self._queue.update_held(self._held(item), values) else None

    async def give_up(
        self, item: InboxItem, replies: Sequence[OutgoingReply], *, error: str, retry_token: str | None = None
    ) -> list[int] | None:
        """Mark the event failed, store the apology and park a retry the button `RETRY_PREFIX + token` resumes."""
        return await self._settle(item, InboxStatus.FAILED.value, replies, error=error, retry_token=retry_token)

    async def _settle(
        self,
        item: InboxItem,
        status: str,
        replies: Sequence[OutgoingReply],
        *,
        error: str | None,
        retry_token: str | None = None,
        answer: Answer | None = None,
    ) -> list[int] | None:
        now = self._now()
        statement = (
            update(INBOX)
            .where(*self._held(item))
            .values(status=status, done_at=now, lease_until=None, error=error[:ERROR_CHARS] if error else None)
        )
        async with self._db.session() as session:
            if not (await session.execute(statement)).rowcount:  # type: ignore[attr-defined]
                return None
            if retry_token is not None:
                parked = retry_inbound(item.inbound, retry_token)
                await session.execute(
                    INBOX.insert().values(
                        dedup_key=RETRY_KEY_PREFIX + retry_token,
                        platform=item.inbound.platform,
                        payload={"inbound": to_json(parked), "ref": to_json(item.ref)},
                        status=PARKED,
                        attempts=0,
                        created_at=now,
                        thread_key=parked.thread_key,
                        sent_at=now,
                    )
                )
            if answer is not None:
                await write_answer(session, self._db, answer, now)
            return await insert_replies(session, replies, now)

    def _held(self, item: InboxItem) -> tuple[ColumnElement[bool], ...]:
        """The event is still in the state this item saw: same claimant, same attempt, not settled."""
        owner = INBOX.c.claimed_by.is_(None) if item.claimed_by is None else INBOX.c.claimed_by == item.claimed_by
        return self._queue.held(item.key, item.attempts, INBOX.c.status.in_(_LIVE), owner)

    async def exhausted(self, *, limit: int = 50) -> list[InboxItem]:
        """Events out of attempts whose last lease lapsed (their worker died): to be given up with an apology."""
        now = self._now()
        statement = (
            select(INBOX.c.dedup_key, INBOX.c.payload, INBOX.c.attempts, INBOX.c.claimed_by)
            .where(self._claimable(now), INBOX.c.attempts >= self.max_attempts)
            .order_by(INBOX.c.created_at)
            .limit(limit)
        )
        async with self._db.session() as session:
            rows = (await session.execute(statement)).all()
        return [_item(row.dedup_key, row.payload, row.attempts, row.claimed_by) for row in rows]

    async def unpark(self, token: str) -> bool:
        """Queue a parked retry once (a second press of the same button finds nothing)."""
        statement = (
            update(INBOX)
            .where(INBOX.c.dedup_key == RETRY_KEY_PREFIX + token, INBOX.c.status == PARKED)
            .values(status=InboxStatus.PENDING.value, attempts=0, lease_until=None, claimed_by=None, error=None)
        )
        async with self._db.session() as session:
            return bool((await session.execute(statement)).rowcount)  # type: ignore[attr-defined]

    def backoff_s(self, attempts: int) -> float:
        return self._queue.backoff_s(attempts)

    async def lag_seconds(self) -> float:
        """Age of the oldest event not yet handled (0 when none): the `docbot_inbox_lag_seconds` gauge."""
        async with self._db.session() as session:
            oldest = (await session.execute(select(func.min(INBOX.c.created_at)).where(INBOX.c.status.in_(_LIVE))))
            value = oldest.scalar_one_or_none()
        if value is None:
            return 0.0
        created = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
        return max((self._now() - created).total_seconds(), 0.0)

    async def counts(self) -> dict[str, int]:
        """Events per status."""
        return await self._queue.counts()

    async def purge(self, older_than: datetime) -> int:
        """Delete settled events (done, failed, parked) older than `older_than`. A purged key could be accepted
        again, so keep this well beyond the platforms' retry windows (Slack retries for minutes, not days)."""
        return await self._queue.purge((InboxStatus.DONE.value, InboxStatus.FAILED.value, PARKED), older_than)


def new_retry_token() -> str:
    return secrets.token_urlsafe(12)


def _item(key: str, payload: dict[str, Any], attempts: int, claimed_by: str | None) -> InboxItem:
    return InboxItem(
        key=key,
        inbound=from_json(Inbound, payload["inbound"]),
        ref=from_json(ThreadRef, payload["ref"]),
        attempts=attempts,
        claimed_by=claimed_by,
    )
