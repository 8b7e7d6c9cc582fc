"""An in-memory set of recently seen keys with a time-to-live (the first line of "exactly one reply")."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable


class RecentKeys:
    """`first_time(key)` is True once per key within `ttl_s`; the oldest keys are forgotten past `max_keys`."""

    def __init__(self, ttl_s: float = 900.0, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic):
        self._ttl = ttl_s
        self._max = max_keys
        self._clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def first_time(self, key: str) -> bool:
        now = self._clock()
        while self._seen and (next(iter(self._seen.values())) <= now or len(self._seen) >= self._max):
            self._seen.popitem(last=False)
        if key in self._seen:
            return False
        self._seen[key] = now + self._ttl
        return True

    def __len__(self) -> int:
        return len(self._seen)
