"""One lock per conversation thread for callers of the service that do not come through the inbox (the console,
`docbot ask`, tests calling the service directly). Events from the platforms are already ordered by the inbox: it
hands out one event per conversation at a time, in the platform's order, across every replica
(`storage.inbox.Inbox.claim`)."""

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
