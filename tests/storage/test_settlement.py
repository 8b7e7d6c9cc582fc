"""The settling of an answer on both backends: everything an answer holds in one transaction with the event's
completion and its outbox row, or nothing (a lost claim, a conversation started by someone else first)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import event as sa_event
from sqlalchemy import func, select

from pipeline.envelope import Envelope, Hop, Payload
from pipeline.messages import Inbound, Reply, ReplyAction, ReplyKind, ThreadRef
from pipeline.types import ActionKind, Role
from storage.actions import ActionStore
from storage.conversations import ConversationRecord, ConversationStore
from storage.db import Database
from storage.inbox import Inbox
from storage.outbox import OutgoingReply
from storage.runs import RunStore
from storage.settlement import (
    Answer,
    ConversationChange,
    ConversationTaken,
    NewAction,
    NewMessage,
    NewRun,
    Settlement,
    ThreadState,
)
from storage.tables import ConversationState, MessageRow, OutboxRow, new_action_token, new_uuid
from tests.integration.dbfixtures import T0, Clock, database_fixtures

pytestmark = pytest.mark.integration
pg_url, db = database_fixtures()

THREAD = "slack:T1:C1:1700000000.000100"


def question() -> Inbound:
    return Inbound(
        platform="slack", workspace_id="T1", channel_id="C1", thread_id=None, message_id="1700000000.000100",
        user_id="U1", user_name="alice", text="how do I pair the remote?", ts=T0, mentioned=True,
    )  # fmt: skip


def new_conversation() -> ConversationRecord:
    return ConversationRecord(
        id=new_uuid(), thread_key=THREAD, platform="slack", workspace_id="T1", channel_id="C1",
        thread_id="1700000000.000100", created_at=T0, updated_at=T0, history_fetched=False,
        state=ConversationState.IDLE, language=None,
    )  # fmt: skip


def clarification(conversation: ConversationRecord) -> Answer:
    """A new thread's first answer: a clarification with two choices, the run of three hops, both messages."""
    hops = [Hop(role, "decided", T0, 1.0) for role in (Role.MANAGER, Role.LANG, Role.CLARIFICATION)]
    envelope = Envelope(conversation.id, "1700000000.000100", Payload(text="how do I pair the remote?"), T0, T0,
                        hops=hops)  # fmt: skip
    batch = new_action_token()
    actions = tuple(
        NewAction(new_action_token(), batch, ActionKind.SEARCH, label, label.lower(), T0, T0 + timedelta(days=2))
        for label in ("Remote", "Phone")
    )
    run = NewRun(new_uuid(), envelope.message_id, envelope, "clarification", False, T0, T0 + timedelta(seconds=1))
    reply = Reply(ReplyKind.CLARIFICATION, "Which one?", "en", conversation.id, run_id=run.id,
                  actions=tuple(ReplyAction(a.id, a.label, a.kind) for a in actions))  # fmt: skip
    messages = (
        NewMessage("1700000000.000100", "U1", "alice", "how do I pair the remote?", T0),
        NewMessage(f"bot:{run.id}", "docbot", "docbot", "Which one?", T0 + timedelta(seconds=1), from_bot=True),
    )
    state = ThreadState({"parked": "envelope"}, "en")
    return Answer(reply, ConversationChange(conversation, new=True, state=state), messages, run, actions)


async def test_an_answer_and_the_events_completion_are_one_transaction(db: Database) -> None:
    clock = Clock()
    inbox = Inbox(db, now=clock)
    inbound = question()
    await inbox.put(inbound, ThreadRef("slack", "T1", "C1", inbound.message_id))
    (item,) = await inbox.claim("w1", 30)
    answer = clarification(new_conversation())
    assert answer.reply is not None
    commits: list[int] = []
    sa_event.listen(db.engine.sync_engine, "commit", lambda *_: commits.append(1))

    rows = await inbox.complete(item, [OutgoingReply(item.ref, answer.reply, item.key)], answer)
    assert rows is not None and len(rows) == 1 and len(commits) == 1  # one commit settles all of it
    stored = await ConversationStore(db).find(THREAD)
    assert stored is not None and stored.id == answer.conversation.record.id  # type: ignore[union-attr]
    assert stored.awaiting_clarification and stored.pending_envelope == {"parked": "envelope"}
    assert stored.language == "en"
    assert [m.from_bot for m in await ConversationStore(db).history(stored.id)] == [False, True]
    trace = await RunStore(db).trace(stored.id)
    assert trace is not None and [len(r.hops) for r in trace.runs] == [3]
    pressed = await ActionStore(db, clock=lambda: T0).consume(answer.actions[0].id, THREAD, "U1")
    assert pressed.accepted  # the ids the reply carries are the stored buttons'
    assert await RunStore(db).reply_to(THREAD, inbound.message_id) == answer.reply
    assert await inbox.counts() == {"done": 1}


async def test_a_lost_claim_settles_nothing(db: Database) -> None:
    clock = Clock()
    inbox = Inbox(db, now=clock)
    inbound = question()
    await inbox.put(inbound, ThreadRef("slack", "T1", "C1", inbound.message_id))
    (stale,) = await inbox.claim("slow", 30)
    clock.advance(31)
    (taken,) = await inbox.claim("fast", 30)
    answer = clarification(new_conversation())
    assert answer.reply is not None

    assert await inbox.complete(stale, [OutgoingReply(stale.ref, answer.reply, stale.key)], answer) is None
    assert await ConversationStore(db).find(THREAD) is None  # nothing of the answer was written
    async with db.session() as session:
        assert (await session.execute(select(func.count()).select_from(OutboxRow))).scalar_one() == 0
    assert await inbox.complete(taken, [OutgoingReply(taken.ref, answer.reply, taken.key)], answer) is not None


async def test_a_conversation_started_by_someone_else_first_rolls_the_answer_back(db: Database) -> None:
    """Only callers outside the inbox can race for one thread; the second to settle writes nothing."""
    first, second = clarification(new_conversation()), clarification(new_conversation())
    await Settlement(db).settle(first)
    with pytest.raises(ConversationTaken):
        await Settlement(db).settle(second)
    async with db.session() as session:
        messages = (await session.execute(select(func.count()).select_from(MessageRow))).scalar_one()
    assert messages == 2  # the first answer's question and reply only
    stored = await ConversationStore(db).find(THREAD)
    assert stored is not None and stored.id == first.conversation.record.id  # type: ignore[union-attr]


async def test_a_notice_on_a_known_thread_writes_nothing(db: Database) -> None:
    answer = clarification(new_conversation())
    await Settlement(db).settle(answer)
    stored = await ConversationStore(db).find(THREAD)
    assert stored is not None
    statements: list[str] = []
    sa_event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    await Settlement(db).settle(Answer(Reply(ReplyKind.NOTICE, "Slow down", "en", stored.id)))
    await Settlement(db).settle(Answer(None, ConversationChange(stored)))
    assert statements == []
