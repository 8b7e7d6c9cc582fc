"""ConversationStore on both backends: finding a thread's conversation, its ordered history. Conversations and messages
are stored the way an answer stores them (`storage.settlement`; a thread started twice at once:
tests/storage/test_settlement.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.exc import IntegrityError

from storage.conversations import ConversationStore
from storage.db import Database
from storage.settlement import NewMessage
from storage.tables import ConversationState
from tests.helpers.stored import stored_conversation, stored_messages

pytestmark = pytest.mark.integration

T0 = datetime(2026, 11, 22, 14, 3, 10, tzinfo=UTC)


async def _conversation(db: Database, key: str = "slack:T1:C1:100.1") -> str:
    return (await stored_conversation(db, key)).id


async def test_find_and_get(db: Database):
    store = ConversationStore(db)
    assert await store.find("slack:T1:C1:missing") is None
    assert await store.get("no-such-id") is None
    created = await stored_conversation(db, "slack:T1:C1:7")
    assert (created.platform, created.workspace_id, created.channel_id, created.thread_id) == ("slack", "T1", "C1", "7")
    assert created.state is ConversationState.IDLE and not created.history_fetched
    assert await store.find("slack:T1:C1:7") == created
    assert await store.get(created.id) == created


async def test_a_message_is_stored_once_per_platform_message(db: Database):
    store = ConversationStore(db)
    conversation_id = await _conversation(db)
    question = NewMessage("100.1", "U1", "alice", "how do I pair the remote?", T0)
    await stored_messages(db, conversation_id, question)
    await stored_messages(db, conversation_id, question)
    other_id = await _conversation(db, "slack:T1:C1:other")
    await stored_messages(db, other_id, NewMessage("100.1", "U1", "alice", "same id, other thread", T0))
    assert len(await store.history(conversation_id)) == 1
    assert [m.text for m in await store.history(other_id)] == ["same id, other thread"]


async def test_history_is_oldest_first_and_keeps_the_newest(db: Database):
    store = ConversationStore(db)
    conversation_id = await _conversation(db)
    # stored out of order on purpose
    for minute, author, text, from_bot in [
        (2, "docbot", "Hold the pairing button for 5 seconds.", True),
        (0, "alice", "how do I pair the remote?", False),
        (5, "alice", "and if it blinks red?", False),
        (1, "bob", "same question here", False),
    ]:
        at = T0 + timedelta(minutes=minute)
        await stored_messages(db, conversation_id, NewMessage(f"m{minute}", author, author, text, at, from_bot))
    history = await store.history(conversation_id)
    assert [m.author for m in history] == ["alice", "bob", "docbot", "alice"]
    assert history[0].line() == "[2026.11.22 14:03:10] alice: how do I pair the remote?"
    assert history[2].from_bot and not history[0].from_bot
    newest = await store.history(conversation_id, limit=2)
    assert [m.text for m in newest] == ["Hold the pairing button for 5 seconds.", "and if it blinks red?"]


async def test_unknown_conversations_are_reported(db: Database):
    with pytest.raises(IntegrityError):  # foreign keys are enforced on both backends
        await stored_messages(db, "nope", NewMessage("m1", "U1", "alice", "hello", T0))
