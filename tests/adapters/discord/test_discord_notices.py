"""Notices on Discord (issue 28, item 6): a refused /ask is told in the language of the question, not the asker's
client locale (a 6,000-character English question got "too long" in German); a rate-limit notice answering an /ask
goes to the asker only, as an ephemeral follow-up of the interaction."""

from __future__ import annotations

import pytest

from bot.app import asker_language
from pipeline.envelope import Context
from pipeline.locales import texts
from pipeline.messages import Inbound, Reply, ReplyKind
from storage.db import Database
from tests.adapters.discord.test_discord_delivery import callbacks, public_posts
from tests.adapters.discord.world import DiscordWorld, FakeHandler

pytestmark = pytest.mark.integration

ENGLISH = "How do I pair the remote with the TV when the light on the box keeps blinking red? "


async def detected_language(text: str) -> str | None:
    return await asker_language()(text[:1000], Context())


async def test_a_too_long_english_ask_from_a_german_client_is_refused_in_english(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: None)
    client = await world.client(handler, language_of=detected_language)
    asked = await world.ask(client, world.alice, ENGLISH * 80, locale="de")
    [refused] = callbacks(world, asked)
    assert refused.body["data"]["flags"] == 64
    assert refused.body["data"]["content"] == texts("en").question_too_long.format(limit=4000)


async def test_a_rate_limit_notice_for_an_ask_is_private(world: DiscordWorld, db: Database) -> None:
    def limited(inbound: Inbound) -> Reply:
        return Reply(ReplyKind.NOTICE, texts("en").rate_limited, "en", "", reason="rate_limited")

    handler = FakeHandler(on_message=limited)
    client = await world.client(handler, language_of=detected_language)
    await world.ask(client, world.alice, "How do I pair the remote?")
    [followup] = world.rest.find("POST", r"/webhooks/.+")
    assert followup.body["content"] == texts("en").rate_limited and followup.body["flags"] == 64
    assert not [c for c in public_posts(world) if texts("en").rate_limited in str(c.body)]

