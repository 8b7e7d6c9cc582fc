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


async def test_a_press_is_stored_then_deferred_and_only_an_accepted_one_changes_the_message(
    world: DiscordWorld, db: Database
) -> None:
    """Issue 12 item 4 on Discord: the press used to rewrite the message (UPDATE_MESSAGE) before any check."""
    from pipeline.messages import ActionOutcome
    from tests.adapters.discord.test_discord_client import clarification

    accepted = {"opt-voice": True, "opt-basic": False}
    handler = FakeHandler(
        on_message=lambda inbound: clarification(),
        on_action=lambda inbound: ActionOutcome(accepted=accepted[inbound.action_id or ""], chosen_label="Voice",
                                                notice=None if accepted[inbound.action_id or ""] else "expired"),
    )  # fmt: skip
    client, delivery = await logged_in(world, handler, db)
    question = p.message(world.channel_id, world.alice, f"{world.mention()} it broke", guild_id=world.guild_id,
                         mentions=[world.bot])  # fmt: skip
    await world.deliver_message(client, question)
    await delivery.process_once()
    [clarifying] = world.bot_messages(question["id"])
    voice, basic = world.custom_ids(clarifying)

    await world.press(client, clarifying["id"], basic, world.alice)  # refused by the service
    callbacks = world.rest.find("POST", r"/interactions/\d+/[^/]+/callback")
    assert [c.body["type"] for c in callbacks] == [6]  # DEFERRED_UPDATE_MESSAGE: acknowledged, nothing changed
    await delivery.process_once()
    await delivery.sweep()
    assert world.rest.find("PATCH", rf"/channels/\d+/messages/{clarifying['id']}") == []

    await world.press(client, clarifying["id"], voice, world.alice)  # accepted
    await delivery.process_once()
    [edit] = world.rest.find("PATCH", rf"/channels/\d+/messages/{clarifying['id']}")
    buttons = [c for row in edit.body["components"] for c in row["components"]]
    assert all(b["disabled"] for b in buttons) and buttons[0]["label"].endswith("Voice remote")
