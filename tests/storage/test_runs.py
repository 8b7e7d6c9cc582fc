"""RunStore on both backends: every hop stored in order, totals summed, traces by conversation or "last"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event

from pipeline.envelope import Envelope, EnvelopeError, Hop, Payload
from pipeline.types import LLMUsage, Role, StrategyUsed
from storage.conversations import ConversationRecord
from storage.db import Database
from storage.runs import RunStore
from storage.settlement import Answer, ConversationChange, NewRun, Settlement
from storage.tables import new_uuid
from tests.helpers.stored import stored_conversation

pytestmark = pytest.mark.integration

T0 = datetime(2026, 11, 22, 9, 0, 0, tzinfo=UTC)


def _envelope(conversation_id: str, roles: list[Role], *, tokens: int = 0, start: datetime = T0) -> Envelope:
    hops = [
        Hop(
            role=role,
            decision=f"{role.value} decided",
            started_at=start + timedelta(milliseconds=10 * i),
            duration_ms=5.0 + i,
            wait_ms=float(i),
            strategy=StrategyUsed.LLM if tokens else StrategyUsed.OFFLINE,
            usage=LLMUsage(tokens, tokens // 2, 1) if tokens else LLMUsage(),
            error="timeout after 20 s" if role is Role.QUALITY else None,
        )
        for i, role in enumerate(roles)
    ]
    return Envelope(
        conversation_id=conversation_id,
        message_id="m1",
        payload=Payload(text="how do I pair the remote?"),
        create_ts=start,
        update_ts=start,
        hops=hops,
        errors=[EnvelopeError(role=Role.QUALITY, kind="timeout", message="quality timed out")],
    )


async def settle_run(
    db: Database, conversation: ConversationRecord, message_id: str, envelope: Envelope, *, cached: bool = False,
    started: datetime = T0, finished: datetime = T0 + timedelta(seconds=1),
) -> str:  # fmt: skip
    """A run settled the way the service's answers are (`storage.settlement`), on a conversation already stored."""
    run = NewRun(new_uuid(), message_id, envelope, "answer", cached, started, finished)
    await Settlement(db).settle(Answer(None, ConversationChange(conversation), run=run))
    return run.id


async def test_a_settled_run_keeps_every_hop_and_sums_usage(db: Database):
    conversation = await stored_conversation(db, "slack:T:C:1")
    runs = RunStore(db)
    roles = [Role.MANAGER, Role.LANG, Role.MANAGER, Role.SEARCH, Role.QUALITY, Role.MANAGER]
    statements: list[str] = []
    event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    run_id = await settle_run(
        db, conversation, "m1", _envelope(conversation.id, roles, tokens=100),
        finished=T0 + timedelta(milliseconds=1234),
    )  # fmt: skip
    assert len(statements) == 2  # the run, then every hop in one executemany (not one INSERT per hop)
    trace = await runs.trace(conversation.id)
    assert trace is not None and trace.conversation_id == conversation.id
    (run,) = trace.runs
    assert run.id == run_id
    assert [h.role for h in run.hops] == [r.value for r in roles]
    assert [h.seq for h in run.hops] == list(range(len(roles)))
    assert run.total_ms == pytest.approx(1234.0)
    assert (run.prompt_tokens, run.completion_tokens, run.llm_calls) == (600, 300, 6)
    assert run.errors == ({"role": "quality", "kind": "timeout", "message": "quality timed out"},)
    quality = run.hops[4]
    assert quality.error == "timeout after 20 s" and quality.wait_ms == 4.0 and quality.strategy == StrategyUsed.LLM
    assert run.hops[0].started_at == T0 and run.hops[0].started_at.tzinfo is not None


async def test_trace_last_follows_the_latest_run(db: Database):
    first = await stored_conversation(db, "slack:T:C:1")
    second = await stored_conversation(db, "slack:T:C:2")
    runs = RunStore(db)
    assert await runs.trace() is None
    for conversation, minute in [(second, 0), (first, 5), (second, 1), (first, 6)]:
        start = T0 + timedelta(minutes=minute)
        await settle_run(
            db, conversation, f"m{minute}", _envelope(conversation.id, [Role.MANAGER], start=start),
            cached=minute == 6, started=start, finished=start + timedelta(seconds=1),
        )  # fmt: skip
    last = await runs.trace("last")
    assert last is not None and last.conversation_id == first.id
    assert [r.message_id for r in last.runs] == ["m5", "m6"]
    assert [r.cached for r in last.runs] == [False, True]
    limited = await runs.trace(second.id, limit=1)
    assert limited is not None and [r.message_id for r in limited.runs] == ["m1"]
    assert await runs.trace("no-such-conversation") is None
