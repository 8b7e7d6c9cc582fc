"""Posting replies: `DiscordReplySink.post(ref, reply)` renders a neutral reply and sends it to a thread, DM or
channel by id alone (no cache needed), so a durable outbox can drive it after a restart."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Final, Literal

import discord

from adapters.discord import wording
from adapters.discord.buttons import ButtonRef
from adapters.discord.inbound import thread_name
from adapters.discord.render import OutgoingMessage, no_mentions, render_reply
from adapters.discord.stream import MIN_INTERVAL_S, DiscordAnswerStream
from adapters.discord.wording import texts_for
from pipeline.messages import DeliveryAttempt, DeliveryRejected, Inbound, Reply, ThreadRef

if TYPE_CHECKING:
    from discord.types.webhook import Webhook as WebhookPayload

ASKER_KEY = "asker"  # ThreadRef.extra: the Discord user id of the person who asked
SUPPORT_KEY = "mention_support"  # ThreadRef.extra: "1" to mention the support role (after "ask a human")
ASK_KEY = "ask_locale"  # ThreadRef.extra: an /ask whose question the worker still has to post (the asker's locale)
START_THREAD_KEY = "start_thread"  # ThreadRef.extra: "1" when the worker still has to start the event's thread
INTERACTION_KEY = "interaction"  # ThreadRef.extra: a button press's interaction token (valid 15 min): private notes
# replies only the asker or presser needs to see (a refused press, thanks, a rate-limit notice), where Discord allows
# it: an interaction (a press, an /ask) can be answered privately for 15 minutes; a mention cannot
PRIVATE_REASONS = frozenset({"action_notice", "rate_limited", "token_budget_spent"})
THREAD_ARCHIVE_MINUTES: Final[Literal[1440]] = 1440
THREAD_ALREADY_CREATED = 160004  # Discord's JSON error code for a second thread on one message
log = logging.getLogger(__name__)


def discord_thread_ref(
    workspace_id: str,
    channel_id: str,
    thread_id: str,
    *,
    asker_id: int,
    mention_support: bool = False,
    ask_locale: str | None = None,
    start_thread: bool = False,
    interaction_token: str | None = None,
) -> ThreadRef:
    """Where a Discord reply goes: `thread_id` is the thread (or DM / channel) to post in. `start_thread`: the
    thread does not exist yet (the worker starts it on the message, or on the /ask question it posts)."""
    extra = ((ASKER_KEY, str(asker_id)),) + (((SUPPORT_KEY, "1"),) if mention_support else ())
    extra += ((ASK_KEY, ask_locale),) if ask_locale is not None else ()
    extra += ((START_THREAD_KEY, "1"),) if start_thread else ()
    extra += ((INTERACTION_KEY, interaction_token),) if interaction_token else ()
    return ThreadRef("discord", workspace_id, channel_id, thread_id, extra=extra)


def before_thread(ref: ThreadRef) -> ThreadRef:
    """Where to post for an event whose thread was not started yet: its channel."""
    return replace(ref, thread_id=ref.channel_id) if dict(ref.extra).get(START_THREAD_KEY) == "1" else ref


async def send_all(
    channel: discord.abc.Messageable, messages: list[OutgoingMessage], nonces: list[str] | None = None
) -> str:
    """Send `messages` in order; returns the id of the last one (the one carrying the buttons). `nonces`, one per
    message: Discord returns the message already created with that nonce (recently) instead of creating another."""
    last_id = ""
    for index, message in enumerate(messages):
        sent = await channel.send(
            content=message.content,
            embed=message.embed,  # type: ignore[arg-type]  # None is accepted at run time
            view=message.view,  # type: ignore[arg-type]
            allowed_mentions=message.allowed_mentions,
            nonce=nonces[index] if nonces else None,  # type: ignore[arg-type]  # None: discord.py picks one
        )
        last_id = str(sent.id)
    return last_id


def delivery_nonces(attempt: DeliveryAttempt | None, parts: int, first: int = 0) -> list[str] | None:
    """One nonce per part of a stored reply, the same on every try (Discord allows 25 characters); with
    `enforce_nonce` (discord.py sends it with every nonce) a retry after a 5xx whose message was in fact created
    gets that message back instead of a second one. Discord remembers nonces for a few minutes only."""
    if attempt is None:
        return None
    return [
        hashlib.blake2b(f"{attempt.key}:{part}".encode(), digest_size=12).hexdigest()
        for part in range(first, first + parts)
    ]


class DiscordReplySink:
    """Implements `pipeline.messages.ReplySink` for Discord. Raises `DeliveryRejected` when Discord refuses for good
    (403, 404); other errors are transient for the outbox. 429s are waited out and retried by discord.py."""

    def __init__(
        self, client: discord.Client, *, support_role_id: int | None = None, stream_interval_s: float = MIN_INTERVAL_S
    ) -> None:
        self._client = client
        self._support_role_id = support_role_id
        self._stream_interval_s = stream_interval_s

    def open_stream(self, ref: ThreadRef) -> DiscordAnswerStream:
        """A stream of the answer into the thread by edits at most once per `stream_interval_s`; `finish()` gives
        the message id that `post` then edits into the final reply."""
        return DiscordAnswerStream(self._client, ref, min_interval_s=self._stream_interval_s)

    # -- what the worker that claimed an event does besides replying (`pipeline.messages.ProgressSink`) ---------

    async def prepare(self, inbound: Inbound, ref: ThreadRef) -> tuple[Inbound, ThreadRef]:
        """Before a claimed event is handled: post an /ask question where it was asked, and start the thread a
        mention or an /ask in a channel opens (on the message; a thread Discord refuses means answering in
        place). Raises when the question cannot be posted (the event is retried)."""
        extra = dict(ref.extra)
        locale = extra.pop(ASK_KEY, None)
        start = extra.pop(START_THREAD_KEY, None) == "1"
        if locale is None and not start:
            return inbound, ref
        anchor = inbound.message_id
        if locale is not None:  # /ask: the question in the channel (or thread), by the bot, after it was stored
            asked = texts_for(locale).user_asked.format(user=f"<@{inbound.user_id}>")
            quoted = "\n".join(f"> {line}" for line in inbound.text.splitlines()) or ">"
            where = self._client.get_partial_messageable(int(ref.channel_id if start else ref.thread_id))
            echo = await where.send(content=f"{asked}\n{quoted}"[:2000], allowed_mentions=no_mentions())
            anchor = str(echo.id)
        thread_id = inbound.thread_id
        if start:  # after a posted /ask question a failure answers in place: a retry would post the question again
            thread_id = await self._start_thread(int(ref.channel_id), int(anchor), inbound, retry=locale is None)
        inbound = replace(inbound, message_id=anchor, thread_id=thread_id)
        ref = replace(ref, thread_id=thread_id or ref.channel_id, extra=tuple(extra.items()))
        return inbound, ref

    async def _private(self, token: str, reply: Reply) -> str:
        """A note only the person who pressed sees: an ephemeral follow-up to their press's interaction (Discord
        keeps its token valid for 15 minutes; after that the note is dropped, it would come too late anyway)."""
        application_id = self._client.application_id
        if application_id is None:
            raise DeliveryRejected("discord application id unknown: no private note")
        payload: WebhookPayload = {"id": application_id, "type": 3, "token": token}
        followup = discord.Webhook.from_state(data=payload, state=self._client._connection)
        try:
            sent = await followup.send(
                content=reply.text[:2000], ephemeral=True, wait=True, allowed_mentions=no_mentions()
            )
        except (discord.NotFound, discord.Forbidden) as exc:  # the interaction expired
            raise DeliveryRejected(f"discord interaction {exc.status} {exc.code}") from exc
        return str(sent.id)

    async def _start_thread(self, channel_id: int, message_id: int, inbound: Inbound, *, retry: bool) -> str | None:
        """A public thread on the message; None (answer in place) when Discord refuses, e.g. missing permission.
        `retry`: a transient failure (5xx) raises, so the event is retried (starting a thread is idempotent)."""
        name = thread_name(inbound.text, inbound.user_name)
        try:
            thread = await self._client.http.start_thread_with_message(
                channel_id, message_id, name=name, auto_archive_duration=THREAD_ARCHIVE_MINUTES
            )
        except discord.HTTPException as exc:
            if exc.code == THREAD_ALREADY_CREATED:  # a retried event: the thread from before has the message's id
                return str(message_id)
            if exc.status >= 500 and retry:
                raise  # transient: the event is retried
            log.warning("discord thread creation failed", extra={"status": exc.status, "code": exc.code})
            return None
        return str(thread["id"])

    async def show_progress(self, ref: ThreadRef, language: str | None) -> ThreadRef:
        """The typing indicator (Discord shows it for about 10 s)."""
        await self._client.http.send_typing(int(ref.thread_id))
        return ref

    async def clear_progress(self, ref: ThreadRef) -> None:
        return None  # typing ends by itself

    async def find_progress(self, ref: ThreadRef) -> ThreadRef:
        return ref  # typing leaves nothing in the thread

    async def show_choice(
        self, ref: ThreadRef, message_id: str, action_id: str, chosen_label: str, language: str | None
    ) -> bool:
        """Disable the buttons of the message carrying `action_id` and mark that one; False when the message Discord
        holds carries no such button (a forged or misrouted press changes nothing)."""
        channel = self._client.get_partial_messageable(int(ref.thread_id))
        message = await channel.fetch_message(int(message_id))
        for row in message.components:
            for component in getattr(row, "children", ()):
                custom_id = component.custom_id if isinstance(component, discord.Button) else None
                parsed = ButtonRef.parse(custom_id) if custom_id else None
                if parsed is not None and parsed.action_id == action_id:
                    await message.edit(view=chosen_view(message, parsed.custom_id))
                    return True
        return False

    async def post(self, ref: ThreadRef, reply: Reply) -> str:
        return await self._post(ref, reply, None)

    async def post_once(self, ref: ThreadRef, reply: Reply, attempt: DeliveryAttempt) -> str:
        """`post` with a nonce per message derived from the stored reply: a retry does not post it twice. A 5xx
        (`DiscordServerError`, after discord.py's own retries) is transient: the outbox retries; never taken for a
        deleted message."""
        return await self._post(ref, reply, attempt)

    async def _post(self, ref: ThreadRef, reply: Reply, attempt: DeliveryAttempt | None) -> str:
        extra = dict(ref.extra)
        token = extra.get(INTERACTION_KEY)
        if reply.reason in PRIVATE_REASONS and token:
            return await self._private(token, reply)
        mention = self._support_role_id if extra.get(SUPPORT_KEY) == "1" else None
        messages = render_reply(
            reply,
            asker_id=int(extra.get(ASKER_KEY, "0")),
            sources_heading=texts_for(reply.language).sources_heading,
            mention_role_id=mention,
        )
        channel = self._client.get_partial_messageable(int(ref.thread_id))
        try:
            if ref.placeholder_id and messages:
                first_id = await _replace(channel, int(ref.placeholder_id), messages[0])
                if first_id is not None:
                    if len(messages) == 1:
                        return first_id
                    return await send_all(channel, messages[1:], delivery_nonces(attempt, len(messages) - 1, 1))
            return await send_all(channel, messages, delivery_nonces(attempt, len(messages)))
        except (discord.Forbidden, discord.NotFound) as exc:  # missing access, deleted thread: retrying won't help
            raise DeliveryRejected(f"discord {exc.status} {exc.code}") from exc


async def _replace(channel: discord.PartialMessageable, message_id: int, message: OutgoingMessage) -> str | None:
    """Edit an earlier message (a streamed answer) into `message`; None when it is gone (send instead)."""
    try:
        await channel.get_partial_message(message_id).edit(
            content=message.content,
            embed=message.embed,
            view=message.view,
            allowed_mentions=message.allowed_mentions,
        )
    except discord.NotFound:
        return None
    return str(message_id)


def chosen_view(message: discord.Message, chosen_custom_id: str) -> discord.ui.View:
    """The message's buttons, all disabled, the pressed one marked."""
    view = discord.ui.View(timeout=None)
    for row_index, row in enumerate(message.components):
        for component in getattr(row, "children", ()):
            if not isinstance(component, discord.Button):
                continue
            chosen = component.custom_id == chosen_custom_id
            label = component.label or ""
            view.add_item(
                discord.ui.Button(
                    label=f"{wording.CHOSEN_MARK}{label}" if chosen else label,
                    style=discord.ButtonStyle.success if chosen else discord.ButtonStyle.secondary,
                    custom_id=component.custom_id,
                    disabled=True,
                    row=min(row_index, 4),
                )
            )
    return view
