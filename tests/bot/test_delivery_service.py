"""Delivery around the real conversation service (SQLite, the fixture manual): answers once, and a half-done answer
(question stored, worker killed) ends in an apology whose Try again button gets the answer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.app import App
from bot.delivery import Delivery
from pipeline.messages import Inbound, InboundKind, Reply, ReplyKind, ThreadRef
from pipeline.types import ActionKind
from storage.inbox import Inbox
from storage.outbox import Outbox
from tests.bot.conftest import inbound

pytestmark = pytest.mark.integration


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


class Sink:
    def __init__(self) -> None:
        self.posts: list[tuple[ThreadRef, Reply]] = []

    async def post(self, ref: ThreadRef, reply: Reply) -> str:
        self.posts.append((ref, reply))
        return f"{1700000000 + len(self.posts)}.000200"


def ref_for(event: Inbound) -> ThreadRef:
    return ThreadRef(event.platform, event.workspace_id, event.channel_id, event.thread_id or event.message_id)


@pytest.fixture
async def app(make_app: Callable[..., Any]) -> App:
    built: App = await make_app()
    return built


def delivery_for(app: App, sink: Sink, clock: Clock, worker: str) -> Delivery:
    return Delivery(app.db, app.service, {"slack": sink}, worker,
                    inbox=Inbox(app.db, now=clock), outbox=Outbox(app.db, now=clock))


async def test_a_question_is_answered_once_however_often_it_arrives(app: App) -> None:
    sink, clock = Sink(), Clock()
    delivery = delivery_for(app, sink, clock, "w1")
    question = inbound("What does error E-2041 mean?")
    for _ in range(3):
        await delivery.accept(question, ref_for(question))
    await delivery.process_once()
    ((ref, reply),) = sink.posts
    assert ref == ref_for(question) and reply.kind is ReplyKind.ANSWER
    assert any("e-2041" in c.url for c in reply.citations)


async def test_a_half_done_answer_gets_an_apology_and_the_button_gets_the_answer(app: App) -> None:
    sink, clock = Sink(), Clock()
    dead = delivery_for(app, sink, clock, "dead")
    question = inbound("What does error E-2041 mean?")
    await dead.accept(question, ref_for(question))
    (item,) = await dead.inbox.claim("dead", lease_s=60)
    await app.service.handle_message(item.inbound)  # it answered, then was killed before storing the reply
    clock.now += timedelta(seconds=61)

    alive = delivery_for(app, sink, clock, "alive")
    await alive.process_once()
    ((ref, apology),) = sink.posts
    assert apology.kind is ReplyKind.NOTICE and apology.reason == "answer_failed"
    (button,) = apology.actions
    assert button.kind is ActionKind.RETRY

    press = inbound(button.label, thread=question.message_id, action_id=button.id)
    assert press.kind is InboundKind.ACTION
    await alive.accept(press, ref)
    await alive.process_once()  # queues the parked question
    await alive.process_once()  # answers it
    assert [r.kind for _, r in sink.posts] == [ReplyKind.NOTICE, ReplyKind.ANSWER]
    answer = sink.posts[1][1]
    assert any("e-2041" in c.url for c in answer.citations)
    assert sink.posts[1][0] == ref  # in the same thread
