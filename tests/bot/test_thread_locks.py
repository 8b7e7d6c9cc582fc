import asyncio

import pytest

from bot.thread_locks import ThreadLocks

pytestmark = pytest.mark.unit


async def test_one_thread_at_a_time_and_nothing_kept_afterwards() -> None:
    locks = ThreadLocks()
    inside: list[str] = []
    peak = 0

    async def work(key: str) -> None:
        nonlocal peak
        async with locks.hold(key):
            inside.append(key)
            peak = max(peak, inside.count("a"))
            await asyncio.sleep(0.01)
            inside.remove(key)

    await asyncio.gather(*(work("a") for _ in range(5)), *(work(f"b{i}") for i in range(5)))
    assert peak == 1  # never two handlers of thread "a" at once
    assert len(locks) == 0  # and no lock left behind


async def test_other_threads_are_not_blocked() -> None:
    locks = ThreadLocks()
    async with locks.hold("a"):
        async with asyncio.timeout(1):
            async with locks.hold("b"):
                assert len(locks) == 2


async def test_a_failing_holder_releases_its_lock() -> None:
    locks = ThreadLocks()
    with pytest.raises(RuntimeError):
        async with locks.hold("a"):
            raise RuntimeError("boom")
    assert len(locks) == 0
    async with asyncio.timeout(1), locks.hold("a"):
        pass
