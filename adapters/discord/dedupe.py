"""In-memory, time-limited memory of event ids: the same gateway event delivered twice is handled once.

This covers a resumed gateway session replaying events to one process; the service's inbox dedupes durably
across processes and restarts.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable


class RecentIds:
    def __init__(self, ttl_s: float = 600.0, *, max_size: int = 10_000, clock: Callable[[], float] = time.monotonic):
        self._ttl_s = ttl_s
        self._max_size = max_size
        self._clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def first_time(self, key: str) -> bool:
        """True the first time `key` is offered within the TTL, False for repeats."""
        now = self._clock()
        while self._seen:
            oldest, at = next(iter(self._seen.items()))
            if now - at < self._ttl_s and len(self._seen) < self._max_size:
                break
            del self._seen[oldest]
        if key in self._seen:
            return False
        self._seen[key] = now
        return True
