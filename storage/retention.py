"""Retention purge: settled inbox events, delivered replies, old runs, idle conversations, stale cache entries."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Table, delete

from storage.db import Database
from storage.inbox import Inbox
from storage.outbox import Outbox
from storage.tables import ConversationRow, RunRow, SemanticCacheRow, UsageCounterRow

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Days to keep each kind of record; 0 keeps it forever."""

    inbox_days: int = 14  # keep well beyond the platforms' retry windows: a purged key could be accepted again
    outbox_days: int = 14
    runs_days: int = 90  # runs and their hops (the traces and the digest's source)
    conversations_days: int = 180  # conversations idle this long, with their messages and buttons
    cache_days: int = 30
    usage_days: int = 90


async def purge_expired(db: Database, policy: RetentionPolicy, *, now: datetime) -> dict[str, int]:
    """Delete what the policy no longer keeps; returns rows deleted per kind."""

    def cutoff(days: int) -> datetime:
        return now - timedelta(days=days)

    deleted: dict[str, int] = {}
    if policy.inbox_days:
        deleted["inbox"] = await Inbox(db).purge(cutoff(policy.inbox_days))
    if policy.outbox_days:
        deleted["outbox"] = await Outbox(db).purge(cutoff(policy.outbox_days))
    tables: list[tuple[str, int, Table, str]] = [
        ("runs", policy.runs_days, RunRow.__table__, "started_at"),  # type: ignore[list-item]
        ("conversations", policy.conversations_days, ConversationRow.__table__, "updated_at"),  # type: ignore[list-item]
        ("semantic_cache", policy.cache_days, SemanticCacheRow.__table__, "created_at"),  # type: ignore[list-item]
    ]
    for name, days, table, column in tables:
        if days:
            async with db.session() as session:
                result = await session.execute(delete(table).where(table.c[column] < cutoff(days)))
            deleted[name] = int(result.rowcount)  # type: ignore[attr-defined]
    if policy.usage_days:
        usage: Table = UsageCounterRow.__table__  # type: ignore[assignment]
        async with db.session() as session:
            result = await session.execute(delete(usage).where(usage.c.day < cutoff(policy.usage_days).date()))
        deleted["usage_counters"] = int(result.rowcount)  # type: ignore[attr-defined]
    log.info("retention purge", extra={f"deleted_{k}": v for k, v in deleted.items()})
    return deleted
