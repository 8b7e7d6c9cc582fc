"""Rows a test starts from, written the one way the bot writes them: settled as an answer (`storage.settlement`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pipeline.types import ActionKind
from storage.actions import ActionStore, StoredAction
from storage.conversations import ConversationRecord, ConversationStore
from storage.db import Database, utc_now
from storage.settlement import Answer, ConversationChange, NewAction, NewMessage, Settlement
from storage.tables import ConversationState, new_action_token, new_uuid


async def stored_conversation(
    db: Database, thread_key: str, platform: str = "slack", workspace_id: str = "T1", channel_id: str = "C1"
) -> ConversationRecord:
    """The conversation of `thread_key` (its thread id is the key's last part), started as a first answer starts it."""
    now = utc_now()
    record = ConversationRecord(
        id=new_uuid(), thread_key=thread_key, platform=platform, workspace_id=workspace_id, channel_id=channel_id,
        thread_id=thread_key.rsplit(":", 1)[1], created_at=now, updated_at=now, history_fetched=False,
        state=ConversationState.IDLE, language=None,
    )  # fmt: skip
    await Settlement(db).settle(Answer(None, ConversationChange(record, new=True)))
    stored = await ConversationStore(db).find(thread_key)
    assert stored is not None
    return stored


async def _known(db: Database, conversation_id: str) -> ConversationRecord:
    record = await ConversationStore(db).get(conversation_id)
    if record is None:  # a conversation that does not exist: its rows are refused by the database
        now = utc_now()
        return ConversationRecord(conversation_id, "", "", "", "", "", now, now, False, ConversationState.IDLE, None)
    return record


async def stored_messages(db: Database, conversation_id: str, *messages: NewMessage) -> None:
    """Messages of the thread, as an answer stores them (one already stored under its platform id stays as it is)."""
    await Settlement(db).settle(Answer(None, ConversationChange(await _known(db, conversation_id)), messages))


async def stored_actions(
    db: Database,
    conversation_id: str,
    wanted: Sequence[tuple[ActionKind | str, str, str]],
    *,
    expires_at: datetime | None = None,
) -> list[StoredAction]:
    """The buttons of one reply (`(kind, label, value)` each), one batch, as an answer stores them."""
    batch, now = new_action_token(), utc_now()
    actions = tuple(
        NewAction(new_action_token(), batch, ActionKind(kind), label, value, now, expires_at)
        for kind, label, value in wanted
    )
    await Settlement(db).settle(Answer(None, ConversationChange(await _known(db, conversation_id)), actions=actions))
    found = [await ActionStore(db).get(action.id) for action in actions]
    return [action for action in found if action is not None]
