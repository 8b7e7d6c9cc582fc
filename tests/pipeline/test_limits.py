"""RoleLimit: validation, live counts, the bounded wait queue."""

from __future__ import annotations

import asyncio

import pytest

from pipeline.limits import RoleBusy, RoleLimit, build_limits
from pipeline.types import Role

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("limit", "max_waiting"), [(0, 1), (-1, 0), (1, -1), (True, 1), (1.5, 1)])
def test_rejects_invalid_values(limit: object, max_waiting: object) -> None:
    with pytest.raises(ValueError, match="whole number"):
        RoleLimit(Role.SEARCH, limit, max_waiting)  # type: ignore[arg-type]


async def test_counts_running_waiting_and_peak() -> None:
    limit = RoleLimit(Role.SEARCH, 2, max_waiting=5)
    release = asyncio.Event()
    seen: list[tuple[int, int]] = []

    async def work() -> None:
        async with limit.slot():
            seen.append((limit.running, limit.waiting))
            await release.wait()

    tasks = [asyncio.create_task(work()) for _ in range(5)]
    await asyncio.sleep(0.01)
    assert (limit.running, limit.waiting) == (2, 3)
    release.set()
    await asyncio.gather(*tasks)
    assert (limit.running, limit.waiting, limit.peak_running) == (0, 0, 2)
    assert max(r for r, _ in seen) == 2


async def test_full_queue_raises_busy_at_once() -> None:
    limit = RoleLimit(Role.QUALITY, 1, max_waiting=1)
    release = asyncio.Event()

    async def hold() -> None:
        async with limit.slot():
            await release.wait()

    holder = asyncio.create_task(hold())
    waiter = asyncio.create_task(hold())
    await asyncio.sleep(0.01)
    assert limit.waiting == 1
    with pytest.raises(RoleBusy) as busy:
        async with limit.slot():
            pass
    assert busy.value.role is Role.QUALITY and busy.value.waiting == 1
    release.set()
    await asyncio.gather(holder, waiter)
    assert limit.peak_running == 1


async def test_zero_queue_means_busy_whenever_all_slots_are_taken() -> None:
    limit = RoleLimit(Role.LANG, 1, max_waiting=0)
    async with limit.slot():
        with pytest.raises(RoleBusy):
            async with limit.slot():
                pass
    async with limit.slot():  # free again
        assert limit.running == 1


async def test_cancelled_waiter_leaves_the_queue() -> None:
    limit = RoleLimit(Role.LANG, 1, max_waiting=1)
    async with limit.slot():
        async def wait() -> None:
            async with limit.slot():
                pass

        task = asyncio.create_task(wait())
        await asyncio.sleep(0.01)
        assert limit.waiting == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert limit.waiting == 0


def test_build_limits_covers_every_role_with_defaults() -> None:
    limits = build_limits({Role.SEARCH: 3}, max_waiting=7)
    assert set(limits) == set(Role)
    assert limits[Role.SEARCH].limit == 3
    assert limits[Role.ESSENCE].limit == 1
    assert all(lim.max_waiting == 7 for lim in limits.values())
