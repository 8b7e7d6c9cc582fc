"""Discord speaks the person's language (adapters/discord/wording.py) through the real client, discord.py's parsing
of gateway payloads, the durable inbox and the fake REST server:

- `/ask` and "Ask docbot" carry their descriptions and menu name in every Discord client language docbot speaks
  (`description_localizations` / `name_localizations`, as stored by the fake when the tree synced);
- a Japanese /ask is acknowledged privately in Japanese (the question's language), from an English client too;
- a Japanese answer's "Post in a thread" and "Solved" are in Japanese; the Solved note follows the presser's locale.
"""

from __future__ import annotations

from typing import Any

import pytest

from adapters.discord.wording import ENGLISH, wording
from pipeline.messages import Citation, Inbound, Reply, ReplyKind
from tests.adapters.discord.test_discord_delivery import callbacks
from tests.adapters.discord.test_discord_notices import detected_language
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.fakes import discord_payloads as p

pytestmark = pytest.mark.integration

# Discord's client locales of the languages docbot speaks besides English (en-US, en-GB: Discord's default is ours)
OUR_LOCALES = {"de", "es-ES", "es-419", "fr", "ru", "zh-CN", "zh-TW", "pt-BR", "it", "ja", "ko", "nl", "pl"}
JAPANESE = "リモコンをテレビとペアリングするにはどうすればいいですか？"
CITATION = Citation(1, "ペアリング", ("リモコン",), "https://docs.test/remote#pair", "c1", 0.9)


def japanese_answer(inbound: Inbound) -> Reply:
    """What the service answers a Japanese question with: a reply in Japanese."""
    return Reply(ReplyKind.ANSWER, "ホームボタンと戻るボタンを5秒間押し続けてください [1]。", "ja", "conv-ja",
                 citations=(CITATION,))  # fmt: skip


async def test_the_commands_are_described_in_every_client_language_docbot_speaks(checked: DiscordWorld) -> None:
    world = checked
    await world.client(FakeHandler(on_message=lambda inbound: None))
    ask, menu = world.rest.commands["ask"], world.rest.commands[ENGLISH.ask_about_command]  # as Discord keeps them
    [question] = ask["options"]
    assert (ask["description"], question["description"]) == (ENGLISH.ask_command_description,
                                                              ENGLISH.ask_option_description)  # fmt: skip
    assert set(ask["description_localizations"]) == set(question["description_localizations"]) == OUR_LOCALES
    assert set(menu["name_localizations"]) == OUR_LOCALES
    for locale in OUR_LOCALES:
        words = wording(locale)
        assert ask["description_localizations"][locale] == words.ask_command_description
        assert question["description_localizations"][locale] == words.ask_option_description
        assert menu["name_localizations"][locale] == words.ask_about_command
    assert ask["description_localizations"]["ja"] != ENGLISH.ask_command_description
    # what people type stays as it is: no localized name for /ask or its option
    assert not ask.get("name_localizations") and not question.get("name_localizations")


async def test_a_japanese_ask_is_acknowledged_in_japanese_from_an_english_client(checked: DiscordWorld) -> None:
    world = checked
    client = await world.client(FakeHandler(on_message=japanese_answer), language_of=detected_language)
    command = await world.ask(client, world.alice, JAPANESE, locale="en-US")
    [ack] = callbacks(world, command)
    assert ack.body["data"]["flags"] == 64
    assert ack.body["data"]["content"] == wording("ja").ask_received != ENGLISH.ask_received


async def test_a_japanese_private_answer_offers_to_post_it_in_japanese(checked: DiscordWorld) -> None:
    world = checked
    client = await world.client(FakeHandler(on_message=japanese_answer))
    target = await world.say(client, world.bob, JAPANESE, mentions_bot=False)
    asked = await world.ask_about(client, world.alice, target)
    labels = [b["label"] for b in p.buttons_of(world.rest.originals[asked["token"]])]
    assert wording("ja").publish in labels and ENGLISH.publish not in labels


async def test_solved_speaks_the_answers_language_and_its_note_the_pressers(checked: DiscordWorld) -> None:
    world = checked
    forum_id = world.forum([("9002", "Solved")])
    client = await world.client(FakeHandler(on_message=japanese_answer), discord_forum_channels=(int(forum_id),))
    post_id = await world.post_in_forum(client, forum_id, world.alice, "ペアリングできない", JAPANESE)
    [card] = world.rest.channel_messages(post_id)[1:]
    [solved] = [b["custom_id"] for b in p.buttons_of(card) if b["label"] == wording("ja").solved_label]
    press: dict[str, Any] = world.button(card["id"], solved, world.alice)
    await world.interact(client, {**press, "locale": "pt-BR"})  # Alice's client is in Portuguese
    [note] = world.rest.find("POST", rf"/webhooks/{world.app_id}/[^/]+")
    assert (note.body["content"], note.body["flags"]) == (wording("pt-BR").solved, 64)
    assert note.body["content"] != ENGLISH.solved
