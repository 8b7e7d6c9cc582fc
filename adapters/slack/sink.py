"""Posting replies into Slack threads: `SlackReplySink.post(ref, reply)` implements `pipeline.messages.ReplySink`, so
the durable outbox (`bot.delivery.Delivery`) can drive it. The worker that claimed an event also calls `prepare` (post
a /ask question, resolve the asker's name), `show_progress` / `clear_progress` and, after an accepted press,
`show_choice` — which rebuilds the message from what Slack holds, never from the press's payload."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from slack_sdk.errors import SlackApiError
from slack_sdk.models.metadata import Metadata
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.slack.blocks import (
    PROGRESS_BLOCK,
    SlackMessage,
    Style,
    block_with_button,
    render_chosen,
    render_placeholder,
    render_reply,
    render_text,
)
from adapters.slack.client import (
    TIMEOUT_S,
    ChannelDirectory,
    ClientFor,
    SlackUser,
    UserDirectory,
    creating_client,
    slack_error,
)
from adapters.slack.editor import EXPIRED_TRIGGER, TRIGGER, editor_view
from adapters.slack.events import to_datetime
from adapters.slack.groups import GroupDirectory
from adapters.slack.mrkdwn import inert
from adapters.slack.stream import MIN_INTERVAL_S, SlackAnswerStream
from adapters.slack.wording import wording
from adapters.slack.work import SlackWork
from pipeline.locales import texts
from pipeline.messages import (
    DeliveryAttempt,
    DeliveryRejected,
    Inbound,
    InboundKind,
    PostedMessage,
    Reply,
    ReplyKind,
    ThreadRef,
)

log = logging.getLogger(__name__)

# only the asker needs to see these (a rate-limit notice in the channel would add to the flood it answers)
EPHEMERAL_REASONS = frozenset({"channel_not_allowed", "action_notice", "rate_limited", "token_budget_spent"})
LanguageOfText = Callable[[str], Awaitable[str | None]]
MAX_THREAD_PAGES = 5  # of 200 messages: a retry looks this far back for what an earlier try posted
HANDOVER_REASON = "human_requested"


ASKER = "asker"  # ThreadRef.extra: the Slack user id replies concern (ephemerals, hand-over mentions)
ASSISTANT = "assistant"  # ThreadRef.extra: "1" in an assistant thread (progress is the thread status)
BOT_USER = "bot_user"  # ThreadRef.extra: the bot's own user id in that workspace (for reading threads)
NAME_TIMEOUT_S = 3.0  # users.info for the asker's display name, before handling without it
ASK_COMMAND = "ask_command"  # ThreadRef.extra: "1" for a stored /ask whose question is not posted yet

RESPONSE_URL = "response_url"  # ThreadRef.extra: a /ask command's response_url (private answers, 30 minutes)
REPLY_EVENT = "docbot_reply"  # message metadata on every reply message: which stored reply, which part

# Slack's answers to blocks it does not take (a newer block an older workspace or client API refuses, a table over its
# limits): the reply is rendered again in the classic style, which only uses sections, context and actions blocks.
REFUSED_BLOCKS = frozenset({"invalid_blocks", "invalid_blocks_format", "invalid_attachments"})
# Slack errors that no retry will fix: the outbox stops trying (DeliveryRejected).
PERMANENT_ERRORS = frozenset({
    "channel_not_found", "not_in_channel", "is_archived", "account_inactive", "invalid_auth", "token_revoked",
    "token_expired", "no_permission", "missing_scope", "team_access_not_granted", "restricted_action",
    "invalid_blocks", "msg_too_long", "user_not_in_channel",
})  # fmt: skip
# chat.update errors that mean the placeholder is gone or not ours to change: the reply is posted instead. Every
# other error (Slack's transient internal_error, fatal_error, service_unavailable, request_timeout, ratelimited,
# team_added_to_org, an HTML 5xx) is retried by the outbox; internal_error and fatal_error "may have succeeded",
# which is why every reply message carries a marker a retry looks for (`post_once`).
PLACEHOLDER_GONE = frozenset({"message_not_found", "cant_update_message"})
NOT_A_MEMBER = frozenset({"not_in_channel", "channel_not_found"})  # /ask where the bot cannot post


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
        users: UserDirectory | None = None,
        progress_allowed: Callable[[ThreadRef], bool] = lambda ref: True,
        language_of: LanguageOfText | None = None,
        bot_name: str = "docbot",
        groups: GroupDirectory | None = None,
        channels: ChannelDirectory | None = None,
    ) -> None:
        """`language_of`: the language of a text (the lang role's detector), so a notice the sink itself sends is in
        the language of the message it answers; without it, the asker's Slack locale."""
        self._client_for = client_for
        self._support = support_mention
        self._stream_interval_s = stream_interval_s
        self._users = users or UserDirectory(client_for)
        self._progress_allowed = progress_allowed
        self._language_of = language_of
        self._bot_name = bot_name
        self._channels = channels or ChannelDirectory(client_for)
        self._groups = groups  # the configured user groups (team answers' experts and maintainers), looked up
        self._classic: set[str] = set()  # workspaces that refused today's blocks: their replies use the classic style

    async def prepare(self, inbound: Inbound, ref: ThreadRef) -> tuple[Inbound, ThreadRef]:
        """Before a claimed event is handled: post a /ask question in the channel (its thread is where the answer
        goes) and fill in the asker's display name. Raises when the question cannot be posted (retried)."""
        try:  # the name is a nicety; the question must not wait long for it
            user = await asyncio.wait_for(self._users.get(ref.workspace_id, inbound.user_id), NAME_TIMEOUT_S)
        except TimeoutError:
            user = SlackUser(id=inbound.user_id, name=inbound.user_id)
        if not inbound.user_name or inbound.user_name == inbound.user_id:
            inbound = dataclasses.replace(inbound, user_name=user.name)
        if self._groups is not None and not inbound.groups and (inbound.thread_id or inbound.kind is not
                                                                 InboundKind.MESSAGE):  # fmt: skip
            # an expert's reply in a thread, a maintainer's press: which configured user groups they are in
            groups = await self._groups.groups_of(ref.workspace_id, inbound.user_id)
            inbound = dataclasses.replace(inbound, groups=groups)
        if ref_extra(ref, ASK_COMMAND) != "1":
            return inbound, ref
        client = await self._client_for(ref.workspace_id)
        asked = texts(user.locale).user_asked.format(user=f"<@{inbound.user_id}>")
        try:
            posted = await client.chat_postMessage(
                channel=ref.channel_id, text=f"{asked} {inert(inbound.text)}", unfurl_links=False
            )
        except SlackApiError as exc:
            error = slack_error(exc)
            if error not in NOT_A_MEMBER:
                raise  # transient: the event is retried
            await self._invite_me(ref, inbound, user)  # nothing can be posted there: say so privately
            raise DeliveryRejected(error) from None
        ts = str(posted["ts"])
        inbound = dataclasses.replace(inbound, thread_id=None, message_id=ts, ts=to_datetime(ts))
        extra = tuple(e for e in ref.extra if e[0] != ASK_COMMAND)
        return inbound, dataclasses.replace(ref, thread_id=ts, extra=extra)

    def open_stream(self, ref: ThreadRef) -> SlackAnswerStream:
        """A stream of the answer into the thread (chat.startStream/appendStream/stopStream), appends throttled to
        one per `stream_interval_s`; `finish()` gives the ts that `post` then updates into the final reply."""
        return SlackAnswerStream(
            self._client_for, ref, asker_id=ref_extra(ref, ASKER), min_interval_s=self._stream_interval_s
        )

    def open_work(self, ref: ThreadRef, inbound: Inbound) -> SlackWork:
        """The question's steps as a task timeline streamed into the thread (or one status message updated in place
        where streaming fails), with the stop button of an agent session; `finish()` gives the ts that `post` then
        updates into the final reply. Nothing is shown in a channel the bot does not answer in."""
        return SlackWork(
            self._client_for, ref, inbound, asker_id=ref_extra(ref, ASKER), users=self._users,
            allowed=self._progress_allowed(ref), min_interval_s=self._stream_interval_s,
            status_interval_s=max(self._stream_interval_s, 0.0) * 1.5, find_marked=self.find_progress,
        )  # fmt: skip

    async def post(self, ref: ThreadRef, reply: Reply) -> str:
        """Post `reply` in the thread (turning the placeholder into it); returns the ts of its first message.

        Refused-channel, button and rate-limit notices go to the asker only, as an ephemeral message. Raises
        `DeliveryRejected` for errors no retry will fix, anything else for transient failures (the outbox retries
        those; use `post_once` from a retrying caller, so a retry never posts a message twice).
        """
        return await self._post_reply(ref, reply, None)

    async def post_once(self, ref: ThreadRef, reply: Reply, attempt: DeliveryAttempt) -> str:
        """`post`, marking each message with `attempt.key`; after a try whose outcome is unknown it first reads
        the thread, and the messages (and placeholder) an earlier try left are updated or kept, not posted again."""
        return await self._post_reply(ref, reply, attempt)

    async def _post_reply(self, ref: ThreadRef, reply: Reply, attempt: DeliveryAttempt | None) -> str:
        try:
            return await self._deliver(ref, reply, attempt)
        except SlackApiError as exc:
            error = slack_error(exc)
            if error in PERMANENT_ERRORS:
                await self._withdraw_placeholder(ref, reply.language)
                raise DeliveryRejected(error) from exc
            raise

    async def _deliver(self, ref: ThreadRef, reply: Reply, attempt: DeliveryAttempt | None) -> str:
        client = await self._client_for(ref.workspace_id)
        if reply.kind is ReplyKind.NOTICE and reply.reason in EPHEMERAL_REASONS:
            await self.clear_progress(ref)
            return await self._ephemeral(client, ref, inert(reply.text))
        posted: dict[int, str] = {}
        if attempt is not None and attempt.after_unknown_outcome and ref.thread_id:
            posted, left_placeholder = await self._earlier_try(client, ref, attempt.key)
            if left_placeholder and not ref.placeholder_id and 0 not in posted:
                ref = dataclasses.replace(ref, placeholder_id=left_placeholder)
        style = Style.CLASSIC if ref.workspace_id in self._classic else Style.CURRENT
        try:
            return await self._post_styled(client, ref, reply, style, attempt, posted)
        except _BlocksRefused as refused:
            if style is Style.CLASSIC:
                raise refused.error from None
            log.warning("slack refused the blocks; replying with classic blocks",
                        extra={"error": slack_error(refused.error), "team": ref.workspace_id})  # fmt: skip
            self._classic.add(ref.workspace_id)
            return await self._post_styled(client, ref, reply, Style.CLASSIC, attempt, posted)

    async def _post_styled(
        self, client: AsyncWebClient, ref: ThreadRef, reply: Reply, style: Style,
        attempt: DeliveryAttempt | None, posted: dict[int, str],
    ) -> str:  # fmt: skip
        """Post the rendered reply, skipping the parts an earlier try posted (`posted`); `_BlocksRefused` when Slack
        refuses the first message's blocks (nothing of this try posted)."""
        messages = render_reply(reply, style)
        if reply.reason == HANDOVER_REASON and self._support:
            asker = ref_extra(ref, ASKER)
            handover = wording(reply.language).handover.format(
                support=self._support, user=f"<@{asker}>" if asker else ""
            )
            last = messages[-1]
            messages[-1] = SlackMessage(last.text, [*last.blocks, _section(handover)])
        first_ts = posted.get(0)
        if first_ts is None:
            try:
                first_ts = await self._first(client, ref, messages[0], _marker(attempt, 0))
            except SlackApiError as exc:
                if slack_error(exc) in REFUSED_BLOCKS:
                    raise _BlocksRefused(exc) from exc
                raise
        for part, message in enumerate(messages[1:], start=1):
            if part not in posted:
                await self._post(client, ref, message, _marker(attempt, part))
        return first_ts

    async def _earlier_try(self, client: AsyncWebClient, ref: ThreadRef, key: str) -> tuple[dict[int, str], str | None]:
        """What an earlier try of the reply `key` left in the thread: its messages by part, and a placeholder of
        ours that no reply replaced (the newest)."""
        posted: dict[int, str] = {}
        placeholder: str | None = None
        cursor: str | None = None
        for _ in range(MAX_THREAD_PAGES):
            response = await client.conversations_replies(
                channel=ref.channel_id, ts=ref.thread_id, include_all_metadata=True, limit=200, cursor=cursor
            )
            for message in response.get("messages") or []:
                if not (message.get("bot_id") or message.get("user") == ref_extra(ref, BOT_USER)):
                    continue
                metadata = message.get("metadata") or {}
                payload = metadata.get("event_payload") or {}
                if metadata.get("event_type") == REPLY_EVENT and payload.get("delivery") == key:
                    posted[int(payload.get("part", 0))] = str(message["ts"])
                elif any(b.get("block_id") == PROGRESS_BLOCK for b in message.get("blocks") or []):
                    placeholder = str(message["ts"])
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                break
        return posted, placeholder

    async def _withdraw_placeholder(self, ref: ThreadRef, language: str | None) -> None:
        """A reply Slack refuses for good must not leave "Looking through the docs…" behind: the placeholder says
        the answer failed instead (best effort; when the channel itself is gone there is nothing to change)."""
        if not ref.placeholder_id:
            return
        try:
            client = await self._client_for(ref.workspace_id)
            await client.chat_update(
                channel=ref.channel_id, ts=ref.placeholder_id, text=texts(language).failure, blocks=[]
            )
        except Exception as exc:
            log.info("placeholder not withdrawn", extra={"error": slack_error(exc)})

    async def _invite_me(self, ref: ThreadRef, inbound: Inbound, user: SlackUser) -> None:
        """/ask in a channel the bot is not in: tell the asker privately, through the command's response_url, how
        to invite it (in the language of the question)."""
        url = ref_extra(ref, RESPONSE_URL)
        language = await self._language(inbound.text, user.locale)
        text = texts(language).invite_needed.format(bot=self._bot_name, command="/invite")
        if not url:
            log.warning("slack /ask where the bot is not a member, and no response_url to say so")
            return
        client = await self._client_for(ref.workspace_id)
        if not _trusted_response_url(url, client.base_url):
            log.warning("slack /ask response_url refused: not a Slack host")
            return
        try:
            webhook = AsyncWebhookClient(url, timeout=TIMEOUT_S)
            response = await webhook.send(text=text, response_type="ephemeral")
            if response.status_code != 200:
                log.warning("slack /ask invitation note refused", extra={"status": response.status_code})
        except Exception as exc:
            log.warning("slack /ask invitation note failed", extra={"error": type(exc).__name__})

    async def _language(self, text: str, fallback: str | None) -> str | None:
        if self._language_of is None:
            return fallback
        try:
            return (await self._language_of(text)) or fallback
        except Exception:
            return fallback

    async def show_choice(
        self, ref: ThreadRef, message_id: str, action_id: str, chosen_label: str, language: str | None
    ) -> bool:
        """Show an accepted choice on the message that carries its button, and take those buttons away.

        The message is read back from Slack in the event's own thread and must carry a button whose value is
        `action_id`; otherwise (a forged message ts, another thread's message) nothing is changed (False)."""
        client = await self._client_for(ref.workspace_id)
        blocks = await self._blocks_of(client, ref, message_id)
        block_id = block_with_button(blocks, action_id)
        if block_id is None:
            log.warning("choice not shown: the message does not carry that button", extra={"channel": ref.channel_id})
            return False
        updated = render_chosen(blocks, chosen_label, language, block_id)
        text = texts(language).you_chose.format(label=inert(chosen_label))
        await client.chat_update(channel=ref.channel_id, ts=message_id, text=text, blocks=updated)
        return True

    async def notify(self, ref: ThreadRef, text: str) -> str:
        """An ephemeral line for the asker only (already-safe mrkdwn)."""
        return await self._ephemeral(await self._client_for(ref.workspace_id), ref, text)

    async def show_progress(self, ref: ThreadRef, language: str | None) -> ThreadRef:
        """A visible sign that work started: the assistant status, or a placeholder message in the thread
        (none in a channel the bot does not answer in: its notice is ephemeral)."""
        if not self._progress_allowed(ref):
            return ref
        if language is None and (asker := ref_extra(ref, ASKER)):
            language = (await self._users.get(ref.workspace_id, asker)).locale
        client = await self._client_for(ref.workspace_id)
        if is_assistant(ref):
            try:
                await client.assistant_threads_setStatus(
                    channel_id=ref.channel_id, thread_ts=ref.thread_id, status=wording(language).assistant_status
                )
                return ref
            except SlackApiError as exc:
                log.info("assistant status unavailable", extra={"error": slack_error(exc)})
                ref = dataclasses.replace(ref, extra=tuple(e for e in ref.extra if e[0] != ASSISTANT))
        placeholder = render_placeholder(language)
        marked = [{**block, "block_id": PROGRESS_BLOCK} for block in placeholder.blocks[:1]] + placeholder.blocks[1:]
        ts = await self._post(client, ref, SlackMessage(placeholder.text, marked))
        return dataclasses.replace(ref, placeholder_id=ts)

    async def find_progress(self, ref: ThreadRef) -> ThreadRef:
        """A placeholder of ours already in the thread that no reply replaced (an attempt that crashed, or whose
        post succeeded after we stopped waiting): the reply should replace it rather than add a second post."""
        if ref.placeholder_id or not ref.thread_id:
            return ref
        client = await self._client_for(ref.workspace_id)
        response = await client.conversations_replies(channel=ref.channel_id, ts=ref.thread_id, limit=100)
        for message in response.get("messages") or []:
            ours = message.get("bot_id") or message.get("user") == ref_extra(ref, BOT_USER)
            if ours and any(b.get("block_id") == PROGRESS_BLOCK for b in message.get("blocks") or []):
                return dataclasses.replace(ref, placeholder_id=str(message["ts"]))
        return ref

    async def clear_progress(self, ref: ThreadRef) -> None:
        """Remove the progress sign when no answer follows (the message was not for the bot)."""
        client = await self._client_for(ref.workspace_id)
        try:
            if ref.placeholder_id:
                await client.chat_delete(channel=ref.channel_id, ts=ref.placeholder_id)
            elif is_assistant(ref):
                await client.assistant_threads_setStatus(channel_id=ref.channel_id, thread_ts=ref.thread_id, status="")
        except Exception as exc:
            log.warning("clearing progress failed", extra={"error": slack_error(exc)})

    async def _first(
        self, client: AsyncWebClient, ref: ThreadRef, message: SlackMessage, marker: Metadata | None = None
    ) -> str:
        if ref.placeholder_id:
            try:
                await client.chat_update(
                    channel=ref.channel_id, ts=ref.placeholder_id, text=message.text, blocks=message.blocks,
                    metadata=marker,
                )  # fmt: skip
                return ref.placeholder_id
            except SlackApiError as exc:
                error = slack_error(exc)
                if error not in PLACEHOLDER_GONE:
                    # transient, permanent, or the blocks refused (posting them instead would be refused too): never
                    # taken for a deleted placeholder, which would post twice
                    raise
                log.info("placeholder gone, posting the reply", extra={"error": error})
        return await self._post(client, ref, message, marker)

    async def _post(
        self, client: AsyncWebClient, ref: ThreadRef, message: SlackMessage, marker: Metadata | None = None
    ) -> str:
        # not repeated by the client after a 5xx or a dropped connection: the post may have landed, and a second one
        # would carry the same marker; the outbox's retry (or `find_progress`) looks for it instead
        response = await creating_client(client).chat_postMessage(
            channel=ref.channel_id,
            thread_ts=ref.thread_id,
            text=message.text,
            blocks=message.blocks,
            unfurl_links=False,
            unfurl_media=False,
            metadata=marker,
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

    async def channel_name(self, ref: ThreadRef) -> str | None:
        """The channel's name (`pipeline.messages.ChannelNamer`), for a team answer's citation."""
        return await self._channels.name(ref.workspace_id, ref.channel_id)

    async def permalink(self, ref: ThreadRef, message_id: str) -> str | None:
        """The message's permalink (`pipeline.messages.Permalinker`), for a team answer's link to its thread; None
        when Slack cannot give it now (the link then opens the channel)."""
        try:
            client = await self._client_for(ref.workspace_id)
            response = await client.chat_getPermalink(channel=ref.channel_id, message_ts=message_id)
        except Exception as exc:  # a link is a nicety: the capture goes on with the channel's link
            log.warning("chat.getPermalink failed", extra={"error": slack_error(exc), "team": ref.workspace_id})
            return None
        return str(response.get("permalink") or "") or None

    async def read_message(self, ref: ThreadRef, message_id: str) -> PostedMessage | None:
        """One message read back (`pipeline.messages.MessageReader`): a ✅'d message and the thread it is in.
        conversations.replies takes the ts of any message of a thread; the answer may start with the thread's root."""
        client = await self._client_for(ref.workspace_id)
        try:
            response = await client.conversations_replies(
                channel=ref.channel_id, ts=message_id, oldest=message_id, latest=message_id, inclusive=True, limit=2
            )
        except SlackApiError as exc:
            if slack_error(exc) in ("thread_not_found", "message_not_found", "channel_not_found"):
                return None
            raise
        found = next((m for m in response.get("messages") or [] if m.get("ts") == message_id), None)
        if found is None:
            return None
        author = str(found.get("user") or found.get("bot_id") or "")
        name = (await self._users.get(ref.workspace_id, author)).name if found.get("user") else author
        return PostedMessage(
            message_id=message_id, thread_id=str(found.get("thread_ts") or message_id), author_id=author,
            author_name=name, text=str(found.get("text") or ""), ts=to_datetime(message_id),
            from_bot=bool(found.get("bot_id")) or author == ref_extra(ref, BOT_USER),
        )  # fmt: skip

    async def open_editor(self, ref: ThreadRef, message_id: str, action_id: str, title: str, text: str) -> bool:
        """The review editor (`pipeline.messages.ReviewEditor`), for the press whose trigger_id the ref carries;
        False once Slack no longer takes it (3 s after the press)."""
        trigger = ref_extra(ref, TRIGGER)
        if not trigger:
            return False
        view = editor_view(title, text, channel=ref.channel_id, message_ts=message_id, thread_ts=ref.thread_id,
                           action_id=action_id)  # fmt: skip
        client = await self._client_for(ref.workspace_id)
        try:
            await client.views_open(trigger_id=trigger, view=view)
        except SlackApiError as exc:
            if slack_error(exc) in EXPIRED_TRIGGER:
                log.info("editor not opened: the press is too old", extra={"error": slack_error(exc)})
                return False
            raise
        return True

    async def _blocks_of(self, client: AsyncWebClient, ref: ThreadRef, message_ts: str) -> list[dict[str, Any]]:
        response = await client.conversations_replies(
            channel=ref.channel_id, ts=ref.thread_id, oldest=message_ts, latest=message_ts, inclusive=True, limit=10
        )
        for message in response.get("messages") or []:
            if message.get("ts") == message_ts:
                return list(message.get("blocks") or [])
        return []


class _BlocksRefused(Exception):
    def __init__(self, error: SlackApiError) -> None:
        super().__init__(slack_error(error))
        self.error = error


def _marker(attempt: DeliveryAttempt | None, part: int) -> Metadata | None:
    """Message metadata naming the stored reply and the part: what a retry looks for in the thread."""
    if attempt is None:
        return None
    return Metadata(event_type=REPLY_EVENT, event_payload={"delivery": attempt.key, "part": part})


def _trusted_response_url(url: str, api_base_url: str) -> bool:
    """Slack's hooks host, or the host the Web API is configured on (a proxy or the fake): a response_url is
    posted to only there, whatever a payload says."""
    host = urlsplit(url).hostname or ""
    return urlsplit(url).scheme in ("https", "http") and (
        host == "hooks.slack.com" or host == (urlsplit(api_base_url).hostname or "")
    )


def _section(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}
