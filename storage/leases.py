"""Scheduler leases: which replica runs a scheduled job for one due time.

One row per job holds the latest due time someone took, its owner and a lease. A replica may run the job for a due
time when it is the first to move the row to that due time, or when the previous runner of the same due time died
(its lease lapsed before it marked the run finished). Finished runs clear `lease_until`, so they are never repeated.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import Table, select, update

from storage.db import Database, utc_now
from storage.tables import SchedulerLeaseRow

LEASES: Table = SchedulerLeaseRow.__table__  # type: ignore[assignment]


class JobLeases:
    def __init__(self, db: Database, *, now: Callable[[], datetime] = utc_now) -> None:
        self._db = db
        self._now = now

    async def acquire(self, job_id: str, due_at: datetime, owner: str, lease_s: float) -> bool:
        """True when `owner` may run `job_id` for `due_at` (and now holds it for `lease_s` seconds)."""
        now = self._now()
        until = now + timedelta(seconds=lease_s)
        inserted = self._db.insert(LEASES).values(job_id=job_id, due_at=due_at, owner=owner, lease_until=until)
        take = (
            update(LEASES)
            .where(
                LEASES.c.job_id == job_id,
                (LEASES.c.due_at < due_at)
                | (
                    (LEASES.c.due_at == due_at)
                    & LEASES.c.lease_until.is_not(None)
                    & (LEASES.c.lease_until <= now)
                ),
            )
            .values(due_at=due_at, owner=owner, lease_until=until)
        )
        async with self._db.session() as session:
            result = await session.execute(inserted.on_conflict_do_nothing(index_elements=[LEASES.c.job_id]))
            if result.rowcount:  # type: ignore[attr-defined]
                return True
            result = await session.execute(take)
            return bool(result.rowcount)  # type: ignore[attr-defined]

    async def finish(self, job_id: str, due_at: datetime, owner: str) -> bool:
        """Mark the run for `due_at` finished, so no one repeats it."""
        statement = (
            update(LEASES)
            .where(LEASES.c.job_id == job_id, LEASES.c.due_at == due_at, LEASES.c.owner == owner)
            .values(lease_until=None)
        )
        async with self._db.session() as session:
            result = await session.execute(statement)
        return bool(result.rowcount)  # type: ignore[attr-defined]

    async def current(self, job_id: str) -> tuple[datetime, str | None, datetime | None] | None:
        """(due_at, owner, lease_until) of the job's latest run, or None before its first."""
        async with self._db.session() as session:
            row = (
                await session.execute(
                    select(LEASES.c.due_at, LEASES.c.owner, LEASES.c.lease_until).where(LEASES.c.job_id == job_id)
                )
            ).first()
        return None if row is None else (row.due_at, row.owner, row.lease_until)
