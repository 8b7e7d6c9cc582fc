"""The Discord client with the durable inbox/outbox (`bot.delivery.Delivery` on SQLite) instead of direct calls."""

from __future__ import annotations

import pytest

from adapters.discord.client import DocbotClient
from bot.delivery import Delivery
from pipeline.messages import Inbound, Reply, ReplyKind, ThreadFetcher
from storage.db import Database
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.fakes import discord_payloads as p

pytestmark = pytest.mark.integration


def echo(inbound: Inbound) -> Reply:
    return Reply(ReplyKind.ANSWER, f"answer to: {inbound.text}", "en", "conv")


async def logged_in(world: DiscordWorld, handler: FakeHandler, db: Database) -> tuple[DocbotClient, Delivery]:
    client = await world.client(handler)
    delivery = Delivery(db, handler, {"discord": client.sink}, worker_id="w1", fetcher_for=client.fetcher_for)
    client.intake = delivery
    return client, delivery


async def test_events_go_through_the_inbox_and_replies_through_the_outbox(world: DiscordWorld, db: Database) -> None:
    handler = FakeHandler(on_message=echo)
    client, delivery = await logged_in(world, handler, db)
    question = p.message(world.channel_id, world.alice, f"{world.mention()} pairing?", guild_id=world.guild_id,
                         mentions=[world.bot])
    await world.deliver_message(client, question)
    assert handler.messages == []  # stored, not yet handled

    assert await delivery.process_once() == 1
    await delivery.sweep()
    [posted] = world.bot_messages(question["id"])
    assert posted["content"] == "answer to: pairing?"

    # a restarted process receives the same event again: the inbox refuses it
    client2, delivery2 = await logged_in(world, handler, db)
    await world.deliver_message(client2, question)
    assert await delivery2.process_once() == 0
    assert len(world.bot_messages(question["id"])) == 1


async def test_fetcher_for_reads_an_existing_thread_but_not_a_new_one(world: DiscordWorld, db: Database) -> None:
    histories: list[int] = []

    class Counting(FakeHandler):
        async def handle_message(self, inbound: Inbound, fetcher: ThreadFetcher | None = None) -> Reply | None:
            histories.append(-1 if fetcher is None else len(await fetcher.fetch_thread()))
            return echo(inbound)

    handler = Counting(on_message=echo)
    client, delivery = await logged_in(world, handler, db)
    question = p.message(world.channel_id, world.alice, f"{world.mention()} pairing?", guild_id=world.guild_id,
                         mentions=[world.bot])
    await world.deliver_message(client, question)
    await delivery.process_once()
    await delivery.sweep()
    client._connection.parse_thread_create(world.rest.channels[question["id"]])  # type: ignore[arg-type]
    follow_up = p.message(question["id"], world.alice, f"{world.mention()} and batteries?", guild_id=world.guild_id,
                          mentions=[world.bot])
    await world.deliver_message(client, follow_up)
    await delivery.process_once()

    assert histories == [-1, 1]  # the new thread has nothing to read; then the bot's answer is history
