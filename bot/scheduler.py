"""Scheduled jobs that run once per due time across any number of replicas.

Every replica runs an APScheduler 3.x `AsyncIOScheduler` with in-memory job stores and the same jobs. Each job fires on
a grid fixed by its `anchor` and `every`, so all replicas compute the same due time; before running, a replica takes
the database lease for (job, due time) in `scheduler_leases`, and only the one that gets it runs the job. A replica
that dies mid-run leaves a lapsed lease, and another replica may take over that due time.

Why not one shared APScheduler job store? APScheduler 3.x has no cross-process coordination: each scheduler wakes
up on its own timer, reads the due jobs from the shared store and runs them, so N processes run every job N times
(the APScheduler FAQ says to run a single scheduler process or add your own locking), and a scheduler is not told
when another process changes the store. The store would also pickle job callables, which here hold live
collaborators (database, sinks). Leases in our own table are simpler and testable.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

from storage.db import utc_now
from storage.leases import JobLeases

log = logging.getLogger(__name__)

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)  # a Monday, 00:00 UTC: weekly jobs anchored here run on Mondays


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A job: `run(due_at)` every `every`, on the grid `anchor + k * every`."""

    job_id: str
    every: timedelta
    run: Callable[[datetime], Awaitable[object]]
    anchor: datetime = EPOCH
    lease: timedelta = timedelta(minutes=10)  # longer than one run may take
    leased: bool = True  # False: every replica runs it (work on the replica's own memory, e.g. reloading indexes)

    def due_time(self, now: datetime) -> datetime:
        """The latest grid point at or before `now` (give or take 1% of the period, at most a second, since a
        timer may fire a hair early): the run this moment belongs to."""
        tolerance = min(self.every / 100, timedelta(seconds=1))
        steps = (now + tolerance - self.anchor) // self.every
        return self.anchor + steps * self.every


@dataclass(frozen=True, slots=True)
class JobRun:
    job_id: str
    due_at: datetime
    seconds: float
    ok: bool


class LeasedScheduler:
    """APScheduler in this process, each run guarded by a database lease so replicas never run a due time twice."""

    def __init__(
        self,
        leases: JobLeases,
        owner: str,
        jobs: Sequence[JobSpec],
        *,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self._leases = leases
        self.owner = owner
        self.jobs = tuple(jobs)
        self._now = now
        self.runs: list[JobRun] = []  # runs this replica did (most recent last), for status and tests
        self._scheduler: AsyncIOScheduler | None = None
        self._in_flight: set[asyncio.Task[Any]] = set()

    def start(self) -> None:
        """Start the in-process scheduler (call from inside the running event loop)."""
        scheduler = AsyncIOScheduler(timezone=UTC)
        for spec in self.jobs:
            scheduler.add_job(
                self.run_due,
                IntervalTrigger(seconds=spec.every.total_seconds(), start_date=spec.anchor, timezone=UTC),
                args=[spec],
                id=spec.job_id,
                name=spec.job_id,
                coalesce=True,  # after a pause, one run, not one per missed grid point
                max_instances=1,
                misfire_grace_time=max(int(spec.every.total_seconds() // 2), 1),
            )
        scheduler.start()
        self._scheduler = scheduler
        log.info("scheduler started", extra={"owner": self.owner, "jobs": [s.job_id for s in self.jobs]})

    def shutdown(self) -> None:
        """Stop scheduling; runs already started go on (see `stop` to wait for them)."""
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=False)
            self._scheduler = None

    async def stop(self, timeout_s: float = 30.0) -> None:
        """Stop scheduling and let the runs already started finish (their lease released, their database work
        committed) for up to `timeout_s`; a run cancelled mid-statement at the loop's end can leave a SQLite
        connection's rollback hanging."""
        self.shutdown()
        running = {task for task in self._in_flight if not task.done()}
        if running:
            _done, late = await asyncio.wait(running, timeout=timeout_s)
            if late:
                log.warning("scheduled jobs still running at stop", extra={"jobs": len(late)})

    async def run_due(self, spec: JobSpec) -> bool:
        """Run `spec` for the current due time if no replica has (any replica, for a job that is not leased);
        True when this replica ran it."""
        task = asyncio.current_task()
        if task is not None:
            self._in_flight.add(task)
            task.add_done_callback(self._in_flight.discard)
        due = spec.due_time(self._now())
        if spec.leased and not await self._leases.acquire(spec.job_id, due, self.owner, spec.lease.total_seconds()):
            return False
        started = time.monotonic()
        ok = False
        try:
            await spec.run(due)
            ok = True
        except Exception as exc:  # one failed run must not stop the schedule; the next due time tries again
            log.error("scheduled job failed", extra={"job": spec.job_id, "due": due.isoformat(),
                                                     "error": type(exc).__name__}, exc_info=True)
        finally:
            if spec.leased:
                await self._leases.finish(spec.job_id, due, self.owner)
        seconds = time.monotonic() - started
        self.runs.append(JobRun(spec.job_id, due, seconds, ok))
        del self.runs[:-100]
        log.info("scheduled job ran", extra={"job": spec.job_id, "due": due.isoformat(), "ok": ok,
                                             "ms": round(seconds * 1000, 1)})
        return True
