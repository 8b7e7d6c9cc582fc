"""Per-role concurrency limits: a slot per running agent, a bounded queue of waiters, live counts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from pipeline.types import Role


class RoleBusy(Exception):
    """The role's wait queue is full; the caller should tell the person to try again."""

    def __init__(self, role: Role, waiting: int) -> None:
        super().__init__(f"role {role.value} is busy: {waiting} already waiting")
        self.role = role
        self.waiting = waiting


class RoleLimit:
    """At most `limit` agents of one role run at once; at most `max_waiting` wait for a slot.

    `running`, `waiting` and `peak_running` (the observed maximum) are live counts for metrics and tests.
    """

    __slots__ = ("_semaphore", "limit", "max_waiting", "peak_running", "role", "running", "waiting")

    def __init__(self, role: Role, limit: int, max_waiting: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit for {role.value} must be a whole number >= 1, got {limit!r}")
        if isinstance(max_waiting, bool) or not isinstance(max_waiting, int) or max_waiting < 0:
            raise ValueError(f"max_waiting for {role.value} must be a whole number >= 0, got {max_waiting!r}")
        self.role = role
        self.limit = limit
        self.max_waiting = max_waiting
        self.running = 0
        self.waiting = 0
        self.peak_running = 0
        self._semaphore = asyncio.Semaphore(limit)

    def __repr__(self) -> str:
        return (
            f"RoleLimit({self.role.value}, limit={self.limit}, max_waiting={self.max_waiting}, "
            f"running={self.running}, waiting={self.waiting}, peak_running={self.peak_running})"
        )

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the body; waits when all are taken, raises `RoleBusy` at once when the queue is full."""
        if self._semaphore.locked():
            if self.waiting >= self.max_waiting:
                raise RoleBusy(self.role, self.waiting)
            self.waiting += 1
            try:
                await self._semaphore.acquire()
            finally:
                self.waiting -= 1
        else:
            await self._semaphore.acquire()
        self.running += 1
        self.peak_running = max(self.peak_running, self.running)
        try:
            yield
        finally:
            self.running -= 1
            self._semaphore.release()


def build_limits(limits: Mapping[Role, int], max_waiting: int) -> dict[Role, RoleLimit]:
    """One `RoleLimit` per role; a role missing from `limits` gets one slot."""
    return {role: RoleLimit(role, limits.get(role, 1), max_waiting) for role in Role}
