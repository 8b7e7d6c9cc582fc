"""A small Discord world for the adapter tests: one guild with a #help channel, the bot, two people and a support
role, a recording fake REST server, and helpers that deliver gateway events through discord.py's own parsers.

Every client runs the production path: its events go to the durable inbox of a `Delivery` on the world's SQLite
database, and the helpers that deliver an event then let that delivery's worker handle what it stored."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from adapters.discord.api_url import use_api_url
from adapters.discord.client import DocbotClient
from bot.adapter_options import discord_options
from bot.delivery import Delivery, DeliveryConfig
from bot.settings import Settings
from pipeline.messages import ActionOutcome, Inbound, Reply, ThreadFetcher
from pipeline.types import HistoryMessage
from storage.db import Database
from storage.outbox import Outbox
from tests.fakes import discord_payloads as p
from tests.fakes.discord_rest import FakeDiscordREST


@dataclass
class FakeHandler:
    """A `ConversationHandler` driven by functions; records what it was given. Survives client restarts,
    like the service's database does."""

    on_message: Callable[[Inbound], Reply | None]
    on_action: Callable[[Inbound], ActionOutcome] = lambda inbound: ActionOutcome(accepted=False, chosen_label="")
    messages: list[Inbound] = field(default_factory=list)
    actions: list[Inbound] = field(default_factory=list)
    histories: list[list[HistoryMessage]] = field(default_factory=list)

    async def handle_message(self, inbound: Inbound, fetcher: ThreadFetcher | None = None) -> Reply | None:
        self.messages.append(inbound)
        if fetcher is not None:
            self.histories.append(await fetcher.fetch_thread())
        return self.on_message(inbound)

    async def handle_action(self, inbound: Inbound) -> ActionOutcome:
        self.actions.append(inbound)
        return self.on_action(inbound)


class DiscordWorld:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.deliveries: dict[int, Delivery] = {}
        self.own_databases: list[Database] = []
        self.guild_id = p.snowflake()
        self.channel_id = p.snowflake()
        self.app_id = p.snowflake()
        self.support_role_id = p.snowflake()
        self.bot = p.user(p.snowflake(), "docbot", bot=True)
        self.alice = p.user(p.snowflake(), "alice")
        self.bob = p.user(p.snowflake(), "bob")
        self.other_bot = p.user(p.snowflake(), "otherbot", bot=True)
        self.rest = FakeDiscordREST(bot_user=self.bot, app_id=self.app_id)
        self.rest.channels[self.channel_id] = p.text_channel(self.channel_id, self.guild_id)
        self.clients: list[DocbotClient] = []

    async def start(self) -> None:
        await self.rest.start()

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        for db in self.own_databases:
            await db.dispose()
        await self.rest.close()
        use_api_url(None)

    def settings(self, **overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "discord_bot_token": "fake-token",
            "discord_api_url": self.rest.api_url,
            "discord_support_role_id": int(self.support_role_id),
            **overrides,
        }
        return Settings(_env_file=None, **values)  # type: ignore[call-arg]

    async def client(
        self,
        handler: Any,
        *,
        own_inbox: bool = False,
        db: Database | None = None,
        language_of: Callable[[str], Awaitable[str | None]] | None = None,
        **settings: Any,
    ) -> DocbotClient:
        """A logged-in client (setup_hook ran: buttons registered, /ask synced) that knows the guild; its events go
        through a `Delivery` on the world's database (`own_inbox`: on a database of its own, in memory; `db`: on the
        handler's, where the delivery settles a `ConversationService`'s answers with their events)."""
        client = DocbotClient(discord_options(self.settings(**settings)), language_of=language_of)
        db = db or self.db
        if own_inbox:
            db = Database("sqlite+aiosqlite://")
            await db.migrate()
            self.own_databases.append(db)
        delivery = Delivery(
            db, handler, {"discord": client.sink}, f"worker-{len(self.deliveries)}",
            fetcher_for=client.fetcher_for, config=DeliveryConfig(progress_delay_s=0.0),
            outbox=Outbox(db, base_backoff_s=0.05, max_backoff_s=0.2),  # retries in test time
        )  # fmt: skip
        client.intake = delivery
        self.deliveries[id(client)] = delivery
        self.clients.append(client)
        await client.login("fake-token")
        members = [p.member(self.alice), p.member(self.bob), p.member(self.bot)]
        threads = [c for c in self.rest.channels.values() if c["type"] == p.PUBLIC_THREAD]
        channels = [c for c in self.rest.channels.values() if c["type"] in (p.TEXT_CHANNEL, p.FORUM_CHANNEL)]
        client._connection.parse_guild_create(
            p.guild_create(
                self.guild_id,
                channels,
                members,
                threads=threads,
                extra_roles=[p.role(self.support_role_id, "support")],
            )
        )
        return client

    async def restart(
        self, old: DocbotClient, handler: Any, *, db: Database | None = None, **settings: Any
    ) -> DocbotClient:
        await old.close()
        self.clients.remove(old)
        return await self.client(handler, db=db, **settings)

    async def settle(self, client: DocbotClient) -> None:
        """Let the client's worker handle every event it can claim now and post what it stored (a test that wires
        an intake of its own drives that one itself)."""
        delivery = self.deliveries.get(id(client))
        if delivery is None or client.intake is not delivery:
            return
        while await delivery.process_once():
            pass
        await delivery.sweep()

    def mention(self) -> str:
        return f"<@{self.bot['id']}>"

    async def say(
        self,
        client: DocbotClient,
        author: dict[str, Any],
        content: str,
        *,
        channel_id: str | None = None,
        mentions_bot: bool = True,
        message_id: str | None = None,
    ) -> dict[str, Any]:
        """Deliver MESSAGE_CREATE for a guild message and wait until the client has handled it."""
        payload = p.message(
            channel_id or self.channel_id,
            author,
            content,
            guild_id=self.guild_id,
            message_id=message_id,
            mentions=[self.bot] if mentions_bot else [],
        )
        await self.deliver_message(client, payload)
        return payload

    async def deliver_message(self, client: DocbotClient, payload: dict[str, Any]) -> None:
        self.rest.messages.setdefault(payload["id"], payload)
        client._connection.parse_message_create(payload)  # type: ignore[arg-type]
        await client.wait_idle()
        await self.settle(client)

    async def press(self, client: DocbotClient, message_id: str, custom_id: str, clicker: dict[str, Any]) -> None:
        """Deliver INTERACTION_CREATE for a button on a message the bot posted."""
        await self.interact(client, self.button(message_id, custom_id, clicker))

    def button(self, message_id: str, custom_id: str, clicker: dict[str, Any]) -> dict[str, Any]:
        """INTERACTION_CREATE for a button on a message the bot posted."""
        return self._button_on(self.rest.messages[message_id], custom_id, clicker)

    async def ask(
        self,
        client: DocbotClient,
        asker: dict[str, Any],
        question: str,
        *,
        channel_id: str | None = None,
        locale: str | None = None,
    ) -> dict[str, Any]:
        """Deliver INTERACTION_CREATE for `/ask question:...` (`locale`: the asker's Discord client language)."""
        payload = p.ask_command_interaction(
            app_id=self.app_id,
            command_id=self.rest.command_id,
            asker=asker,
            question=question,
            guild_id=self.guild_id,
            channel=self.rest.channels[channel_id or self.channel_id],
        )
        if locale is not None:
            payload["locale"] = locale
        self.rest.expect_interaction(payload)
        client._connection.parse_interaction_create(payload)  # type: ignore[arg-type]
        await client.wait_idle()
        await self.settle(client)
        return payload

    def forum(self, tags: list[tuple[str, str]]) -> str:
        """A forum channel in the guild (known to clients created after this)."""
        forum_id = p.snowflake()
        self.rest.channels[forum_id] = p.forum_channel(forum_id, self.guild_id, tags)
        return forum_id

    async def post_in_forum(self, client: DocbotClient, forum_id: str, author: dict[str, Any], title: str,
                            text: str) -> str:
        """A new forum post, as Discord announces it: THREAD_CREATE for the post, then MESSAGE_CREATE for its first
        message (whose id is the thread's); the post's thread id."""
        thread_id = p.snowflake()
        post = p.forum_post(thread_id, forum_id, self.guild_id, author["id"], title)
        self.rest.channels[thread_id] = post
        client._connection.parse_thread_create({**post, "newly_created": True})  # type: ignore[arg-type]
        starter = p.message(thread_id, author, text, guild_id=self.guild_id, message_id=thread_id)
        await self.deliver_message(client, starter)
        return thread_id

    async def ask_about(self, client: DocbotClient, invoker: dict[str, Any], target: dict[str, Any], *,
                        user_install: bool = False) -> dict[str, Any]:
        """INTERACTION_CREATE for "Ask docbot" on `target` (a message in the world's channel)."""
        payload = p.message_command_interaction(
            app_id=self.app_id, command_id=self.rest.command_ids.get("Ask docbot", p.snowflake()), name="Ask docbot",
            invoker=invoker, target=target, guild_id=self.guild_id, channel=self.rest.channels[self.channel_id],
        )  # fmt: skip
        if user_install:
            payload = p.installed_by_the_user(payload, invoker["id"])
        return await self.interact(client, payload)

    async def interact(self, client: DocbotClient, payload: dict[str, Any]) -> dict[str, Any]:
        self.dispatch(client, payload)
        await client.wait_idle()
        await self.settle(client)
        return payload

    def dispatch(self, client: DocbotClient, payload: dict[str, Any]) -> None:
        """Discord sends INTERACTION_CREATE now (its 3 s start); the client handles it in tasks of its own."""
        self.rest.expect_interaction(payload)
        client._connection.parse_interaction_create(payload)  # type: ignore[arg-type]

    async def press_private(self, client: DocbotClient, token: str, custom_id: str,
                            clicker: dict[str, Any]) -> dict[str, Any]:
        """A press on a button of an answer only `clicker` sees (the first response of the interaction `token`)."""
        return await self.interact(client, self.private_button(token, custom_id, clicker))

    def private_button(self, token: str, custom_id: str, clicker: dict[str, Any]) -> dict[str, Any]:
        """INTERACTION_CREATE for a button on an answer only `clicker` sees (the first response of `token`)."""
        return self._button_on(self.rest.originals[token], custom_id, clicker)

    def _button_on(self, bot_message: dict[str, Any], custom_id: str, clicker: dict[str, Any]) -> dict[str, Any]:
        return p.button_interaction(
            app_id=self.app_id,
            clicker=clicker,
            custom_id=custom_id,
            bot_message=bot_message,
            guild_id=self.guild_id,
            channel=self.rest.channels[bot_message["channel_id"]],
        )

    def custom_ids(self, message: dict[str, Any]) -> list[str]:
        return [c["custom_id"] for c in p.buttons_of(message) if c.get("custom_id")]

    def bot_messages(self, channel_id: str) -> list[dict[str, Any]]:
        return [m for m in self.rest.channel_messages(channel_id) if m["author"]["id"] == self.bot["id"]]
