"""The inbox on SQLite and PostgreSQL: idempotent put, atomic claims with leases, completion only while held,
retries with backoff, giving up with a parked retry."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import event as sa_event
from sqlalchemy import select

from pipeline.codec import from_json, to_json
from pipeline.messages import Inbound, InboundKind, Reply, ReplyKind, ThreadRef
from storage.db import Database
from storage.inbox import INBOX, PARKED, Inbox, retry_inbound
from storage.outbox import Outbox, OutgoingReply
from tests.integration.dbfixtures import T0, Clock, database_fixtures

pg_url, db = database_fixtures()



def message(n: int, *, thread: str | None = None, text: str = "how do I pair the remote?") -> Inbound:
    return Inbound(
        platform="slack",
        workspace_id="T1",
        channel_id="C1",
        thread_id=thread,
        message_id=f"1700000000.{n:06d}",
        user_id="U1",
        user_name="alice",
        text=text,
        ts=T0 + timedelta(seconds=n),
    )


def ref_for(inbound: Inbound) -> ThreadRef:
    return ThreadRef("slack", "T1", "C1", inbound.thread_id or inbound.message_id, extra=(("team", "T1"),))


def reply(text: str = "Press and hold the pairing button.") -> Reply:
    return Reply(ReplyKind.ANSWER, text, "en", "conv-1")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def inbox(db: Database, clock: Clock) -> Inbox:
    return Inbox(db, max_attempts=3, base_backoff_s=10, max_backoff_s=60, now=clock)


@pytest.mark.unit
def test_inbound_round_trips_through_json() -> None:
    original = Inbound(
        platform="discord", workspace_id="G1", channel_id="C9", thread_id="T5", message_id="m1", user_id="u",
        user_name="bob", text="¿dónde está?", ts=T0, kind=InboundKind.ACTION, action_id="a1", mentioned=False,
    )
    assert from_json(Inbound, to_json(original)) == original


@pytest.mark.unit
def test_retry_inbound_keeps_the_thread_and_gets_a_fresh_key() -> None:
    original = message(1)
    retried = retry_inbound(original, "tok")
    assert retried.thread_key == original.thread_key
    assert retried.dedup_key != original.dedup_key
    assert retried.text == original.text


@pytest.mark.integration
async def test_put_is_idempotent_on_the_dedup_key(inbox: Inbox) -> None:
    event = message(1)
    assert await inbox.put(event, ref_for(event)) is True
    assert await inbox.put(event, ref_for(event)) is False
    assert await inbox.counts() == {"pending": 1}


@pytest.mark.integration
async def test_claim_returns_the_stored_event_and_counts_the_attempt(inbox: Inbox) -> None:
    event = message(1)
    await inbox.put(event, ref_for(event))
    (item,) = await inbox.claim("w1", lease_s=30)
    assert item.inbound == event and item.ref == ref_for(event)
    assert item.attempts == 1 and item.claimed_by == "w1"
    assert await inbox.claim("w2", lease_s=30) == []


@pytest.mark.integration
async def test_concurrent_claims_never_hand_out_an_event_twice(inbox: Inbox) -> None:
    for n in range(40):
        await inbox.put(message(n), ref_for(message(n)))

    async def worker(name: str) -> list[str]:
        keys: list[str] = []
        while items := await inbox.claim(name, lease_s=30, limit=3):
            keys += [item.key for item in items]
        return keys

    results = await asyncio.gather(*(worker(f"w{i}") for i in range(4)))
    flat = [key for keys in results for key in keys]
    assert len(flat) == 40 and len(set(flat)) == 40


@pytest.mark.integration
async def test_a_lapsed_lease_is_taken_over_and_the_old_claim_cannot_complete(
    inbox: Inbox, db: Database, clock: Clock
) -> None:
    event = message(1)
    await inbox.put(event, ref_for(event))
    (first,) = await inbox.claim("w1", lease_s=30)
    clock.advance(20)
    assert await inbox.claim("w2", lease_s=30) == []
    clock.advance(11)
    (second,) = await inbox.claim("w2", lease_s=30)
    assert second.attempts == 2
    assert await inbox.heartbeat("w1", [first.key], lease_s=30) == set()
    assert await inbox.complete(first, [OutgoingReply(first.ref, reply(), first.key)]) is None
    assert await inbox.complete(second, [OutgoingReply(second.ref, reply(), second.key)]) is not None
    assert await Outbox(db, now=clock).counts() == {"pending": 1}
    assert await inbox.counts() == {"done": 1}


@pytest.mark.integration
async def test_heartbeat_extends_the_lease(inbox: Inbox, clock: Clock) -> None:
    event = message(1)
    await inbox.put(event, ref_for(event))
    (item,) = await inbox.claim("w1", lease_s=30)
    clock.advance(25)
    assert await inbox.heartbeat("w1", [item.key], lease_s=30) == {item.key}
    clock.advance(25)
    assert await inbox.claim("w2", lease_s=30) == []
    clock.advance(6)
    assert len(await inbox.claim("w2", lease_s=30)) == 1


@pytest.mark.integration
async def test_complete_stores_the_reply_in_the_outbox(inbox: Inbox, db: Database, clock: Clock) -> None:
    event = message(1)
    await inbox.put(event, ref_for(event))
    (item,) = await inbox.claim("w1", lease_s=30)
    ids = await inbox.complete(item, [OutgoingReply(item.ref, reply(), item.key)])
    assert ids is not None and len(ids) == 1
    (queued,) = await Outbox(db, now=clock).claim(lease_s=30)
    assert queued.id == ids[0] and queued.inbox_key == item.key and queued.ref == item.ref
    assert queued.reply == reply()


@pytest.mark.integration
async def test_a_failure_returns_the_event_after_a_backoff(inbox: Inbox, clock: Clock) -> None:
    event = message(1)
    await inbox.put(event, ref_for(event))
    (item,) = await inbox.claim("w1", lease_s=30)
    retry_at = await inbox.fail(item, "LLMDown: boom")
    assert retry_at == clock.now + timedelta(seconds=10)
    assert await inbox.claim("w2", lease_s=30) == []
    clock.advance(10)
    (again,) = await inbox.claim("w2", lease_s=30)
    assert again.attempts == 2
    assert await inbox.fail(again, "again") == clock.now + timedelta(seconds=20)
    assert await inbox.fail(again, "twice") is None  # no longer held


@pytest.mark.integration
async def test_events_out_of_attempts_are_not_claimed_but_reported_exhausted(inbox: Inbox, clock: Clock) -> None:
    event = message(1)
    await inbox.put(event, ref_for(event))
    for _ in range(3):  # three workers die holding it
        (item,) = await inbox.claim("w", lease_s=30)
        clock.advance(31)
    assert await inbox.claim("w", lease_s=30) == []
    (exhausted,) = await inbox.exhausted()
    assert exhausted.key == item.key and exhausted.attempts == 3 and exhausted.claimed_by == "w"


@pytest.mark.integration
async def test_give_up_parks_a_retry_that_queues_once(inbox: Inbox, clock: Clock) -> None:
    event = message(1)
    await inbox.put(event, ref_for(event))
    (item,) = await inbox.claim("w1", lease_s=30)
    apology = Reply(ReplyKind.NOTICE, "sorry", "en", "")
    assert await inbox.give_up(item, [OutgoingReply(item.ref, apology, item.key)], error="x", retry_token="tok")
    assert await inbox.counts() == {"failed": 1, PARKED: 1}
    assert await inbox.claim("w1", lease_s=30) == []
    assert await inbox.unpark("tok") is True
    assert await inbox.unpark("tok") is False
    assert await inbox.unpark("other") is False
    (retry,) = await inbox.claim("w2", lease_s=30)
    assert retry.inbound == retry_inbound(event, "tok") and retry.ref == item.ref and retry.attempts == 1


@pytest.mark.integration
async def test_lag_is_the_age_of_the_oldest_open_event(inbox: Inbox, clock: Clock) -> None:
    assert await inbox.lag_seconds() == 0.0
    await inbox.put(message(1), ref_for(message(1)))
    clock.advance(5)
    await inbox.put(message(2), ref_for(message(2)))
    clock.advance(7)
    assert await inbox.lag_seconds() == pytest.approx(12.0)


@pytest.mark.integration
async def test_purge_removes_only_settled_old_events(inbox: Inbox, clock: Clock) -> None:
    for n in range(3):
        await inbox.put(message(n), ref_for(message(n)))
    (item,) = await inbox.claim("w1", lease_s=30)
    await inbox.complete(item)
    clock.advance(3600)
    assert await inbox.purge(older_than=clock.now - timedelta(seconds=60)) == 1
    assert await inbox.counts() == {"pending": 2}
    assert await inbox.put(message(1), ref_for(message(1))) is False


async def test_one_conversation_runs_one_event_at_a_time_in_platform_order(inbox: Inbox, clock: Clock) -> None:
    """Issue 12 item 8: two messages of one thread never run at once on any replica, and a follow-up that reached
    the inbox before its thread's first message waits for it (it cannot be handled in a thread not yet started)."""
    root = message(1)
    follow_up = message(2, thread=root.message_id)
    elsewhere = message(3)
    assert await inbox.put(follow_up, ref_for(follow_up))  # delivered first
    assert await inbox.put(root, ref_for(root))
    assert await inbox.put(elsewhere, ref_for(elsewhere))
    first = await inbox.claim("replica-1", 30, limit=10)
    assert sorted(item.key for item in first) == sorted([root.dedup_key, elsewhere.dedup_key])
    assert await inbox.claim("replica-2", 30, limit=10) == []  # the follow-up waits for the root, wherever it runs
    [root_item] = [item for item in first if item.key == root.dedup_key]
    assert await inbox.complete(root_item) == []
    [second] = await inbox.claim("replica-2", 30, limit=10)
    assert second.key == follow_up.dedup_key


async def test_a_lapsed_claim_does_not_let_a_later_message_overtake(inbox: Inbox, clock: Clock) -> None:
    root = message(1)
    follow_up = message(2, thread=root.message_id)
    for event in (root, follow_up):
        assert await inbox.put(event, ref_for(event))
    [held] = await inbox.claim("replica-1", 5)
    assert held.key == root.dedup_key
    clock.advance(10)  # replica-1 died: its lease lapsed
    [taken_over] = await inbox.claim("replica-2", 5, limit=10)
    assert taken_over.key == root.dedup_key  # the root again, not the follow-up


async def test_a_burst_of_puts_is_group_committed_and_each_returns_once_its_row_is_committed(
    db: Database, inbox: Inbox
) -> None:
    """60 concurrent puts (50 events and 10 twins) take a few transactions, not 60; each caller returns only
    after its row is visible to another connection (what "stored before the ack" needs); one twin per key wins."""
    commits: list[int] = []
    sa_event.listen(db.engine.sync_engine, "commit", lambda _connection: commits.append(1))
    other = Database(db.engine.url.render_as_string(hide_password=False))  # another replica's connection
    seen: list[bool] = []

    async def put_then_look(inbound: Inbound) -> bool:
        stored = await inbox.put(inbound, ref_for(inbound))
        if stored:
            async with other.session() as session:
                found = await session.scalar(select(INBOX.c.dedup_key).where(INBOX.c.dedup_key == inbound.dedup_key))
            seen.append(found == inbound.dedup_key)
        return stored

    events = [message(n) for n in range(50)] + [message(n) for n in range(0, 50, 5)]
    try:
        results = await asyncio.gather(*(put_then_look(each) for each in events))
    finally:
        await other.dispose()
    assert sum(results) == 50 and results[:50] == [True] * 50 and seen == [True] * 50
    assert 1 <= len(commits) <= 10, len(commits)
    assert await inbox.put(events[0], ref_for(events[0])) is False  # a later retry is still a duplicate
    assert (await inbox.counts()) == {"pending": 50}
