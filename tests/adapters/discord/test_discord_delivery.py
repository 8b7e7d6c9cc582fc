"""The Discord client with the durable inbox/outbox (`bot.delivery.Delivery` on SQLite), driven step by step: what is
stored, acknowledged and shown before the worker runs, and what the worker does."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from adapters.discord import wording
from adapters.discord.client import DocbotClient
from adapters.discord.sink import discord_thread_ref
from bot.delivery import Delivery
from pipeline.locales import texts
from pipeline.messages import DeliveryRejected, Inbound, Reply, ReplyKind, ThreadFetcher
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
    assert p.text_of(posted) == "answer to: pairing?"

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
    [note] = world.rest.find("POST", rf"/webhooks/{world.app_id}/[^/]+")  # only the presser sees why
    assert p.text_of(note.body) == "expired" and note.body["flags"] == 64
    assert world.bot_messages(question["id"]) == [clarifying]  # nothing new in the thread

    await world.press(client, clarifying["id"], voice, world.alice)  # accepted
    await delivery.process_once()
    [edit] = world.rest.find("PATCH", rf"/channels/\d+/messages/{clarifying['id']}")
    buttons = p.buttons_of(edit.body)
    assert all(b["disabled"] for b in buttons) and buttons[0]["label"].endswith("Voice remote")


class BrokenDatabase:
    """Makes the SQLite file unreachable for real (the engine reconnects to an empty file with no tables)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.path = Path(str(db.engine.url.database))
        self.aside = self.path.with_suffix(".aside")

    async def stop(self) -> None:
        await self.db.engine.dispose()
        os.rename(self.path, self.aside)

    async def start(self) -> None:
        await self.db.engine.dispose()
        os.remove(self.path)
        os.rename(self.aside, self.path)


def callbacks(world: DiscordWorld, interaction: dict[str, Any]) -> list[Any]:
    return world.rest.find("POST", rf"/interactions/{interaction['id']}/[^/]+/callback")


def public_posts(world: DiscordWorld) -> list[Any]:
    """Messages the bot made visible: channel posts and threads (interaction callbacks and webhooks not included)."""
    return [c for c in world.rest.calls if c.method == "POST" and c.path.startswith("/channels/")
            and not c.path.endswith("/typing")]  # fmt: skip


async def test_ask_is_stored_before_anything_is_shown_and_acknowledged_privately(
    world: DiscordWorld, db: Database
) -> None:
    handler = FakeHandler(on_message=echo)
    client, delivery = await logged_in(world, handler, db)

    command = await world.ask(client, world.alice, "How do I pair the remote?")

    [ack] = callbacks(world, command)  # only after the store: private, nothing in the channel yet
    assert ack.body["type"] == 4 and ack.body["data"]["flags"] == 64  # CHANNEL_MESSAGE_WITH_SOURCE, ephemeral
    assert ack.body["data"]["content"] == wording.ENGLISH.ask_received
    assert public_posts(world) == [] and handler.messages == []
    assert await delivery.inbox.counts() == {"pending": 1}

    assert await delivery.process_once() == 1  # the worker posts the question, starts the thread, answers in it
    await delivery.sweep()
    [question] = [m for m in world.bot_messages(world.channel_id) if "asked:" in p.text_of(m)]
    assert p.text_of(question) == f"<@{world.alice['id']}> asked:\n> How do I pair the remote?"
    [answer] = world.bot_messages(question["id"])
    assert p.text_of(answer) == "answer to: How do I pair the remote?"
    assert await delivery.process_once() == 0 and len(world.bot_messages(question["id"])) == 1


async def test_ask_with_a_bad_question_gets_a_private_notice_and_nothing_is_stored_or_shown(
    world: DiscordWorld, db: Database
) -> None:
    """Issue 12 item 9 on Discord: 5,000 characters used to be echoed publicly before "too long"."""
    handler = FakeHandler(on_message=echo)
    client, delivery = await logged_in(world, handler, db)
    limit = client._options.max_question_chars

    too_long = await world.ask(client, world.alice, "pair " * 1000)
    blank = await world.ask(client, world.alice, "   ")

    [refused] = callbacks(world, too_long)
    assert refused.body["type"] == 4 and refused.body["data"]["flags"] == 64
    assert refused.body["data"]["content"] == texts("en").question_too_long.format(limit=limit)
    [empty] = callbacks(world, blank)
    assert empty.body["data"]["flags"] == 64 and empty.body["data"]["content"] == texts("en").empty_question
    assert public_posts(world) == [] and world.rest.find("POST", r"/webhooks/") == []
    assert await delivery.inbox.counts() == {} and await delivery.process_once() == 0


async def test_ask_with_the_database_down_gets_a_private_failure_and_asking_again_is_answered_once(
    world: DiscordWorld, db: Database
) -> None:
    handler = FakeHandler(on_message=echo)
    client, delivery = await logged_in(world, handler, db)
    broken = BrokenDatabase(db)
    await broken.stop()

    failed = await world.ask(client, world.alice, "How do I pair the remote?")

    [notice] = callbacks(world, failed)  # not acknowledged as received: a private failure, nothing public
    assert notice.body["type"] == 4 and notice.body["data"]["flags"] == 64
    assert notice.body["data"]["content"] == texts("en").failure
    assert public_posts(world) == [] and handler.messages == []

    await broken.start()
    again = await world.ask(client, world.alice, "How do I pair the remote?")  # Discord does not retry: they do
    [ack] = callbacks(world, again)
    assert ack.body["data"]["content"] == wording.ENGLISH.ask_received
    await delivery.process_once()
    await delivery.sweep()
    assert await delivery.process_once() == 0
    answers = [m for m in world.rest.messages.values() if p.text_of(m) == "answer to: How do I pair the remote?"]
    assert len(answers) == 1 and len(handler.messages) == 1


async def test_ask_whose_store_is_slow_is_deferred_privately_then_acknowledged_by_the_follow_up(
    world: DiscordWorld, db: Database
) -> None:
    """Discord wants a response within 3 s: a store slower than `ack_within_s` is deferred first (ephemeral
    "thinking"), never acknowledged as received before the write is done."""
    handler = FakeHandler(on_message=echo)
    client, delivery = await logged_in(world, handler, db)
    client.ack_within_s = 0.0  # every store counts as slow

    command = await world.ask(client, world.alice, "How do I pair the remote?")

    [deferred] = callbacks(world, command)
    assert deferred.body == {"type": 5, "data": {"flags": 64}}  # DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE, ephemeral
    [follow_up] = world.rest.find("POST", rf"/webhooks/{world.app_id}/{command['token']}")
    assert p.text_of(follow_up.body) == wording.ENGLISH.ask_received
    assert world.rest.calls.index(deferred) < world.rest.calls.index(follow_up)
    assert await delivery.inbox.counts() == {"pending": 1} and public_posts(world) == []


async def test_a_mention_is_stored_before_its_thread_is_started(world: DiscordWorld, db: Database) -> None:
    handler = FakeHandler(on_message=echo)
    client, delivery = await logged_in(world, handler, db)
    question = p.message(world.channel_id, world.alice, f"{world.mention()} pairing?", guild_id=world.guild_id,
                         mentions=[world.bot])  # fmt: skip
    await world.deliver_message(client, question)
    assert public_posts(world) == [] and await delivery.inbox.counts() == {"pending": 1}

    await delivery.process_once()
    await delivery.sweep()
    assert world.rest.find("POST", rf"/channels/{world.channel_id}/messages/{question['id']}/threads")
    [answer] = world.bot_messages(question["id"])
    assert p.text_of(answer) == "answer to: pairing?"


async def test_a_mention_with_the_database_down_gets_a_short_notice_without_its_text(
    world: DiscordWorld, db: Database
) -> None:
    """A gateway event is not redelivered: the person is told to ask again, in the channel (no thread was made),
    and the notice does not repeat what they wrote."""
    handler = FakeHandler(on_message=echo)
    client, delivery = await logged_in(world, handler, db)
    broken = BrokenDatabase(db)
    await broken.stop()
    question = p.message(world.channel_id, world.alice, f"{world.mention()} pairing QX-SECRET?",
                         guild_id=world.guild_id, mentions=[world.bot])  # fmt: skip
    await world.deliver_message(client, question)
    await broken.start()

    [notice] = public_posts(world)
    assert notice.path.endswith(f"/channels/{world.channel_id}/messages")
    assert p.text_of(notice.body) == texts("en").failure and "QX-SECRET" not in str(notice.body)
    assert await delivery.process_once() == 0 and handler.messages == []


async def test_a_private_note_whose_interaction_expired_is_dropped_not_posted_in_public(
    world: DiscordWorld, db: Database
) -> None:
    """A press's note goes to the presser through its interaction (15 minutes); after that the outbox stops."""
    client, _ = await logged_in(world, FakeHandler(on_message=echo), db)
    ref = discord_thread_ref(world.guild_id, world.channel_id, world.channel_id, asker_id=1, interaction_token="tok")
    note = Reply(ReplyKind.NOTICE, "This choice was already used.", "en", "", reason="action_notice")
    world.rest.fail_next("POST", rf"/webhooks/{world.app_id}/tok", status=404,
                         body={"message": "Unknown Webhook", "code": 10015})  # fmt: skip

    with pytest.raises(DeliveryRejected, match="404"):
        await client.sink.post(ref, note)
    assert public_posts(world) == []


async def test_a_retried_mention_whose_thread_exists_answers_in_that_thread(world: DiscordWorld, db: Database) -> None:
    """The worker that started the thread died before it answered: the retry's thread request is refused with
    Discord's "thread already created" (160004) and the answer goes into the thread the message already has."""
    handler = FakeHandler(on_message=echo)
    client, delivery = await logged_in(world, handler, db)
    question = p.message(world.channel_id, world.alice, f"{world.mention()} pairing?", guild_id=world.guild_id,
                         mentions=[world.bot])  # fmt: skip
    world.rest.fail_next("POST", rf"/channels/{world.channel_id}/messages/{question['id']}/threads", status=400,
                         body={"message": "A thread has already been created for this message", "code": 160004})
    world.rest.channels[question["id"]] = p.thread_channel(question["id"], world.channel_id, world.guild_id,
                                                           world.bot["id"], name="pairing?")  # fmt: skip
    await world.deliver_message(client, question)
    await delivery.process_once()
    await delivery.sweep()

    [answer] = world.bot_messages(question["id"])
    assert p.text_of(answer) == "answer to: pairing?" and handler.messages[0].thread_id == question["id"]
    assert world.bot_messages(world.channel_id) == []  # not answered in the channel
