"""A worker killed (SIGKILL, or the database going away) between the service deciding an answer and the inbox
settling it: nothing of the answer was stored, so the retry decides again and the thread gets the answer once, with
one run and one bot message, and no apology. The same for a button press: a retried press whose first attempt
consumed the choice is accepted again (the same event) and resumed once. The real `Delivery`, inbox, outbox,
`ConversationService` and stores, on SQLite and PostgreSQL; only the pipeline is an instant one (this is about the
way in and out, not about answers)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from bot.delivery import Delivery, DeliveryConfig
from bot.service import ConversationService
from bot.settings import Settings
from pipeline.envelope import Context, Envelope, Payload
from pipeline.locales import texts
from pipeline.messages import Inbound, InboundKind, Reply, ReplyKind, ThreadRef
from pipeline.result import PipelineResult, ResultKind
from pipeline.runner import PipelineRunner
from pipeline.types import ActionKind, SuggestedAction
from storage.actions import ActionStore
from storage.conversations import ConversationStore
from storage.db import Database
from storage.errors import StorageUnavailable
from storage.feedback import FeedbackStore
from storage.inbox import Inbox
from storage.outbox import Outbox
from storage.runs import RunStore
from tests.integration.dbfixtures import T0, Clock, database_fixtures

pytestmark = pytest.mark.integration
pg_url, db = database_fixtures()

LEASE_S = 30.0


class Runner:
    """Answers "answer to <text>" (or asks to clarify first, with `clarify_first`), counting its runs."""

    def __init__(self, *, clarify_first: bool = False, choice: ActionKind = ActionKind.SEARCH) -> None:
        self.runs: list[str] = []
        self.resumes = 0
        self.clarify_first = clarify_first
        self.choice = choice

    async def run(self, *, conversation_id: str, message_id: str, payload: Payload, context: Context) -> PipelineResult:
        self.runs.append(message_id)
        now = datetime.now(UTC)
        envelope = Envelope(conversation_id, message_id, payload, now, now, process_count=1)
        if self.clarify_first and len(self.runs) == 1:
            choice = SuggestedAction(label="Pairing", kind=self.choice, value="pairing")
            return PipelineResult(ResultKind.CLARIFICATION, "Which one?", "en", envelope, suggested_actions=(choice,))
        return PipelineResult(ResultKind.ANSWER, f"answer to {payload.text}", "en", envelope)

    async def resume(
        self, envelope: Envelope, *, context: Context, chosen: SuggestedAction | None = None,
        reply_text: str | None = None,
    ) -> PipelineResult:  # fmt: skip
        self.resumes += 1
        picked = chosen.value if chosen is not None else reply_text
        return PipelineResult(ResultKind.ANSWER, f"resumed with {picked}", "en", envelope)


class Sink:
    def __init__(self) -> None:
        self.posts: list[tuple[ThreadRef, Reply]] = []

    async def post(self, ref: ThreadRef, reply: Reply) -> str:
        self.posts.append((ref, reply))
        return f"1700000100.{len(self.posts):06d}"


class FailingOnce:
    """Raises `StorageUnavailable` the first time `method` is called (the database restarting at that instant),
    then delegates to the real store."""

    def __init__(self, real: Any, method: str | None) -> None:
        self._real, self.method, self.failed = real, method, False  # `method` None: armed later

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._real, name)
        if name != self.method or self.failed:
            return attribute

        async def failing(*args: Any, **kwargs: Any) -> Any:
            self.failed = True
            raise StorageUnavailable("test-db", "ConnectionResetError: the database restarted")

        return failing


@pytest.fixture
def clock() -> Iterator[Clock]:
    yield Clock()


def service_on(
    database: Database, runner: Runner, runs: Any = None, *, support: str | None = None
) -> ConversationService:
    return ConversationService(
        settings=Settings(_env_file=None, slack_support_mention=support),  # type: ignore[call-arg]
        conversations=ConversationStore(database), runs=runs or RunStore(database), actions=ActionStore(database),
        feedback=FeedbackStore(database), runner=cast(PipelineRunner, runner),
    )  # fmt: skip


def delivery_on(
    database: Database, service: ConversationService, sink: Sink, clock: Clock, worker: str, inbox: Any = None
) -> Delivery:
    return Delivery(
        database, service, {"slack": sink}, worker, config=DeliveryConfig(lease_s=LEASE_S),
        inbox=inbox or Inbox(database, now=clock), outbox=Outbox(database, now=clock),
    )  # fmt: skip


def question(text: str = "How do I pair the remote?") -> tuple[Inbound, ThreadRef]:
    inbound = Inbound(
        platform="slack", workspace_id="T1", channel_id="C1", thread_id=None, message_id="1700000000.000100",
        user_id="U1", user_name="alice", text=text, ts=T0, mentioned=True,
    )  # fmt: skip
    return inbound, ThreadRef("slack", "T1", "C1", inbound.message_id)


async def history_of(db: Database, inbound: Inbound) -> list[tuple[bool, str]]:
    conversation = await ConversationStore(db).find(inbound.thread_key)
    assert conversation is not None
    return [(m.from_bot, m.text) for m in await ConversationStore(db).history(conversation.id)]


async def statuses(db: Database, inbound: Inbound) -> list[str]:
    conversation = await ConversationStore(db).find(inbound.thread_key)
    assert conversation is not None
    trace = await RunStore(db).trace(conversation.id)
    return [run.status for run in trace.runs] if trace else []


async def test_killed_after_deciding_before_settling_the_retry_answers_once(db: Database, clock: Clock) -> None:
    runner, sink = Runner(), Sink()
    service = service_on(db, runner)
    inbound, ref = question()
    dead = delivery_on(db, service, sink, clock, "dead")
    assert await dead.accept(inbound, ref)
    (item,) = await dead.inbox.claim("dead", LEASE_S)
    decided = await service.answer(item.inbound)  # the answer is decided ...
    assert decided is not None and decided.reply is not None
    # ... and the process is killed here: nothing was written, the claim lapses
    assert await ConversationStore(db).find(inbound.thread_key) is None
    clock.advance(LEASE_S + 1)

    alive = delivery_on(db, service, sink, clock, "alive")
    assert await alive.process_once() == 1
    ((posted_ref, reply),) = sink.posts
    assert posted_ref == ref and reply.kind is ReplyKind.ANSWER and reply.text == f"answer to {inbound.text}"
    assert runner.runs == [inbound.message_id, inbound.message_id]  # decided twice, settled once
    clock.advance(LEASE_S + 1)
    assert await alive.process_once() == 0  # settled: nothing left to claim, nothing posted again
    await alive.sweep()
    assert len(sink.posts) == 1
    assert await history_of(db, inbound) == [(False, inbound.text), (True, reply.text)]
    assert await statuses(db, inbound) == ["answer"]


async def test_the_database_failing_as_the_answer_is_settled_the_retry_answers_once(
    db: Database, clock: Clock
) -> None:
    runner, sink = Runner(), Sink()
    service = service_on(db, runner)
    inbound, ref = question()
    inbox = FailingOnce(Inbox(db, now=clock), "complete")
    first = delivery_on(db, service, sink, clock, "w1", inbox=inbox)
    assert await first.accept(inbound, ref)
    assert await first.process_once() == 1  # decided; settling failed: the event stays claimed, nothing stored
    assert inbox.failed and sink.posts == []
    assert await ConversationStore(db).find(inbound.thread_key) is None
    clock.advance(LEASE_S + 1)

    assert await first.process_once() == 1  # the lease lapsed: the same worker takes it again
    ((posted_ref, reply),) = sink.posts
    assert posted_ref == ref and reply.kind is ReplyKind.ANSWER and reply.text == f"answer to {inbound.text}"
    await first.sweep()
    assert len(sink.posts) == 1
    assert (await first.inbox.counts()) == {"done": 1}
    assert await history_of(db, inbound) == [(False, inbound.text), (True, reply.text)]
    assert await statuses(db, inbound) == ["answer"]


async def test_a_clarification_decided_by_a_dead_attempt_is_not_parked(db: Database, clock: Clock) -> None:
    """The dead attempt decided to ask for clarification and died before settling: nothing is parked, so the
    retry runs the question again (the question is not taken as the answer to its own clarification)."""
    runner, sink = Runner(clarify_first=True), Sink()
    service = service_on(db, runner)
    inbound, ref = question("pairing")
    delivery = delivery_on(db, service, sink, clock, "w1")
    await delivery.accept(inbound, ref)
    (item,) = await delivery.inbox.claim("dead", LEASE_S)
    decided = await service.answer(item.inbound)
    assert decided is not None and decided.reply is not None and decided.reply.kind is ReplyKind.CLARIFICATION
    clock.advance(LEASE_S + 1)

    await delivery.process_once()
    ((_, reply),) = sink.posts
    assert runner.runs == [inbound.message_id, inbound.message_id] and runner.resumes == 0
    assert reply.kind is ReplyKind.ANSWER and reply.text == "answer to pairing"


async def test_the_reply_is_stored_with_its_run_for_publishing(db: Database) -> None:
    runner = Runner()
    service = service_on(db, runner)
    inbound, _ = question()
    reply = await service.handle_message(inbound)
    assert reply is not None
    assert await service.reply_on_record(inbound.thread_key, inbound.message_id) == reply
    assert await service.reply_on_record(inbound.thread_key, "another message") is None
    assert await service.reply_on_record("slack:T1:C9:other", inbound.message_id) is None


async def clarified(db: Database, clock: Clock, sink: Sink, service: ConversationService) -> tuple[Inbound, Reply]:
    """A question answered with a clarification (posted); returns the question and the posted clarification."""
    inbound, ref = question("pairing")
    first = delivery_on(db, service, sink, clock, "w0")
    await first.accept(inbound, ref)
    assert await first.process_once() == 1
    ((_, clarification),) = sink.posts
    assert clarification.kind is ReplyKind.CLARIFICATION and clarification.actions
    return inbound, clarification


def press(asked: Inbound, action_id: str, *, user: str = "U1", second: int = 5) -> tuple[Inbound, ThreadRef]:
    """A press of `action_id` on the bot's first reply in the thread of `asked`, by `user` at T0 + `second`."""
    inbound = Inbound(
        platform="slack", workspace_id="T1", channel_id="C1", thread_id=asked.message_id,
        message_id="1700000100.000001", user_id=user, user_name=user, text="", ts=T0.replace(second=second),
        kind=InboundKind.ACTION, action_id=action_id,
    )  # fmt: skip
    return inbound, ThreadRef("slack", "T1", "C1", asked.message_id)


def notices(sink: Sink) -> list[Reply]:
    return [reply for _, reply in sink.posts if reply.reason == "action_notice"]


async def test_a_press_killed_after_deciding_is_resumed_once_on_retry(db: Database, clock: Clock) -> None:
    """The first attempt consumed the choice and decided the resumed answer, then died before settling: the retry
    is accepted again (the same event, not "already used") and resumes; the thread gets that answer once."""
    runner, sink = Runner(clarify_first=True), Sink()
    service = service_on(db, runner)
    asked, clarification = await clarified(db, clock, sink, service)
    pressed, ref = press(asked, clarification.actions[0].id)
    dead = delivery_on(db, service, sink, clock, "dead")
    assert await dead.accept(pressed, ref)
    (item,) = await dead.inbox.claim("dead", LEASE_S)
    decided = await service.press(item.inbound)  # consumed, resumed, decided ...
    assert decided.outcome.accepted and decided.answer is not None and runner.resumes == 1
    clock.advance(LEASE_S + 1)  # ... and killed before settling

    alive = delivery_on(db, service, sink, clock, "alive")
    assert await alive.process_once() == 1
    ((_, answer),) = sink.posts[1:]
    assert answer.kind is ReplyKind.ANSWER and answer.text == "resumed with pairing" and notices(sink) == []
    assert runner.resumes == 2
    clock.advance(LEASE_S + 1)
    assert await alive.process_once() == 0
    await alive.sweep()
    assert len(sink.posts) == 2
    assert await statuses(db, asked) == ["clarification", "answer"]
    assert sorted(from_bot for from_bot, _ in await history_of(db, asked)) == [False, False, True, True]

    # another press of the consumed choice (another event) is still refused, privately to its presser
    other, other_ref = press(asked, clarification.actions[0].id, user="U2", second=9)
    assert await alive.accept(other, other_ref)
    assert await alive.process_once() == 1
    (refused,) = notices(sink)
    assert refused.text == texts("en").button_used and runner.resumes == 2


async def test_a_press_whose_settling_failed_is_resumed_on_retry_not_refused(db: Database, clock: Clock) -> None:
    runner, sink = Runner(clarify_first=True), Sink()
    service = service_on(db, runner)
    asked, clarification = await clarified(db, clock, sink, service)
    pressed, ref = press(asked, clarification.actions[0].id)
    inbox = FailingOnce(Inbox(db, now=clock), "complete")
    delivery = delivery_on(db, service, sink, clock, "w1", inbox=inbox)
    assert await delivery.accept(pressed, ref)
    assert await delivery.process_once() == 1  # consumed and resumed; settling failed: nothing stored
    assert inbox.failed and len(sink.posts) == 1
    clock.advance(LEASE_S + 1)

    assert await delivery.process_once() == 1
    ((_, answer),) = sink.posts[1:]
    assert answer.kind is ReplyKind.ANSWER and answer.text == "resumed with pairing"
    assert notices(sink) == [] and runner.resumes == 2
    await delivery.sweep()
    assert len(sink.posts) == 2 and (await delivery.inbox.counts()) == {"done": 2}
    assert await statuses(db, asked) == ["clarification", "answer"]


@pytest.mark.parametrize("kind", [ActionKind.HUMAN, ActionKind.REPHRASE])
async def test_a_handoff_or_rephrase_press_killed_before_settling_is_answered_once(
    db: Database, clock: Clock, kind: ActionKind
) -> None:
    runner, sink = Runner(clarify_first=True, choice=kind), Sink()
    service = service_on(db, runner, support="<!subteam^S1>")
    asked, clarification = await clarified(db, clock, sink, service)
    pressed, ref = press(asked, clarification.actions[0].id)
    dead = delivery_on(db, service, sink, clock, "dead")
    assert await dead.accept(pressed, ref)
    (item,) = await dead.inbox.claim("dead", LEASE_S)
    decided = await service.press(item.inbound)
    expected = texts("en").human_handoff if kind is ActionKind.HUMAN else texts("en").clarify["rephrase"]
    assert decided.outcome.accepted and decided.outcome.reply is not None and decided.outcome.reply.text == expected
    clock.advance(LEASE_S + 1)  # killed before settling

    alive = delivery_on(db, service, sink, clock, "alive")
    assert await alive.process_once() == 1
    assert [reply.text for _, reply in sink.posts[1:]] == [expected] and notices(sink) == []
    await alive.sweep()
    assert len(sink.posts) == 2 and runner.resumes == 0
