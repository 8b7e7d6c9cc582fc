"""Streaming an answer into a Discord thread against the fake REST server: one message, progressive edits at most
once per interval, then the final edit with the sources embed and the buttons; through the durable outbox too."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from adapters.discord.sink import DiscordReplySink, discord_thread_ref
from adapters.discord.stream import WRITING_MARK, DiscordAnswerStream
from bot.delivery import Delivery, DeliveryConfig
from pipeline.envelope import StreamCallback
from pipeline.messages import Citation, Inbound, Reply, ReplyAction, ReplyKind, ThreadFetcher
from pipeline.types import ActionKind
from storage.db import Database
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.fakes import discord_payloads as p

pytestmark = pytest.mark.integration

MESSAGES = r"/channels/\d+/messages"
EDITS = r"/channels/\d+/messages/\d+"
PINGING_ANSWER = "Hold the pair button for three seconds until the light blinks @everyone"
LONG_ANSWER = "Hold the pair button for three seconds until the light blinks [1] and then let go"


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def final_answer(text: str = "Hold the pair button for 3 s [1].") -> Reply:
    return Reply(
        kind=ReplyKind.ANSWER, text=text, language="en", conversation_id="conv",
        citations=(Citation(1, "Pairing", ("Remote",), "https://docs.example/pair", "c1", 0.9),),
        actions=(ReplyAction("a-yes", "Helpful", ActionKind.HELPFUL),),
    )  # fmt: skip


def edits(world: DiscordWorld) -> list[dict[str, Any]]:
    return [c.body for c in world.rest.find("PATCH", EDITS)]


async def test_edits_are_throttled_and_the_final_edit_carries_sources_and_buttons(world: DiscordWorld) -> None:
    client = await world.client(FakeHandler(on_message=lambda _inbound: None))
    ref = discord_thread_ref(world.guild_id, world.channel_id, world.channel_id, asker_id=int(world.alice["id"]))
    clock = Clock()
    stream = DiscordAnswerStream(client, ref, min_interval_s=1.5, clock=clock)
    words = PINGING_ANSWER.split()
    for index in range(len(words)):
        await stream.update(" ".join(words[: index + 1]))
        clock.now += 0.5  # a word every 0.5 s: an edit at most every 1.5 s
    streamed_id = await stream.finish()

    [sent] = [c.body for c in world.rest.find("POST", MESSAGES)]
    assert sent["content"] == "Hold" + WRITING_MARK and sent["allowed_mentions"]["parse"] == []
    assert len(edits(world)) == 3  # at 1.5, 3.0 and 4.5 s after the first text
    assert all(body["allowed_mentions"]["parse"] == [] for body in edits(world))
    assert streamed_id is not None and world.bot_messages(world.channel_id)[0]["id"] == streamed_id

    posted = await client.sink.post(dataclasses.replace(ref, placeholder_id=streamed_id), final_answer())
    assert posted == streamed_id
    [message] = world.bot_messages(world.channel_id)
    assert p.text_of(message).startswith("Hold the pair button for 3 s") and WRITING_MARK not in p.text_of(message)
    assert message["embeds"] and world.custom_ids(message)
    assert len(world.rest.find("POST", MESSAGES)) == 1  # no second message in the thread


async def test_a_deleted_streamed_message_gets_a_new_reply(world: DiscordWorld) -> None:
    client = await world.client(FakeHandler(on_message=lambda _inbound: None))
    ref = discord_thread_ref(world.guild_id, world.channel_id, world.channel_id, asker_id=int(world.alice["id"]))
    stream = DiscordAnswerStream(client, ref)
    await stream.update("Hold the")
    await stream.discard()
    assert world.bot_messages(world.channel_id) == []
    gone = await stream.finish()
    assert gone is not None
    posted = await client.sink.post(dataclasses.replace(ref, placeholder_id=gone), final_answer())
    [message] = world.bot_messages(world.channel_id)
    assert message["id"] == posted != gone and world.custom_ids(message)


class StreamingHandler(FakeHandler):
    """Writes its answer through `stream` word by word before replying, like the service in LLM mode."""

    def __init__(self, words: list[str], *, fail: bool = False) -> None:
        super().__init__(on_message=lambda _inbound: final_answer(" ".join(words)))
        self.words = words
        self.fail = fail

    async def handle_message(
        self, inbound: Inbound, fetcher: ThreadFetcher | None = None, stream: StreamCallback | None = None
    ) -> Reply | None:
        assert stream is not None
        for index in range(len(self.words)):
            await stream(" ".join(self.words[: index + 1]))
            await asyncio.sleep(0.02)
        if self.fail:
            raise RuntimeError("the database went away")
        return await super().handle_message(inbound, fetcher)


async def test_the_outbox_reply_replaces_the_streamed_message(world: DiscordWorld, db: Database) -> None:
    words = LONG_ANSWER.split()
    handler = StreamingHandler(words)
    client = await world.client(handler)
    sink = DiscordReplySink(client, stream_interval_s=0.1)
    delivery = Delivery(db, handler, {"discord": sink}, "w1", config=DeliveryConfig(stream_answers=True))
    client.intake = delivery
    question = p.message(world.channel_id, world.alice, f"{world.mention()} pairing?", guild_id=world.guild_id,
                         mentions=[world.bot])  # fmt: skip
    await world.deliver_message(client, question)
    assert await delivery.process_once() == 1

    thread = question["id"]  # the bot opened a thread on the question
    [message] = world.bot_messages(thread)
    assert p.text_of(message).startswith("Hold the pair button") and message["embeds"] and world.custom_ids(message)
    streamed = edits(world)
    assert 1 <= len(streamed) - 1 <= 4  # ~0.34 s of writing at one edit per 0.1 s, then the final edit
    assert "components" in streamed[-1] and all("components" not in body for body in streamed[:-1])


async def test_a_handler_failing_mid_stream_leaves_no_half_written_answer(world: DiscordWorld, db: Database) -> None:
    handler = StreamingHandler(LONG_ANSWER.split()[:4], fail=True)
    client = await world.client(handler)
    sink = DiscordReplySink(client, stream_interval_s=0.0)
    delivery = Delivery(db, handler, {"discord": sink}, "w1", config=DeliveryConfig(stream_answers=True))
    client.intake = delivery
    question = p.message(world.channel_id, world.alice, f"{world.mention()} pairing?", guild_id=world.guild_id,
                         mentions=[world.bot])  # fmt: skip
    await world.deliver_message(client, question)
    assert await delivery.process_once() == 1
    assert world.rest.find("DELETE", EDITS)  # the streamed text was taken down; the event will be retried
    assert world.bot_messages(question["id"]) == []
