"""Scheduler leases on SQLite and PostgreSQL: one runner per job and due time, a dead runner's run taken over."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from storage.db import Database
from storage.leases import JobLeases
from tests.integration.dbfixtures import T0, Clock, database_fixtures

pg_url, db = database_fixtures()



@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.mark.integration
async def test_one_runner_per_due_time(db: Database, clock: Clock) -> None:
    leases = JobLeases(db, now=clock)
    due = T0
    assert await leases.acquire("purge", due, "a", lease_s=60) is True
    assert await leases.acquire("purge", due, "b", lease_s=60) is False
    assert await leases.acquire("digest", due, "b", lease_s=60) is True
    assert await leases.finish("purge", due, "a") is True
    clock.now += timedelta(hours=2)  # long after: a finished run is never repeated
    assert await leases.acquire("purge", due, "b", lease_s=60) is False
    assert await leases.acquire("purge", due - timedelta(hours=1), "b", lease_s=60) is False
    assert await leases.acquire("purge", due + timedelta(hours=1), "b", lease_s=60) is True
    assert await leases.current("purge") == (due + timedelta(hours=1), "b", clock.now + timedelta(seconds=60))


@pytest.mark.integration
async def test_a_dead_runner_is_replaced_after_its_lease(db: Database, clock: Clock) -> None:
    leases = JobLeases(db, now=clock)
    assert await leases.acquire("reingest", T0, "a", lease_s=60)
    clock.now += timedelta(seconds=59)
    assert await leases.acquire("reingest", T0, "b", lease_s=60) is False
    clock.now += timedelta(seconds=2)
    assert await leases.acquire("reingest", T0, "b", lease_s=60) is True
    assert await leases.finish("reingest", T0, "a") is False  # no longer a's run
    assert await leases.finish("reingest", T0, "b") is True


@pytest.mark.integration
async def test_concurrent_owners_get_exactly_one_lease_per_due_time(db: Database, clock: Clock) -> None:
    leases = JobLeases(db, now=clock)
    for step in range(3):
        due = T0 + timedelta(minutes=step)
        won = await asyncio.gather(*(leases.acquire("sweep", due, f"o{i}", lease_s=60) for i in range(5)))
        assert sum(won) == 1
