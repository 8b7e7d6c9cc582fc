"""The daily token counts in the `usage_counters` table (`bot.budget.TokenLedger`), shared by every replica."""

from __future__ import annotations

from datetime import date

from storage.db import Database
from storage.tables import UsageCounterRow


class SqlTokenLedger:
    """Token counts in the `usage_counters` table, added atomically (an upsert), shared by all replicas."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, scope: str, day: date, tokens: int) -> None:
        statement = self.db.insert(UsageCounterRow).values(scope=scope, day=day, tokens=tokens)
        statement = statement.on_conflict_do_update(
            index_elements=["scope", "day"], set_={"tokens": UsageCounterRow.tokens + statement.excluded.tokens}
        )
        async with self.db.session() as session:
            await session.execute(statement)

    async def spent(self, scope: str, day: date) -> int:
        async with self.db.session() as session:
            row = await session.get(UsageCounterRow, (scope, day))
            return int(row.tokens) if row is not None else 0
