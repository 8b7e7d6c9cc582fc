"""The leased queue the inbox and the outbox both are, written once.

A row is claimed with one atomic statement (PostgreSQL: `UPDATE ... WHERE key IN (SELECT ... FOR UPDATE SKIP LOCKED)
RETURNING`; SQLite: the same `UPDATE ... RETURNING`, which its single writer makes atomic) that counts the attempt and
pushes the row's "not before" column forward by the lease, so a claimant that dies leaves the row to be claimed again
when the lease lapses. A claim's holder is recognised by the attempt it was given (`held`): a claimant whose lease
lapsed and whose row was claimed again changes nothing. Retries wait a capped doubling backoff.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Column, Row, Table, delete, func, select, update
from sqlalchemy.sql.elements import ColumnElement

from storage.db import Database, utc_now


class LeasedQueue:
    """One table's claim, held-claim guard, backoff, counts and purge. `now` is injectable so tests can move time."""

    def __init__(
        self,
        db: Database,
        table: Table,
        *,
        key: Column[Any],
        not_before: Column[Any],
        base_backoff_s: float,
        max_backoff_s: float,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self.db = db
        self.table = table
        self.key = key
        self.not_before = not_before  # the lease while claimed, the backoff's end while waiting
        self._base_backoff_s = base_backoff_s
        self._max_backoff_s = max_backoff_s
        self.now = now

    def backoff_s(self, attempts: int) -> float:
        """Doubling from the base, capped; the exponent stops growing long before a float would overflow."""
        return float(min(self._base_backoff_s * 2 ** min(max(attempts - 1, 0), 32), self._max_backoff_s))

    async def claim(
        self,
        where: Sequence[ColumnElement[bool]],
        *,
        now: datetime,
        lease_s: float,
        limit: int,
        order_by: Sequence[Any],
        values: dict[str, Any],
        returning: Sequence[Any],
    ) -> Sequence[Row[Any]]:
        """Claim up to `limit` rows matching `where`: the attempt counted, leased until `now + lease_s`, `values`
        set; the `returning` columns of each."""
        candidates = select(self.key).where(*where).order_by(*order_by).limit(limit)
        if not self.db.is_sqlite:
            candidates = candidates.with_for_update(skip_locked=True)
        statement = (
            update(self.table)
            .where(self.key.in_(candidates.scalar_subquery()))
            .values(
                {self.not_before.name: now + timedelta(seconds=lease_s), "attempts": self.table.c.attempts + 1}
                | values
            )
            .returning(*returning)
        )
        async with self.db.session() as session:
            return (await session.execute(statement)).all()

    def held(self, key: Any, attempts: int, *also: ColumnElement[bool]) -> tuple[ColumnElement[bool], ...]:
        """The row is still in the claim that returned it: the same attempt (and whatever `also` requires)."""
        return (self.key == key, self.table.c.attempts == attempts, *also)

    async def update_held(self, held: Sequence[ColumnElement[bool]], values: dict[str, Any]) -> bool:
        """Change a row only while its claim is held; False when it was claimed again (or settled) meanwhile."""
        async with self.db.session() as session:
            result = await session.execute(update(self.table).where(*held).values(values))
        return bool(result.rowcount)  # type: ignore[attr-defined]

    async def counts(self, statuses: Sequence[str] | None = None) -> dict[str, int]:
        """Rows per status (only `statuses`, through the status index, when given; each of them 0 when absent)."""
        statement = select(self.table.c.status, func.count()).group_by(self.table.c.status)
        if statuses is not None:
            statement = statement.where(self.table.c.status.in_(list(statuses)))
        async with self.db.session() as session:
            rows = (await session.execute(statement)).all()
        found = {str(status): int(count) for status, count in rows}
        return found if statuses is None else {status: 0 for status in statuses} | found

    async def purge(self, statuses: Sequence[str], older_than: datetime) -> int:
        """Delete rows with these (settled) statuses created before `older_than`."""
        statement = delete(self.table).where(
            self.table.c.status.in_(list(statuses)), self.table.c.created_at < older_than
        )
        async with self.db.session() as session:
            result = await session.execute(statement)
        return int(result.rowcount)  # type: ignore[attr-defined]
