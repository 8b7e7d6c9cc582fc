"""One lock per conversation thread, so the messages of one thread are handled one after another in this process
(across replicas the inbox's claims do the same job)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ThreadLocks:
    """A lock per key that exists only while someone holds it or waits for it: memory stays flat however many
    threads the bot has seen."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if self._users[key] == 0:
                del self._users[key], self._locks[key]

    def __len__(self) -> int:
        return len(self._locks)
