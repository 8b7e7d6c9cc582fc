"""Delivery showing a question's work (`WorkDisplaySink`) and stopping it (`RunControl`): the real inbox and outbox on
SQLite, a handler that reports steps, and a sink whose display records what it was asked to show."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from bot.delivery import Delivery, DeliveryConfig
from pipeline.envelope import ProgressCallback, StreamCallback
from pipeline.locales import texts
from pipeline.messages import (
    ActionOutcome,
    Inbound,
    Reply,
    ReplyKind,
    Step,
    StepStatus,
    StopOutcome,
    ThreadFetcher,
    ThreadRef,
)
from pipeline.types import Role
from storage.db import Database
from tests.integration.dbfixtures import T0

pytestmark = pytest.mark.integration


@dataclass
class Display:
    shown: list[str] = field(default_factory=list)  # "begin", "step:<role>:<status>", "finish", "discard"

    async def begin(self) -> None:
        self.shown.append("begin")

    async def step(self, step: Step) -> None:
        self.shown.append(f"step:{step.role.value}:{step.status.value}")

    async def update(self, text: str) -> None:
        self.shown.append("text")

    async def finish(self) -> str | None:
        self.shown.append("finish")
        return "shown-1" if "begin" in self.shown else None

    async def discard(self) -> None:
        self.shown.append("discard")


@dataclass
class Sink:
    displays: list[Display] = field(default_factory=list)
    posts: list[tuple[ThreadRef, Reply]] = field(default_factory=list)

    def open_work(self, ref: ThreadRef, inbound: Inbound) -> Display:
        self.displays.append(Display())
        return self.displays[-1]

    async def post(self, ref: ThreadRef, reply: Reply) -> str:
        self.posts.append((ref, reply))
        return ref.placeholder_id or f"m{len(self.posts)}"


@dataclass
class Handler:
    """Reports a search step, then waits for `gate` (when given) and answers; ignores follow-ups (`mentioned=False`);
    raises when the text says so."""

    gate: asyncio.Event | None = None
    reached: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: int = 0

    async def handle_message(
        self, inbound: Inbound, fetcher: ThreadFetcher | None = None, stream: StreamCallback | None = None,
        progress: ProgressCallback | None = None,
    ) -> Reply | None:  # fmt: skip
        if not inbound.mentioned:
            return None
        assert progress is not None
        await progress(Step(Role.SEARCH, StepStatus.STARTED))
        await progress(Step(Role.SEARCH, StepStatus.DONE, sections=4))
        if inbound.text == "explode":
            raise RuntimeError("the pipeline broke")
        self.reached.set()
        try:
            if self.gate is not None:
                await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return Reply(ReplyKind.ANSWER, f"answer: {inbound.text}", "en", "conv")

    async def handle_action(self, inbound: Inbound) -> ActionOutcome:
        return ActionOutcome(accepted=False, chosen_label="")


def question(n: int, text: str = "how do I pair?", **changes: object) -> Inbound:
    inbound = Inbound(platform="slack", workspace_id="T1", channel_id="C1", thread_id=None,
                      message_id=f"17000.{n:04d}", user_id="UALICE", user_name="alice", text=text, ts=T0)  # fmt: skip
    return replace(inbound, **changes)  # type: ignore[arg-type]


def ref_for(inbound: Inbound) -> ThreadRef:
    return ThreadRef("slack", "T1", "C1", inbound.thread_id or inbound.message_id)


@pytest.fixture
async def db(tmp_path: Path) -> Database:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'work.db'}")
    await database.migrate()
    yield database  # type: ignore[misc]
    await database.dispose()


def delivery_for(db: Database, handler: Handler, sink: Sink) -> Delivery:
    return Delivery(db, handler, {"slack": sink}, "w1", config=DeliveryConfig(poll_s=0.02))  # type: ignore[dict-item]


async def test_a_question_shows_its_steps_and_the_reply_replaces_them(db: Database) -> None:
    sink, handler = Sink(), Handler()
    delivery = delivery_for(db, handler, sink)
    asked = question(1)
    await delivery.accept(asked, ref_for(asked))
    await delivery.process_once()
    [display] = sink.displays
    assert display.shown == ["begin", "step:search:started", "step:search:done", "finish"]
    [(ref, reply)] = sink.posts
    assert ref.placeholder_id == "shown-1" and reply.text == "answer: how do I pair?"


async def test_a_follow_up_the_service_leaves_shows_nothing(db: Database) -> None:
    sink = Sink()
    delivery = delivery_for(db, Handler(), sink)
    follow_up = question(2, thread_id="17000.0001", mentioned=False)
    await delivery.accept(follow_up, ref_for(follow_up))
    await delivery.process_once()
    assert [d.shown for d in sink.displays] == [["finish"]] and sink.posts == []


async def test_a_failure_takes_the_shown_work_away_and_the_event_is_retried(db: Database) -> None:
    sink = Sink()
    delivery = delivery_for(db, Handler(), sink)
    broken = question(3, "explode")
    await delivery.accept(broken, ref_for(broken))
    await delivery.process_once()
    assert sink.displays[0].shown[-1] == "discard" and sink.posts == []
    assert await delivery.inbox.counts() == {"pending": 1}


async def run_held(db: Database) -> tuple[Delivery, Sink, Handler, Inbound, asyncio.Task[int]]:
    sink, handler = Sink(), Handler(gate=asyncio.Event())
    delivery = delivery_for(db, handler, sink)
    held = question(4)
    await delivery.accept(held, ref_for(held))
    working = asyncio.create_task(delivery.process_once())
    await asyncio.wait_for(handler.reached.wait(), 10)
    return delivery, sink, handler, held, working


async def test_the_asker_stops_a_running_question_and_it_settles_with_a_notice(db: Database) -> None:
    delivery, sink, handler, held, working = await run_held(db)
    assert await delivery.stop(held.thread_key, "UALICE") is StopOutcome.STOPPED
    await asyncio.wait_for(working, 10)
    assert handler.cancelled == 1
    [(ref, reply)] = sink.posts
    assert (reply.kind, reply.reason, reply.text) == (ReplyKind.NOTICE, "stopped", texts("en").stopped)
    assert ref.placeholder_id == "shown-1"  # in place of the shown work
    assert sink.displays[0].shown[-1] == "finish"
    assert await delivery.inbox.counts() == {"done": 1}  # settled: never retried, never answered later
    assert await delivery.stop(held.thread_key, "UALICE") is StopOutcome.NOT_RUNNING


async def test_only_the_asker_may_stop_it(db: Database) -> None:
    delivery, sink, handler, held, working = await run_held(db)
    assert await delivery.stop(held.thread_key, "UBOB") is StopOutcome.NOT_ALLOWED
    assert await delivery.stop("slack:T1:C1:elsewhere", "UALICE") is StopOutcome.NOT_RUNNING
    assert handler.gate is not None
    handler.gate.set()
    await asyncio.wait_for(working, 10)
    assert [reply.text for _, reply in sink.posts] == ["answer: how do I pair?"]


async def test_a_lost_claim_is_not_a_stop(db: Database) -> None:
    """Cancelling the worker (shutdown, a claim taken over) cancels the run and takes its work away; no "stopped"
    notice is posted: another worker answers the event."""
    delivery, sink, handler, held, working = await run_held(db)
    working.cancel()
    with pytest.raises(asyncio.CancelledError):
        await working
    await asyncio.sleep(0)
    assert handler.cancelled == 1 and sink.posts == []
    assert sink.displays[0].shown[-1] == "discard"
    assert await delivery.stop(held.thread_key, "UALICE") is StopOutcome.NOT_RUNNING
