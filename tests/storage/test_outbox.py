"""The outbox on SQLite and PostgreSQL: stored before posting, leased while sending, retried with capped, jittered
backoff until the horizon (issue 28: it gave up after 8 tries, ~3 minutes, and a longer Slack outage lost answers)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

import pytest

from pipeline.codec import CodecError, from_json, to_json
from pipeline.messages import Citation, Reply, ReplyAction, ReplyKind, RunSummary, ThreadRef
from pipeline.types import ActionKind
from storage.db import Database
from storage.outbox import (
    Outbox,
    OutgoingReply,
    equal_jitter,
)
from tests.integration.dbfixtures import Clock, database_fixtures

pg_url, db = database_fixtures()
REF = ThreadRef("slack", "T1", "C1", "1700000000.000100", placeholder_id="1700000000.000200", extra=(("k", "v"),))



def full_reply() -> Reply:
    return Reply(
        kind=ReplyKind.ANSWER,
        text="Hold **Home** for 5 s [1].",
        language="de",
        conversation_id="conv-1",
        citations=(Citation(1, "Pairing", ("Remote", "Pairing"), "https://docs/x#pair", "c1", 0.8, "Hold Home"),),
        actions=(ReplyAction("a1", "Helpful", ActionKind.HELPFUL), ReplyAction("a2", "Retry", ActionKind.RETRY)),
        reason=None,
        note="offline",
        cached=True,
        run_id="run-1",
        summary=RunSummary(chunks_retrieved=3, role_ms=(("search", 12.5),), errors=("search: timeout",)),
    )


@pytest.fixture
def clock() -> Clock:
    return Clock()


HORIZON = timedelta(minutes=10)


@pytest.fixture
def outbox(db: Database, clock: Clock) -> Outbox:
    return Outbox(db, horizon=HORIZON, base_backoff_s=2, max_backoff_s=5, jitter=lambda delay: delay, now=clock)


@pytest.mark.unit
def test_reply_and_ref_round_trip_through_json() -> None:
    assert from_json(Reply, to_json(full_reply())) == full_reply()
    assert from_json(ThreadRef, to_json(REF)) == REF


@pytest.mark.unit
def test_a_reply_stored_before_its_newer_fields_reads_back_with_their_defaults() -> None:
    helpful = {"id": "a1", "label": "Helpful", "kind": "helpful"}
    stored = {"kind": "answer", "text": "Hold Home.", "language": "en", "conversation_id": "c1",
              "actions": [helpful], "summary": {"total_ms": 12}}  # fmt: skip
    reply = from_json(Reply, stored)
    assert reply == Reply(ReplyKind.ANSWER, "Hold Home.", "en", "c1",
                          actions=(ReplyAction("a1", "Helpful", ActionKind.HELPFUL),),
                          summary=RunSummary(total_ms=12.0))  # fmt: skip
    with pytest.raises(CodecError):
        from_json(Reply, {"kind": "answer", "text": "no language"})


@pytest.mark.integration
async def test_a_reply_is_sent_once(outbox: Outbox) -> None:
    row_id = await outbox.add(OutgoingReply(REF, full_reply(), "slack:T1:C1:1"))
    (item,) = await outbox.claim(lease_s=30)
    assert (item.id, item.inbox_key, item.ref, item.reply, item.attempts) == (
        row_id, "slack:T1:C1:1", REF, full_reply(), 1,
    )
    assert await outbox.mark_sent(item, "1700000000.000300") is True
    assert await outbox.claim(lease_s=30) == []
    assert await outbox.counts() == {"sent": 1}
    assert await outbox.exists("slack:T1:C1:1") and not await outbox.exists("other")


@pytest.mark.integration
async def test_a_claimed_row_is_leased_and_a_late_sender_cannot_mark_it(outbox: Outbox, clock: Clock) -> None:
    await outbox.add(OutgoingReply(REF, full_reply()))
    (first,) = await outbox.claim(lease_s=30)
    assert await outbox.claim(lease_s=30) == []
    clock.advance(31)
    (second,) = await outbox.claim(lease_s=30)
    assert second.attempts == 2
    assert await outbox.mark_sent(first, "late") is False
    assert await outbox.mark_sent(second, "ok") is True


@pytest.mark.integration
async def test_transient_failures_back_off_capped_until_the_horizon_then_give_up(outbox: Outbox, clock: Clock) -> None:
    await outbox.add(OutgoingReply(REF, full_reply()))
    (item,) = await outbox.claim(lease_s=30)
    for attempt, backoff in ((1, 2), (2, 4), (3, 5), (4, 5)):  # doubling, capped at max_backoff_s
        assert item.attempts == attempt
        assert await outbox.mark_failed(item, "HTTP 503") is False
        clock.advance(backoff - 0.5)
        assert await outbox.claim(lease_s=30) == []
        clock.advance(0.5)
        (item,) = await outbox.claim(lease_s=30)
    while clock.now < item.created_at + HORIZON:  # hundreds of tries: no attempt count gives up, only time
        assert await outbox.mark_failed(item, "HTTP 503") is False
        clock.advance(5)
        (item,) = await outbox.claim(lease_s=30)
    assert item.attempts > 100  # the old outbox stopped at 8
    assert await outbox.undelivered() == {"pending": 1, "failed": 0}
    assert await outbox.mark_failed(item, "HTTP 503") is True  # past the horizon
    clock.advance(3600)
    assert await outbox.claim(lease_s=30) == []
    assert await outbox.counts() == {"failed": 1}
    assert await outbox.undelivered() == {"pending": 0, "failed": 1}


@pytest.mark.integration
async def test_the_last_retry_is_at_the_horizon_not_after_it(db: Database, clock: Clock) -> None:
    outbox = Outbox(db, horizon=timedelta(seconds=100), base_backoff_s=60, max_backoff_s=600, now=clock)
    await outbox.add(OutgoingReply(REF, full_reply()))
    (item,) = await outbox.claim(lease_s=30)
    clock.advance(70)
    assert await outbox.mark_failed(item, "HTTP 503") is False  # backoff 30-60 s would end past 100 s
    clock.advance(30)
    (item,) = await outbox.claim(lease_s=30)
    assert await outbox.mark_failed(item, "HTTP 503") is True


@pytest.mark.unit
def test_retries_are_jittered_within_half_to_all_of_the_capped_backoff(db: Database) -> None:
    outbox = Outbox(db, base_backoff_s=1, max_backoff_s=60)
    assert [outbox.backoff_s(n) for n in (1, 2, 3, 7, 8, 5000)] == [1, 2, 4, 60, 60, 60]
    delays = {equal_jitter(60.0) for _ in range(200)}
    assert all(30 <= d <= 60 for d in delays) and len(delays) > 150


@pytest.mark.integration
async def test_failed_rows_are_listed_and_queued_again_with_a_fresh_horizon(outbox: Outbox, clock: Clock) -> None:
    await outbox.add(OutgoingReply(REF, full_reply(), "a"))
    await outbox.add(OutgoingReply(REF, full_reply(), "b"))
    first, second = await outbox.claim(lease_s=30, limit=2)
    await outbox.mark_failed(first, "not_in_channel", permanent=True)
    await outbox.mark_failed(second, "channel_not_found", permanent=True)
    [listed, _] = await outbox.entries(statuses=["failed"])
    assert (listed.id, listed.status, listed.error, listed.platform) == (first.id, "failed", "not_in_channel", "slack")
    clock.advance(3600)  # older than the horizon: queued again, it still gets a full horizon
    assert await outbox.retry_failed([first.id]) == 1
    (again,) = await outbox.claim(lease_s=30)
    assert again.id == first.id and again.created_at == clock.now
    assert await outbox.mark_failed(again, "HTTP 503") is False
    assert await outbox.retry_failed() == 1  # the other one; a pending row is not touched
    assert await outbox.undelivered() == {"pending": 2, "failed": 0}


@pytest.mark.integration
async def test_a_permanent_failure_stops_at_once(outbox: Outbox) -> None:
    await outbox.add(OutgoingReply(REF, full_reply()))
    (item,) = await outbox.claim(lease_s=30)
    assert await outbox.mark_failed(item, "channel_not_found", permanent=True) is True
    assert await outbox.counts() == {"failed": 1}


@pytest.mark.integration
async def test_concurrent_claims_never_hand_out_a_row_twice(outbox: Outbox) -> None:
    for n in range(30):
        await outbox.add(OutgoingReply(REF, full_reply(), f"k{n}"))

    async def sender() -> list[int]:
        ids: list[int] = []
        while items := await outbox.claim(lease_s=30, limit=4):
            ids += [item.id for item in items]
        return ids

    results = await asyncio.gather(*(sender() for _ in range(4)))
    flat = [row for ids in results for row in ids]
    assert len(flat) == 30 and len(set(flat)) == 30


@pytest.mark.integration
async def test_purge_keeps_unsent_rows(outbox: Outbox, clock: Clock) -> None:
    await outbox.add(OutgoingReply(REF, full_reply(), "a"))
    await outbox.add(OutgoingReply(REF, full_reply(), "b"))
    (item, _) = await outbox.claim(lease_s=0, limit=2)
    await outbox.mark_sent(item, "m")
    clock.advance(7200)
    assert await outbox.purge(older_than=clock.now - timedelta(hours=1)) == 1
    assert await outbox.counts() == {"pending": 1}


@pytest.mark.integration
async def test_a_replica_claims_only_rows_for_platforms_it_can_post_to(outbox: Outbox) -> None:
    await outbox.add(OutgoingReply(REF, full_reply(), "slack-key"))
    await outbox.add(OutgoingReply(replace(REF, platform="discord"), full_reply(), "discord-key"))
    assert [item.inbox_key for item in await outbox.claim(lease_s=30, platforms=["discord"])] == ["discord-key"]
    assert await outbox.claim(lease_s=30, platforms=["console"]) == []
    assert [item.inbox_key for item in await outbox.claim(lease_s=30)] == ["slack-key"]
