"""The conversation service: inbound message → conversation (a thread) → history → pipeline → Reply.

It never stays silent on a message addressed to the bot: every path ends in an answer, a clarification, a refusal
or a notice that says what happened.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from bot.budget import Denial, NoticeOnce
from bot.citations import cite
from bot.metrics import Metrics
from bot.settings import Settings
from bot.thread_locks import ThreadLocks
from pipeline.agents.clarification import answers_clarification
from pipeline.codec import envelope_from_json, envelope_to_json
from pipeline.envelope import Context, Envelope, Hop, Payload, ProgressCallback, StreamCallback
from pipeline.locales import texts, with_unsupported_line
from pipeline.messages import (
    LOCAL_PLATFORM,
    ActionOutcome,
    Inbound,
    InboundKind,
    Reply,
    ReplyAction,
    ReplyKind,
    RunSummary,
    ThreadFetcher,
)
from pipeline.messages.question import InputProblem, check_question
from pipeline.result import PipelineResult, ResultKind
from pipeline.runner import PipelineRunner, stop_text
from pipeline.types import (
    ActionKind,
    ClarificationReason,
    HistoryMessage,
    QualityDecision,
    Role,
    SourceReference,
    StrategyUsed,
    SuggestedAction,
)
from storage.actions import ActionStore
from storage.conversations import ConversationRecord, ConversationStore
from storage.feedback import FeedbackStore
from storage.runs import RunStore
from storage.semantic_cache import SemanticCache
from storage.settlement import (
    Answer,
    ConversationChange,
    NewAction,
    NewMessage,
    NewRun,
    Pressed,
    Settlement,
    ThreadState,
)
from storage.source_facts import SourceFacts
from storage.tables import ConversationState, new_action_token, new_uuid

log = logging.getLogger(__name__)

BOT_NAME = "docbot"
CLARIFICATION_TTL = timedelta(days=2)
HISTORY_LIMIT = 40
REPLY_AFTER = timedelta(microseconds=1)  # a stored reply's least distance after the message it answers
NOTICE_DETECT_CHARS = 1000  # a too-long message's language shows in its first thousand characters


class UsageLimiter(Protocol):
    """Per-user / per-workspace limits and the token budget (`bot.budget.UsageGuard`)."""

    async def check(self, user: str, workspace: str) -> Denial | None: ...

    async def record_tokens(self, workspace: str, n: int) -> None: ...


class _Unlimited:
    async def check(self, user: str, workspace: str) -> Denial | None:
        return None

    async def record_tokens(self, workspace: str, n: int) -> None:
        return None


@dataclass(slots=True)
class _Thread:
    """The conversation an answer is being decided in, and what it will write before its run: the thread's
    earlier messages read from the platform and the person's message."""

    record: ConversationRecord
    new: bool
    messages: list[NewMessage]
    history_fetched: bool = False

    def change(self, state: ThreadState | None = None) -> ConversationChange:
        return ConversationChange(self.record, new=self.new, history_fetched=self.history_fetched, state=state)


class ConversationService:
    """Decides the answer to an event and writes nothing (`answer`, `press`): the caller settles it with the event
    (`storage.inbox.Inbox.complete`). `handle_message` and `handle_action` (`pipeline.messages.ConversationHandler`)
    decide and settle at once, for callers without an inbox event: the terminal chat, `docbot ask`, the evaluation.
    The semantic cache and the token budget are written when the run ends (they count what happened, settled or
    not)."""

    def __init__(
        self,
        *,
        settings: Settings,
        conversations: ConversationStore,
        runs: RunStore,
        actions: ActionStore,
        feedback: FeedbackStore,
        runner: PipelineRunner,
        settlement: Settlement | None = None,
        usage: UsageLimiter | None = None,
        metrics: Metrics | None = None,
        cache: SemanticCache | None = None,
        corpus_version: Callable[[Sequence[str]], Awaitable[int]] | None = None,
        cache_language: Callable[[str, Context], Awaitable[str | None]] | None = None,
        message_language: Callable[[str, Context], Awaitable[str | None]] | None = None,
        source_facts: Callable[[Sequence[str]], Awaitable[Mapping[str, SourceFacts]]] | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        """`message_language` detects the language of one message (the lang role's detector): every notice is said
        in the language of the message it answers; without it, notices use the thread's language."""
        self._settings = settings
        self._conversations = conversations
        self._runs = runs
        self._actions = actions
        self._feedback = feedback
        self._runner = runner
        self._settlement = settlement or Settlement(conversations.db)
        self._usage: UsageLimiter = usage or _Unlimited()
        self._metrics = metrics or Metrics()
        self._cache = cache
        self._corpus_version = corpus_version
        self._cache_language = cache_language  # the asker's language, which keys the cache (the pipeline's detector)
        self._message_language = message_language
        self._source_facts = source_facts  # citations' dates and team answers' authors (storage.source_facts)
        self._now = now
        self._thread_locks = ThreadLocks()
        self._notice_once = NoticeOnce()

    # -- callers without an inbox event ------------------------------------------------------------------------

    async def handle_message(
        self,
        inbound: Inbound,
        fetcher: ThreadFetcher | None = None,
        stream: StreamCallback | None = None,
        progress: ProgressCallback | None = None,
    ) -> Reply | None:
        """Decide the reply to `inbound` and settle it at once. The thread's lock stands in for the inbox's
        one-event-per-thread order, which callers without an inbox event do not have."""
        async with self._thread_locks.hold(inbound.thread_key):
            answer = await self.answer(inbound, fetcher, stream, progress)
            if answer is None:
                return None
            await self._settlement.settle(answer)
            return answer.reply

    async def handle_action(self, inbound: Inbound) -> ActionOutcome:
        """Decide a button press and settle it at once (see `handle_message`)."""
        async with self._thread_locks.hold(inbound.thread_key):
            pressed = await self.press(inbound)
            if pressed.answer is not None:
                await self._settlement.settle(pressed.answer)
            return pressed.outcome

    # -- messages ---------------------------------------------------------------------------------------------

    async def answer(
        self,
        inbound: Inbound,
        fetcher: ThreadFetcher | None = None,
        stream: StreamCallback | None = None,
        progress: ProgressCallback | None = None,
    ) -> Answer | None:
        """The answer to `inbound`, or None (a thread message the bot is not engaged in). `stream` is shown the
        answer text while the LLM writes it, when `Settings.llm_streaming` is on (the offline strategy never calls
        it); `progress` is told each pipeline step. Reads the conversation and writes nothing of it: the reads stay
        true until the answer is settled because the inbox hands out one event per conversation at a time."""
        policy = self._settings.channel_policy(inbound.platform, inbound.workspace_id, inbound.channel_id)
        existing = await self._conversations.find(inbound.thread_key)
        if not inbound.mentioned and (existing is None or policy.follow_mode == "mention"):
            return None  # a plain thread message the bot is not engaged in
        checked = check_question(inbound.text, max_chars=self._settings.max_question_chars)
        if not policy.allowed:
            log.info("channel refused", extra={"platform": inbound.platform, "channel": inbound.channel_id})
            language = await self._language_of(checked.text, existing)
            return Answer(self._notice(language, "channel_not_allowed", conversation_id=""))
        if checked.problem is not None:
            log.info("input refused", extra={"reason": checked.problem.value, "chars": len(inbound.text)})
            readable = checked.problem is InputProblem.TOO_LONG  # empty or junk says nothing about a language
            language = await self._language_of(checked.text if readable else "", existing)
            conversation_id = existing.id if existing else ""
            return Answer(self._notice(language, checked.problem.value, conversation_id=conversation_id))

        collections = self._collections(inbound, policy.collections)
        stream = stream if self._settings.llm_streaming else None
        return await self._answer(inbound, existing, checked.text, collections, fetcher, stream, progress)

    def _collections(self, inbound: Inbound, own: tuple[str, ...]) -> tuple[str, ...]:
        """The collections a question searches: its channel's, or those configured for the channel the asker was
        looking at (Slack's agent view context) when a policy names that channel and allows it there."""
        chosen = self._settings.search_collections(
            inbound.platform, inbound.workspace_id, inbound.channel_id, inbound.context_channel_id
        )
        if chosen != own:
            log.info("collections of the viewed channel", extra={"channel": inbound.context_channel_id})
        return chosen

    async def _answer(
        self,
        inbound: Inbound,
        existing: ConversationRecord | None,
        text: str,
        collections: tuple[str, ...],
        fetcher: ThreadFetcher | None,
        stream: StreamCallback | None = None,
        progress: ProgressCallback | None = None,
    ) -> Answer:
        thread = self._thread_of(inbound, existing)
        history = [] if thread.new else await self._conversations.history(thread.record.id, limit=HISTORY_LIMIT)
        if fetcher is not None and inbound.thread_id and not thread.record.history_fetched:
            history = await self._import_thread(thread, fetcher, history)
        thread.messages.append(NewMessage(inbound.message_id, inbound.user_id, inbound.user_name, text, inbound.ts))
        conversation = thread.record

        local = inbound.platform == LOCAL_PLATFORM  # the person at their own terminal is not rate-limited
        denial = None if local else await self._usage.check(inbound.user_id, inbound.workspace_id)
        if denial is not None:
            if not self._notice_once.first(inbound.workspace_id, inbound.user_id, denial):
                log.info("usage limit, already told", extra={"reason": denial.message_key, "scope": denial.scope})
                return Answer(None, thread.change(), tuple(thread.messages))
            log.info("usage limit", extra={"reason": denial.message_key, "scope": denial.scope})
            language = await self._detect(text, history, conversation.language)
            notice = self._notice(language, denial.message_key, conversation_id=conversation.id)
            return Answer(notice, thread.change(), tuple(thread.messages))

        context = Context(
            history=tuple(history),
            user_name=inbound.user_name,
            collections=collections,
            docs_language=self._settings.docs_language,
            deadline=time.monotonic() + self._settings.question_deadline_s,
            stream=stream,
            progress=progress,
        )
        started = self._now()
        pending = conversation.pending_envelope
        new_topic = not any(not m.from_bot for m in history)
        cached, version = (None, None)
        if pending is None and new_topic:
            cached, version = await self._cached(inbound, text, collections, context)
        if cached is not None:
            return await self._finish(thread, inbound.message_id, cached, started, cached=True)
        if pending is not None and answers_clarification(envelope_from_json(pending).payload, text):
            envelope = envelope_from_json(pending)
            result = await self._runner.resume(envelope, context=context, reply_text=text)
        else:  # no clarification pending, or this message asks something new: a new question
            result = await self._runner.run(
                conversation_id=conversation.id,
                message_id=inbound.message_id,
                payload=Payload(text=text),
                context=context,
            )
        if result.kind in (ResultKind.BUSY, ResultKind.FAILURE) and result.envelope.payload.language is None:
            # stopped before the lang role said which language this message is in: the notice must not fall back
            # to English (or to the thread's previous language)
            language = await self._detect(text, history, conversation.language)
            said = stop_text(result.kind, result.reason, language)
            result = dataclasses.replace(result, text=said, language=language)
        await self._remember(result, collections, version)
        return await self._finish(thread, inbound.message_id, result, started)

    def _thread_of(self, inbound: Inbound, existing: ConversationRecord | None) -> _Thread:
        """The conversation of the thread: the stored one, or a new one with its id minted here (inserted when the
        answer is settled)."""
        if existing is not None:
            return _Thread(existing, new=False, messages=[])
        now = self._now()
        record = ConversationRecord(
            id=new_uuid(), thread_key=inbound.thread_key, platform=inbound.platform,
            workspace_id=inbound.workspace_id, channel_id=inbound.channel_id,
            thread_id=inbound.thread_id or inbound.message_id, created_at=now, updated_at=now, history_fetched=False,
            state=ConversationState.IDLE, language=None,
        )  # fmt: skip
        return _Thread(record, new=True, messages=[])

    async def language_of(self, inbound: Inbound) -> str:
        """The language to tell the sender of `inbound` something in (a notice, an apology, a progress sign): the
        message's own language; for a button press, which has no words of its own, the thread's."""
        existing = await self._conversations.find(inbound.thread_key)
        if inbound.kind is InboundKind.ACTION:
            return existing.language if existing and existing.language else "en"
        return await self._language_of(inbound.text, existing)

    async def _language_of(self, text: str, existing: ConversationRecord | None) -> str:
        history: list[HistoryMessage] = []
        if existing is not None and text.strip() and self._message_language is not None:
            history = await self._conversations.history(existing.id, limit=HISTORY_LIMIT)
        return await self._detect(text, history, existing.language if existing else None)

    async def _detect(self, text: str, history: Sequence[HistoryMessage], thread_language: str | None) -> str:
        """The language of `text` (the thread's history weighs for short texts); the thread's language when the
        text has no words or no detector is configured."""
        fallback = thread_language or "en"
        if self._message_language is None or not text.strip():
            return fallback
        context = Context(history=tuple(history), docs_language=self._settings.docs_language)
        try:
            detected = await self._message_language(text[:NOTICE_DETECT_CHARS], context)
        except Exception:  # a notice must go out whatever the detector does
            log.warning("language detection for a notice failed", exc_info=True)
            return fallback
        return detected or fallback

    async def _cached(
        self, inbound: Inbound, text: str, collections: tuple[str, ...], context: Context
    ) -> tuple[PipelineResult | None, int | None]:
        """A previously approved answer to a near-identical question in the asker's language over the same corpus
        version, if any (no lookup when the language is unknown); and that version, for storing the new answer."""
        if self._cache is None or self._corpus_version is None or self._cache_language is None:
            return None, None
        try:
            language = await self._cache_language(text, context)
            if language is None:
                return None, None
            version = await self._corpus_version(collections)
            hit = await self._cache.lookup(text, collections, version, language=language)
        except Exception:
            log.warning("semantic cache lookup failed", exc_info=True)
            return None, None
        if hit is None:
            return None, version
        now = self._now()
        payload = Payload(
            text=text,
            language=hit.language,
            canonical_question=hit.question,
            source_references=hit.sources,
            response=hit.response,
            quality_decision=QualityDecision.APPROVE,
        )
        hop = Hop(Role.SEARCH, f"semantic cache hit ({hit.similarity:.3f})", now, 0.0, strategy=StrategyUsed.CACHE)
        envelope = Envelope(inbound.thread_key, inbound.message_id, payload, now, now, process_count=1, hops=[hop])
        return PipelineResult(ResultKind.ANSWER, hit.response, hit.language, envelope, sources=hit.sources), version

    async def _remember(self, result: PipelineResult, collections: tuple[str, ...], version: int | None) -> None:
        """Keep an approved answer in the semantic cache under the corpus version it was looked up with (read
        once per question)."""
        payload = result.envelope.payload
        if self._cache is None or self._corpus_version is None or result.kind != ResultKind.ANSWER:
            return
        if result.degraded:  # made by a fallback: never replayed once the model or the index is back
            return
        try:
            await self._cache.store(
                payload.canonical_question or payload.text,
                collections,
                version if version is not None else await self._corpus_version(collections),
                response=result.text,
                language=result.language,
                sources=result.sources,
                quality_decision=payload.quality_decision,
            )
        except Exception:
            log.warning("semantic cache store failed", exc_info=True)

    async def _import_thread(
        self, thread: _Thread, fetcher: ThreadFetcher, history: list[HistoryMessage]
    ) -> list[HistoryMessage]:
        """The thread's earlier messages the bot never saw, read from the platform once per conversation: added to
        the answer's writes and to the history the question is read with."""
        try:
            earlier = await fetcher.fetch_thread()
        except Exception:  # the platform failing must not cost the person their answer
            log.warning("could not fetch earlier thread messages", exc_info=True)
            return history
        thread.messages += [
            NewMessage(f"imported:{m.ts.timestamp():.6f}:{index}", m.author, m.author, m.text, m.ts, m.from_bot)
            for index, m in enumerate(earlier)
        ]
        thread.history_fetched = True
        return sorted([*history, *earlier], key=lambda m: m.ts)[-HISTORY_LIMIT:]

    async def _finish(
        self,
        thread: _Thread,
        message_id: str,
        result: PipelineResult,
        started: datetime,
        *,
        cached: bool = False,
    ) -> Answer:
        """The answer a run ends in: its reply with buttons minted here, the run, the bot's message in the thread,
        and the clarification it parks (or clears) on the conversation, to be settled in one transaction."""
        envelope = result.envelope
        conversation = thread.record
        run_id = new_uuid()
        reply, actions = await self._build_reply(conversation, result, run_id, cached=cached)
        finished = self._now()
        run = NewRun(run_id, message_id, envelope, result.kind, cached, started, finished)
        # a clarifying question waits for its reply; thanks acknowledged asks nothing, so nothing waits
        asks = result.kind == "clarification" and result.reason is not ClarificationReason.THANKED
        pending = envelope_to_json(envelope) if asks else None
        # the platform stamped the question, our clock stamps the reply: where ours runs behind, the reply would
        # come before its question in the thread's history, so it is stamped no earlier than just after it
        asked = [m.ts for m in thread.messages if m.platform_message_id == message_id]
        said_at = max([finished, *(ts + REPLY_AFTER for ts in asked)])
        said = NewMessage(f"bot:{run_id}", BOT_NAME, BOT_NAME, result.text, said_at, from_bot=True)
        tokens = sum(h.usage.total_tokens for h in envelope.hops)
        if tokens:
            await self._usage.record_tokens(conversation.workspace_id, tokens)
        self._metrics.observe_run(envelope, result.kind, (finished - started).total_seconds())
        log.info(
            "reply ready",
            extra={
                "conversation": conversation.id,
                "run": run_id,
                "kind": result.kind,
                "hops": len(envelope.hops),
                "ms": round((finished - started).total_seconds() * 1000, 1),
            },
        )
        return Answer(
            reply,
            thread.change(ThreadState(pending, result.language)),
            (*thread.messages, said),
            run,
            actions,
        )

    async def _build_reply(
        self, conversation: ConversationRecord, result: PipelineResult, run_id: str, *, cached: bool = False
    ) -> tuple[Reply, tuple[NewAction, ...]]:
        t = texts(result.language)
        kind = {
            "answer": ReplyKind.ANSWER,
            "clarification": ReplyKind.CLARIFICATION,
            "refusal": ReplyKind.REFUSAL,
        }.get(result.kind, ReplyKind.NOTICE)
        wanted: list[tuple[ActionKind, str, str]] = []
        if kind is ReplyKind.CLARIFICATION:
            wanted += [(a.kind, a.label, a.value) for a in result.suggested_actions[:5]]
        if kind in (ReplyKind.ANSWER, ReplyKind.REFUSAL):
            wanted += [
                (ActionKind.HELPFUL, t.feedback_helpful, run_id),
                (ActionKind.NOT_HELPFUL, t.feedback_not_helpful, run_id),
            ]
        thanked = result.reason is ClarificationReason.THANKED
        if kind is not ReplyKind.NOTICE and not thanked and self._support_configured(conversation.platform):
            wanted.append((ActionKind.HUMAN, t.ask_human, run_id))  # only when someone is there to ask
        now, batch = self._now(), new_action_token()  # one batch: the choices of one question
        actions = tuple(
            NewAction(new_action_token(), batch, kind_, label, value, now, now + CLARIFICATION_TTL)
            for kind_, label, value in wanted
        )
        citations = cite(result.sources, await self._facts_of(result.sources), result.language)
        reply = Reply(
            kind=kind,
            text=with_unsupported_line(result.text, result.language),
            language=result.language,
            conversation_id=conversation.id,
            citations=citations,
            actions=tuple(ReplyAction(id=a.id, label=a.label, kind=a.kind) for a in actions),
            reason=result.reason,
            note=result.note,
            run_id=run_id,
            cached=cached,
            summary=summarize(result),
        )
        return reply, actions

    async def _facts_of(self, sources: Sequence[SourceReference]) -> Mapping[str, SourceFacts]:
        """How old each source is and who gave a team answer; a failed read cites without them."""
        if self._source_facts is None or not sources:
            return {}
        try:
            return await self._source_facts([s.doc_id for s in sources])
        except Exception:
            log.warning("reading the sources' dates failed; cited without them", exc_info=True)
            return {}

    def _support_configured(self, platform: str) -> bool:
        """Whether "Ask a human" can reach someone: a support mention (Slack) or role (Discord) is configured."""
        if platform == "slack":
            return self._settings.slack_support_mention is not None
        if platform == "discord":
            return self._settings.discord_support_role_id is not None
        return False

    def _notice(self, language: str, reason: str, *, conversation_id: str) -> Reply:
        self._metrics.observe_notice()
        return Reply(
            kind=ReplyKind.NOTICE,
            text=notice_text(language, reason, limit=self._settings.max_question_chars),
            language=language,
            conversation_id=conversation_id,
            reason=reason,
        )

    # -- button presses ---------------------------------------------------------------------------------------

    async def press(self, inbound: Inbound) -> Pressed:
        """What a button press decides. Accepting a choice is the one write made here (`ActionStore.consume`, which
        must decide among concurrent presses at once); it is made on behalf of this press's inbox event, so a retry
        of the event is accepted again and decides again, while any other press finds the choice used."""
        assert inbound.kind is InboundKind.ACTION and inbound.action_id
        existing = await self._conversations.find(inbound.thread_key)
        language = existing.language if existing and existing.language else "en"
        t = texts(language)
        checked = await self._actions.resolve(inbound.action_id, inbound.thread_key)
        feedback = checked.action is not None and checked.action.kind in (ActionKind.HELPFUL, ActionKind.NOT_HELPFUL)
        # Feedback buttons stay usable by everyone (one vote per person); every other button works once.
        consumed = (
            checked
            if feedback
            else await self._actions.consume(
                inbound.action_id, inbound.thread_key, inbound.user_id, event_key=inbound.dedup_key
            )
        )
        if not consumed.accepted or consumed.action is None:
            reason = f"action_{consumed.reason.value if consumed.reason else 'unknown'}"
            log.info("button refused", extra={"reason": reason, "platform": inbound.platform})
            return Pressed(ActionOutcome(accepted=False, chosen_label="", notice=notice_text(language, reason)))
        action = consumed.action
        kind = action.kind
        if feedback:
            first_vote = await self._feedback.record(
                action.conversation_id, action.value or None, inbound.user_id, helpful=kind is ActionKind.HELPFUL
            )
            log.info("feedback", extra={"first_vote": first_vote, "helpful": kind is ActionKind.HELPFUL})
            return Pressed(
                ActionOutcome(accepted=first_vote, chosen_label=action.label, notice=t.feedback_thanks,
                              marks_message=False)
            )  # fmt: skip
        if kind is ActionKind.HUMAN and not self._support_configured(inbound.platform):
            return Pressed(ActionOutcome(accepted=False, chosen_label="", notice=t.button_expired))  # support unset
        if kind in (ActionKind.HUMAN, ActionKind.REPHRASE):  # a reply made without the pipeline
            text, reason = (t.human_handoff, "human_requested") if kind is ActionKind.HUMAN else (
                t.clarify["rephrase"], "rephrase")  # fmt: skip
            reply = Reply(kind=ReplyKind.NOTICE, text=text, language=language,
                          conversation_id=action.conversation_id, reason=reason)  # fmt: skip
            return Pressed(ActionOutcome(accepted=True, chosen_label=action.label, reply=reply), Answer(reply))
        answer = await self._resume_with(inbound, existing, action.label, action.value, kind)
        return Pressed(ActionOutcome(accepted=True, chosen_label=action.label, reply=answer.reply), answer)

    async def _resume_with(
        self, inbound: Inbound, conversation: ConversationRecord | None, label: str, value: str, kind: ActionKind
    ) -> Answer:
        pending = conversation.pending_envelope if conversation is not None else None
        if conversation is None or pending is None:
            language = conversation.language if conversation and conversation.language else "en"
            conversation_id = conversation.id if conversation else ""
            return Answer(self._notice(language, "action_expired", conversation_id=conversation_id))
        policy = self._settings.channel_policy(inbound.platform, inbound.workspace_id, inbound.channel_id)
        history = await self._conversations.history(conversation.id, limit=HISTORY_LIMIT)
        chose = NewMessage(f"choice:{inbound.action_id}", inbound.user_id, inbound.user_name, label, inbound.ts)
        thread = _Thread(conversation, new=False, messages=[chose])
        context = Context(
            history=tuple(history),
            user_name=inbound.user_name,
            collections=policy.collections,
            docs_language=self._settings.docs_language,
            deadline=time.monotonic() + self._settings.question_deadline_s,
        )
        started = self._now()
        envelope = envelope_from_json(pending)
        chosen = SuggestedAction(label=label, kind=kind, value=value or label)
        result = await self._runner.resume(envelope, context=context, chosen=chosen)
        return await self._finish(thread, envelope.message_id, result, started)

    async def reply_on_record(self, thread_key: str, message_id: str) -> Reply | None:
        """The reply stored with the run that answered the question `message_id` in the thread (`PUBLISH_PREFIX`:
        an answer only its asker saw, posted again in public)."""
        return await self._runs.reply_to(thread_key, message_id)


_NOTICE_FIELDS = {
    "action_already_used": "button_used",
    "action_other_thread": "button_other_thread",
    "action_expired": "button_expired",
    "action_unknown": "button_expired",
}


def notice_text(language: str, reason: str, *, limit: int = 0) -> str:
    """The localized sentence for a notice reason (a `Texts` field name, or an alias above); in a language without
    templates, the English sentence under the line saying so."""
    t = texts(language)
    field = _NOTICE_FIELDS.get(reason, reason)
    template = getattr(t, field, None)
    sentence = template.format(limit=limit) if isinstance(template, str) else t.failure
    return with_unsupported_line(sentence, language)


def summarize(result: PipelineResult) -> RunSummary:
    """The figures of a run, from its envelope."""
    envelope = result.envelope
    per_role: dict[str, float] = {}
    for hop in envelope.hops:
        per_role[hop.role.value] = per_role.get(hop.role.value, 0.0) + hop.duration_ms
    payload = envelope.payload
    return RunSummary(
        chunks_retrieved=len(payload.search_results),
        search_quality=payload.search_quality.value if payload.search_quality else None,
        quality_decision=payload.quality_decision.value if payload.quality_decision else None,
        total_ms=round(sum(per_role.values()), 2),
        role_ms=tuple((role, round(ms, 2)) for role, ms in per_role.items()),
        llm_calls=sum(h.usage.calls for h in envelope.hops),
        prompt_tokens=sum(h.usage.prompt_tokens for h in envelope.hops),
        completion_tokens=sum(h.usage.completion_tokens for h in envelope.hops),
        errors=tuple(f"{e.role.value}: {e.kind}" for e in envelope.errors),
        fallback_notes=result.fallback_notes,
        tokens_estimated=any(h.usage.estimated for h in envelope.hops),
    )
