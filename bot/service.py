"""The conversation service: inbound message → conversation (a thread) → history → pipeline → Reply.

It never stays silent on a message addressed to the bot: every path ends in an answer, a clarification, a refusal
or a notice that says what happened.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

from bot.budget import Denial, NoticeOnce
from bot.citations import cite
from bot.input_check import InputProblem, check_question
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
from pipeline.result import PipelineResult, ResultKind
from pipeline.runner import PipelineRunner, stop_text
from pipeline.types import ActionKind, HistoryMessage, QualityDecision, Role, SourceReference, SuggestedAction
from storage.actions import ActionStore
from storage.conversations import ConversationRecord, ConversationStore
from storage.feedback import FeedbackStore
from storage.runs import RunStore, Settled
from storage.semantic_cache import SemanticCache
from storage.source_facts import SourceFacts
from storage.tables import new_uuid

log = logging.getLogger(__name__)

BOT_NAME = "docbot"
CLARIFICATION_TTL = timedelta(days=2)
HISTORY_LIMIT = 40
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


class ConversationService:
    """Implements `pipeline.messages.ConversationHandler` (and `StreamingConversationHandler`, `ReplayingHandler`)."""

    def __init__(
        self,
        *,
        settings: Settings,
        conversations: ConversationStore,
        runs: RunStore,
        actions: ActionStore,
        feedback: FeedbackStore,
        runner: PipelineRunner,
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

    # -- messages ---------------------------------------------------------------------------------------------

    async def handle_message(
        self,
        inbound: Inbound,
        fetcher: ThreadFetcher | None = None,
        stream: StreamCallback | None = None,
        progress: ProgressCallback | None = None,
    ) -> Reply | None:
        """The reply to `inbound`, or None. `stream` is shown the answer text while the LLM writes it, when
        `Settings.llm_streaming` is on (the offline strategy never calls it); `progress` is told each pipeline step."""
        policy = self._settings.channel_policy(inbound.platform, inbound.workspace_id, inbound.channel_id)
        existing = await self._conversations.find(inbound.thread_key)
        if not inbound.mentioned and (existing is None or policy.follow_mode == "mention"):
            return None  # a plain thread message the bot is not engaged in
        checked = check_question(inbound.text, max_chars=self._settings.max_question_chars)
        if not policy.allowed:
            log.info("channel refused", extra={"platform": inbound.platform, "channel": inbound.channel_id})
            language = await self._language_of(checked.text, existing)
            return self._notice(language, "channel_not_allowed", conversation_id="")
        if checked.problem is not None:
            log.info("input refused", extra={"reason": checked.problem.value, "chars": len(inbound.text)})
            readable = checked.problem is InputProblem.TOO_LONG  # empty or junk says nothing about a language
            language = await self._language_of(checked.text if readable else "", existing)
            return self._notice(language, checked.problem.value, conversation_id=existing.id if existing else "")

        collections = self._collections(inbound, policy.collections)
        async with self._thread_locks.hold(inbound.thread_key):
            stream = stream if self._settings.llm_streaming else None
            return await self._answer(inbound, checked.text, collections, fetcher, stream, progress)

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
        text: str,
        collections: tuple[str, ...],
        fetcher: ThreadFetcher | None,
        stream: StreamCallback | None = None,
        progress: ProgressCallback | None = None,
    ) -> Reply | None:
        conversation = await self._conversations.get_or_create(
            inbound.thread_key,
            inbound.platform,
            inbound.workspace_id,
            inbound.channel_id,
            inbound.thread_id or inbound.message_id,
        )
        if fetcher is not None and inbound.thread_id and not conversation.history_fetched:
            await self._import_thread(conversation, fetcher, skip_message_id=inbound.message_id)
        history = await self._conversations.history(conversation.id, limit=HISTORY_LIMIT)
        is_new = await self._conversations.add_message(
            conversation.id,
            platform_message_id=inbound.message_id,
            author_id=inbound.user_id,
            author_name=inbound.user_name,
            text=text,
            ts=inbound.ts,
            from_bot=False,
        )
        if not is_new:
            if await self._runs.answer_for(conversation.id, inbound.message_id) is not None:
                log.info("duplicate message ignored", extra={"key": inbound.dedup_key})
                return None
            # stored before, never answered: the process handling it died; answer it now
            log.info("finishing a message an earlier attempt did not answer", extra={"key": inbound.dedup_key})
            if history and not history[-1].from_bot and history[-1].text == text:
                history = history[:-1]  # the stored copy of this very message is not earlier context

        local = inbound.platform == LOCAL_PLATFORM  # the person at their own terminal is not rate-limited
        denial = None if local else await self._usage.check(inbound.user_id, inbound.workspace_id)
        if denial is not None:
            if not self._notice_once.first(inbound.workspace_id, inbound.user_id, denial):
                log.info("usage limit, already told", extra={"reason": denial.message_key, "scope": denial.scope})
                return None
            log.info("usage limit", extra={"reason": denial.message_key, "scope": denial.scope})
            language = await self._detect(text, history, conversation.language)
            return self._notice(language, denial.message_key, conversation_id=conversation.id)

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
        pending = await self._conversations.get_pending(conversation.id)
        if pending is not None and not is_new and envelope_from_json(pending).message_id == inbound.message_id:
            pending = None  # this very message's clarification, left by an attempt that died before its run
        new_topic = not any(not m.from_bot for m in history)
        if pending is None and new_topic and (cached := await self._cached(inbound, text, collections, context)):
            return await self._finish(conversation, inbound.message_id, cached, started, cached=True)
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
            notice = stop_text(result.kind, result.reason, language)
            result = dataclasses.replace(result, text=notice, language=language)
        await self._remember(result, collections)
        return await self._finish(conversation, inbound.message_id, result, started)

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
    ) -> PipelineResult | None:
        """A previously approved answer to a near-identical question in the asker's language over the same corpus
        version, if any (no lookup when the language is unknown)."""
        if self._cache is None or self._corpus_version is None or self._cache_language is None:
            return None
        try:
            language = await self._cache_language(text, context)
            if language is None:
                return None
            version = await self._corpus_version(collections)
            hit = await self._cache.lookup(text, collections, version, language=language)
        except Exception:
            log.warning("semantic cache lookup failed", exc_info=True)
            return None
        if hit is None:
            return None
        now = self._now()
        payload = Payload(
            text=text,
            language=hit.language,
            canonical_question=hit.question,
            source_references=hit.sources,
            response=hit.response,
            quality_decision=QualityDecision.APPROVE,
        )
        hop = Hop(Role.SEARCH, f"semantic cache hit ({hit.similarity:.3f})", now, 0.0, strategy="cache")
        envelope = Envelope(inbound.thread_key, inbound.message_id, payload, now, now, process_count=1, hops=[hop])
        return PipelineResult(ResultKind.ANSWER, hit.response, hit.language, envelope, sources=hit.sources)

    async def _remember(self, result: PipelineResult, collections: tuple[str, ...]) -> None:
        payload = result.envelope.payload
        if self._cache is None or self._corpus_version is None or result.kind != ResultKind.ANSWER:
            return
        if result.degraded:  # made by a fallback: never replayed once the model or the index is back
            return
        try:
            await self._cache.store(
                payload.canonical_question or payload.text,
                collections,
                await self._corpus_version(collections),
                response=result.text,
                language=result.language,
                sources=result.sources,
                quality_decision=payload.quality_decision,
            )
        except Exception:
            log.warning("semantic cache store failed", exc_info=True)

    async def _import_thread(
        self, conversation: ConversationRecord, fetcher: ThreadFetcher, *, skip_message_id: str
    ) -> None:
        """Store the thread's earlier messages the bot never saw (once per conversation)."""
        try:
            earlier = await fetcher.fetch_thread()
        except Exception:  # the platform failing must not cost the person their answer
            log.warning("could not fetch earlier thread messages", exc_info=True)
            return
        for index, message in enumerate(earlier):
            await self._conversations.add_message(
                conversation.id,
                platform_message_id=f"imported:{message.ts.timestamp():.6f}:{index}",
                author_id=message.author,
                author_name=message.author,
                text=message.text,
                ts=message.ts,
                from_bot=message.from_bot,
            )
        await self._conversations.mark_history_fetched(conversation.id)

    async def _finish(
        self,
        conversation: ConversationRecord,
        message_id: str,
        result: PipelineResult,
        started: datetime,
        *,
        cached: bool = False,
        event_key: str | None = None,
    ) -> Reply:
        envelope = result.envelope
        run_id = new_uuid()
        reply = await self._build_reply(conversation, result, run_id, cached=cached)
        # the commit point: the run and its reply in one row, so "answered" always comes with the answer to replay,
        # and the clarification it parks (or clears) in the same transaction: a press or message that dies before
        # this finds the clarification it resumed from still pending on its retry
        pending = envelope_to_json(envelope) if result.kind == "clarification" else None
        await self._runs.save_run(
            conversation.id,
            message_id,
            envelope,
            status=result.kind,
            reply_kind=result.kind,
            cached=cached,
            started_at=started,
            finished_at=self._now(),
            run_id=run_id,
            reply=reply,
            event_key=event_key,
            settled=Settled(pending, result.language),
        )
        tokens = sum(h.usage.total_tokens for h in envelope.hops)
        if tokens:
            await self._usage.record_tokens(conversation.workspace_id, tokens)
        self._metrics.observe_run(envelope, result.kind, (self._now() - started).total_seconds())
        await self._add_bot_message(conversation.id, run_id, result.text)
        log.info(
            "reply ready",
            extra={
                "conversation": conversation.id,
                "run": run_id,
                "kind": result.kind,
                "hops": len(envelope.hops),
                "ms": round((self._now() - started).total_seconds() * 1000, 1),
            },
        )
        return reply

    async def stored_reply(self, inbound: Inbound) -> Reply | None:
        """The reply recorded with the run that answered `inbound`, if any (`pipeline.messages.ReplayingHandler`):
        an attempt that answered and died before its reply reached the outbox left it here. A message's run is found
        by its message id, a button press's by its inbox event. Also puts an answer in the thread's history if that
        attempt died before it did."""
        if inbound.kind is InboundKind.ACTION:
            pressed = await self._runs.answer_for_event(inbound.dedup_key)
            if pressed is None or pressed.reply is None:
                return None
            if pressed.reply.run_id is not None:  # a resumed answer (a handoff or rephrase notice has no run id)
                await self._add_bot_message(pressed.reply.conversation_id, pressed.run_id, pressed.reply.text)
            return pressed.reply
        conversation = await self._conversations.find(inbound.thread_key)
        if conversation is None:
            return None
        stored = await self._runs.answer_for(conversation.id, inbound.message_id)
        if stored is None or stored.reply is None:  # not answered, or answered before replies were kept (0004)
            return None
        await self._add_bot_message(conversation.id, stored.run_id, stored.reply.text)
        return stored.reply

    async def _add_bot_message(self, conversation_id: str, run_id: str, text: str) -> None:
        """The bot's reply in the thread's history (once: a replay after a crash finds it already stored)."""
        await self._conversations.add_message(
            conversation_id,
            platform_message_id=f"bot:{run_id}",
            author_id=BOT_NAME,
            author_name=BOT_NAME,
            text=text,
            ts=self._now(),
            from_bot=True,
        )

    async def _build_reply(
        self, conversation: ConversationRecord, result: PipelineResult, run_id: str, *, cached: bool = False
    ) -> Reply:
        t = texts(result.language)
        kind = {
            "answer": ReplyKind.ANSWER,
            "clarification": ReplyKind.CLARIFICATION,
            "refusal": ReplyKind.REFUSAL,
        }.get(result.kind, ReplyKind.NOTICE)
        wanted: list[tuple[str, str, str]] = []
        if kind is ReplyKind.CLARIFICATION:
            wanted += [(a.kind.value, a.label, a.value) for a in result.suggested_actions[:5]]
        if kind in (ReplyKind.ANSWER, ReplyKind.REFUSAL):
            wanted += [
                (ActionKind.HELPFUL.value, t.feedback_helpful, run_id),
                (ActionKind.NOT_HELPFUL.value, t.feedback_not_helpful, run_id),
            ]
        if kind is not ReplyKind.NOTICE and self._support_configured(conversation.platform):
            wanted.append((ActionKind.HUMAN.value, t.ask_human, run_id))  # only when someone is there to ask
        stored = await self._actions.create(conversation.id, wanted, expires_at=self._now() + CLARIFICATION_TTL)
        citations = cite(result.sources, await self._facts_of(result.sources), result.language)
        return Reply(
            kind=kind,
            text=with_unsupported_line(result.text, result.language),
            language=result.language,
            conversation_id=conversation.id,
            citations=citations,
            actions=tuple(ReplyAction(id=a.id, label=a.label, kind=ActionKind(a.kind)) for a in stored),
            reason=result.reason,
            note=result.note,
            run_id=run_id,
            cached=cached,
            summary=summarize(result),
        )

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

    async def handle_action(self, inbound: Inbound) -> ActionOutcome:
        assert inbound.kind is InboundKind.ACTION and inbound.action_id
        existing = await self._conversations.find(inbound.thread_key)
        language = existing.language if existing and existing.language else "en"
        t = texts(language)
        checked = await self._actions.resolve(inbound.action_id, inbound.thread_key)
        feedback = checked.action is not None and checked.action.kind in (ActionKind.HELPFUL, ActionKind.NOT_HELPFUL)
        # Feedback buttons stay usable by everyone (one vote per person); every other button works once.
        # A choice is consumed on behalf of this press's inbox event: its retry is accepted again, not "already used".
        consumed = checked if feedback else await self._actions.consume(
            inbound.action_id, inbound.thread_key, inbound.user_id, event_key=inbound.dedup_key
        )
        if not consumed.accepted or consumed.action is None:
            reason = f"action_{consumed.reason.value if consumed.reason else 'unknown'}"
            log.info("button refused", extra={"reason": reason, "platform": inbound.platform})
            return ActionOutcome(accepted=False, chosen_label="", notice=notice_text(language, reason))
        action = consumed.action
        kind = action.kind
        if feedback:
            first_vote = await self._feedback.record(
                action.conversation_id, action.value or None, inbound.user_id, helpful=kind is ActionKind.HELPFUL
            )
            log.info("feedback", extra={"first_vote": first_vote, "helpful": kind is ActionKind.HELPFUL})
            return ActionOutcome(
                accepted=first_vote, chosen_label=action.label, notice=t.feedback_thanks, marks_message=False
            )
        replayed = await self.stored_reply(inbound)  # an earlier attempt of this press answered and died
        if replayed is not None:
            log.info("replaying the reply of an earlier attempt", extra={"key": inbound.dedup_key})
            return ActionOutcome(accepted=True, chosen_label=action.label, reply=replayed)
        if kind is ActionKind.HUMAN:
            if not self._support_configured(inbound.platform):  # a button from before support was unset
                return ActionOutcome(accepted=False, chosen_label="", notice=t.button_expired)
            reply = await self._press_notice(inbound, action.conversation_id, t.human_handoff, language,
                                             "human_requested")  # fmt: skip
            return ActionOutcome(accepted=True, chosen_label=action.label, reply=reply)
        if kind is ActionKind.REPHRASE:
            reply = await self._press_notice(inbound, action.conversation_id, t.clarify["rephrase"], language,
                                             "rephrase")  # fmt: skip
            return ActionOutcome(accepted=True, chosen_label=action.label, reply=reply)
        reply = await self._resume_with(inbound, action.conversation_id, action.label, action.value, kind)
        return ActionOutcome(accepted=True, chosen_label=action.label, reply=reply)

    async def _press_notice(
        self, inbound: Inbound, conversation_id: str, text: str, language: str, reason: str
    ) -> Reply:
        """A press's reply made without the pipeline (handoff, rephrase), recorded with a run keyed by the press's
        event like a resumed answer, so a retry of the press replays it."""
        reply = Reply(kind=ReplyKind.NOTICE, text=text, language=language, conversation_id=conversation_id,
                      reason=reason)  # fmt: skip
        await self._runs.save_reply(
            conversation_id, inbound.message_id, reply, event_key=inbound.dedup_key, at=self._now()
        )
        return reply

    async def _resume_with(
        self, inbound: Inbound, conversation_id: str, label: str, value: str, kind: ActionKind
    ) -> Reply:
        async with self._thread_locks.hold(inbound.thread_key):
            conversation = await self._conversations.get(conversation_id)
            pending = await self._conversations.get_pending(conversation_id)
            language = conversation.language if conversation and conversation.language else "en"
            if conversation is None or pending is None:
                return self._notice(language, "action_expired", conversation_id=conversation_id)
            policy = self._settings.channel_policy(inbound.platform, inbound.workspace_id, inbound.channel_id)
            history = await self._conversations.history(conversation_id, limit=HISTORY_LIMIT)
            await self._conversations.add_message(
                conversation_id,
                platform_message_id=f"choice:{inbound.action_id}",
                author_id=inbound.user_id,
                author_name=inbound.user_name,
                text=label,
                ts=inbound.ts,
                from_bot=False,
            )
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
            return await self._finish(conversation, envelope.message_id, result, started, event_key=inbound.dedup_key)



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
