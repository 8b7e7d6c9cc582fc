"""The channel's name a team answer's citation shows ("answered by @bob in #help"): from the gateway's cache, else
read with GET /channels/{id}; a channel the bot cannot read gives None (the citation shows the id), never an error."""

from __future__ import annotations

import pytest

from adapters.discord.sink import discord_thread_ref
from pipeline.messages import ChannelNamer, ThreadRef
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.fakes import discord_payloads as p

pytestmark = pytest.mark.integration


async def test_the_name_comes_from_the_cache_else_from_rest_else_none(world: DiscordWorld) -> None:
    client = await world.client(FakeHandler(on_message=lambda inbound: None))
    sink = client.sink
    assert isinstance(sink, ChannelNamer)

    def ref(channel: str) -> ThreadRef:
        return discord_thread_ref(world.guild_id, channel, channel, asker_id=int(world.alice["id"]))

    help_name = world.rest.channels[world.channel_id]["name"]
    assert await sink.channel_name(ref(world.channel_id)) == help_name

    unseen = p.snowflake()  # created after the gateway's GUILD_CREATE: not in the client's cache
    world.rest.channels[unseen] = p.text_channel(unseen, world.guild_id, name="announcements")
    assert await sink.channel_name(ref(unseen)) == "announcements"
    assert world.rest.find("GET", rf"/channels/{unseen}$")

    hidden = p.snowflake()
    world.rest.channels[hidden] = p.text_channel(hidden, world.guild_id, name="staff")
    world.rest.fail_next("GET", rf"/channels/{hidden}$", status=403,
                         body={"message": "Missing Access", "code": 50001})  # fmt: skip
    assert await sink.channel_name(ref(hidden)) is None
    gone = p.snowflake()  # never existed: 404 Unknown Channel
    assert await sink.channel_name(ref(gone)) is None
