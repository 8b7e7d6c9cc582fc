"""A crash between the service recording a message as answered and the inbox storing its reply (SIGKILL, or the
database going away at that instant): the retry posts the stored answer, once, without running the pipeline again
and without an apology. The same for a button press: a retried press whose first attempt consumed the choice gets
the resumed answer (or the handoff / rephrase notice), never "already used". The real `Delivery`, inbox, outbox,
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


async def test_killed_after_answering_before_storing_the_reply_the_retry_posts_the_stored_answer_once(
    db: Database, clock: Clock
) -> None:
    runner, sink = Runner(), Sink()
    service = service_on(db, runner)
    inbound, ref = question()
    dead = delivery_on(db, service, sink, clock, "dead")
    assert await dead.accept(inbound, ref)
    (item,) = await dead.inbox.claim("dead", LEASE_S)
    answered = await service.handle_message(item.inbound)  # the run and its reply are recorded ...
    assert answered is not None and answered.kind is ReplyKind.ANSWER
    # ... and the process is killed here: `inbox.complete` never runs, the claim lapses
    clock.advance(LEASE_S + 1)

    alive = delivery_on(db, service, sink, clock, "alive")
    assert await alive.process_once() == 1
    assert [reply for _, reply in sink.posts] == [answered]  # the stored answer itself, not an apology
    assert sink.posts[0][0] == ref
    assert runner.runs == [inbound.message_id]  # replayed, not produced a second time
    clock.advance(LEASE_S + 1)
    assert await alive.process_once() == 0  # settled: nothing left to claim, nothing posted again
    await alive.sweep()
    assert len(sink.posts) == 1
    conversation = await ConversationStore(db).find(inbound.thread_key)
    assert conversation is not None
    history = await ConversationStore(db).history(conversation.id)
    assert [m.from_bot for m in history] == [False, True]  # the bot's answer is in the thread's history once


async def test_the_database_failing_as_the_reply_is_stored_the_retry_posts_the_stored_answer_once(
    db: Database, clock: Clock
) -> None:
    runner, sink = Runner(), Sink()
    service = service_on(db, runner)
    inbound, ref = question()
    inbox = FailingOnce(Inbox(db, now=clock), "complete")
    first = delivery_on(db, service, sink, clock, "w1", inbox=inbox)
    assert await first.accept(inbound, ref)
    assert await first.process_once() == 1  # answered; storing the reply failed: the event stays claimed
    assert inbox.failed and sink.posts == []
    clock.advance(LEASE_S + 1)

    assert await first.process_once() == 1  # the lease lapsed: the same worker takes it again
    ((posted_ref, reply),) = sink.posts
    assert posted_ref == ref and reply.kind is ReplyKind.ANSWER and reply.text == f"answer to {inbound.text}"
    assert runner.runs == [inbound.message_id]
    await first.sweep()
    assert len(sink.posts) == 1
    assert (await first.inbox.counts()) == {"done": 1}


async def test_a_clarification_left_by_an_attempt_that_died_before_its_run_is_not_answered_by_its_own_question(
    db: Database, clock: Clock
) -> None:
    """The dead attempt stored its clarification as pending, then the database failed as it recorded the run: the
    retry runs the question again (the question does not count as the answer to its own clarification)."""
    runner, sink = Runner(clarify_first=True), Sink()
    runs = FailingOnce(RunStore(db), "save_run")
    service = service_on(db, runner, runs=runs)
    inbound, ref = question("pairing")
    delivery = delivery_on(db, service, sink, clock, "w1")
    await delivery.accept(inbound, ref)
    await delivery.process_once()  # the handler failed: the event goes back with a backoff
    assert runs.failed and sink.posts == []
    clock.advance(LEASE_S + 1)

    await delivery.process_once()
    ((_, reply),) = sink.posts
    assert runner.runs == [inbound.message_id, inbound.message_id] and runner.resumes == 0
    assert reply.kind is ReplyKind.ANSWER and reply.text == "answer to pairing"


async def test_a_reply_is_stored_with_the_run_that_records_the_message_as_answered(db: Database) -> None:
    runner = Runner()
    service = service_on(db, runner)
    inbound, _ = question()
    reply = await service.handle_message(inbound)
    assert reply is not None
    conversation = await ConversationStore(db).find(inbound.thread_key)
    assert conversation is not None
    stored = await RunStore(db).answer_for(conversation.id, inbound.message_id)
    assert stored is not None and stored.reply == reply and stored.run_id == reply.run_id
    assert await RunStore(db).answer_for(conversation.id, "another message") is None


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


async def test_a_press_killed_after_its_resumed_answer_was_recorded_is_answered_once_on_retry(
    db: Database, clock: Clock
) -> None:
    """The first attempt consumed the choice, resumed the conversation and recorded the answer, then died before
    the inbox stored the reply: the retry posts that answer (not "already used", not "expired"), once."""
    runner, sink = Runner(clarify_first=True), Sink()
    service = service_on(db, runner)
    asked, clarification = await clarified(db, clock, sink, service)
    pressed, ref = press(asked, clarification.actions[0].id)
    dead = delivery_on(db, service, sink, clock, "dead")
    assert await dead.accept(pressed, ref)
    (item,) = await dead.inbox.claim("dead", LEASE_S)
    outcome = await service.handle_action(item.inbound)  # consumed, resumed, the run and its reply recorded ...
    assert outcome.accepted and outcome.reply is not None and runner.resumes == 1
    # ... and the process is killed here: `inbox.complete` never runs, the claim lapses
    clock.advance(LEASE_S + 1)

    alive = delivery_on(db, service, sink, clock, "alive")
    assert await alive.process_once() == 1
    answers = [reply for _, reply in sink.posts[1:]]
    assert answers == [outcome.reply]  # the recorded answer itself: no notice, no apology
    assert outcome.reply.text == "resumed with pairing"
    assert runner.resumes == 1  # replayed, not resumed a second time
    clock.advance(LEASE_S + 1)
    assert await alive.process_once() == 0
    await alive.sweep()
    assert len(sink.posts) == 2 and notices(sink) == []

    # another press of the consumed choice (another event) is still refused, privately to its presser
    other, other_ref = press(asked, clarification.actions[0].id, user="U2", second=9)
    assert await alive.accept(other, other_ref)
    assert await alive.process_once() == 1
    (refused,) = notices(sink)
    assert refused.text == texts("en").button_used and runner.resumes == 1


async def test_a_press_whose_answer_failed_to_be_recorded_is_resumed_on_retry_not_refused(
    db: Database, clock: Clock
) -> None:
    """The first attempt consumed the choice, then the database failed as it recorded the resumed run: the retry
    consumes the same choice again (the same event) and answers, once."""
    runner, sink = Runner(clarify_first=True), Sink()
    runs = FailingOnce(RunStore(db), None)
    service = service_on(db, runner, runs=runs)
    asked, clarification = await clarified(db, clock, sink, service)
    runs.method = "save_run"  # armed once the clarification's own run is recorded
    pressed, ref = press(asked, clarification.actions[0].id)
    delivery = delivery_on(db, service, sink, clock, "w1")
    assert await delivery.accept(pressed, ref)
    assert await delivery.process_once() == 1  # the handler failed after consuming: back to pending with a backoff
    assert runs.failed and len(sink.posts) == 1
    clock.advance(LEASE_S + 1)

    assert await delivery.process_once() == 1
    ((_, answer),) = sink.posts[1:]
    assert answer.kind is ReplyKind.ANSWER and answer.text == "resumed with pairing"
    assert notices(sink) == [] and runner.resumes == 2
    await delivery.sweep()
    assert len(sink.posts) == 2 and (await delivery.inbox.counts()) == {"done": 2}


@pytest.mark.parametrize("kind", [ActionKind.HUMAN, ActionKind.REPHRASE])
async def test_a_handoff_or_rephrase_press_killed_before_its_reply_was_stored_is_replayed_once(
    db: Database, clock: Clock, kind: ActionKind
) -> None:
    """The handoff and rephrase notices are recorded with a run keyed by the press, like a resumed answer: the retry
    replays that record (even after support was unset in between) instead of making a new reply or refusing."""
    runner, sink = Runner(clarify_first=True, choice=kind), Sink()
    service = service_on(db, runner, support="<!subteam^S1>")
    asked, clarification = await clarified(db, clock, sink, service)
    pressed, ref = press(asked, clarification.actions[0].id)
    dead = delivery_on(db, service, sink, clock, "dead")
    assert await dead.accept(pressed, ref)
    (item,) = await dead.inbox.claim("dead", LEASE_S)
    outcome = await service.handle_action(item.inbound)
    assert outcome.accepted and outcome.reply is not None
    expected = texts("en").human_handoff if kind is ActionKind.HUMAN else texts("en").clarify["rephrase"]
    assert outcome.reply.text == expected
    clock.advance(LEASE_S + 1)  # killed before `inbox.complete`

    restarted = service_on(db, runner)  # a replica restarted without the support setting
    alive = delivery_on(db, restarted, sink, clock, "alive")
    assert await alive.process_once() == 1
    assert [reply for _, reply in sink.posts[1:]] == [outcome.reply] and notices(sink) == []
    await alive.sweep()
    assert len(sink.posts) == 2
    trace = await RunStore(db).trace(outcome.reply.conversation_id)
    assert trace is not None
    assert [run.status for run in trace.runs] == ["clarification", outcome.reply.reason]  # recorded once
    assert runner.resumes == 0
