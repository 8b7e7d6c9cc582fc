"""The Discord bot: mentions, `/ask`, thread follow-ups and DMs in; threaded replies with persistent buttons out.

    client = DocbotClient(discord_options(settings))  # bot.adapter_options: what the client is told of the settings
    client.intake = delivery          # bot.delivery.Delivery, with client.sink and client.fetcher_for registered
    await client.start(settings.discord_bot_token.get_secret_value())

Each event: ignore bots and self, drop repeats of the same gateway event, store a neutral `Inbound` in the durable
inbox, and only then acknowledge (`/ask`, buttons, the review editor's submission; a write slower than `ack_within_s`
is deferred first, since Discord wants a response within 3 s). The inbox is the only way in: the delivery worker that
claims the event starts its thread, shows typing, asks the conversation service and posts through `DiscordReplySink`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

import discord
from discord import app_commands

from adapters.discord import wording
from adapters.discord.api_url import use_api_url
from adapters.discord.buttons import EDIT, PUBLISH, SOLVED, ActionButton, ButtonRef
from adapters.discord.dedupe import RecentIds
from adapters.discord.editor import AnswerEditor, Unreadable, read_submission
from adapters.discord.inbound import DiscordThreadFetcher, conversation_ids, strip_bot_mention
from adapters.discord.options import DiscordOptions
from adapters.discord.render import no_mentions
from adapters.discord.sink import DiscordReplySink, before_thread, chosen_view, discord_thread_ref
from adapters.discord.translator import WordingTranslator, described
from pipeline.messages import (
    CHECKMARK,
    PUBLISH_PREFIX,
    SOLVED_MARK,
    SOLVED_PREFIX,
    Inbound,
    InboundKind,
    Reply,
    ReplyKind,
    ThreadFetcher,
    ThreadRef,
)
from pipeline.messages.question import InputProblem, check_question

if TYPE_CHECKING:
    from discord.types.interactions import ModalSubmitInteractionData

log = logging.getLogger(__name__)

PLATFORM = "discord"
ACK_WITHIN_S = 2.0  # an interaction whose inbox write takes longer is deferred first (Discord: a response in 3 s)
ALREADY_ACKNOWLEDGED = 40060  # Discord's code for a second response to one interaction


class Intake(Protocol):
    """A durable inbox (`bot.delivery.Delivery`): stores the event; its worker answers through the sink."""

    async def accept(self, inbound: Inbound, ref: ThreadRef) -> bool: ...


ReviewText = Callable[[str, str, tuple[str, ...]], Awaitable[str | None]]  # (button, user, roles) → the text
CHECKMARKS = frozenset({"✅", "✔️"})  # a ✅ by the asker resolves a thread (team answers)
Components = discord.ui.View | discord.ui.LayoutView  # a message's buttons, classic or Components v2


@dataclass(frozen=True, slots=True)
class Stored:
    """How an interaction's inbox write ended: `new` (False: the inbox already held the event) or `error`; and
    `deferred`: the write outlasted `ack_within_s`, so Discord was answered before it ended."""

    deferred: bool
    new: bool = False
    error: Exception | None = None


def default_intents() -> discord.Intents:
    """Guild and DM messages, with message content (privileged: enable it in the developer portal), and reactions
    (MESSAGE_REACTION_ADD: a ✅ on a thread message)."""
    intents = discord.Intents.default()
    intents.message_content = True
    intents.guild_reactions = True
    intents.dm_reactions = True
    return intents


def role_ids(user: object) -> tuple[str, ...]:
    """A member's role ids (a configured expert or maintainer may be a role); none for a plain user."""
    return tuple(str(role.id) for role in getattr(user, "roles", ()) or ())


# Installable on servers and by people (user install); usable in servers, DMs with the bot and other private channels.
# The descriptions and the menu's name are shown in the person's client language (`WordingTranslator`, at sync); the
# names people type, `ask` and `question`, are not translated.
@app_commands.command(name="ask", description=described("ask_command_description"))
@app_commands.describe(question=described("ask_option_description"))
@app_commands.allowed_installs(guilds=True, users=True)
@app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
async def ask_command(interaction: discord.Interaction[Any], question: str) -> None:
    client = interaction.client
    if isinstance(client, DocbotClient):
        await client.on_ask(interaction, question)


@app_commands.context_menu(name=described("ask_about_command"))
@app_commands.allowed_installs(guilds=True, users=True)
@app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
async def ask_about_command(interaction: discord.Interaction[Any], message: discord.Message) -> None:
    client = interaction.client
    if isinstance(client, DocbotClient):
        await client.on_ask_about(interaction, message)


class DocbotClient(discord.Client):
    """discord.py client that hands every event to a durable intake.

    `sync_commands`: push `/ask` to Discord in `setup_hook` (global command; Discord may take a while to show it).
    `intake`: the durable inbox (`bot.delivery.Delivery`); events are stored there and its worker answers through
    `client.sink` (register it as the "discord" sink, and `client.fetcher_for` as the fetcher factory). It may be
    assigned after construction (`client.intake = d`); until it is, events are refused (a private note for /ask
    and presses, a log line for messages).
    """

    def __init__(
        self,
        options: DiscordOptions,
        *,
        intents: discord.Intents | None = None,
        sync_commands: bool = True,
        recent: RecentIds | None = None,
        history_limit: int = 50,
        intake: Intake | None = None,
        language_of: Callable[[str], Awaitable[str | None]] | None = None,
    ) -> None:
        """`language_of` detects a text's language: a refused /ask is told in the question's language (the asker's
        client locale only when the text says nothing, e.g. it is empty)."""
        use_api_url(options.api_url)
        super().__init__(intents=intents or default_intents(), allowed_mentions=no_mentions())
        self._options = options
        self._sync_commands = sync_commands
        self._recent = recent or RecentIds()
        self._history_limit = history_limit
        self.intake = intake
        # a team answer's text for its Edit button, when the presser may review that version (None: no editor);
        # `bot.answers.hooks.TeamAnswerHooks.editor_text`, set with the intake
        self.review_text: ReviewText | None = None
        self._language_of = language_of
        self._content_warned = False
        self._busy = 0
        self.ack_within_s = ACK_WITHIN_S
        self.tree = app_commands.CommandTree(self)
        self.tree.add_command(ask_command)
        self.tree.add_command(ask_about_command)
        self.tree.error(self._on_command_error)
        self.sink = DiscordReplySink(
            self, support_role_id=options.support_role_id, solved_tag=options.solved_tag
        )
        self._forums = frozenset(options.forum_channels)

    async def _on_command_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        """A command docbot does not have (another app's context menu, a stale registration, its autocomplete) is
        ignored, logged at INFO; other command errors keep discord.py's ERROR log."""
        if isinstance(error, app_commands.CommandNotFound):
            log.info("discord interaction for a command docbot does not have", extra={"command": error.name})
            return
        await app_commands.CommandTree.on_error(self.tree, interaction, error)

    # -- start-up --------------------------------------------------------------------------------------------

    async def setup_hook(self) -> None:
        self.add_dynamic_items(ActionButton)
        self._check_message_content_intent()
        await self.tree.set_translator(WordingTranslator())
        if self._sync_commands:
            await self.tree.sync()

    @property
    def sees_all_messages(self) -> bool:
        """Whether thread follow-ups without a mention are visible (the message content intent is on)."""
        return self._connection._intents.message_content

    def _check_message_content_intent(self) -> None:
        """Without the privileged intent enabled for the application, asking for it makes the gateway refuse the
        connection; ask without it instead and say what that means."""
        flags = self.application_flags
        granted = flags.gateway_message_content or flags.gateway_message_content_limited
        if self.sees_all_messages and not granted:
            self._connection._intents.message_content = False
            log.warning(
                "discord message content intent is not enabled for this application: only mentions, replies to "
                "the bot, /ask and DMs are seen; thread follow-ups need a mention (see docs/discord.md)"
            )

    def _note_missing_content(self) -> None:
        if not self._content_warned:
            self._content_warned = True
            log.warning("discord messages arrive without content: the message content intent is not granted")

    # -- messages --------------------------------------------------------------------------------------------

    async def on_message(self, message: discord.Message) -> None:
        me = self.user
        if me is None or message.author.bot or message.author.id == me.id:
            return
        if message.type not in (discord.MessageType.default, discord.MessageType.reply):
            return
        if not self._recent.first_time(f"message:{message.id}"):
            log.info("discord duplicate event dropped", extra={"message_id": message.id})
            return
        addressed = self._is_addressed(message, me.id) or (
            self._forum_post(message.channel) is not None and message.id == message.channel.id
        )
        in_thread = isinstance(message.channel, discord.Thread)
        if not addressed and not in_thread:
            return  # channel chatter
        if not addressed and not message.content:
            if not message.attachments and not message.embeds:
                self._note_missing_content()
            return
        async with self._working():
            await self._answer_message(message, addressed, me.id)

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        """A ✅ on a message (MESSAGE_REACTION_ADD): stored for the worker, which reads the message back and may
        draft a team answer from the thread; every other emoji, and the bot's own, is ignored."""
        me = self.user
        if me is None or payload.user_id == me.id or str(payload.emoji) not in CHECKMARKS:
            return
        key = f"reaction:{payload.message_id}:{payload.user_id}:{payload.emoji}"
        if not self._recent.first_time(key):
            return
        channel = self.get_channel(payload.channel_id) or self.get_partial_messageable(
            payload.channel_id, guild_id=payload.guild_id)  # fmt: skip
        channel_id, thread_id = conversation_ids(channel)
        workspace_id = str(payload.guild_id) if payload.guild_id is not None else "dm"
        member = payload.member
        inbound = Inbound(
            platform=PLATFORM, workspace_id=workspace_id, channel_id=channel_id, thread_id=thread_id,
            message_id=str(payload.message_id), user_id=str(payload.user_id),
            user_name=member.display_name if member is not None else "", text="", ts=datetime.now(UTC),
            kind=InboundKind.REACTION, action_id=CHECKMARK, mentioned=False, groups=role_ids(member),
        )  # fmt: skip
        log.info("discord reaction", extra={"message_id": payload.message_id, "thread_id": thread_id})
        ref = discord_thread_ref(workspace_id, channel_id, thread_id or channel_id, asker_id=payload.user_id)
        async with self._working():
            if self.intake is None:
                log.warning("discord event refused: no intake", extra={"message_id": payload.message_id})
                return
            try:
                await self.intake.accept(inbound, ref)
            except Exception as exc:  # nobody waits for an answer to a reaction: logged, not said in the thread
                log.error("discord reaction not stored", extra={"message_id": payload.message_id,
                                                                "error": type(exc).__name__})  # fmt: skip

    async def on_thread_update(self, before: discord.Thread, after: discord.Thread) -> None:
        """A forum post of ours that just got the solved tag (THREAD_UPDATE; applied in Discord by its author or a
        moderator, or by the Solved button): stored as the post's author resolving it. Discord does not say who
        applied it; the author is the one whose question it closes."""
        if self._forum_post(after) is None or after.owner_id is None:
            return
        wanted = self._options.solved_tag.casefold()
        had = {tag.name.casefold() for tag in before.applied_tags}
        if wanted in had or wanted not in {tag.name.casefold() for tag in after.applied_tags}:
            return
        workspace_id = str(after.guild.id)
        inbound = Inbound(
            platform=PLATFORM, workspace_id=workspace_id, channel_id=str(after.parent_id), thread_id=str(after.id),
            message_id=str(after.id), user_id=str(after.owner_id), user_name="", text="", ts=datetime.now(UTC),
            kind=InboundKind.REACTION, action_id=SOLVED_MARK, mentioned=False,
        )  # fmt: skip
        ref = discord_thread_ref(workspace_id, str(after.parent_id), str(after.id), asker_id=after.owner_id)
        log.info("discord forum post solved", extra={"thread_id": after.id})
        async with self._working():
            if self.intake is None:
                return
            try:
                await self.intake.accept(inbound, ref)
            except Exception as exc:  # the tag stays; the candidate can still come from a ✅ or the CLI
                log.error("discord solved tag not stored", extra={"thread_id": after.id, "error": type(exc).__name__})

    def _is_addressed(self, message: discord.Message, bot_id: int) -> bool:
        if guild_id_of(message) is None:
            return True  # a DM
        if any(user.id == bot_id for user in message.mentions):
            return True
        if any(role.tags is not None and role.tags.bot_id == bot_id for role in message.role_mentions):
            return True  # "@docbot" picked as the bot's own managed role
        resolved = message.reference.resolved if message.reference else None
        return isinstance(resolved, discord.Message) and resolved.author.id == bot_id

    async def _answer_message(self, message: discord.Message, addressed: bool, bot_id: int) -> None:
        """Store the message first; the worker that claims it starts its thread (a mention in a channel) and
        answers. Nothing is posted before the event is stored."""
        author = message.author
        guild_id = guild_id_of(message)
        workspace_id = str(guild_id) if guild_id is not None else "dm"
        channel_id, thread_id = conversation_ids(message.channel)
        text = strip_bot_mention(message.content, bot_id, role_ids=_bot_role_ids(message, bot_id))
        post = self._forum_post(message.channel)
        if post is not None and message.id == post.id:  # a new forum post: its title and first message ask
            addressed, text = True, "\n\n".join(part for part in (post.name, text) if part.strip())
        new_thread = thread_id is None and self._options.channel_allowed(workspace_id, channel_id)
        if new_thread:
            thread_id = str(message.id)  # a thread started on a message has the message's id
        inbound = Inbound(
            platform=PLATFORM,
            workspace_id=workspace_id,
            channel_id=channel_id,
            thread_id=thread_id,
            message_id=str(message.id),
            user_id=str(author.id),
            user_name=author.display_name,
            text=text,
            ts=message.created_at.astimezone(UTC),
            mentioned=addressed,
            groups=role_ids(author),
        )
        log.info(
            "discord message",
            extra={"message_id": message.id, "thread_id": thread_id, "mentioned": addressed, "chars": len(text)},
        )
        ref = discord_thread_ref(
            workspace_id, channel_id, thread_id or channel_id, asker_id=author.id, start_thread=new_thread,
            forum_id=str(post.parent_id) if post is not None else None,
            owner_id=str(post.owner_id) if post is not None and post.owner_id else None,
        )  # fmt: skip
        await self._respond(inbound, ref)

    def _forum_post(self, channel: object) -> discord.Thread | None:
        """The forum post a message is in, when its forum is one docbot answers (`DOCBOT_DISCORD_FORUM_CHANNELS`)."""
        if isinstance(channel, discord.Thread) and channel.parent_id in self._forums:
            return channel
        return None

    def fetcher_for(self, inbound: Inbound, ref: ThreadRef) -> ThreadFetcher | None:
        """Reads the earlier messages of an existing thread or DM; None for a thread the question just started."""
        if inbound.thread_id is None or inbound.thread_id == inbound.message_id or self.user is None:
            return None
        channel = self.get_partial_messageable(int(ref.thread_id))
        return DiscordThreadFetcher(
            channel, before=int(inbound.message_id), bot_id=self.user.id, limit=self._history_limit
        )

    async def _respond(self, inbound: Inbound, ref: ThreadRef) -> None:
        """Hand the event to the durable intake; its worker prepares the thread, shows typing and answers."""
        if self.intake is None:  # not wired yet: nothing can answer it
            log.warning("discord event refused: no intake", extra={"message_id": inbound.message_id})
            return
        try:
            await self.intake.accept(inbound, ref)
        except Exception as exc:  # a gateway event is not redelivered: say so rather than stay silent
            log.error("discord event not stored", extra={"message_id": inbound.message_id,
                                                         "error": type(exc).__name__})  # fmt: skip
            await self._post(before_thread(ref), _failure_notice())

    async def _post(self, ref: ThreadRef, reply: Reply) -> None:
        try:
            await self.sink.post(ref, reply)
        except Exception:
            log.exception("discord reply could not be posted", extra={"thread_id": ref.thread_id})

    # -- /ask ------------------------------------------------------------------------------------------------

    async def on_ask(self, interaction: discord.Interaction[Any], question: str) -> None:
        """/ask: refuse what cannot be asked privately; store the question; only then acknowledge (ephemeral).
        The worker that claims it posts the question in the channel, starts the thread and answers there, so
        nothing is shown publicly before the question is stored. A store slower than `ack_within_s` is deferred
        first (ephemeral "thinking", Discord's 3 s rule) and acknowledged by the follow-up."""
        if not self._recent.first_time(f"interaction:{interaction.id}"):
            return
        checked = check_question(question, max_chars=self._options.max_question_chars)
        said = checked.text if checked.problem in (None, InputProblem.TOO_LONG) else ""  # junk says no language
        language = await self._language(said) or interaction.locale.value
        t = wording.texts_for(language)
        workspace_id = str(interaction.guild_id) if interaction.guild_id else "dm"
        channel_id, thread_id = conversation_ids(interaction.channel)
        if not self._options.channel_allowed(workspace_id, channel_id):
            await interaction.response.send_message(t.channel_not_allowed, ephemeral=True)
            return
        if checked.problem is not None:
            log.info("discord /ask refused", extra={"reason": checked.problem.value, "chars": len(question)})
            notice = getattr(t, checked.problem.value).format(limit=self._options.max_question_chars)
            await interaction.response.send_message(notice, ephemeral=True)
            return
        user = interaction.user
        if _cannot_post(interaction):  # user-installed where the bot is not a member: the answer is the asker's alone
            inbound = self._interaction_question(interaction, checked.text, channel_id, str(interaction.id))
            ref = discord_thread_ref(workspace_id, channel_id, channel_id, asker_id=user.id, private=True,
                                     interaction_token=interaction.token)  # fmt: skip
            log.info("discord /ask, private", extra={"interaction_id": interaction.id})
            async with self._working():
                await self._store_then_defer(interaction, self._accept(inbound, ref), t.failure)
            return
        inbound = Inbound(
            platform=PLATFORM,
            workspace_id=workspace_id,
            channel_id=channel_id,
            thread_id=thread_id,
            message_id=str(interaction.id),
            user_id=str(user.id),
            user_name=user.display_name,
            text=checked.text,
            ts=interaction.created_at.astimezone(UTC),
            mentioned=True,
        )
        ref = discord_thread_ref(
            workspace_id, channel_id, thread_id or channel_id, asker_id=user.id,
            ask_locale=interaction.locale.value, start_thread=thread_id is None,
            interaction_token=interaction.token,  # a rate-limit notice goes to the asker only (15 minutes)
        )  # fmt: skip
        log.info("discord /ask", extra={"interaction_id": interaction.id, "thread_id": thread_id})
        async with self._working():
            await self._store_then_ack(interaction, self._accept(inbound, ref), t.failure,
                                       wording.wording(language).ask_received)  # fmt: skip

    async def on_ask_about(self, interaction: discord.Interaction[Any], message: discord.Message) -> None:
        """The "Ask docbot" message command: that message's text is the question. The answer is the invoker's alone
        (an ephemeral response) until they post it, with its button, in a thread on that message. Stored first,
        acknowledged then ("docbot is thinking…", only for them)."""
        if not self._recent.first_time(f"interaction:{interaction.id}"):
            return
        t = wording.texts_for(interaction.locale.value)
        workspace_id = str(interaction.guild_id) if interaction.guild_id else "dm"
        channel_id, thread_id = conversation_ids(interaction.channel)
        if not self._options.channel_allowed(workspace_id, channel_id):
            await interaction.response.send_message(t.channel_not_allowed, ephemeral=True)
            return
        me = self.user
        text = strip_bot_mention(message.content, me.id) if me is not None else message.content.strip()
        checked = check_question(text, max_chars=self._options.max_question_chars)
        if not text.strip():
            await interaction.response.send_message(wording.wording(interaction.locale.value).ask_about_empty,
                                                    ephemeral=True)  # fmt: skip
            return
        if checked.problem is not None:
            log.info("discord ask-about refused", extra={"reason": checked.problem.value, "chars": len(text)})
            notice = getattr(t, checked.problem.value).format(limit=self._options.max_question_chars)
            await interaction.response.send_message(notice, ephemeral=True)
            return
        # the conversation is the thread on that message (a thread's id is its message's), or the thread it is in
        conversation = thread_id or str(message.id)
        inbound = self._interaction_question(interaction, checked.text, channel_id, conversation)
        publish = None if _cannot_post(interaction) or isinstance(interaction.channel, discord.DMChannel) else (
            f"{interaction.id}-{message.id}")  # fmt: skip
        ref = discord_thread_ref(workspace_id, channel_id, conversation, asker_id=interaction.user.id, private=True,
                                 interaction_token=interaction.token, publish=publish)  # fmt: skip
        log.info("discord ask-about", extra={"interaction_id": interaction.id, "publishable": publish is not None})
        async with self._working():
            await self._store_then_defer(interaction, self._accept(inbound, ref), t.failure)

    def _interaction_question(
        self, interaction: discord.Interaction[Any], text: str, channel_id: str, thread_id: str
    ) -> Inbound:
        user = interaction.user
        return Inbound(
            platform=PLATFORM, workspace_id=str(interaction.guild_id) if interaction.guild_id else "dm",
            channel_id=channel_id, thread_id=thread_id, message_id=str(interaction.id), user_id=str(user.id),
            user_name=user.display_name, text=text, ts=interaction.created_at.astimezone(UTC), mentioned=True,
        )  # fmt: skip

    async def _store_then_defer(
        self, interaction: discord.Interaction[Any], store: Awaitable[bool], failure: str
    ) -> None:
        """Acknowledge with a private "thinking…" only once `store` succeeded (deferred first when the store is
        slow): the worker's answer replaces it. A failure gets a private note and nothing else."""
        thinking = partial(interaction.response.defer, ephemeral=True, thinking=True)
        stored = await self._store_in_time(interaction, store, thinking)
        if stored.error is not None:
            log.error("discord question not stored", extra={"interaction_id": interaction.id,
                                                            "error": type(stored.error).__name__})  # fmt: skip
            await self._tell_privately(interaction, failure, deferred=stored.deferred)
        elif not stored.deferred:
            await self._acknowledge(interaction, thinking())

    async def _language(self, text: str) -> str | None:
        if self._language_of is None or not text.strip():
            return None
        try:
            return await asyncio.wait_for(self._language_of(text), timeout=1.0)  # the 3 s acknowledgement first
        except Exception:
            log.warning("language detection for a /ask notice failed")
            return None

    async def _accept(self, inbound: Inbound, ref: ThreadRef) -> bool:
        if self.intake is None:
            raise RuntimeError("discord client has no intake")
        return await self.intake.accept(inbound, ref)

    async def _store_then_ack(
        self, interaction: discord.Interaction[Any], store: Awaitable[bool], failure: str, received: str
    ) -> None:
        """Acknowledge the interaction only once `store` succeeded; a failure gets an ephemeral notice (nothing
        public) and the person asks again. A slow store is deferred first (privately, "thinking"), and the
        acknowledgement or the notice follows as its follow-up."""
        thinking = partial(interaction.response.defer, ephemeral=True, thinking=True)
        stored = await self._store_in_time(interaction, store, thinking)
        if stored.error is not None:
            log.error("discord /ask not stored", extra={"interaction_id": interaction.id,
                                                        "error": type(stored.error).__name__})  # fmt: skip
        text = received if stored.error is None else failure
        await self._tell_privately(interaction, text, deferred=stored.deferred)

    # -- buttons ---------------------------------------------------------------------------------------------

    async def on_docbot_button(self, interaction: discord.Interaction[Any], ref: ButtonRef) -> None:
        """Check who may click, show the choice with the buttons disabled (UPDATE_MESSAGE, within 3 s), let the
        service act on it, then post what resuming produced."""
        async with self._working():
            await self._press(interaction, ref)

    async def _press(self, interaction: discord.Interaction[Any], ref: ButtonRef) -> None:
        if ref.kind == PUBLISH:
            await self._publish(interaction, ref)
            return
        if ref.kind == SOLVED:
            await self._solved(interaction, ref)
            return
        if ref.kind == EDIT and await self._open_editor(interaction, ref):
            return
        user = interaction.user
        if self._options.only_asker_clicks and ref.asker_id and user.id != ref.asker_id:
            await interaction.response.send_message(wording.wording(interaction.locale.value).only_asker,
                                                    ephemeral=True)  # fmt: skip
            return
        if not self._recent.first_time(f"interaction:{interaction.id}") or interaction.message is None:
            return
        message = interaction.message
        workspace_id = str(interaction.guild_id) if interaction.guild_id else "dm"
        channel_id, thread_id = conversation_ids(interaction.channel)
        post_in = thread_id or channel_id
        inbound = Inbound(
            platform=PLATFORM,
            workspace_id=workspace_id,
            channel_id=channel_id,
            thread_id=thread_id,
            message_id=str(message.id),
            user_id=str(user.id),
            user_name=user.display_name,
            text="",
            ts=interaction.created_at.astimezone(UTC),
            kind=InboundKind.ACTION,
            action_id=ref.action_id,
            groups=role_ids(user),
        )
        log.info("discord button", extra={"interaction_id": interaction.id, "thread_id": thread_id})
        post = self._forum_post(interaction.channel)
        target = discord_thread_ref(
            workspace_id, channel_id, post_in, asker_id=ref.asker_id, mention_support=ref.ask_human,
            interaction_token=interaction.token, private=bool(message.flags.ephemeral),
            forum_id=str(post.parent_id) if post is not None else None,
            owner_id=str(post.owner_id) if post is not None and post.owner_id else None,
        )  # fmt: skip
        # stored first, acknowledged without a change; the worker checks the press and only then shows the choice
        await self._store_then_update(interaction, inbound, target, "discord press not stored")

    async def _open_editor(self, interaction: discord.Interaction[Any], ref: ButtonRef) -> bool:
        """Edit on a team answer's review message: the editor with its text, if the presser may review it and it
        is still the version shown (`review_text`, a quick read); otherwise (False) the press is stored like any
        other and the worker says why nothing opened."""
        if self.review_text is None or not self._recent.first_time(f"editor:{interaction.id}"):
            return False
        try:
            text = await asyncio.wait_for(self.review_text(ref.action_id, str(interaction.user.id),
                                                           role_ids(interaction.user)), ACK_WITHIN_S)  # fmt: skip
        except Exception as exc:  # a slow or failing read: the worker answers the stored press instead
            log.warning("review text not read", extra={"error": type(exc).__name__})
            return False
        if text is None:
            return False
        try:
            editor = AnswerEditor(ref.action_id, text)
        except ValueError:  # an action id too long for the modal's custom_id: the worker says no editor opened
            log.warning("review editor not opened: its custom_id would not fit", extra={"chars": len(ref.action_id)})
            return False
        await interaction.response.send_modal(editor)  # not kept in memory: the submission is read statelessly
        log.info("discord review editor opened", extra={"interaction_id": interaction.id})
        return True

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Every interaction, after discord.py dispatched commands and buttons. A modal submission is read here from
        the interaction itself (its custom_id and inputs), not from a modal kept in memory, so docbot's editor is
        taken by whichever process receives it, also after a restart. A modal that is not docbot's is left alone."""
        if interaction.type is not discord.InteractionType.modal_submit or interaction.data is None:
            return
        async with self._working():
            submitted = read_submission(cast("ModalSubmitInteractionData", interaction.data))
            if submitted is None:
                log.info("discord modal submit that is not docbot's ignored", extra={"interaction_id": interaction.id})
            elif isinstance(submitted, Unreadable):
                await self._unreadable_edit(interaction, submitted)
            else:
                await self.on_answer_edited(interaction, submitted.action_id, submitted.text)

    async def _unreadable_edit(self, interaction: discord.Interaction[Any], problem: Unreadable) -> None:
        """A docbot modal submission that cannot be taken: the person is told privately that nothing was saved."""
        if not self._recent.first_time(f"interaction:{interaction.id}"):
            return
        log.warning("discord editor submission not readable", extra={"interaction_id": interaction.id,
                                                                      "reason": problem.value})  # fmt: skip
        words = wording.wording(interaction.locale.value)
        notice = words.edit_empty if problem is Unreadable.EMPTY else words.edit_unreadable
        await interaction.response.send_message(notice, ephemeral=True, allowed_mentions=no_mentions())

    async def on_answer_edited(self, interaction: discord.Interaction[Any], action_id: str, text: str) -> None:
        """The editor submitted (from `on_interaction`): stored (kind EDIT, on the review message it was opened from),
        then acknowledged without a change; the worker saves and approves the text and marks the review message. The
        same interaction delivered again is stored and acknowledged once."""
        if not self._recent.first_time(f"interaction:{interaction.id}"):
            return
        async with self._working():
            user, message = interaction.user, interaction.message
            workspace_id = str(interaction.guild_id) if interaction.guild_id else "dm"
            channel_id, thread_id = conversation_ids(interaction.channel)
            inbound = Inbound(
                platform=PLATFORM, workspace_id=workspace_id, channel_id=channel_id, thread_id=thread_id,
                message_id=str(message.id if message else interaction.id), user_id=str(user.id),
                user_name=user.display_name, text=text, ts=interaction.created_at.astimezone(UTC),
                kind=InboundKind.EDIT, action_id=action_id, groups=role_ids(user),
            )  # fmt: skip
            target = discord_thread_ref(workspace_id, channel_id, thread_id or channel_id, asker_id=user.id,
                                        interaction_token=interaction.token)  # fmt: skip
            log.info("discord review editor submitted", extra={"interaction_id": interaction.id, "chars": len(text)})
            await self._store_then_update(interaction, inbound, target, "discord edit not stored")  # review unchanged

    async def _publish(self, interaction: discord.Interaction[Any], ref: ButtonRef) -> None:
        """"Post in a thread" under an answer only its asker saw: stored first; the worker posts the stored answer in
        a thread on the message it was about (or in the thread it was asked in). The private copy's buttons are
        disabled as the acknowledgement, so it is not posted twice."""
        user = interaction.user
        if user.id != ref.asker_id:
            await interaction.response.send_message(wording.wording(interaction.locale.value).only_asker,
                                                    ephemeral=True)  # fmt: skip
            return
        if not self._recent.first_time(f"interaction:{interaction.id}") or interaction.message is None:
            return
        question_id, _, target_id = ref.action_id.partition("-")
        workspace_id = str(interaction.guild_id) if interaction.guild_id else "dm"
        channel_id, thread_id = conversation_ids(interaction.channel)
        inbound = Inbound(
            platform=PLATFORM, workspace_id=workspace_id, channel_id=channel_id, thread_id=thread_id or target_id,
            message_id=str(interaction.message.id), user_id=str(user.id), user_name=user.display_name, text="",
            ts=interaction.created_at.astimezone(UTC), kind=InboundKind.ACTION,
            action_id=f"{PUBLISH_PREFIX}{question_id}",
        )  # fmt: skip
        target = discord_thread_ref(
            workspace_id, channel_id, thread_id or target_id, asker_id=user.id, start_thread=thread_id is None,
            thread_on=target_id if thread_id is None else None, interaction_token=interaction.token,
            locale=interaction.locale.value,
        )  # fmt: skip
        log.info("discord publish", extra={"interaction_id": interaction.id})
        shown = chosen_view(interaction.message, ref.action_id)  # the acknowledgement takes the button away
        await self._store_then_update(interaction, inbound, target, "discord publish not stored", shown=shown)

    async def _solved(self, interaction: discord.Interaction[Any], ref: ButtonRef) -> None:
        """"Solved" under an answer in a forum post: its author (or someone who may manage threads) marks the post with
        the forum's solved tag; stored first, acknowledged without a change, confirmed privately by the worker."""
        user = interaction.user
        permissions = interaction.permissions
        if user.id != ref.asker_id and not permissions.manage_threads:
            await interaction.response.send_message(wording.wording(interaction.locale.value).only_owner_solves,
                                                    ephemeral=True)  # fmt: skip
            return
        post = self._forum_post(interaction.channel)
        if not self._recent.first_time(f"interaction:{interaction.id}") or post is None:
            await interaction.response.defer()
            return
        workspace_id = str(interaction.guild_id) if interaction.guild_id else "dm"
        inbound = Inbound(
            platform=PLATFORM, workspace_id=workspace_id, channel_id=str(post.parent_id), thread_id=str(post.id),
            message_id=str(interaction.message.id if interaction.message else interaction.id),
            user_id=str(user.id), user_name=user.display_name, text="",
            ts=interaction.created_at.astimezone(UTC), kind=InboundKind.ACTION,
            action_id=f"{SOLVED_PREFIX}{post.id}",
        )  # fmt: skip
        target = discord_thread_ref(workspace_id, str(post.parent_id), str(post.id), asker_id=user.id,
                                    interaction_token=interaction.token, forum_id=str(post.parent_id),
                                    owner_id=str(ref.asker_id), locale=interaction.locale.value)  # fmt: skip
        log.info("discord solved", extra={"interaction_id": interaction.id, "thread_id": post.id})
        await self._store_then_update(interaction, inbound, target, "discord solved not stored")

    # -- helpers ---------------------------------------------------------------------------------------------

    async def _store_then_update(
        self,
        interaction: discord.Interaction[Any],
        inbound: Inbound,
        target: ThreadRef,
        failed: str,
        *,
        shown: Components | None = None,
    ) -> None:
        """Store a press or an editor submission, then acknowledge it as an update of the message it came from:
        DEFERRED_UPDATE_MESSAGE (nothing changes yet), or UPDATE_MESSAGE showing `shown`. A write slower than
        `ack_within_s` is deferred first (DEFERRED_UPDATE_MESSAGE: Discord wants a response within 3 s, and the
        worker's private notes need one), and `shown` replaces the message's buttons once the write is done.

        When the event cannot be stored the person is told privately (never silence) and the operator gets `failed`
        with the error's type. An event the inbox already holds (the same interaction received by another process)
        is not acknowledged again: the process that stored it did, and Discord refuses a second response."""
        stored = await self._store_in_time(interaction, self._accept(inbound, target), interaction.response.defer)
        if stored.error is not None:
            log.error(failed, extra={"interaction_id": interaction.id, "error": type(stored.error).__name__})
            failure = wording.texts_for(interaction.locale.value).failure
            await self._tell_privately(interaction, failure, deferred=stored.deferred)
        elif not stored.new:
            log.info("discord interaction already stored", extra={"interaction_id": interaction.id})
        elif stored.deferred:
            if shown is not None:
                await self._show(interaction, shown)
        elif shown is None:
            await self._acknowledge(interaction, interaction.response.defer())
        else:
            await self._acknowledge(interaction, interaction.response.edit_message(view=shown))

    async def _show(self, interaction: discord.Interaction[Any], shown: Components) -> None:
        """Replace the buttons of the message a deferred update came from (its `@original`), best effort: the
        event is stored and its worker acts on it whether or not the buttons change."""
        try:
            await interaction.edit_original_response(view=shown)
        except discord.HTTPException as exc:
            log.warning("discord buttons not updated",
                        extra={"interaction_id": interaction.id, "error": type(exc).__name__, "code": exc.code})

    async def _store_in_time(
        self, interaction: discord.Interaction[Any], store: Awaitable[bool], defer: Callable[[], Awaitable[object]]
    ) -> Stored:
        """Run an interaction's inbox write; when it is still running after `ack_within_s` (a slow database),
        answer Discord with `defer` first, within its 3 s, then wait for the write."""
        task = asyncio.ensure_future(store)
        done, _ = await asyncio.wait({task}, timeout=self.ack_within_s)
        if not done:
            await self._acknowledge(interaction, defer())
        try:
            return Stored(deferred=not done, new=await task)
        except Exception as exc:
            return Stored(deferred=not done, error=exc)

    async def _acknowledge(self, interaction: discord.Interaction[Any], response: Awaitable[object]) -> None:
        """Send an interaction's one response. Refused as already acknowledged (40060: another process that
        received the same interaction answered first, e.g. it deferred before its write found the event stored), it
        is logged and taken as done: the event is in the inbox either way."""
        try:
            await response
        except discord.HTTPException as exc:
            if exc.code != ALREADY_ACKNOWLEDGED:
                raise
            log.info("discord interaction already acknowledged", extra={"interaction_id": interaction.id})

    async def _tell_privately(self, interaction: discord.Interaction[Any], text: str, *, deferred: bool) -> None:
        """A note only the person sees: the response itself, or a follow-up once the interaction was deferred."""
        if deferred:
            await interaction.followup.send(text, ephemeral=True, allowed_mentions=no_mentions())
        else:
            response = interaction.response.send_message(text, ephemeral=True, allowed_mentions=no_mentions())
            await self._acknowledge(interaction, response)

    @contextlib.asynccontextmanager
    async def _working(self) -> AsyncIterator[None]:
        self._busy += 1
        try:
            yield
        finally:
            self._busy -= 1

    async def wait_idle(self) -> None:
        """Wait until the events handed to the client so far have been handled (tests, graceful shutdown):
        nothing in progress across a few turns of the event loop, which lets freshly dispatched events start.
        Wrap it in `asyncio.timeout` to bound the wait."""
        quiet = 0
        while quiet < 3:
            await asyncio.sleep(0.01)
            quiet = quiet + 1 if self._busy == 0 else 0


def _cannot_post(interaction: discord.Interaction[Any]) -> bool:
    """Whether the bot cannot post where it was invoked: a user-installed command in a server the bot is not in, or
    a private channel (a group DM, a DM between two people). Its answer then goes to the invoker alone."""
    if interaction.context.private_channel:
        return True
    installed_by_the_user_only = interaction.is_user_integration() and not interaction.is_guild_integration()
    return interaction.guild_id is not None and installed_by_the_user_only


def _bot_role_ids(message: discord.Message, bot_id: int) -> tuple[int, ...]:
    return tuple(r.id for r in message.role_mentions if r.tags is not None and r.tags.bot_id == bot_id)


def guild_id_of(message: discord.Message) -> int | None:
    """The guild of a message, also when the guild is not cached (the channel is then a PartialMessageable)."""
    if message.guild is not None:
        return message.guild.id
    guild_id: int | None = getattr(message.channel, "guild_id", None)
    return guild_id


def _failure_notice() -> Reply:
    return Reply(
        kind=ReplyKind.NOTICE, text=wording.texts_for("en").failure, language="en", conversation_id="", reason="failure"
    )
