"""Conversations (one per thread) and their messages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from pipeline.types import HistoryMessage
from storage.db import Database
from storage.tables import ConversationRow, ConversationState, MessageRow


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    id: str
    thread_key: str
    platform: str
    workspace_id: str
    channel_id: str
    thread_id: str
    created_at: datetime
    updated_at: datetime
    history_fetched: bool
    state: ConversationState
    language: str | None
    pending_envelope: dict[str, Any] | None = None  # the envelope parked while a clarification waits

    @property
    def awaiting_clarification(self) -> bool:
        return self.state is ConversationState.AWAITING_CLARIFICATION


def _record(row: ConversationRow) -> ConversationRecord:
    return ConversationRecord(
        id=row.id,
        thread_key=row.thread_key,
        platform=row.platform,
        workspace_id=row.workspace_id,
        channel_id=row.channel_id,
        thread_id=row.thread_id,
        created_at=row.created_at,
        updated_at=row.updated_at,
        history_fetched=row.history_fetched,
        state=ConversationState(row.state),
        language=row.language,
        pending_envelope=row.pending_envelope,
    )


class ConversationStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._db = db

    async def get(self, conversation_id: str) -> ConversationRecord | None:
        async with self._db.session() as session:
            row = await session.get(ConversationRow, conversation_id)
            return _record(row) if row is not None else None

    async def find(self, thread_key: str) -> ConversationRecord | None:
        """The conversation of a thread if the bot already takes part in it."""
        async with self._db.session() as session:
            row = (
                await session.execute(select(ConversationRow).where(ConversationRow.thread_key == thread_key))
            ).scalar_one_or_none()
            return _record(row) if row is not None else None

    async def history(self, conversation_id: str, limit: int = 50) -> list[HistoryMessage]:
        """The newest `limit` messages of the conversation, oldest first."""
        query = (
            select(MessageRow)
            .where(MessageRow.conversation_id == conversation_id)
            .order_by(MessageRow.ts.desc(), MessageRow.id.desc())
            .limit(limit)
        )
        async with self._db.session() as session:
            rows = (await session.execute(query)).scalars().all()
        return [HistoryMessage(ts=r.ts, author=r.author_name, text=r.text, from_bot=r.from_bot) for r in reversed(rows)]
