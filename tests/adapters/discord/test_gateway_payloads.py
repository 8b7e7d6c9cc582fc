"""Discord's own gateway and interaction examples (../shared/data/discord/gateway-payloads: discord-api-docs and
hikari's fixtures) parsed by discord.py's ConnectionState (parse_message_create, parse_thread_create,
parse_guild_create, parse_interaction_create) and handed to the real client, with the expected outcome per kind:

    MESSAGE_CREATE      a person's DM (no guild_id) → a question; a bot's message → ignored; the same message as a
                        guild mention → a question answered in a new thread
    THREAD_CREATE       the thread is known, and a follow-up written in it reaches the service as that thread's
    GUILD_CREATE        the guild and its channels are known; a mention in its text channel is answered in a thread;
                        an unavailable guild is taken without error
    INTERACTION_CREATE  /ask → stored, acknowledged privately, asked; docbot's button → the press reaches the service;
                        other apps' commands, context menus, autocomplete, modals and buttons → ignored, nothing
                        sent, no error

The examples predate a few fields discord.py reads; `complete()` adds only those (named in COMPLETIONS) where missing.
Op-code envelopes and bare objects (user, member, channel) are not events docbot handles and are not driven.
"""

from __future__ import annotations

import copy
import json
import logging
from collections import Counter
from collections.abc import Iterator
from typing import Any

import discord
import pytest

from adapters.discord.buttons import ButtonRef
from adapters.discord.client import DocbotClient
from pipeline.messages import ActionOutcome, InboundKind, Reply, ReplyKind
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.conftest import shared_path
from tests.fakes import discord_payloads as p

pytestmark = pytest.mark.integration

COMPLETIONS = {
    "version": "interaction version (always 1); the docs' slash command example predates it",
    "application_id": "the application the interaction is for; missing from the docs' slash command example",
    "attachment_size_limit": "sent on every interaction since 2025; discord.py reads it",
    "member.flags": "guild member flags, sent on every member since 2023; discord.py reads them",
    "attachments[].waveform": "hikari's fixture puts a non-base64 placeholder there (removed)",
    "thread id": "the docs' thread example reuses one placeholder id for thread, parent and guild (a fresh one)",
    "pressed message components": "hikari's component example carries a button with both url and custom_id, "
    "which Discord never sends and discord.py refuses; docbot's variant presses a message holding docbot's button",
}
CALLBACKS = r"/interactions/\d+/[^/]+/callback"


def payloads(event: str) -> Iterator[tuple[str, dict[str, Any]]]:
    root = shared_path("discord", "gateway-payloads")
    for entry in json.loads((root / "index.json").read_text(encoding="utf-8")):
        if entry["gateway_event"].startswith(event):
            yield entry["file"], json.loads((root / entry["file"]).read_text(encoding="utf-8"))


def complete(payload: dict[str, Any], app_id: str) -> dict[str, Any]:
    data = copy.deepcopy(payload)
    if "token" in data:  # an interaction
        data.setdefault("version", 1)
        data.setdefault("application_id", app_id)
        data.setdefault("attachment_size_limit", 8 * 1024 * 1024)
    members = [data.get("member"), (data.get("message") or {}).get("member")]
    for member in [m for m in members if isinstance(m, dict)]:
        member.setdefault("flags", 0)
    for message in (data, data.get("message") or {}):
        for attachment in message.get("attachments") or []:
            attachment.pop("waveform", None)
    return data


def replies(_inbound: Any) -> Reply:
    return Reply(kind=ReplyKind.ANSWER, text="Hold **Home** for 5 s.", language="en", conversation_id="c")


def no_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records
            if r.levelno >= logging.ERROR and r.name.startswith(("discord", "adapters"))]  # fmt: skip


def mention_of(world: DiscordWorld, payload: dict[str, Any], guild_id: str, channel_id: str) -> dict[str, Any]:
    """The same message written by a person in a guild channel, mentioning the bot."""
    data = copy.deepcopy(payload)
    data.update(guild_id=guild_id, channel_id=channel_id, author=world.alice, mentions=[world.bot], type=0,
                content=f"{world.mention()} {payload['content']}", id=p.snowflake())  # fmt: skip
    data["member"] = {k: v for k, v in p.member(world.alice).items() if k != "user"}
    for key in ("message_reference", "referenced_message", "thread", "interaction", "interaction_metadata"):
        data.pop(key, None)
    return data


async def test_message_create_payloads(world: DiscordWorld, caplog: pytest.LogCaptureFixture) -> None:
    handler = FakeHandler(on_message=replies)
    tally: Counter[str] = Counter()
    for name, raw in payloads("MESSAGE_CREATE"):
        # its own client and inbox: two of the docs' examples share one message id (one inbox would drop the second)
        client = await world.client(handler, own_inbox=True)
        payload = complete(raw, world.app_id)
        before = len(handler.messages)
        await world.deliver_message(client, payload)
        if payload["author"].get("bot"):
            assert len(handler.messages) == before, name
            tally["ignored (a bot's message)"] += 1
        else:
            assert "guild_id" not in payload, name  # the docs' examples are DMs as delivered: the rule below
            [inbound] = handler.messages[before:]
            assert (inbound.message_id, inbound.channel_id, inbound.text) == (
                payload["id"], payload["channel_id"], payload["content"]), name  # fmt: skip
            assert inbound.mentioned and inbound.workspace_id == "dm" and inbound.user_id == payload["author"]["id"]
            tally["question (DM)"] += 1
        mention = mention_of(world, payload, world.guild_id, world.channel_id)
        await world.deliver_message(client, mention)
        inbound = handler.messages[-1]
        assert (inbound.message_id, inbound.text, inbound.mentioned) == (mention["id"], payload["content"], True)
        assert world.rest.find("POST", rf"/channels/{world.channel_id}/messages/{mention['id']}/threads"), name
        assert world.bot_messages(mention["id"]), name  # answered in the new thread
        tally["as a guild mention: question answered in a thread"] += 1
    print(f"\nMESSAGE_CREATE: {dict(tally)}")
    assert tally["ignored (a bot's message)"] >= 1 and tally["question (DM)"] >= 2
    assert not no_errors(caplog), no_errors(caplog)


async def _know_guild(client: DocbotClient, world: DiscordWorld, guild_id: str, parent_id: str) -> None:
    if client.get_guild(int(guild_id)) is None:
        parent = p.text_channel(parent_id, guild_id)
        members = [p.member(world.alice), p.member(world.bot)]
        client._connection.parse_guild_create(p.guild_create(guild_id, [parent], members))  # type: ignore[arg-type]


async def test_thread_create_payloads(world: DiscordWorld, caplog: pytest.LogCaptureFixture) -> None:
    handler = FakeHandler(on_message=lambda inbound: None)
    client = await world.client(handler)
    threads = list(payloads("THREAD_CREATE"))
    assert len(threads) >= 4
    for name, raw in threads:
        payload = complete(raw, world.app_id)
        if payload["id"] in (payload["parent_id"], payload["guild_id"]):
            payload["id"] = p.snowflake()
        await _know_guild(client, world, payload["guild_id"], payload["parent_id"])
        client._connection.parse_thread_create(payload)  # type: ignore[arg-type]
        thread = client.get_channel(int(payload["id"]))
        assert isinstance(thread, discord.Thread) and thread.parent_id == int(payload["parent_id"]), name
        follow_up = p.message(payload["id"], world.alice, "and the voice remote?", guild_id=payload["guild_id"])
        await world.deliver_message(client, follow_up)
        inbound = handler.messages[-1]
        assert inbound.message_id == follow_up["id"] and not inbound.mentioned, name
        assert (inbound.channel_id, inbound.thread_id) == (payload["parent_id"], payload["id"]), name
    print(f"\nTHREAD_CREATE: {len(threads)} threads known, a follow-up routed into each")
    assert not no_errors(caplog), no_errors(caplog)


async def test_guild_create_payloads(world: DiscordWorld, caplog: pytest.LogCaptureFixture) -> None:
    handler = FakeHandler(on_message=replies)
    client = await world.client(handler)
    guilds = list(payloads("GUILD_CREATE"))
    tally: Counter[str] = Counter()
    for name, raw in guilds:
        payload = complete(raw, world.app_id)
        client._connection.parse_guild_create(payload)  # type: ignore[arg-type]
        guild = client.get_guild(int(payload["id"]))
        if payload.get("unavailable"):
            assert guild is None or guild.unavailable, name
            tally["unavailable: taken without error"] += 1
            continue
        assert guild is not None and guild.name == payload["name"], name
        texts = [c for c in payload.get("channels", []) if c["type"] == 0]
        if not texts:
            tally["known (a guild object without channels)"] += 1
            continue
        assert {c.id for c in guild.channels} >= {int(c["id"]) for c in payload["channels"]}, name
        question = p.message(texts[0]["id"], world.alice, f"{world.mention()} how do I pair the remote?",
                             guild_id=payload["id"], mentions=[world.bot])  # fmt: skip
        await world.deliver_message(client, question)
        assert handler.messages[-1].workspace_id == payload["id"], name
        assert world.rest.find("POST", rf"/channels/{texts[0]['id']}/messages/{question['id']}/threads"), name
        tally["known with its channels: a mention answered in a thread"] += 1
    print(f"\nGUILD_CREATE: {dict(tally)}")
    assert len(guilds) == 3 and tally["known with its channels: a mention answered in a thread"] >= 1
    assert not no_errors(caplog), no_errors(caplog)


def _channel_of(payload: dict[str, Any]) -> str:
    return str(payload.get("channel_id") or (payload.get("channel") or {}).get("id") or "0")


async def _interact(world: DiscordWorld, client: DocbotClient, payload: dict[str, Any]) -> None:
    world.rest.interaction_channels[payload["token"]] = _channel_of(payload)
    client._connection.parse_interaction_create(payload)  # type: ignore[arg-type]
    await client.wait_idle()
    await world.settle(client)


def bot_cannot_post(interaction: dict[str, Any]) -> bool:
    """What the payload says about where the bot is (discord.com/developers/docs/interactions/receiving-and-responding:
    `context` 2 is a private channel; `authorizing_integration_owners` names the server under "0" when the server
    installed the app, the user under "1" when they did)."""
    owners = interaction.get("authorizing_integration_owners") or {}
    user = ((interaction.get("member") or {}).get("user") or interaction.get("user") or {}).get("id")
    user_only = owners.get("1") == user and owners.get("0") != interaction.get("guild_id")
    return interaction.get("context") == 2 or (interaction.get("guild_id") is not None and user_only)


async def test_interaction_payloads(world: DiscordWorld, caplog: pytest.LogCaptureFixture) -> None:
    handler = FakeHandler(
        on_message=replies,
        on_action=lambda inbound: ActionOutcome(accepted=True, chosen_label="Voice remote", reply=replies(inbound)),
    )
    client = await world.client(handler)
    tally: Counter[str] = Counter()
    interactions = [(name, complete(raw, world.app_id)) for name, raw in payloads("INTERACTION_CREATE")]
    assert len(interactions) >= 8
    for name, payload in interactions:
        kind = payload["type"]
        before = (len(world.rest.calls), len(handler.messages), len(handler.actions))
        await _interact(world, client, payload)  # as Discord sent it: another app's command, menu, button, ...
        # a control /ask after it: once it is answered, the example before it has been handled too
        control = p.ask_command_interaction(app_id=world.app_id, command_id=world.rest.command_id, asker=world.bob,
                                            question="control", guild_id=world.guild_id,
                                            channel=world.rest.channels[world.channel_id])  # fmt: skip
        await _interact(world, client, control)
        later = world.rest.calls[before[0]:]
        assert not [c for c in later if c.method == "POST" and payload["id"] in c.path], f"{name}: answered"
        assert [i.text for i in handler.messages[before[1]:]] == ["control"], name
        assert handler.actions[before[2]:] == [], name
        tally[f"type {kind}: ignored"] += 1
        if kind == 2 and payload["data"].get("type", 1) == 1:  # a slash command: the same as docbot's /ask
            asked = {**payload, "id": p.snowflake(), "token": f"tok-{p.snowflake()}", "data": {
                "id": world.rest.command_id, "name": "ask", "type": 1,
                "options": [{"name": "question", "type": 3, "value": "How do I pair the remote?"}]}}  # fmt: skip
            world.rest.expect_interaction(asked)
            await _interact(world, client, asked)
            [ack] = world.rest.find("POST", rf"/interactions/{asked['id']}/[^/]+/callback")
            inbound = handler.messages[-1]
            assert (inbound.text, inbound.mentioned) == ("How do I pair the remote?", True), name
            if bot_cannot_post(asked):  # a private channel, or a server that installed only the user's app
                assert (ack.body["type"], ack.body["data"]["flags"]) == (5, 64), name  # stored, "thinking" privately
                [answer] = world.rest.find("PATCH", rf"/webhooks/{world.app_id}/{asked['token']}/messages/@original")
                assert p.text_of(answer.body).startswith("Hold"), name  # the answer replaces it, for the asker only
                tally["type 2 as /ask where the bot cannot post: stored, answered privately"] += 1
                continue
            assert (ack.body["type"], ack.body["data"]["flags"]) == (4, 64), name  # stored, then a private ack
            echo = world.rest.messages[inbound.message_id]
            assert echo["author"]["id"] == world.bot["id"], name  # the question, posted by the bot ...
            assert echo["content"].endswith(":\n> How do I pair the remote?"), name  # ... in the asker's locale
            tally["type 2 as /ask: stored, acknowledged and asked"] += 1
        if kind == 3:  # a button: the same press on one of docbot's buttons
            clicker = (payload.get("member") or {}).get("user") or payload["user"]
            ref = ButtonRef(action_id="opt-voice", asker_id=int(clicker["id"]))
            pressed = copy.deepcopy(payload)
            pressed.update(id=p.snowflake(), token=f"tok-{p.snowflake()}")
            pressed["data"] = {**payload["data"], "custom_id": ref.custom_id}
            button = {"type": p.COMPONENT_BUTTON, "style": 1, "label": "Voice remote", "custom_id": ref.custom_id}
            pressed["message"].update(author=world.bot, components=[{"type": p.COMPONENT_ACTION_ROW,
                                                                     "components": [button]}])  # fmt: skip
            await _interact(world, client, pressed)
            [press] = handler.actions[before[2]:]
            assert press.kind is InboundKind.ACTION and press.action_id == "opt-voice", name
            assert press.user_id == clicker["id"], name
            assert world.rest.find("POST", rf"/interactions/{pressed['id']}/.+"), name
            tally["type 3 as docbot's button: pressed"] += 1
    print(f"\nINTERACTION_CREATE: {dict(tally)}")
    asked = tally["type 2 as /ask: stored, acknowledged and asked"]
    assert asked >= 1 and asked + tally["type 2 as /ask where the bot cannot post: stored, answered privately"] >= 2
    assert tally["type 3 as docbot's button: pressed"] >= 1
    assert not no_errors(caplog), no_errors(caplog)
