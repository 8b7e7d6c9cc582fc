"""The conversation service: inbound message → conversation (a thread) → history → pipeline → Reply.

It never stays silent on a message addressed to the bot: every path ends in an answer, a clarification, a refusal
or a notice that says what happened.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

from bot.budget import Denial
from bot.input_check import check_question
from bot.metrics import Metrics
from bot.settings import Settings
from bot.thread_locks import ThreadLocks
from pipeline.agents.clarification import answers_clarification
from pipeline.codec import envelope_from_json, envelope_to_json
from pipeline.envelope import Context, Envelope, Hop, Payload, StreamCallback
from pipeline.locales import texts
from pipeline.messages import (
    ActionOutcome,
    Citation,
    Inbound,
    InboundKind,
    Reply,
    ReplyAction,
    ReplyKind,
    RunSummary,
    ThreadFetcher,
)
from pipeline.result import PipelineResult, ResultKind
from pipeline.runner import PipelineRunner
from pipeline.types import ActionKind, QualityDecision, Role, SuggestedAction
from storage.actions import ActionStore
from storage.conversations import ConversationRecord, ConversationStore
from storage.feedback import FeedbackStore
from storage.runs import RunStore
from storage.semantic_cache import SemanticCache

log = logging.getLogger(__name__)

BOT_NAME = "docbot"
CLARIFICATION_TTL = timedelta(days=2)
HISTORY_LIMIT = 40


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
    """Implements `pipeline.messages.ConversationHandler` (and `StreamingConversationHandler`)."""

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
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
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
        self._now = now
        self._thread_locks = ThreadLocks()

    # -- messages ---------------------------------------------------------------------------------------------

    async def handle_message(
        self, inbound: Inbound, fetcher: ThreadFetcher | None = None, stream: StreamCallback | None = None
    ) -> Reply | None:
        """The reply to `inbound`, or None. `stream` is shown the answer text while the LLM writes it, when
        `Settings.llm_streaming` is on (the offline strategy never calls it)."""
        policy = self._settings.channel_policy(inbound.platform, inbound.workspace_id, inbound.channel_id)
        existing = await self._conversations.find(inbound.thread_key)
        if not inbound.mentioned and (existing is None or policy.follow_mode == "mention"):
            return None  # a plain thread message the bot is not engaged in
        lang_hint = existing.language if existing and existing.language else "en"
        if not policy.allowed:
            log.info("channel refused", extra={"platform": inbound.platform, "channel": inbound.channel_id})
            return self._notice(lang_hint, "channel_not_allowed", conversation_id="")

        checked = check_question(inbound.text, max_chars=self._settings.max_question_chars)
        if checked.problem is not None:
            log.info("input refused", extra={"reason": checked.problem.value, "chars": len(inbound.text)})
            return self._notice(lang_hint, checked.problem.value, conversation_id=existing.id if existing else "")

        async with self._thread_locks.hold(inbound.thread_key):
            stream = stream if self._settings.llm_streaming else None
            return await self._answer(inbound, checked.text, policy.collections, fetcher, stream)

    async def _answer(
        self,
        inbound: Inbound,
        text: str,
        collections: tuple[str, ...],
        fetcher: ThreadFetcher | None,
        stream: StreamCallback | None = None,
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
            if await self._runs.answered(conversation.id, inbound.message_id):
                log.info("duplicate message ignored", extra={"key": inbound.dedup_key})
                return None
            # stored before, never answered: the process handling it died; answer it now
            log.info("finishing a message an earlier attempt did not answer", extra={"key": inbound.dedup_key})
            if history and not history[-1].from_bot and history[-1].text == text:
                history = history[:-1]  # the stored copy of this very message is not earlier context

        denial = await self._usage.check(inbound.user_id, inbound.workspace_id)
        if denial is not None:
            log.info("usage limit", extra={"reason": denial.message_key, "scope": denial.scope})
            return self._notice(conversation.language or "en", denial.message_key, conversation_id=conversation.id)

        context = Context(
            history=tuple(history),
            user_name=inbound.user_name,
            collections=collections,
            docs_language=self._settings.docs_language,
            deadline=time.monotonic() + self._settings.question_deadline_s,
            stream=stream,
        )
        started = self._now()
        pending = await self._conversations.get_pending(conversation.id)
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
        await self._remember(result, collections)
        return await self._finish(conversation, inbound.message_id, result, started)

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
    ) -> Reply:
        envelope = result.envelope
        pending = envelope_to_json(envelope) if result.kind == "clarification" else None
        await self._conversations.settle(conversation.id, pending, result.language)
        run_id = await self._runs.save_run(
            conversation.id,
            message_id,
            envelope,
            status=result.kind,
            reply_kind=result.kind,
            cached=cached,
            started_at=started,
            finished_at=self._now(),
        )
        tokens = sum(h.usage.total_tokens for h in envelope.hops)
        if tokens:
            await self._usage.record_tokens(conversation.workspace_id, tokens)
        self._metrics.observe_run(envelope, result.kind, (self._now() - started).total_seconds())
        reply = await self._build_reply(conversation, result, run_id, cached=cached)
        await self._conversations.add_message(
            conversation.id,
            platform_message_id=f"bot:{run_id}",
            author_id=BOT_NAME,
            author_name=BOT_NAME,
            text=result.text,
            ts=self._now(),
            from_bot=True,
        )
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
        citations = tuple(
            Citation(
                number=s.number,
                title=s.title,
                crumbs=s.crumbs,
                url=s.url,
                chunk_id=s.chunk_id,
                confidence=s.confidence,
                text=_shorten(s.text, 300),
            )
            for s in result.sources
        )
        return Reply(
            kind=kind,
            text=result.text,
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
        consumed = checked if feedback else await self._actions.consume(
            inbound.action_id, inbound.thread_key, inbound.user_id
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
        if kind is ActionKind.HUMAN:
            if not self._support_configured(inbound.platform):  # a button from before support was unset
                return ActionOutcome(accepted=False, chosen_label="", notice=t.button_expired)
            reply = Reply(kind=ReplyKind.NOTICE, text=t.human_handoff, language=language,
                          conversation_id=action.conversation_id, reason="human_requested")
            return ActionOutcome(accepted=True, chosen_label=action.label, reply=reply)
        if kind is ActionKind.REPHRASE:
            reply = Reply(kind=ReplyKind.NOTICE, text=t.clarify["rephrase"], language=language,
                          conversation_id=action.conversation_id, reason="rephrase")
            return ActionOutcome(accepted=True, chosen_label=action.label, reply=reply)
        reply = await self._resume_with(inbound, action.conversation_id, action.label, action.value, kind)
        return ActionOutcome(accepted=True, chosen_label=action.label, reply=reply)

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
            return await self._finish(conversation, envelope.message_id, result, started)



_NOTICE_FIELDS = {
    "action_already_used": "button_used",
    "action_other_thread": "button_other_thread",
    "action_expired": "button_expired",
    "action_unknown": "button_expired",
}


def notice_text(language: str, reason: str, *, limit: int = 0) -> str:
    """The localized sentence for a notice reason (a `Texts` field name, or an alias above)."""
    t = texts(language)
    field = _NOTICE_FIELDS.get(reason, reason)
    template = getattr(t, field, None)
    if not isinstance(template, str):
        return t.failure
    return template.format(limit=limit)


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


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
