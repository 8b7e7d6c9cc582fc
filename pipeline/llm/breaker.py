"""A circuit breaker per LLM endpoint: after `threshold` failed calls in a row the endpoint is skipped for
`cooldown_s` (every role falls back offline at once, without a request), then one trial call decides whether it
closes again. Only the endpoint's own failures count (unreachable, 5xx, 429 after retries, HTTP timeouts); a call
the pipeline cut at its own deadline, a malformed reply or a refusal says nothing about the endpoint's health.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class BreakerState(StrEnum):
    CLOSED = "closed"  # calls go through
    OPEN = "open"  # calls are skipped until the cool-down ends
    HALF_OPEN = "half_open"  # one trial call is in flight


@dataclass(frozen=True, slots=True)
class BreakerStatus:
    state: BreakerState
    failures: int  # consecutive endpoint failures
    opened: int  # times the breaker opened since start
    skipped: int  # calls skipped while open
    retry_in_s: float  # seconds until a trial call is allowed (0 when closed)


class CircuitBreaker:
    def __init__(
        self, *, threshold: int = 3, cooldown_s: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if threshold < 1 or cooldown_s <= 0:
            raise ValueError("threshold must be >= 1 and cooldown_s > 0")
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial = False
        self._opened = 0
        self._skipped = 0

    def allow(self) -> bool:
        """May a call go out now? While open: no (counted as skipped); after the cool-down: one trial call."""
        if self._opened_at is None:
            return True
        if self._clock() - self._opened_at < self.cooldown_s or self._trial:
            self._skipped += 1
            return False
        self._trial = True
        return True

    def succeeded(self) -> None:
        self._failures = 0
        self._opened_at = None
        self._trial = False

    def failed(self) -> None:
        self._failures += 1
        if self._trial or (self._opened_at is None and self._failures >= self.threshold):
            self._opened_at = self._clock()
            self._opened += 1
        self._trial = False

    def abandoned(self) -> None:
        """A call ended without a verdict on the endpoint (cut at our deadline, malformed): a trial may run again."""
        self._trial = False

    def status(self) -> BreakerStatus:
        if self._opened_at is None:
            return BreakerStatus(BreakerState.CLOSED, self._failures, self._opened, self._skipped, 0.0)
        state = BreakerState.HALF_OPEN if self._trial else BreakerState.OPEN
        left = max(0.0, self.cooldown_s - (self._clock() - self._opened_at))
        return BreakerStatus(state, self._failures, self._opened, self._skipped, left)
