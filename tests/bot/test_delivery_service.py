"""Delivery around the real conversation service (SQLite, the fixture manual): answers once, and an answer decided by
a worker killed before it settled leaves nothing behind: the retry answers, once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.app import App
from bot.delivery import Delivery
from pipeline.messages import Inbound, Reply, ReplyKind, ThreadRef
from storage.conversations import ConversationStore
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


async def test_an_answer_whose_worker_died_before_settling_it_is_answered_once_by_the_retry(app: App) -> None:
    sink, clock = Sink(), Clock()
    dead = delivery_for(app, sink, clock, "dead")
    question = inbound("What does error E-2041 mean?")
    await dead.accept(question, ref_for(question))
    (item,) = await dead.inbox.claim("dead", lease_s=60)
    decided = await app.service.answer(item.inbound)  # it decided, then was killed before settling
    assert decided is not None and decided.reply is not None
    assert await app.runs.trace() is None  # deciding wrote nothing: no run, no conversation
    assert await ConversationStore(app.db).find(question.thread_key) is None
    clock.now += timedelta(seconds=61)

    alive = delivery_for(app, sink, clock, "alive")
    await alive.process_once()
    ((ref, reply),) = sink.posts
    assert reply.kind is ReplyKind.ANSWER and ref == ref_for(question)  # an answer, not an apology
    assert any("e-2041" in c.url for c in reply.citations)
    clock.now += timedelta(seconds=61)
    assert await alive.process_once() == 0
    assert len(sink.posts) == 1
    trace = await app.runs.trace()
    assert trace is not None and [run.id for run in trace.runs] == [reply.run_id]  # one run: the settled one
    conversation = await ConversationStore(app.db).find(question.thread_key)
    assert conversation is not None
    history = await ConversationStore(app.db).history(conversation.id)
    assert [(m.from_bot, m.text == question.text) for m in history] == [(False, True), (True, False)]
