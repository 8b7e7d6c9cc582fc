"""Posting replies into Slack threads: `SlackReplySink.post` / `.mark_choice`, shaped for a durable outbox."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import SlackMessage, render_chosen, render_placeholder, render_reply
from adapters.slack.client import ClientFor
from adapters.slack.mrkdwn import inert
from adapters.slack.wording import wording
from bot.messages import Reply, ReplyKind

log = logging.getLogger(__name__)

EPHEMERAL_REASONS = frozenset({"channel_not_allowed"})
HANDOVER_REASON = "human_requested"


@dataclass(frozen=True, slots=True)
class SlackThreadRef:
    """Where a reply goes: the thread (its root ts), who asked, and any progress sign to replace or clear."""

    team_id: str
    channel_id: str
    thread_ts: str
    user_id: str
    placeholder_ts: str | None = None  # a "looking through the docs" message that becomes the answer
    assistant: bool = False  # an assistant thread (DM "Messages" tab): progress is the thread status


class SlackReplySink:
    """Renders neutral replies and posts them; every method is safe to call again after a failure."""

    def __init__(self, client_for: ClientFor, *, support_mention: str | None = None) -> None:
        self._client_for = client_for
        self._support = support_mention

    async def post(self, ref: SlackThreadRef, reply: Reply) -> str:
        """Post `reply` in the thread (turning the placeholder into it); returns the ts of its first message.

        Refused-channel notices go to the asker only, as an ephemeral message.
        """
        client = await self._client_for(ref.team_id)
        if reply.kind is ReplyKind.NOTICE and reply.reason in EPHEMERAL_REASONS:
            await self.clear_progress(ref)
            return await self._ephemeral(client, ref, inert(reply.text))
        messages = render_reply(reply)
        if reply.reason == HANDOVER_REASON and self._support:
            handover = wording(reply.language).handover.format(support=self._support, user=f"<@{ref.user_id}>")
            last = messages[-1]
            messages[-1] = SlackMessage(last.text, [*last.blocks, _section(handover)])
        first_ts = await self._first(client, ref, messages[0])
        for message in messages[1:]:
            await self._post(client, ref, message)
        return first_ts

    async def mark_choice(
        self,
        ref: SlackThreadRef,
        message_ts: str,
        chosen_label: str,
        *,
        block_id: str | None = None,
        original_blocks: Sequence[dict[str, Any]] | None = None,
        language: str | None = None,
    ) -> None:
        """Show the choice on the message that carried the buttons and take those buttons away."""
        client = await self._client_for(ref.team_id)
        if original_blocks is None:
            original_blocks = await self._blocks_of(client, ref, message_ts)
        blocks = list(original_blocks)
        updated = render_chosen(blocks, chosen_label, language, block_id)
        text = wording(language).chosen.format(label=inert(chosen_label))
        await client.chat_update(channel=ref.channel_id, ts=message_ts, text=text, blocks=updated)

    async def notify(self, ref: SlackThreadRef, text: str) -> str:
        """An ephemeral line for the asker only (already-safe mrkdwn)."""
        return await self._ephemeral(await self._client_for(ref.team_id), ref, text)

    async def show_progress(self, ref: SlackThreadRef, language: str | None) -> SlackThreadRef:
        """A visible sign that work started: the assistant status, or a placeholder message in the thread."""
        client = await self._client_for(ref.team_id)
        if ref.assistant:
            try:
                await client.assistant_threads_setStatus(
                    channel_id=ref.channel_id, thread_ts=ref.thread_ts, status=wording(language).assistant_status
                )
                return ref
            except SlackApiError as exc:
                log.info("assistant status unavailable", extra={"error": exc.response.get("error")})
                ref = dataclasses.replace(ref, assistant=False)
        ts = await self._post(client, ref, render_placeholder(language))
        return dataclasses.replace(ref, placeholder_ts=ts)

    async def clear_progress(self, ref: SlackThreadRef) -> None:
        """Remove the progress sign when no answer follows (the message was not for the bot)."""
        client = await self._client_for(ref.team_id)
        try:
            if ref.placeholder_ts:
                await client.chat_delete(channel=ref.channel_id, ts=ref.placeholder_ts)
            elif ref.assistant:
                await client.assistant_threads_setStatus(channel_id=ref.channel_id, thread_ts=ref.thread_ts, status="")
        except SlackApiError as exc:
            log.warning("clearing progress failed", extra={"error": exc.response.get("error")})

    async def _first(self, client: AsyncWebClient, ref: SlackThreadRef, message: SlackMessage) -> str:
        if ref.placeholder_ts:
            try:
                await client.chat_update(
                    channel=ref.channel_id, ts=ref.placeholder_ts, text=message.text, blocks=message.blocks
                )
                return ref.placeholder_ts
            except SlackApiError as exc:  # the placeholder was deleted meanwhile: post instead
                log.info("placeholder update failed", extra={"error": exc.response.get("error")})
        return await self._post(client, ref, message)

    async def _post(self, client: AsyncWebClient, ref: SlackThreadRef, message: SlackMessage) -> str:
        response = await client.chat_postMessage(
            channel=ref.channel_id,
            thread_ts=ref.thread_ts,
            text=message.text,
            blocks=message.blocks,
            unfurl_links=False,
            unfurl_media=False,
        )
        return str(response["ts"])

    async def _ephemeral(self, client: AsyncWebClient, ref: SlackThreadRef, text: str) -> str:
        response = await client.chat_postEphemeral(
            channel=ref.channel_id, user=ref.user_id, text=text, thread_ts=ref.thread_ts
        )
        return str(response.get("message_ts") or "")

    async def _blocks_of(self, client: AsyncWebClient, ref: SlackThreadRef, message_ts: str) -> list[dict[str, Any]]:
        response = await client.conversations_replies(
            channel=ref.channel_id, ts=ref.thread_ts, oldest=message_ts, latest=message_ts, inclusive=True, limit=10
        )
        for message in response.get("messages") or []:
            if message.get("ts") == message_ts:
                return list(message.get("blocks") or [])
        return []


def _section(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}
