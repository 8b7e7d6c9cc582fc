"""The Discord bot: mentions, `/ask`, thread follow-ups and DMs in; threaded replies with persistent buttons out.

    client = DocbotClient(settings)
    client.intake = delivery          # bot.delivery.Delivery, with client.sink and client.fetcher_for registered
    await client.start(settings.discord_bot_token.get_secret_value())

Each event: ignore bots and self, drop repeats of the same gateway event, store a neutral `Inbound` in the durable
inbox, and only then acknowledge (`/ask`, buttons). The inbox is the only way in: the delivery worker that claims the
event starts its thread, shows typing, asks the conversation service and posts through `DiscordReplySink`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC
from typing import Any, Protocol

import discord
from discord import app_commands

from adapters.discord import wording
from adapters.discord.api_url import use_api_url
from adapters.discord.buttons import ActionButton, ButtonRef
from adapters.discord.dedupe import RecentIds
from adapters.discord.inbound import DiscordThreadFetcher, conversation_ids, strip_bot_mention
from adapters.discord.render import no_mentions
from adapters.discord.sink import DiscordReplySink, before_thread, discord_thread_ref
from bot.input_check import InputProblem, check_question
from bot.settings import ClickPolicy, Settings
from pipeline.messages import Inbound, InboundKind, Reply, ReplyKind, ThreadFetcher, ThreadRef

log = logging.getLogger(__name__)

PLATFORM = "discord"
ACK_WITHIN_S = 2.0  # an /ask whose inbox write takes longer is deferred first (Discord wants a response in 3 s)


class Intake(Protocol):
    """A durable inbox (`bot.delivery.Delivery`): stores the event; its worker answers through the sink."""

    async def accept(self, inbound: Inbound, ref: ThreadRef) -> bool: ...


def default_intents() -> discord.Intents:
    """Guild and DM messages, with message content (privileged: enable it in the developer portal)."""
    intents = discord.Intents.default()
    intents.message_content = True
    return intents


@app_commands.command(name="ask", description=wording.ASK_COMMAND_DESCRIPTION)
@app_commands.describe(question=wording.ASK_OPTION_DESCRIPTION)
async def ask_command(interaction: discord.Interaction[Any], question: str) -> None:
    client = interaction.client
    if isinstance(client, DocbotClient):
        await client.on_ask(interaction, question)


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
        settings: Settings,
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
        use_api_url(settings.discord_api_url)
        super().__init__(intents=intents or default_intents(), allowed_mentions=no_mentions())
        self._settings = settings
        self._sync_commands = sync_commands
        self._recent = recent or RecentIds()
        self._history_limit = history_limit
        self.intake = intake
        self._language_of = language_of
        self._content_warned = False
        self._busy = 0
        self.ack_within_s = ACK_WITHIN_S
        self.tree = app_commands.CommandTree(self)
        self.tree.add_command(ask_command)
        self.tree.error(self._on_command_error)
        self.sink = DiscordReplySink(self, support_role_id=settings.discord_support_role_id)

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
        addressed = self._is_addressed(message, me.id)
        in_thread = isinstance(message.channel, discord.Thread)
        if not addressed and not in_thread:
            return  # channel chatter
        if not addressed and not message.content:
            if not message.attachments and not message.embeds:
                self._note_missing_content()
            return
        async with self._working():
            await self._answer_message(message, addressed, me.id)

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
        new_thread = thread_id is None and self._settings.channel_policy(PLATFORM, workspace_id, channel_id).allowed
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
        )
        log.info(
            "discord message",
            extra={"message_id": message.id, "thread_id": thread_id, "mentioned": addressed, "chars": len(text)},
        )
        ref = discord_thread_ref(
            workspace_id, channel_id, thread_id or channel_id, asker_id=author.id, start_thread=new_thread
        )
        await self._respond(inbound, ref)

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
        checked = check_question(question, max_chars=self._settings.max_question_chars)
        said = checked.text if checked.problem in (None, InputProblem.TOO_LONG) else ""  # junk says no language
        t = wording.texts_for(await self._language(said) or interaction.locale.value)
        workspace_id = str(interaction.guild_id) if interaction.guild_id else "dm"
        channel_id, thread_id = conversation_ids(interaction.channel)
        if not self._settings.channel_policy(PLATFORM, workspace_id, channel_id).allowed:
            await interaction.response.send_message(t.channel_not_allowed, ephemeral=True)
            return
        if checked.problem is not None:
            log.info("discord /ask refused", extra={"reason": checked.problem.value, "chars": len(question)})
            notice = getattr(t, checked.problem.value).format(limit=self._settings.max_question_chars)
            await interaction.response.send_message(notice, ephemeral=True)
            return
        user = interaction.user
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
            await self._store_then_ack(interaction, self._accept(inbound, ref), t.failure)

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
        self, interaction: discord.Interaction[Any], store: Awaitable[bool], failure: str
    ) -> None:
        """Acknowledge the interaction only once `store` succeeded; a failure gets an ephemeral notice (nothing
        public) and the person asks again."""
        task = asyncio.ensure_future(store)
        done, _ = await asyncio.wait({task}, timeout=self.ack_within_s)
        deferred = not done
        if deferred:  # the database is slow: answer Discord within its 3 s, privately, and wait for the write
            await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            await task
            text = wording.ASK_RECEIVED
        except Exception as exc:
            log.error("discord /ask not stored", extra={"interaction_id": interaction.id,
                                                        "error": type(exc).__name__})  # fmt: skip
            text = failure
        if deferred:
            await interaction.followup.send(text, ephemeral=True, allowed_mentions=no_mentions())
        else:
            await interaction.response.send_message(text, ephemeral=True, allowed_mentions=no_mentions())

    # -- buttons ---------------------------------------------------------------------------------------------

    async def on_docbot_button(self, interaction: discord.Interaction[Any], ref: ButtonRef) -> None:
        """Check who may click, show the choice with the buttons disabled (UPDATE_MESSAGE, within 3 s), let the
        service act on it, then post what resuming produced."""
        async with self._working():
            await self._press(interaction, ref)

    async def _press(self, interaction: discord.Interaction[Any], ref: ButtonRef) -> None:
        user = interaction.user
        if self._settings.discord_click_policy is ClickPolicy.ASKER and ref.asker_id and user.id != ref.asker_id:
            await interaction.response.send_message(wording.ONLY_ASKER, ephemeral=True)
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
        )
        log.info("discord button", extra={"interaction_id": interaction.id, "thread_id": thread_id})
        target = discord_thread_ref(
            workspace_id, channel_id, post_in, asker_id=ref.asker_id, mention_support=ref.ask_human,
            interaction_token=interaction.token,
        )  # fmt: skip
        try:  # stored first; the worker checks the press and only then shows the choice
            await self._accept(inbound, target)
        except Exception as exc:
            log.error("discord press not stored", extra={"error": type(exc).__name__})
            failure = wording.texts_for(interaction.locale.value).failure
            await interaction.response.send_message(failure, ephemeral=True)
            return
        await interaction.response.defer()  # DEFERRED_UPDATE_MESSAGE: acknowledged, nothing changed yet

    # -- helpers ---------------------------------------------------------------------------------------------

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
