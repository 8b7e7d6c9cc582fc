"""Posting replies into Slack threads: `SlackReplySink.post(ref, reply)` implements `bot.messages.ReplySink`, so the
durable outbox (`bot.delivery.Delivery`) can drive it; `mark_choice` shows a pressed button's choice."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import SlackMessage, render_chosen, render_placeholder, render_reply, render_text
from adapters.slack.client import ClientFor
from adapters.slack.mrkdwn import inert
from adapters.slack.stream import MIN_INTERVAL_S, SlackAnswerStream
from adapters.slack.wording import wording
from bot.delivery import DeliveryRejected
from bot.messages import Reply, ReplyKind, ThreadRef
from pipeline.locales import texts

log = logging.getLogger(__name__)

EPHEMERAL_REASONS = frozenset({"channel_not_allowed", "action_notice"})  # only the asker needs to see these
HANDOVER_REASON = "human_requested"


ASKER = "asker"  # ThreadRef.extra: the Slack user id replies concern (ephemerals, hand-over mentions)
ASSISTANT = "assistant"  # ThreadRef.extra: "1" in an assistant thread (progress is the thread status)
BOT_USER = "bot_user"  # ThreadRef.extra: the bot's own user id in that workspace (for reading threads)

# Slack errors that no retry will fix: the outbox stops trying (DeliveryRejected).
PERMANENT_ERRORS = frozenset({
    "channel_not_found", "not_in_channel", "is_archived", "account_inactive", "invalid_auth", "token_revoked",
    "token_expired", "no_permission", "missing_scope", "team_access_not_granted", "restricted_action",
    "invalid_blocks", "msg_too_long", "user_not_in_channel",
})  # fmt: skip


def slack_thread_ref(
    team_id: str,
    channel_id: str,
    thread_ts: str,
    asker_id: str,
    *,
    assistant: bool = False,
    bot_user_id: str | None = None,
    placeholder_ts: str | None = None,
) -> ThreadRef:
    """Where a Slack reply goes: the thread (its root ts), who asked, and any progress sign to replace or clear."""
    extra = [(ASKER, asker_id)]
    if assistant:
        extra.append((ASSISTANT, "1"))
    if bot_user_id:
        extra.append((BOT_USER, bot_user_id))
    return ThreadRef("slack", team_id, channel_id, thread_ts, placeholder_ts, tuple(extra))


def ref_extra(ref: ThreadRef, key: str) -> str | None:
    return dict(ref.extra).get(key)


def is_assistant(ref: ThreadRef) -> bool:
    return ref_extra(ref, ASSISTANT) == "1"


class SlackReplySink:
    """Renders neutral replies and posts them; every method is safe to call again after a failure."""

    def __init__(
        self,
        client_for: ClientFor,
        *,
        support_mention: str | None = None,
        stream_interval_s: float = MIN_INTERVAL_S,
    ) -> None:
        self._client_for = client_for
        self._support = support_mention
        self._stream_interval_s = stream_interval_s

    def open_stream(self, ref: ThreadRef) -> SlackAnswerStream:
        """A stream of the answer into the thread (chat.startStream/appendStream/stopStream), appends throttled to
        one per `stream_interval_s`; `finish()` gives the ts that `post` then updates into the final reply."""
        return SlackAnswerStream(
            self._client_for, ref, asker_id=ref_extra(ref, ASKER), min_interval_s=self._stream_interval_s
        )

    async def post(self, ref: ThreadRef, reply: Reply) -> str:
        """Post `reply` in the thread (turning the placeholder into it); returns the ts of its first message.

        Refused-channel and button notices go to the asker only, as an ephemeral message. Raises `DeliveryRejected`
        for errors no retry will fix, anything else for transient failures (the outbox retries those).
        """
        try:
            return await self._deliver(ref, reply)
        except SlackApiError as exc:
            error = str(exc.response.get("error"))
            if error in PERMANENT_ERRORS:
                raise DeliveryRejected(error) from exc
            raise

    async def _deliver(self, ref: ThreadRef, reply: Reply) -> str:
        client = await self._client_for(ref.workspace_id)
        if reply.kind is ReplyKind.NOTICE and reply.reason in EPHEMERAL_REASONS:
            await self.clear_progress(ref)
            return await self._ephemeral(client, ref, inert(reply.text))
        messages = render_reply(reply)
        if reply.reason == HANDOVER_REASON and self._support:
            asker = ref_extra(ref, ASKER)
            handover = wording(reply.language).handover.format(
                support=self._support, user=f"<@{asker}>" if asker else ""
            )
            last = messages[-1]
            messages[-1] = SlackMessage(last.text, [*last.blocks, _section(handover)])
        first_ts = await self._first(client, ref, messages[0])
        for message in messages[1:]:
            await self._post(client, ref, message)
        return first_ts

    async def mark_choice(
        self,
        ref: ThreadRef,
        message_ts: str,
        chosen_label: str,
        *,
        block_id: str | None = None,
        original_blocks: Sequence[dict[str, Any]] | None = None,
        language: str | None = None,
    ) -> None:
        """Show the choice on the message that carried the buttons and take those buttons away."""
        client = await self._client_for(ref.workspace_id)
        if original_blocks is None:
            original_blocks = await self._blocks_of(client, ref, message_ts)
        blocks = list(original_blocks)
        updated = render_chosen(blocks, chosen_label, language, block_id)
        text = texts(language).you_chose.format(label=inert(chosen_label))
        await client.chat_update(channel=ref.channel_id, ts=message_ts, text=text, blocks=updated)

    async def notify(self, ref: ThreadRef, text: str) -> str:
        """An ephemeral line for the asker only (already-safe mrkdwn)."""
        return await self._ephemeral(await self._client_for(ref.workspace_id), ref, text)

    async def show_progress(self, ref: ThreadRef, language: str | None) -> ThreadRef:
        """A visible sign that work started: the assistant status, or a placeholder message in the thread."""
        client = await self._client_for(ref.workspace_id)
        if is_assistant(ref):
            try:
                await client.assistant_threads_setStatus(
                    channel_id=ref.channel_id, thread_ts=ref.thread_id, status=wording(language).assistant_status
                )
                return ref
            except SlackApiError as exc:
                log.info("assistant status unavailable", extra={"error": exc.response.get("error")})
                ref = dataclasses.replace(ref, extra=tuple(e for e in ref.extra if e[0] != ASSISTANT))
        ts = await self._post(client, ref, render_placeholder(language))
        return dataclasses.replace(ref, placeholder_id=ts)

    async def clear_progress(self, ref: ThreadRef) -> None:
        """Remove the progress sign when no answer follows (the message was not for the bot)."""
        client = await self._client_for(ref.workspace_id)
        try:
            if ref.placeholder_id:
                await client.chat_delete(channel=ref.channel_id, ts=ref.placeholder_id)
            elif is_assistant(ref):
                await client.assistant_threads_setStatus(channel_id=ref.channel_id, thread_ts=ref.thread_id, status="")
        except SlackApiError as exc:
            log.warning("clearing progress failed", extra={"error": exc.response.get("error")})

    async def _first(self, client: AsyncWebClient, ref: ThreadRef, message: SlackMessage) -> str:
        if ref.placeholder_id:
            try:
                await client.chat_update(
                    channel=ref.channel_id, ts=ref.placeholder_id, text=message.text, blocks=message.blocks
                )
                return ref.placeholder_id
            except SlackApiError as exc:  # the placeholder was deleted meanwhile: post instead
                log.info("placeholder update failed", extra={"error": exc.response.get("error")})
        return await self._post(client, ref, message)

    async def _post(self, client: AsyncWebClient, ref: ThreadRef, message: SlackMessage) -> str:
        response = await client.chat_postMessage(
            channel=ref.channel_id,
            thread_ts=ref.thread_id,
            text=message.text,
            blocks=message.blocks,
            unfurl_links=False,
            unfurl_media=False,
        )
        return str(response["ts"])

    async def _ephemeral(self, client: AsyncWebClient, ref: ThreadRef, text: str) -> str:
        asker = ref_extra(ref, ASKER)
        if not asker:
            return await self._post(client, ref, render_text(text))
        response = await client.chat_postEphemeral(
            channel=ref.channel_id, user=asker, text=text, thread_ts=ref.thread_id
        )
        return str(response.get("message_ts") or "")

    async def _blocks_of(self, client: AsyncWebClient, ref: ThreadRef, message_ts: str) -> list[dict[str, Any]]:
        response = await client.conversations_replies(
            channel=ref.channel_id, ts=ref.thread_id, oldest=message_ts, latest=message_ts, inclusive=True, limit=10
        )
        for message in response.get("messages") or []:
            if message.get("ts") == message_ts:
                return list(message.get("blocks") or [])
        return []


def _section(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}
