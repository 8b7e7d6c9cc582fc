"""Rate limits per user and workspace, and the daily token budget (memory and the usage_counters table)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from bot.budget import RATE_LIMITED, TOKEN_BUDGET_SPENT, UsageGuard
from storage.db import Database
from storage.usage_counters import SqlTokenLedger
from tests.storage.dbutil import drop_database, make_database


class Clock:
    def __init__(self) -> None:
        self.at = datetime(2026, 11, 22, 23, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.at


@pytest.mark.unit
async def test_user_limit_denies_with_a_retry_hint() -> None:
    guard = UsageGuard("2/minute", "100/minute")
    assert await guard.check("u1", "T1") is None
    assert await guard.check("u1", "T1") is None
    denial = await guard.check("u1", "T1")
    assert denial is not None and (denial.message_key, denial.scope) == (RATE_LIMITED, "user")
    assert 0 < denial.retry_after_s <= 60
    assert await guard.check("u2", "T1") is None  # another person is not affected
    assert await guard.check("u1", "T2") is None  # the same id in another workspace is another person


@pytest.mark.unit
async def test_workspace_limit_counts_only_admitted_questions() -> None:
    guard = UsageGuard("1/minute", "2/minute")
    assert await guard.check("u1", "T1") is None
    assert (await guard.check("u1", "T1")) is not None  # the user's limit; not counted for the workspace
    assert await guard.check("u2", "T1") is None
    denial = await guard.check("u3", "T1")
    assert denial is not None and denial.scope == "workspace"


@pytest.mark.unit
async def test_daily_token_budget_is_spent_and_renewed_at_midnight() -> None:
    clock = Clock()
    guard = UsageGuard("100/minute", "100/minute", daily_tokens=150, now=clock)
    await guard.record_tokens("T1", 100)
    assert await guard.check("u1", "T1") is None
    await guard.record_tokens("T1", 60)
    denial = await guard.check("u1", "T1")
    assert denial is not None and (denial.message_key, denial.scope) == (TOKEN_BUDGET_SPENT, "workspace")
    assert denial.retry_after_s == pytest.approx(3600)
    assert await guard.check("u1", "T2") is None  # other workspaces have their own budget
    clock.at += timedelta(hours=2)
    assert await guard.check("u1", "T1") is None
    assert await guard.tokens_spent("T1") == 0


@pytest.mark.unit
async def test_zero_budget_means_unlimited() -> None:
    guard = UsageGuard("100/minute", "100/minute", daily_tokens=0)
    await guard.record_tokens("T1", 10**9)
    assert await guard.check("u1", "T1") is None


@pytest.mark.unit
def test_bad_limits_are_rejected() -> None:
    with pytest.raises(ValueError):
        UsageGuard("often", "100/minute")
    with pytest.raises(ValueError):
        UsageGuard("1/minute", "1/minute", daily_tokens=-1)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    database = await make_database(request.param, tmp_path, url)
    try:
        yield database
    finally:
        await drop_database(database)


@pytest.mark.integration
async def test_sql_ledger_adds_atomically_per_scope_and_day(db: Database) -> None:
    ledger = SqlTokenLedger(db)
    day = date(2026, 11, 22)
    await ledger.add("workspace:T1", day, 40)
    await ledger.add("workspace:T1", day, 2)
    await ledger.add("workspace:T1", day + timedelta(days=1), 5)
    assert await ledger.spent("workspace:T1", day) == 42
    assert await ledger.spent("workspace:T2", day) == 0


@pytest.mark.integration
async def test_guard_with_the_sql_ledger_is_shared_between_guards(db: Database) -> None:
    clock = Clock()
    first = UsageGuard("100/minute", "100/minute", daily_tokens=50, ledger=SqlTokenLedger(db), now=clock)
    second = UsageGuard("100/minute", "100/minute", daily_tokens=50, ledger=SqlTokenLedger(db), now=clock)
    await first.record_tokens("T1", 50)
    denial = await second.check("u1", "T1")
    assert denial is not None and denial.message_key == TOKEN_BUDGET_SPENT
