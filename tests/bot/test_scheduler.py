"""The leased scheduler: every job runs once per due time however many replicas run it."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from bot.scheduler import EPOCH, JobSpec, LeasedScheduler
from storage.db import Database, utc_now
from storage.leases import JobLeases
from tests.integration.dbfixtures import Clock, database_fixtures

pg_url, db = database_fixtures()



@pytest.mark.unit
def test_due_time_is_the_grid_point_the_moment_belongs_to() -> None:
    hourly = JobSpec("h", timedelta(hours=1), run=lambda due: asyncio.sleep(0))
    assert hourly.due_time(datetime(2026, 11, 22, 10, 59, 30, tzinfo=UTC)) == datetime(2026, 11, 22, 10, tzinfo=UTC)
    assert hourly.due_time(datetime(2026, 11, 22, 10, 59, 59, 500_000, tzinfo=UTC)) == datetime(
        2026, 11, 22, 11, tzinfo=UTC
    )  # a timer firing half a second early still belongs to 11:00
    weekly = JobSpec("w", timedelta(days=7), run=lambda due: asyncio.sleep(0), anchor=EPOCH + timedelta(hours=9))
    due = weekly.due_time(datetime(2026, 11, 22, 12, tzinfo=UTC))  # a Sunday
    assert (due.weekday(), due.hour) == (0, 9) and due == datetime(2026, 11, 16, 9, tzinfo=UTC)


@pytest.mark.integration
async def test_replicas_run_each_due_time_once(db: Database) -> None:
    clock = Clock(datetime(2026, 11, 22, 10, 0, 5, tzinfo=UTC))
    ran: list[tuple[str, datetime]] = []

    def job(name: str) -> JobSpec:
        async def run(due: datetime) -> None:
            ran.append((name, due))
            await asyncio.sleep(0.01)

        return JobSpec(name, timedelta(minutes=1), run)

    specs = [job("sweep"), job("purge")]
    replicas = [LeasedScheduler(JobLeases(db, now=clock), f"r{i}", specs, now=clock) for i in range(3)]
    total = 0
    for _ in range(9):  # three firings per due time (:05, :25, :45) on three replicas
        results = await asyncio.gather(*(r.run_due(spec) for r in replicas for spec in specs))
        total += sum(results)
        clock.now += timedelta(seconds=20)
    assert total == 6
    counts = Counter(ran)
    assert set(counts.values()) == {1}
    assert {due for _, due in counts} == {datetime(2026, 11, 22, 10, m, tzinfo=UTC) for m in range(3)}


@pytest.mark.integration
async def test_a_failed_run_does_not_block_the_next_due_time(db: Database) -> None:
    clock = Clock(datetime(2026, 11, 22, 10, 0, tzinfo=UTC))
    calls: list[datetime] = []

    async def flaky(due: datetime) -> None:
        calls.append(due)
        if len(calls) == 1:
            raise RuntimeError("source unreachable")

    spec = JobSpec("reingest", timedelta(minutes=5), flaky)
    scheduler = LeasedScheduler(JobLeases(db, now=clock), "r1", [spec], now=clock)
    assert await scheduler.run_due(spec) is True
    assert await scheduler.run_due(spec) is False  # that due time is over, failed or not
    clock.now += timedelta(minutes=5)
    assert await scheduler.run_due(spec) is True
    assert [run.ok for run in scheduler.runs] == [False, True]


@pytest.mark.integration
async def test_two_apscheduler_instances_share_the_work(db: Database) -> None:
    ran: list[tuple[str, datetime]] = []

    def spec_for(owner: str) -> JobSpec:
        async def run(due: datetime) -> None:
            ran.append((owner, due))

        return JobSpec("tick", timedelta(seconds=0.25), run, anchor=datetime(2026, 1, 1, tzinfo=UTC))

    schedulers = [LeasedScheduler(JobLeases(db), owner, [spec_for(owner)]) for owner in ("a", "b")]
    started = utc_now()
    for scheduler in schedulers:
        scheduler.start()
    async with asyncio.timeout(60):  # a condition, not a speed: six due times, however slow the box
        while len(ran) < 6:
            await asyncio.sleep(0.05)
    for scheduler in schedulers:
        await scheduler.stop()  # runs in flight finish (a run cut mid-statement can hang SQLite's rollback)
    dues = [due for _, due in ran]
    assert len(dues) == len(set(dues)), "a due time ran twice"
    assert len(dues) >= 4
    assert all(due >= started - timedelta(seconds=0.25) for due in dues)


@pytest.mark.integration
async def test_a_job_that_is_not_leased_runs_in_every_replica(db: Database) -> None:
    clock = Clock(datetime(2026, 11, 22, 10, 0, 5, tzinfo=UTC))
    ran: list[str] = []

    def spec_for(owner: str) -> JobSpec:
        async def run(due: datetime) -> None:
            ran.append(owner)

        return JobSpec("refresh-search", timedelta(seconds=30), run, leased=False)

    replicas = [(LeasedScheduler(JobLeases(db, now=clock), o, [spec_for(o)], now=clock), o) for o in ("a", "b")]
    for scheduler, _ in replicas:
        assert await scheduler.run_due(scheduler.jobs[0]) is True
    assert sorted(ran) == ["a", "b"]
    assert await JobLeases(db).current("refresh-search") is None  # no lease row for it
