"""Helpful / not helpful votes on answers: one per person and run."""

from __future__ import annotations

from sqlalchemy import select

from storage.db import Database
from storage.tables import FeedbackRow


class FeedbackStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(self, conversation_id: str, run_id: str | None, user_id: str, helpful: bool) -> bool:
        """Store a vote; False when this person already voted on this run (the first vote stands)."""
        async with self._db.session() as session:
            if run_id is None:  # NULLs never collide in a unique index, so check explicitly
                existing = await session.execute(
                    select(FeedbackRow.id).where(
                        FeedbackRow.conversation_id == conversation_id,
                        FeedbackRow.run_id.is_(None),
                        FeedbackRow.user_id == user_id,
                    )
                )
                if existing.first() is not None:
                    return False
            result = await session.execute(
                self._db.insert(FeedbackRow)
                .values(conversation_id=conversation_id, run_id=run_id, user_id=user_id, helpful=helpful)
                .on_conflict_do_nothing(index_elements=["run_id", "user_id"])
            )
            added: bool = result.rowcount == 1  # type: ignore[attr-defined]
            return added

    async def counts(self, run_id: str) -> tuple[int, int]:
        """(helpful, not helpful) votes of a run."""
        async with self._db.session() as session:
            votes = (await session.execute(select(FeedbackRow.helpful).where(FeedbackRow.run_id == run_id))).scalars()
            values = list(votes)
        return sum(values), len(values) - sum(values)
