"""The glue between the platforms and the conversation service: inbox → handler → outbox → sink.

    delivery = Delivery(db, service, {"slack": slack_sink}, worker_id="web-1")
    await delivery.accept(inbound, ref)          # in the adapter, before/at the ack; False for a duplicate
    asyncio.create_task(delivery.run_worker(stop))
    await delivery.sweep()                       # also a scheduled job: due outbox rows, exhausted events

Nothing is lost: an event is in the inbox before it is acknowledged, its reply is in the outbox before it is posted,
and every step is leased, so a replica that dies mid-answer is replaced by another one when the lease lapses.
Nothing is done twice: claims are atomic, a reply is stored only while its event's claim is still held, and a sent
reply is marked with the platform's message id.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar, cast, runtime_checkable

from pipeline.envelope import ProgressCallback, StreamCallback
from pipeline.locales import texts
from pipeline.messages import (
    PROGRESS_UNKNOWN,
    PUBLISH_PREFIX,
    SOLVED_PREFIX,
    ConversationHandler,
    DeliveryAttempt,
    DeliveryRejected,
    Inbound,
    InboundKind,
    ProgressSink,
    Reply,
    ReplyAction,
    ReplyKind,
    ReplySink,
    RetrySafeSink,
    Step,
    StopOutcome,
    StreamingConversationHandler,
    StreamingSink,
    ThreadFetcher,
    ThreadMarker,
    ThreadRef,
    WorkDisplaySink,
)
from pipeline.types import ActionKind
from storage.db import Database
from storage.inbox import RETRY_PREFIX, Inbox, InboxItem, is_retry, new_retry_token
from storage.outbox import Outbox, OutboxItem, OutgoingReply
from storage.settlement import Answer, Pressed

if TYPE_CHECKING:
    from bot.answers.hooks import TeamAnswerHooks

log = logging.getLogger(__name__)
T = TypeVar("T")

FetcherFactory = Callable[[Inbound, ThreadRef], ThreadFetcher | None]
LanguageLookup = Callable[[Inbound], Awaitable[str | None]]


class ProgressUnknown(Exception):
    """A progress sign an earlier (or this) attempt may have posted could not be looked up on the platform; the
    event is retried rather than answered beside a placeholder nobody replaces."""


@runtime_checkable
class Answering(Protocol):
    """What the delivery needs of the conversation service: decide an event's answer and write nothing, so that the
    inbox settles it with the event in one transaction (`ConversationService`). A handler that keeps no records
    (`pipeline.messages.ConversationHandler`: demos, test doubles) is wrapped by `Unrecorded`."""

    async def answer(
        self,
        inbound: Inbound,
        fetcher: ThreadFetcher | None = None,
        stream: StreamCallback | None = None,
        progress: ProgressCallback | None = None,
    ) -> Answer | None: ...

    async def press(self, inbound: Inbound) -> Pressed: ...


class Unrecorded:
    """A `ConversationHandler` whose replies carry nothing to store, as an `Answering`."""

    def __init__(self, handler: ConversationHandler) -> None:
        self.handler = handler

    async def answer(
        self,
        inbound: Inbound,
        fetcher: ThreadFetcher | None = None,
        stream: StreamCallback | None = None,
        progress: ProgressCallback | None = None,
    ) -> Answer | None:
        if progress is not None or stream is not None:
            handler = cast(StreamingConversationHandler, self.handler)
            shown = {"progress": progress} if progress is not None else {}
            reply = await handler.handle_message(inbound, fetcher, stream=stream, **shown)
        else:
            reply = await self.handler.handle_message(inbound, fetcher)
        return Answer(reply) if reply is not None else None

    async def press(self, inbound: Inbound) -> Pressed:
        outcome = await self.handler.handle_action(inbound)
        return Pressed(outcome, Answer(outcome.reply) if outcome.reply is not None else None)

    async def reply_on_record(self, thread_key: str, message_id: str) -> Reply | None:
        lookup = getattr(self.handler, "reply_on_record", None)
        return None if lookup is None else cast(Reply | None, await lookup(thread_key, message_id))


@dataclass(frozen=True, slots=True)
class DeliveryConfig:
    lease_s: float = 60.0  # how long a claim holds without a heartbeat
    heartbeat_s: float = 15.0
    poll_s: float = 0.5  # idle wait between claims (an `accept` in this process wakes the worker at once)
    concurrency: int = 8  # events handled at once by one worker
    sweep_s: float = 5.0  # how often the worker also sweeps the outbox and exhausted events
    outbox_lease_s: float = 30.0  # longer than any sink call takes
    post_action_notices: bool = True  # post a button press's notice (e.g. "already used") in the thread
    progress_delay_s: float = 1.0  # a follow-up (no mention) shows progress only when its answer takes this long
    progress_timeout_s: float = 5.0  # a progress sign that takes longer is given up (the answer does not wait)
    # stream answers into the thread while the LLM writes them (needs a handler that takes `stream=`, i.e.
    # `ConversationService`, and sinks with `open_stream`); the final reply replaces the streamed message
    stream_answers: bool = False
    # show each question's steps while it runs on sinks that can (`WorkDisplaySink`: Slack's task timeline); needs a
    # handler that takes `progress=` (`ConversationService`). The final reply replaces the shown work.
    show_work: bool = True


@dataclass(frozen=True, slots=True)
class SweepReport:
    sent: int = 0
    retrying: int = 0
    failed: int = 0
    apologised: int = 0


class Delivery:
    """Implements the inbox/outbox protocol around the conversation service. One per process. `db` is the service's
    own database: each answer is settled there together with its event."""

    def __init__(
        self,
        db: Database,
        handler: Answering | ConversationHandler,
        sinks: Mapping[str, ReplySink],
        worker_id: str,
        *,
        config: DeliveryConfig | None = None,
        inbox: Inbox | None = None,
        outbox: Outbox | None = None,
        fetcher_for: FetcherFactory | None = None,
        language_for: LanguageLookup | None = None,
        on_lag: Callable[[float], object] | None = None,
        on_undelivered: Callable[[Mapping[str, int]], object] | None = None,
        hooks: TeamAnswerHooks | None = None,
    ) -> None:
        self.inbox = inbox or Inbox(db)
        self.outbox = outbox or Outbox(db)
        self._handler: Answering = handler if isinstance(handler, Answering) else Unrecorded(handler)
        self._sinks = dict(sinks)
        self.worker_id = worker_id
        self.config = config or DeliveryConfig()
        self._fetcher_for = fetcher_for
        self._language_for = language_for
        self._on_lag = on_lag  # e.g. `metrics.inbox_lag.set`: the age of the oldest open event, after each sweep
        self._on_undelivered = on_undelivered  # e.g. `metrics.observe_outbox`: pending and failed rows, likewise
        self._hooks = hooks  # team answers: ✅, "Solved", experts' replies and review buttons, before the handler
        self._wake = asyncio.Event()
        self._in_flight: dict[str, asyncio.Task[None]] = {}
        self._holding: set[str] = set()  # keys whose handler is running: their claims need heartbeats
        self._refs: dict[str, ThreadRef] = {}  # where this attempt showed progress (the apology replaces it)
        self._running: dict[str, _Run] = {}  # thread key → the question being answered there (for a stop control)
        self._orphans: dict[str, tuple[ThreadRef, ProgressSink]] = {}  # progress the inbox could not record

    # -- intake -------------------------------------------------------------------------------------------------

    async def accept(self, inbound: Inbound, ref: ThreadRef) -> bool:
        """Store the event (call it before acknowledging the platform); False when it is a duplicate."""
        stored = await self.inbox.put(inbound, ref)
        if stored:
            self._wake.set()
        else:
            log.info("duplicate event", extra={"platform": inbound.platform, "key": inbound.dedup_key})
        return stored

    # -- the worker ---------------------------------------------------------------------------------------------

    async def run_worker(self, stop: asyncio.Event) -> None:
        """Claim and handle events until `stop` is set; in-flight events are finished or left to their lease."""
        heartbeat = asyncio.create_task(self._heartbeats(stop))
        next_sweep = 0.0
        try:
            while not stop.is_set():
                if time.monotonic() >= next_sweep:
                    await self._guarded(self.sweep())
                    if self._on_lag is not None:
                        lag = await self._guarded(self.inbox.lag_seconds())
                        if lag is not None:
                            self._on_lag(lag)
                    if self._on_undelivered is not None:
                        undelivered = await self._guarded(self.outbox.undelivered())
                        if undelivered is not None:
                            self._on_undelivered(undelivered)
                    next_sweep = time.monotonic() + self.config.sweep_s
                self._wake.clear()  # before claiming, so a wake-up during the claim is not lost
                claimed = await self._guarded(self._claim_and_start()) or 0
                if claimed:
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(_first(stop, self._wake), timeout=self.config.poll_s)
        finally:
            if self._in_flight:  # heartbeats keep running while in-flight events finish
                await asyncio.wait(list(self._in_flight.values()), timeout=self.config.lease_s)
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat

    async def process_once(self) -> int:
        """Claim what is due and handle it to the end (tests and one-shot runs); returns the number handled."""
        items = await self.inbox.claim(self.worker_id, self.config.lease_s, limit=self.config.concurrency)
        await asyncio.gather(*(self.handle(item) for item in items))
        return len(items)

    async def _claim_and_start(self) -> int:
        free = self.config.concurrency - len(self._in_flight)
        if free <= 0:
            return 0
        items = await self.inbox.claim(self.worker_id, self.config.lease_s, limit=free)
        for item in items:
            task = asyncio.create_task(self.handle(item))
            self._in_flight[item.key] = task
            task.add_done_callback(self._forget(item.key))
        return len(items)

    def _forget(self, key: str) -> Callable[[asyncio.Task[None]], None]:
        def done(_: asyncio.Task[None]) -> None:
            self._in_flight.pop(key, None)
            self._wake.set()  # a slot is free: claim the next event now rather than at the next poll

        return done

    async def _heartbeats(self, stop: asyncio.Event) -> None:
        while not stop.is_set() or self._in_flight:
            await asyncio.sleep(self.config.heartbeat_s)
            keys = list(self._holding)
            if not keys:
                continue
            held = await self._guarded(self.inbox.heartbeat(self.worker_id, keys, self.config.lease_s))
            if held is None:
                continue
            for key in (set(keys) - held) & self._holding:  # taken over after our lease lapsed
                log.warning("claim lost, abandoning", extra={"key": key, "worker": self.worker_id})
                task = self._in_flight.get(key)
                if task is not None:
                    task.cancel()

    # -- one event ----------------------------------------------------------------------------------------------

    async def handle(self, item: InboxItem) -> None:
        """Decide the answer to one claimed event, settle it with the event's completion, then post its reply."""
        handed_on = False
        try:
            handed_on = await self._handle(item)
        except asyncio.CancelledError:
            self._orphans.pop(item.key, None)
            raise
        except Exception as exc:  # the database failed under us: the lease lapses and the event is retried
            log.error("event handling broke off", extra={"key": item.key, "error": type(exc).__name__})
        orphan = self._orphans.pop(item.key, None)
        if orphan is not None and not handed_on:  # a placeholder no later attempt knows about: take it down
            ref, signs = orphan
            await self._best_effort("clearing progress", signs.clear_progress(ref))

    async def _handle(self, item: InboxItem) -> bool:
        """True when the event was settled with a reply (or an apology) that replaces any progress shown."""
        started = time.monotonic()
        self._holding.add(item.key)
        failure: str | None = None
        answer: Answer | None = None
        try:
            replies, answer = await self._produce(item)
        except DeliveryRejected as exc:  # the platform refused the event for good (e.g. /ask where the bot is not
            # a member: the sink told the person privately); settled without a reply, never retried or apologised for
            log.info("event declined by the platform", extra={"key": item.key, "reason": exc.reason})
            replies = []
        except Exception as exc:
            log.warning(
                "handler failed",
                extra={"key": item.key, "attempts": item.attempts, "error": type(exc).__name__},
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            replies, failure = [], f"{type(exc).__name__}: {exc}"
            if item.attempts < self.inbox.max_attempts:
                await self.inbox.fail(item, failure)
                return False
        finally:
            self._holding.discard(item.key)  # from here on the claim is settled, not extended
            ref = self._refs.pop(item.key, item.ref)
        if failure is not None:
            return await self._give_up(dataclasses.replace(item, ref=ref), failure)
        # the one transaction that settles the event: claim still held, event done, answer and outbox row written
        row_ids = await self.inbox.complete(item, replies, answer)
        if row_ids is None:
            log.warning("claim lost before completion; another worker answers", extra={"key": item.key})
            return False
        log.info(
            "event handled",
            extra={
                "key": item.key,
                "replies": len(row_ids),
                "attempts": item.attempts,
                "ms": round((time.monotonic() - started) * 1000, 1),
            },
        )
        try:
            await self._send_rows(row_ids)
        except Exception as exc:  # the reply is stored: the sweep posts it once the database answers again
            log.warning("sending left to the sweep", extra={"key": item.key, "error": type(exc).__name__})
        return True

    async def _produce(self, item: InboxItem) -> tuple[list[OutgoingReply], Answer | None]:
        inbound, ref = item.inbound, item.ref
        sink = self._sinks.get(ref.platform)
        signs = sink if isinstance(sink, ProgressSink) else None
        if signs is not None:
            prepared = await signs.prepare(inbound, ref)
            if prepared != (inbound, ref):  # e.g. a /ask question now posted: a takeover must not post it again
                inbound, ref = prepared
                await self.inbox.remember(item, inbound, ref)
        hooked = await self._hooks.take(inbound, ref) if self._hooks is not None else None
        extra = list(hooked.replies) if hooked is not None else []
        if (hooked is not None and hooked.done) or inbound.kind is InboundKind.REACTION:  # reactions: the hooks'
            return extra, None
        replies, answer = await self._respond(item, inbound, ref, sink, signs)
        return [*replies, *extra], answer

    async def _respond(
        self, item: InboxItem, inbound: Inbound, ref: ThreadRef, sink: ReplySink | None, signs: ProgressSink | None
    ) -> tuple[list[OutgoingReply], Answer | None]:
        if inbound.kind in (InboundKind.ACTION, InboundKind.EDIT):
            return await self._press(item, inbound, ref, signs)
        # a retried question's thread was read on its first attempt, and its message id is not the platform's
        fetcher = self._fetcher_for(inbound, ref) if self._fetcher_for and not is_retry(inbound) else None
        if self.config.show_work and isinstance(sink, WorkDisplaySink) and _takes_progress(self._handler):
            answer, ref = await self._worked(item, inbound, ref, fetcher, sink)
        elif self.config.stream_answers and isinstance(sink, StreamingSink):
            answer, ref = await self._streamed(inbound, ref, fetcher, sink)
        else:
            answer, ref = await self._with_progress(self._handler.answer(inbound, fetcher), item, inbound, ref, signs)
        if answer is None or answer.reply is None:
            if signs is not None and ref.placeholder_id:
                await signs.clear_progress(ref)
            return [], answer
        return [OutgoingReply(ref, answer.reply, item.key)], answer

    async def _press(
        self, item: InboxItem, inbound: Inbound, ref: ThreadRef, signs: ProgressSink | None
    ) -> tuple[list[OutgoingReply], Answer | None]:
        """A button: the handler checks it (exists, unexpired, this thread, this workspace) before anything on the
        platform changes; only an accepted choice is shown on its message, rebuilt from the stored action."""
        action_id = inbound.action_id or ""
        if action_id.startswith(RETRY_PREFIX):
            queued = await self.inbox.unpark(action_id.removeprefix(RETRY_PREFIX))
            log.info("retry button", extra={"key": item.key, "queued": queued})
            if queued:
                self._wake.set()
            return [], None
        if action_id.startswith(PUBLISH_PREFIX):
            return await self._publish(item, inbound, ref, action_id.removeprefix(PUBLISH_PREFIX)), None
        if action_id.startswith(SOLVED_PREFIX):
            sink = self._sinks.get(ref.platform)
            if not isinstance(sink, ThreadMarker):
                return [], None
            return [OutgoingReply(ref, await sink.mark_solved(ref), item.key)], None
        hooked = await self._hooks.press(inbound, ref) if self._hooks is not None else None  # a review button
        if hooked is None and inbound.kind is InboundKind.EDIT:
            return [], None  # an editor nothing opens any more
        pressed = Pressed(hooked) if hooked is not None else await self._handler.press(inbound)
        outcome = pressed.outcome
        language = (outcome.reply.language if outcome.reply else None) or await self._language(inbound)
        if outcome.accepted and outcome.marks_message and signs is not None:
            await self._best_effort(
                "choice sign", signs.show_choice(ref, inbound.message_id, action_id, outcome.chosen_label, language)
            )
        if outcome.reply is not None:
            return [OutgoingReply(ref, outcome.reply, item.key)], pressed.answer
        if outcome.notice and self.config.post_action_notices:
            notice = Reply(ReplyKind.NOTICE, outcome.notice, language, "", reason="action_notice")
            return [OutgoingReply(ref, notice, item.key)], pressed.answer
        return [], pressed.answer

    async def _publish(
        self, item: InboxItem, inbound: Inbound, ref: ThreadRef, question_id: str
    ) -> list[OutgoingReply]:
        """Post in public the answer only its asker saw: the reply stored with that question (its message id) in the
        same conversation, through the outbox to `ref` (the sink has prepared where it goes)."""
        lookup = getattr(self._handler, "reply_on_record", None)
        reply = await lookup(inbound.thread_key, question_id) if lookup is not None else None
        if reply is None:
            language = await self._language(inbound)
            log.info("nothing to publish", extra={"key": item.key})
            notice = Reply(ReplyKind.NOTICE, texts(language).failure, language, "", reason="action_notice")
            return [OutgoingReply(ref, notice, item.key)]
        return [OutgoingReply(ref, reply, item.key)]

    async def _with_progress(
        self, work: Awaitable[T], item: InboxItem, inbound: Inbound, ref: ThreadRef, signs: ProgressSink | None
    ) -> tuple[T, ThreadRef]:
        """Run `work`; show progress at once for a message addressed to the bot, after `progress_delay_s` for a
        follow-up. Only this worker (the claim's holder) shows it, so replicas never race to post placeholders;
        the placeholder is stored with the event, so a worker taking over after a crash reuses it."""
        task = asyncio.ensure_future(work)
        if signs is None or ref.placeholder_id:  # no signs here, or an earlier attempt's placeholder is up
            return await task, ref
        uncertain = item.attempts > 1  # an earlier attempt may have posted a placeholder and died
        if not inbound.mentioned:
            await asyncio.wait({task}, timeout=self.config.progress_delay_s)
        if not task.done() and not uncertain:
            language = await self._known_language(inbound)  # None: the sink picks (e.g. the asker's locale)
            shown = await self._best_effort("progress sign", signs.show_progress(ref, language))
            uncertain = shown is None  # failed or timed out: the post may still have landed
            if shown is not None and shown != ref:
                ref = shown
                self._refs[item.key] = ref
                remembered = await self._best_effort("remembering progress", self.inbox.remember(item, inbound, ref))
                if not remembered:  # the next attempt would not know it: it must not outlive this attempt
                    self._orphans[item.key] = (ref, signs)
        result = await task  # on failure a remembered placeholder stays: the retry or the apology replaces it
        if uncertain:
            try:
                ref = await asyncio.wait_for(signs.find_progress(ref), timeout=self.config.progress_timeout_s)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # a placeholder may be up that we cannot see: replying now could leave it beside the answer (two
                # posts in the thread), so this attempt fails and the retry answers again (nothing of this one was
                # kept); the last attempt answers anyway (a placeholder beside the answer beats an apology instead)
                if item.attempts < self.inbox.max_attempts:
                    raise ProgressUnknown(type(exc).__name__) from None
                log.warning("finding progress failed", extra={"worker": self.worker_id, "error": _error_name(exc)})
                ref = _progress_unknown(ref)  # the sink looks again
        return result, ref

    async def _best_effort(self, what: str, step: Awaitable[T]) -> T | None:
        """A platform nicety: bounded by `progress_timeout_s`; a failure is logged by type and ignored."""
        try:
            return await asyncio.wait_for(step, timeout=self.config.progress_timeout_s)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning(f"{what} failed", extra={"worker": self.worker_id, "error": _error_name(exc)})
            return None

    async def _streamed(
        self, inbound: Inbound, ref: ThreadRef, fetcher: ThreadFetcher | None, sink: StreamingSink
    ) -> tuple[Answer | None, ThreadRef]:
        """Handle a question while streaming its answer straight to the platform (ephemeral progress, not in the
        outbox); the returned ref points the final reply at the streamed message, so it replaces it."""
        stream = sink.open_stream(ref)
        try:
            answer = await self._handler.answer(inbound, fetcher, stream=stream.update)
        except Exception:
            await stream.discard()  # the event is retried or apologised for; no half-written answer stays
            raise
        streamed_id = await stream.finish()
        if streamed_id is None:
            return answer, ref
        if answer is None or answer.reply is None:
            await stream.discard()
            return answer, ref
        return answer, dataclasses.replace(ref, placeholder_id=streamed_id)

    async def _worked(
        self, item: InboxItem, inbound: Inbound, ref: ThreadRef, fetcher: ThreadFetcher | None, sink: WorkDisplaySink
    ) -> tuple[Answer | None, ThreadRef]:
        """Handle a question while its steps are shown in the thread (and its answer text, when streaming is on);
        the returned ref points the final reply at the shown work, so it replaces it. A question addressed to the bot
        shows its work at once; a follow-up from its first step (the service may leave it unanswered). The asker
        may stop it (`stop`): the reply is then a "stopped" notice."""
        if item.attempts > 1:  # an earlier attempt may have left its work shown: the reply must replace it
            ref = await self._earlier_progress(item, ref, sink)
        display = sink.open_work(ref, inbound)
        begun = False

        async def progress(step: Step) -> None:
            nonlocal begun
            if not begun:
                begun = True
                await display.begin()
            await display.step(step)

        if inbound.mentioned:
            begun = True
            await display.begin()
        stream = display.update if self.config.stream_answers else None
        work = asyncio.ensure_future(self._handler.answer(inbound, fetcher, stream=stream, progress=progress))
        run = _Run(work, inbound.user_id)
        self._running[inbound.thread_key] = run
        try:
            answer: Answer | None = await work
        except asyncio.CancelledError:
            this = asyncio.current_task()
            if not run.stopped or (this is not None and this.cancelling()):  # not a stop: shutdown, a lost claim
                work.cancel()
                await display.discard()
                raise
            log.info("question stopped by its asker", extra={"key": item.key})
            language = await self._language(inbound)  # nothing of the stopped run is kept
            answer = Answer(Reply(ReplyKind.NOTICE, texts(language).stopped, language, "", reason="stopped"))
        except Exception:
            await display.discard()  # the event is retried or apologised for; no half-shown work stays
            raise
        finally:
            if self._running.get(inbound.thread_key) is run:
                del self._running[inbound.thread_key]
        shown = await display.finish()
        if shown is None:
            return answer, (_progress_unknown(ref) if display.maybe_shown else ref)
        if answer is None or answer.reply is None:
            await display.discard()
            return answer, ref
        return answer, dataclasses.replace(ref, placeholder_id=shown)

    async def _earlier_progress(self, item: InboxItem, ref: ThreadRef, sink: object) -> ThreadRef:
        """The progress an earlier attempt left in the thread, for this attempt to replace (ProgressUnknown when it
        cannot be looked up and attempts remain: answering beside it would leave two posts)."""
        if ref.placeholder_id or not isinstance(sink, ProgressSink):
            return ref
        try:
            return await asyncio.wait_for(sink.find_progress(ref), timeout=self.config.progress_timeout_s)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if item.attempts < self.inbox.max_attempts:
                raise ProgressUnknown(type(exc).__name__) from None
            log.warning("finding progress failed", extra={"worker": self.worker_id, "error": _error_name(exc)})
            return _progress_unknown(ref)  # the sink looks again

    async def stop(self, thread_key: str, user_id: str) -> StopOutcome:
        """Stop the question being answered in `thread_key` (`pipeline.messages.RunControl`), if `user_id` asked it;
        its event settles with a "stopped" notice in place of the answer. Only runs in this process can be
        stopped."""
        run = self._running.get(thread_key)
        if run is None or run.work.done():
            return StopOutcome.NOT_RUNNING
        if user_id != run.asker_id:
            return StopOutcome.NOT_ALLOWED
        run.stopped = True
        run.work.cancel()
        return StopOutcome.STOPPED

    async def _give_up(self, item: InboxItem, error: str) -> bool:
        """Mark the event failed and tell the person, with a button that queues it once more."""
        language = await self._language(item.inbound)
        t = texts(language)
        token = new_retry_token()
        apology = Reply(
            kind=ReplyKind.NOTICE,
            text=t.failure,
            language=language,
            conversation_id="",
            actions=(ReplyAction(id=RETRY_PREFIX + token, label=t.retry_label, kind=ActionKind.RETRY),),
            reason="answer_failed",
        )
        row_ids = await self.inbox.give_up(
            item, [OutgoingReply(item.ref, apology, item.key)], error=error, retry_token=token
        )
        if row_ids is None:
            return False
        log.warning("event given up, apology queued", extra={"key": item.key, "attempts": item.attempts})
        try:
            await self._send_rows(row_ids)
        except Exception as exc:  # the reply is stored: the sweep posts it once the database answers again
            log.warning("sending left to the sweep", extra={"key": item.key, "error": type(exc).__name__})
        return True

    async def _language(self, inbound: Inbound) -> str:
        return (await self._known_language(inbound)) or "en"

    async def _known_language(self, inbound: Inbound) -> str | None:
        if self._language_for is None:
            return None
        try:
            return await self._language_for(inbound)
        except Exception:
            return None

    # -- sending ------------------------------------------------------------------------------------------------

    async def sweep(self) -> SweepReport:
        """Post due outbox rows (retries, and rows a dead replica left unsent); apologise for exhausted events."""
        apologised = 0
        for event in await self.inbox.exhausted():
            apologised += await self._give_up(event, "attempts exhausted")
        sent = retrying = failed = 0
        while True:
            items = await self.outbox.claim(self.config.outbox_lease_s, limit=20, platforms=list(self._sinks))
            if not items:
                break
            for item in items:
                outcome = await self._send(item)
                sent += outcome == "sent"
                retrying += outcome == "retry"
                failed += outcome == "failed"
            if len(items) < 20:
                break
        return SweepReport(sent=sent, retrying=retrying, failed=failed, apologised=apologised)

    async def _send_rows(self, row_ids: list[int]) -> None:
        """Post just-stored replies at once (rows for a platform without a sink here wait for another replica)."""
        for row_id in row_ids:
            claimed = await self.outbox.claim(self.config.outbox_lease_s, row_id=row_id, platforms=list(self._sinks))
            for item in claimed:
                await self._send(item)

    async def _send(self, item: OutboxItem) -> str:
        sink = self._sinks.get(item.ref.platform)
        if sink is None:
            await self.outbox.mark_failed(item, f"no sink for platform {item.ref.platform!r}", permanent=True)
            log.error("no sink for platform", extra={"platform": item.ref.platform, "outbox_id": item.id})
            return "failed"
        try:
            if isinstance(sink, RetrySafeSink):  # finds what an earlier try posted instead of posting it again
                unknown = (PROGRESS_UNKNOWN, "1") in item.ref.extra
                attempt = DeliveryAttempt(f"outbox-{item.id}", item.attempts, progress_unknown=unknown)
                message_id = await sink.post_once(item.ref, item.reply, attempt)
            else:
                message_id = await sink.post(item.ref, item.reply)
        except asyncio.CancelledError:
            raise
        except DeliveryRejected as exc:
            await self.outbox.mark_failed(item, exc.reason, permanent=True)
            log.error("reply rejected by the platform", extra={"outbox_id": item.id, "reason": exc.reason})
            return "failed"
        except Exception as exc:
            gave_up = await self.outbox.mark_failed(item, f"{type(exc).__name__}: {exc}")
            log.warning(
                "reply not delivered",
                extra={"outbox_id": item.id, "attempts": item.attempts, "error": _error_name(exc), "final": gave_up},
            )
            return "failed" if gave_up else "retry"
        if not await self.outbox.mark_sent(item, message_id):
            log.warning("reply sent after its lease lapsed", extra={"outbox_id": item.id})
        return "sent"

    async def _guarded(self, step: Awaitable[T]) -> T | None:
        """Run one step of the loop; a database outage is logged and retried on the next turn, never fatal."""
        try:
            return await step
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("delivery step failed", extra={"worker": self.worker_id, "error": type(exc).__name__})
            await asyncio.sleep(self.config.poll_s)
            return None


@dataclass
class _Run:
    """A question being answered: its handler task, who asked it, and whether they asked to stop it."""

    work: asyncio.Future[Answer | None]
    asker_id: str
    stopped: bool = False


def _takes_progress(handler: Answering) -> bool:
    """Whether the handler can be told each step (`ConversationService` can; simple handlers and test doubles whose
    `handle_message` takes no `progress=` cannot)."""
    if not isinstance(handler, Unrecorded):
        return True
    try:
        return "progress" in inspect.signature(handler.handler.handle_message).parameters
    except (TypeError, ValueError):
        return False


def _error_name(exc: BaseException) -> str:
    """A platform error's short code when the exception carries one (Slack's `error`), else its type."""
    response = getattr(exc, "response", None)
    data = getattr(response, "data", None)
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return str(data["error"])
    return type(exc).__name__


def default_worker_id() -> str:
    """A readable, unique-enough name for this replica's claims and leases: host name and process id."""
    return f"{socket.gethostname()}-{os.getpid()}"


def fetchers_by_platform(factories: Mapping[str, FetcherFactory]) -> FetcherFactory:
    """One `fetcher_for` over several adapters (e.g. `{"slack": slack.fetcher_for, "discord": client.fetcher_for}`)."""

    def fetcher_for(inbound: Inbound, ref: ThreadRef) -> ThreadFetcher | None:
        factory = factories.get(inbound.platform)
        return factory(inbound, ref) if factory is not None else None

    return fetcher_for


def language_of_thread(find: Callable[[str], Awaitable[object | None]]) -> LanguageLookup:
    """The apology's language: the conversation's (e.g. `language_of_thread(conversations.find)`), if known."""

    async def lookup(inbound: Inbound) -> str | None:
        record = await find(inbound.thread_key)
        language = getattr(record, "language", None)
        return language if isinstance(language, str) else None

    return lookup


async def _first(*events: asyncio.Event) -> None:
    waiters = [asyncio.create_task(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


def _progress_unknown(ref: ThreadRef) -> ThreadRef:
    """`ref` marked: a progress sign may be in its thread that it does not name; the sink looks before posting."""
    marker = (PROGRESS_UNKNOWN, "1")
    return ref if marker in ref.extra else dataclasses.replace(ref, extra=(*ref.extra, marker))
