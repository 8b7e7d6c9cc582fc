"""Abuse and cost limits: per-user and per-workspace rate limits (the `limits` library, moving window) and a daily
LLM token budget per workspace.

    guard = UsageGuard("10/minute", "300/minute", daily_tokens=200_000, ledger=SqlTokenLedger(db))
    denial = await guard.check(user_id, workspace_id)   # before running the pipeline
    if denial: reply with texts(lang).<denial.message_key>
    await guard.record_tokens(workspace_id, result_usage.total_tokens)   # after it

`storage` is a `limits` async storage (memory by default; pass e.g. `storage_from_string("redis://...")` to share
rate limits across replicas). The token ledger is memory by default; `SqlTokenLedger` (`storage/usage_counters.py`)
keeps it in the `usage_counters` table so every replica sees the same spend.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Protocol

from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

# message keys of the localized texts (`pipeline.locales.Texts` fields)
RATE_LIMITED = "rate_limited"
TOKEN_BUDGET_SPENT = "token_budget_spent"  # noqa: S105 - a message key, not a secret


@dataclass(frozen=True, slots=True)
class Denial:
    """Why a question is not answered now. `message_key` names the localized text; `scope` is "user" or
    "workspace"; `retry_after_s` says when asking again can work."""

    message_key: str
    scope: str
    retry_after_s: float


class TokenLedger(Protocol):
    async def add(self, scope: str, day: date, tokens: int) -> None: ...

    async def spent(self, scope: str, day: date) -> int: ...


class MemoryTokenLedger:
    """Per-process token counts (one replica)."""

    def __init__(self) -> None:
        self._spent: dict[tuple[str, date], int] = {}

    async def add(self, scope: str, day: date, tokens: int) -> None:
        self._spent[(scope, day)] = self._spent.get((scope, day), 0) + tokens
        for old in [k for k in self._spent if k[1] < day]:
            del self._spent[old]

    async def spent(self, scope: str, day: date) -> int:
        return self._spent.get((scope, day), 0)


def _seconds_to_midnight(now: datetime) -> float:
    tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return (tomorrow - now).total_seconds()


class UsageGuard:
    """`per_user` / `per_workspace` in `limits` notation ("10/minute"); `daily_tokens` 0 means unlimited."""

    def __init__(
        self,
        per_user: str,
        per_workspace: str,
        daily_tokens: int = 0,
        storage: Storage | None = None,
        *,
        ledger: TokenLedger | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        if daily_tokens < 0:
            raise ValueError("daily_tokens must be >= 0")
        self.per_user: RateLimitItem = parse(per_user)
        self.per_workspace: RateLimitItem = parse(per_workspace)
        self.daily_tokens = daily_tokens
        self._limiter = MovingWindowRateLimiter(storage or MemoryStorage())
        self._ledger = ledger or MemoryTokenLedger()
        self._now = now

    def __repr__(self) -> str:
        return f"UsageGuard(per_user={self.per_user}, per_workspace={self.per_workspace}, daily={self.daily_tokens})"

    async def check(self, user: str, workspace: str) -> Denial | None:
        """Count one question against the limits; a Denial says which limit stopped it (nothing is counted then)."""
        if self.daily_tokens:
            now = self._now()
            if await self._ledger.spent(_scope(workspace), now.date()) >= self.daily_tokens:
                return Denial(TOKEN_BUDGET_SPENT, "workspace", _seconds_to_midnight(now))
        limits = ((self.per_user, ("user", workspace, user)), (self.per_workspace, ("workspace", workspace)))
        for item, ids in limits:
            if not await self._limiter.test(item, *ids):
                stats = await self._limiter.get_window_stats(item, *ids)
                return Denial(RATE_LIMITED, ids[0], max(0.0, stats.reset_time - time.time()))
        for item, ids in limits:
            await self._limiter.hit(item, *ids)
        return None

    async def record_tokens(self, workspace: str, n: int) -> None:
        if n > 0:
            await self._ledger.add(_scope(workspace), self._now().date(), n)

    async def tokens_spent(self, workspace: str) -> int:
        return await self._ledger.spent(_scope(workspace), self._now().date())


class NoticeOnce:
    """At most one notice per person and limit while the limit lasts (`Denial.retry_after_s`, capped): someone who
    keeps asking past a rate limit is told once, not once per message (issue 28: 30 mentions, 20 notices). Kept per
    process, like the rate limits' default memory storage."""

    def __init__(self, max_window_s: float = 3600.0, now: Callable[[], float] = time.monotonic) -> None:
        self._max_window_s = max_window_s
        self._now = now
        self._until: dict[tuple[str, str, str], float] = {}

    def first(self, workspace: str, user: str, denial: Denial) -> bool:
        """True for the first denial of this kind for this person in its window (say it); False after (stay quiet)."""
        now = self._now()
        if len(self._until) > 10_000:
            self._until = {k: v for k, v in self._until.items() if v > now}
        key = (workspace, user, denial.message_key)
        if self._until.get(key, 0.0) > now:
            return False
        self._until[key] = now + min(max(denial.retry_after_s, 1.0), self._max_window_s)
        return True


def _scope(workspace: str) -> str:
    return f"workspace:{workspace}"
