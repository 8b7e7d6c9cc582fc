"""Conversations (one per thread) and their messages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from pipeline.types import HistoryMessage
from storage.db import Database, utc_now
from storage.tables import ConversationRow, ConversationState, MessageRow, new_uuid


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

    async def get_or_create(
        self, thread_key: str, platform: str, workspace_id: str, channel_id: str, thread_id: str
    ) -> ConversationRecord:
        """The conversation of a thread; concurrent calls for one key create exactly one row."""
        now = utc_now()
        insert = (
            self._db.insert(ConversationRow)
            .values(
                id=new_uuid(),
                thread_key=thread_key,
                platform=platform,
                workspace_id=workspace_id,
                channel_id=channel_id,
                thread_id=thread_id,
                created_at=now,
                updated_at=now,
                history_fetched=False,
                state=ConversationState.IDLE.value,
            )
            .on_conflict_do_nothing(index_elements=["thread_key"])
        )
        async with self._db.session() as session:
            await session.execute(insert)
            row = (
                await session.execute(select(ConversationRow).where(ConversationRow.thread_key == thread_key))
            ).scalar_one()
            return _record(row)

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

    async def add_message(
        self,
        conversation_id: str,
        platform_message_id: str,
        author_id: str,
        author_name: str,
        text: str,
        ts: datetime,
        *,
        from_bot: bool = False,
    ) -> bool:
        """Store a message of the thread; False when it was already stored (same platform message id)."""
        insert = (
            self._db.insert(MessageRow)
            .values(
                conversation_id=conversation_id,
                platform_message_id=platform_message_id,
                author_id=author_id,
                author_name=author_name,
                from_bot=from_bot,
                text=text,
                ts=ts,
            )
            .on_conflict_do_nothing(index_elements=["conversation_id", "platform_message_id"])
        )
        async with self._db.session() as session:
            result = await session.execute(insert)
            added: bool = result.rowcount == 1  # type: ignore[attr-defined]
            if added:
                await session.execute(
                    update(ConversationRow).where(ConversationRow.id == conversation_id).values(updated_at=utc_now())
                )
            return added

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
