"""ConversationStore on both backends: race-safe creation, idempotent messages, ordered history (the state an answer
leaves on its conversation is written by `storage.settlement`: tests/storage/test_settlement.py)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from storage.conversations import ConversationStore
from storage.db import Database
from storage.tables import ConversationRow, ConversationState

pytestmark = pytest.mark.integration

T0 = datetime(2026, 11, 22, 14, 3, 10, tzinfo=UTC)


async def _conversation(db: Database, key: str = "slack:T1:C1:100.1") -> str:
    record = await ConversationStore(db).get_or_create(key, "slack", "T1", "C1", "100.1")
    return record.id


async def test_concurrent_get_or_create_yields_one_row(db: Database):
    # Two engines on one database stand in for two replicas.
    other = Database(db.engine.url.render_as_string(hide_password=False))
    try:
        stores = [ConversationStore(db), ConversationStore(other)]
        records = await asyncio.gather(
            *(stores[i % 2].get_or_create("discord:G1:C9:555", "discord", "G1", "C9", "555") for i in range(20))
        )
    finally:
        await other.dispose()
    assert len({r.id for r in records}) == 1
    async with db.session() as session:
        count = (await session.execute(select(func.count()).select_from(ConversationRow))).scalar_one()
    assert count == 1
    record = records[0]
    assert (record.platform, record.workspace_id, record.channel_id, record.thread_id) == ("discord", "G1", "C9", "555")
    assert record.state is ConversationState.IDLE
    assert not record.history_fetched


async def test_find_and_get(db: Database):
    store = ConversationStore(db)
    assert await store.find("slack:T1:C1:missing") is None
    assert await store.get("no-such-id") is None
    created = await store.get_or_create("slack:T1:C1:7", "slack", "T1", "C1", "7")
    assert await store.find("slack:T1:C1:7") == created
    assert await store.get(created.id) == created


async def test_add_message_is_idempotent_per_platform_message(db: Database):
    store = ConversationStore(db)
    conversation_id = await _conversation(db)
    assert await store.add_message(conversation_id, "100.1", "U1", "alice", "how do I pair the remote?", T0)
    assert not await store.add_message(conversation_id, "100.1", "U1", "alice", "how do I pair the remote?", T0)
    other_id = await _conversation(db, "slack:T1:C1:other")
    assert await store.add_message(other_id, "100.1", "U1", "alice", "same id, other thread", T0)
    assert len(await store.history(conversation_id)) == 1


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
        await store.add_message(
            conversation_id, f"m{minute}", author, author, text, T0 + timedelta(minutes=minute), from_bot=from_bot
        )
    history = await store.history(conversation_id)
    assert [m.author for m in history] == ["alice", "bob", "docbot", "alice"]
    assert history[0].line() == "[2026.11.22 14:03:10] alice: how do I pair the remote?"
    assert history[2].from_bot and not history[0].from_bot
    newest = await store.history(conversation_id, limit=2)
    assert [m.text for m in newest] == ["Hold the pairing button for 5 seconds.", "and if it blinks red?"]


async def test_unknown_conversations_are_reported(db: Database):
    store = ConversationStore(db)
    with pytest.raises(IntegrityError):  # foreign keys are enforced on both backends
        await store.add_message("nope", "m1", "U1", "alice", "hello", T0)
