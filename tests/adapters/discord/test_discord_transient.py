"""Discord's 5xx are retried by the outbox, never taken for a deleted message, and a retry never posts a message
twice (issue 28): each message of a stored reply carries the same nonce on every try, with `enforce_nonce`, so
Discord returns the message an earlier try created (the fake keeps nonces as Discord does)."""

from __future__ import annotations

import asyncio

import pytest

from adapters.discord.layout import render_card
from pipeline.messages import Inbound, Reply, ReplyKind
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.fakes import discord_payloads as p

pytestmark = pytest.mark.integration

LONG = "\n\n".join(f"Step {n}: hold the pairing button until the light blinks twice. " * 6 for n in range(12))


def parts() -> int:
    """How many messages the long answer takes (Components v2 cards, as the sink posts it)."""
    return len(render_card(Reply(ReplyKind.ANSWER, LONG, "en", "conv"), asker_id=0, sources_heading="Sources"))


def long_answer(inbound: Inbound) -> Reply:
    return Reply(ReplyKind.ANSWER, LONG, "en", "conv")


async def asked(world: DiscordWorld, handler: FakeHandler, *, fail: list[dict[str, object]]) -> str:
    """A mention answered through the worker and the outbox, with the failures `fail` scripted first; returns the
    thread the answer went to."""
    client = await world.client(handler)
    for failure in fail:
        world.rest.fail_next(**failure)  # type: ignore[arg-type]
    question = p.message(world.channel_id, world.alice, f"{world.mention()} pairing?", guild_id=world.guild_id,
                         mentions=[world.bot])  # fmt: skip
    await world.deliver_message(client, question)
    delivery = world.deliveries[id(client)]
    async with asyncio.timeout(30):
        while (await delivery.outbox.counts()).get("pending"):
            await asyncio.sleep(0.05)
            await delivery.sweep()
    assert await delivery.outbox.counts() == {"sent": 1}
    return str(question["id"])


async def test_a_5xx_after_the_message_was_created_does_not_post_it_twice(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=long_answer)
    thread = await asked(world, handler, fail=[
        {"method": "POST", "path_regex": r"/channels/\d+/messages", "status": 503, "after": True},
    ])  # fmt: skip
    posted = world.bot_messages(thread)
    assert parts() > 1 and len(posted) == parts() and "".join(p.text_of(m) for m in posted).count("Step 11") == 6


async def test_a_5xx_on_the_second_part_posts_each_part_once(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=long_answer)
    thread = await asked(world, handler, fail=[
        {"method": "POST", "path_regex": r"/channels/\d+/messages", "status": 503, "after": True},
        {"method": "POST", "path_regex": r"/channels/\d+/messages", "status": 503, "after": True},
    ])  # fmt: skip
    posted = world.bot_messages(thread)
    assert len(posted) == parts() and len({m["nonce"] for m in posted}) == parts()


async def test_a_5xx_that_created_nothing_is_retried_and_posted_once(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: Reply(ReplyKind.ANSWER, "Hold the pairing button.", "en", "c"))
    thread = await asked(world, handler, fail=[
        {"method": "POST", "path_regex": r"/channels/\d+/messages", "status": 503},
    ])  # fmt: skip
    [posted] = world.bot_messages(thread)
    assert p.text_of(posted) == "Hold the pairing button."
