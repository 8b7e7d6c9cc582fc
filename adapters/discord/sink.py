"""Posting replies: `DiscordReplySink.post(ref, reply)` renders a neutral reply and sends it to a thread, DM or
channel by id alone (no cache needed), so a durable outbox can drive it after a restart."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import replace
from datetime import UTC
from typing import TYPE_CHECKING, Any, Final, Literal

import discord

from adapters.discord.buttons import PUBLISH, SOLVED, ActionButton, ButtonRef
from adapters.discord.inbound import thread_name
from adapters.discord.layout import render_card
from adapters.discord.render import OutgoingMessage, no_mentions, render_reply
from adapters.discord.stream import MIN_INTERVAL_S, DiscordAnswerStream
from adapters.discord.wording import CHOSEN_MARK, language_of, texts_for, wording
from pipeline.messages import DeliveryAttempt, DeliveryRejected, Inbound, PostedMessage, Reply, ReplyKind, ThreadRef

if TYPE_CHECKING:
    from discord.types.webhook import Webhook as WebhookPayload

ASKER_KEY = "asker"  # ThreadRef.extra: the Discord user id of the person who asked
SUPPORT_KEY = "mention_support"  # ThreadRef.extra: "1" to mention the support role (after "ask a human")
ASK_KEY = "ask_locale"  # ThreadRef.extra: an /ask whose question the worker still has to post (the asker's locale)
START_THREAD_KEY = "start_thread"  # ThreadRef.extra: "1" when the worker still has to start the event's thread
THREAD_ON_KEY = "thread_on"  # ThreadRef.extra: the message to start that thread on, when not the event's own
INTERACTION_KEY = "interaction"  # ThreadRef.extra: a button press's interaction token (valid 15 min): private notes
PRIVATE_KEY = "private"  # ThreadRef.extra: "1" when the reply is only for the asker (ephemeral, by the interaction)
PUBLISH_KEY = "publish"  # ThreadRef.extra: "<question id>-<message id>": a private answer offers "Publish"
FORUM_KEY = "forum"  # ThreadRef.extra: the forum channel id of a forum post (answers offer "Solved")
OWNER_KEY = "owner"  # ThreadRef.extra: the forum post's author (who may mark it solved)
LOCALE_KEY = "locale"  # ThreadRef.extra: the client locale of whoever pressed (Publish, Solved): their notes' language
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
    private: bool = False,
    publish: str | None = None,
    forum_id: str | None = None,
    owner_id: str | None = None,
    thread_on: str | None = None,
    locale: str | None = None,
) -> ThreadRef:
    """Where a Discord reply goes: `thread_id` is the thread (or DM / channel) to post in. `start_thread`: the
    thread does not exist yet (the worker starts it on the message, or on the /ask question it posts). `private`:
    only the asker sees the reply (through `interaction_token`); `publish` offers them to post it in public.
    `forum_id`/`owner_id`: a post in a forum docbot answers (its replies offer "Solved" to the post's author).
    `locale`: the Discord client locale of the person whose press this is, for what is said to them."""
    extra = ((ASKER_KEY, str(asker_id)),) + (((SUPPORT_KEY, "1"),) if mention_support else ())
    extra += ((ASK_KEY, ask_locale),) if ask_locale is not None else ()
    extra += ((START_THREAD_KEY, "1"),) if start_thread else ()
    extra += ((INTERACTION_KEY, interaction_token),) if interaction_token else ()
    extra += ((PRIVATE_KEY, "1"),) if private else ()
    extra += ((PUBLISH_KEY, publish),) if publish else ()
    extra += ((FORUM_KEY, forum_id),) if forum_id else ()
    extra += ((OWNER_KEY, owner_id),) if owner_id else ()
    extra += ((THREAD_ON_KEY, thread_on),) if thread_on else ()
    extra += ((LOCALE_KEY, locale),) if locale else ()
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
        nonce = nonces[index] if nonces else None  # None: discord.py picks one
        if message.layout is not None:  # Components v2: no content, no embed
            sent = await channel.send(
                view=message.layout, allowed_mentions=message.allowed_mentions,
                nonce=nonce,  # type: ignore[arg-type]
            )  # fmt: skip
        else:
            sent = await channel.send(
                content=message.content,
                embed=message.embed,  # type: ignore[arg-type]  # None is accepted at run time
                view=message.view,  # type: ignore[arg-type]
                allowed_mentions=message.allowed_mentions,
                nonce=nonce,  # type: ignore[arg-type]
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
        self, client: discord.Client, *, support_role_id: int | None = None, stream_interval_s: float = MIN_INTERVAL_S,
        solved_tag: str = "Solved",
    ) -> None:
        self._client = client
        self._support_role_id = support_role_id
        self._stream_interval_s = stream_interval_s
        self._solved_tag = solved_tag

    def open_stream(self, ref: ThreadRef) -> DiscordAnswerStream:
        """A stream of the answer into the thread by edits at most once per `stream_interval_s`; `finish()` gives
        the message id that `post` then edits into the final reply."""
        return DiscordAnswerStream(self._client, ref, min_interval_s=self._stream_interval_s)

    async def channel_name(self, ref: ThreadRef) -> str | None:
        """The channel's name (`pipeline.messages.ChannelNamer`), for a team answer's citation: from the gateway's
        cache, else GET /channels/{id}; None for a DM or when it cannot be read now."""
        channel = self._client.get_channel(int(ref.channel_id))
        if channel is None:
            try:
                channel = await self._client.fetch_channel(int(ref.channel_id))
            except discord.HTTPException as exc:  # a name is a nicety: the citation falls back to the id
                log.warning("channel not read", extra={"status": exc.status})
                return None
        name = getattr(channel, "name", None)
        return str(name) if name else None

    async def read_message(self, ref: ThreadRef, message_id: str) -> PostedMessage | None:
        """One message read back (`pipeline.messages.MessageReader`): a ✅'d message in the ref's thread."""
        channel = self._client.get_partial_messageable(int(ref.thread_id))
        try:
            message = await channel.fetch_message(int(message_id))
        except discord.NotFound:
            return None
        return PostedMessage(
            message_id=message_id, thread_id=ref.thread_id, author_id=str(message.author.id),
            author_name=message.author.display_name, text=message.content, ts=message.created_at.astimezone(UTC),
            from_bot=message.author.bot,
        )  # fmt: skip

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
        anchor = extra.pop(THREAD_ON_KEY, None) or inbound.message_id
        if locale is not None:  # /ask: the question in the channel (or thread), by the bot, after it was stored
            asked = texts_for(locale).user_asked.format(user=f"<@{inbound.user_id}>")
            quoted = "\n".join(f"> {line}" for line in inbound.text.splitlines()) or ">"
            where = self._client.get_partial_messageable(int(ref.channel_id if start else ref.thread_id))
            echo = await where.send(content=f"{asked}\n{quoted}"[:2000], allowed_mentions=no_mentions())
            anchor = str(echo.id)
        thread_id = inbound.thread_id
        if start:  # after a posted /ask question a failure answers in place: a retry would post the question again
            thread_id = await self._start_thread(int(ref.channel_id), int(anchor), inbound, retry=locale is None,
                                                 locale=locale or extra.get(LOCALE_KEY))  # fmt: skip
        inbound = replace(inbound, message_id=anchor, thread_id=thread_id)
        ref = replace(ref, thread_id=thread_id or ref.channel_id, extra=tuple(extra.items()))
        return inbound, ref

    async def _private(self, token: str, reply: Reply) -> str:
        """A note only the person who pressed sees: an ephemeral follow-up to their press's interaction (Discord
        keeps its token valid for 15 minutes; after that the note is dropped, it would come too late anyway)."""
        followup = self._webhook(token)
        try:
            sent = await followup.send(
                content=reply.text[:2000], ephemeral=True, wait=True, allowed_mentions=no_mentions()
            )
        except (discord.NotFound, discord.Forbidden) as exc:  # the interaction expired
            raise DeliveryRejected(f"discord interaction {exc.status} {exc.code}") from exc
        return str(sent.id)

    async def _start_thread(
        self, channel_id: int, message_id: int, inbound: Inbound, *, retry: bool, locale: str | None
    ) -> str | None:
        """A public thread on the message; None (answer in place) when Discord refuses, e.g. missing permission.
        `retry`: a transient failure (5xx) raises, so the event is retried (starting a thread is idempotent).
        `locale`: the asker's or presser's client locale, for the name of a thread whose message has no text."""
        text = inbound.text
        if not text.strip():  # a published answer: the thread is named after the message it is about
            try:
                text = (await self._client.get_partial_messageable(channel_id).fetch_message(message_id)).content
            except discord.HTTPException as exc:
                log.info("naming the thread after its message failed", extra={"status": exc.status})
        name = thread_name(text, inbound.user_name, locale)
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
        """The typing indicator (Discord shows it for about 10 s); none for a private answer ("thinking" shows)."""
        if dict(ref.extra).get(PRIVATE_KEY) != "1":
            await self._client.http.send_typing(int(ref.thread_id))
        return ref

    async def clear_progress(self, ref: ThreadRef) -> None:
        return None  # typing ends by itself

    async def find_progress(self, ref: ThreadRef) -> ThreadRef:
        return ref  # typing leaves nothing in the thread

    async def show_choice(
        self, ref: ThreadRef, message_id: str, action_id: str, chosen_label: str, language: str | None
    ) -> bool:
        """Disable the buttons of the message carrying `action_id` and mark that one; False when it carries none (a
        forged or misrouted press changes nothing). A private answer's message is the asker's alone: it is left."""
        if dict(ref.extra).get(PRIVATE_KEY) == "1":
            return False
        channel = self._client.get_partial_messageable(int(ref.thread_id))
        message = await channel.fetch_message(int(message_id))
        view = chosen_view(message, action_id)
        if view is None:
            return False
        await message.edit(view=view)
        return True

    async def mark_solved(self, ref: ThreadRef) -> Reply:
        """Apply the forum's solved tag to the post (`pipeline.messages.ThreadMarker`); the note for the presser."""
        extra = dict(ref.extra)
        language = language_of(extra.get(LOCALE_KEY))
        words = wording(language)
        forum = await self._client.fetch_channel(int(extra.get(FORUM_KEY) or 0))
        tags = getattr(forum, "available_tags", [])
        wanted = self._solved_tag.casefold()
        tag = next((t for t in tags if t.name.casefold() == wanted), None)
        if tag is None:
            log.warning("discord forum has no solved tag", extra={"forum": extra.get(FORUM_KEY)})
            return _note(words.no_solved_tag.format(tag=self._solved_tag), language)
        thread = await self._client.fetch_channel(int(ref.thread_id))
        applied = [t.id for t in getattr(thread, "applied_tags", [])]
        if tag.id in applied:
            return _note(words.solved, language)
        await self._client.http.edit_channel(int(ref.thread_id), applied_tags=[str(i) for i in [*applied, tag.id][-5:]])
        return _note(words.solved, language)

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
        heading = texts_for(reply.language).sources_heading
        asker = int(extra.get(ASKER_KEY, "0"))
        buttons = self._extra_buttons(ref, reply)
        if extra.get(PRIVATE_KEY) == "1" and token:
            cards = render_card(reply, asker_id=asker, sources_heading=heading, extra=buttons)
            return await self._private_answer(token, cards)
        # a ref without a thread (the review or digest channel) posts in the channel itself
        channel = self._client.get_partial_messageable(int(ref.thread_id or ref.channel_id))
        try:
            if ref.placeholder_id:  # a streamed answer (sent without Components v2): edited with the classic form
                messages = render_reply(reply, asker_id=asker, sources_heading=heading, mention_role_id=mention,
                                        extra=tuple(buttons))  # fmt: skip
                first_id = await _replace(channel, int(ref.placeholder_id), messages[0]) if messages else None
                if first_id is not None:
                    if len(messages) == 1:
                        return first_id
                    return await send_all(channel, messages[1:], delivery_nonces(attempt, len(messages) - 1, 1))
            cards = render_card(reply, asker_id=asker, sources_heading=heading, mention_role_id=mention,
                                extra=buttons)  # fmt: skip
            return await send_all(channel, cards, delivery_nonces(attempt, len(cards)))
        except (discord.Forbidden, discord.NotFound) as exc:  # missing access, deleted thread: retrying won't help
            raise DeliveryRejected(f"discord {exc.status} {exc.code}") from exc

    def _extra_buttons(self, ref: ThreadRef, reply: Reply) -> list[discord.ui.Item[Any]]:
        """Publish under a private answer that may be posted in public, Solved under answers in a forum post."""
        extra = dict(ref.extra)
        if reply.kind is ReplyKind.NOTICE:
            return []
        asker = int(extra.get(ASKER_KEY, "0"))
        words = wording(reply.language)
        if extra.get(PRIVATE_KEY) == "1" and extra.get(PUBLISH_KEY):
            publish = ButtonRef(action_id=str(extra[PUBLISH_KEY]), asker_id=asker, tag=PUBLISH)
            return [ActionButton(publish, label=words.publish, style=discord.ButtonStyle.primary)]
        if extra.get(FORUM_KEY):
            owner = int(extra.get(OWNER_KEY) or asker)
            solved = ButtonRef(action_id=ref.thread_id, asker_id=owner, tag=SOLVED)
            return [ActionButton(solved, label=words.solved_label, style=discord.ButtonStyle.success)]
        return []

    async def _private_answer(self, token: str, cards: list[OutgoingMessage]) -> str:
        """An answer only the asker sees: the deferred "thinking" response becomes its first card, the rest follow
        as ephemeral follow-ups (the interaction's token is valid for 15 minutes)."""
        followup = self._webhook(token)
        try:
            first = cards[0]
            assert first.layout is not None
            original: Any = "@original"  # Discord's name for an interaction's first response (typed as an id)
            edited = await followup.edit_message(
                original, attachments=[], view=first.layout, allowed_mentions=first.allowed_mentions
            )
            last_id = str(edited.id)
            for card in cards[1:]:
                assert card.layout is not None
                sent = await followup.send(view=card.layout, ephemeral=True, wait=True,
                                           allowed_mentions=card.allowed_mentions)  # fmt: skip
                last_id = str(sent.id)
        except (discord.NotFound, discord.Forbidden) as exc:  # the interaction expired: nothing reaches the asker
            raise DeliveryRejected(f"discord interaction {exc.status} {exc.code}") from exc
        return last_id

    def _webhook(self, token: str) -> discord.Webhook:
        application_id = self._client.application_id
        if application_id is None:
            raise DeliveryRejected("discord application id unknown: no private answer")
        payload: WebhookPayload = {"id": application_id, "type": 3, "token": token}
        return discord.Webhook.from_state(data=payload, state=self._client._connection)


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


def chosen_view(message: discord.Message, action_id: str) -> discord.ui.View | discord.ui.LayoutView | None:
    """The message's components, every docbot button disabled and the one carrying `action_id` marked; None when no
    button carries it. Works on classic messages and Components v2 cards alike (discord.py's `from_message`)."""
    if message.flags.components_v2:
        view: discord.ui.View | discord.ui.LayoutView = discord.ui.LayoutView.from_message(message, timeout=None)
    else:
        view = discord.ui.View.from_message(message, timeout=None)
    buttons = [item for item in view.walk_children() if isinstance(item, discord.ui.Button) and item.custom_id]
    chosen = next((b for b in buttons if (ref := ButtonRef.parse(b.custom_id or "")) and ref.action_id == action_id),
                  None)  # fmt: skip
    if chosen is None:
        return None
    for button in buttons:
        if ButtonRef.parse(button.custom_id or "") is None:
            continue
        button.disabled = True
        if button is chosen:
            button.label = f"{CHOSEN_MARK}{button.label or ''}"
            button.style = discord.ButtonStyle.success
        else:
            button.style = discord.ButtonStyle.secondary
    return view


def _note(text: str, language: str) -> Reply:
    return Reply(ReplyKind.NOTICE, text, language, "", reason="action_notice")
