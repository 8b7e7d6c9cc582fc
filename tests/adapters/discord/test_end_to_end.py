"""The Discord adapter with the real application (`bot.app.build_app`: service, pipeline, SQLite, search) over the
fixture manual, against the recording fake of Discord's REST API. Run with `-s` to see the transcript."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.app import App, build_app
from tests.adapters.discord.world import DiscordWorld
from tests.fakes import discord_payloads as p

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MANUAL = Path(__file__).resolve().parents[2] / "fixtures" / "manual"
DOCS_URL = "https://docs.corvid.test/"


@pytest.fixture
async def app(world: DiscordWorld, tmp_path: Path) -> AsyncIterator[App]:
    built = await build_app(world.settings(data_dir=tmp_path))
    await built.ingest([str(MANUAL)], base_url=DOCS_URL)
    yield built
    await built.close()


def transcript(world: DiscordWorld) -> str:
    """The REST calls the bot made, one line each, as an operator would read them."""
    lines = []
    for call in world.rest.calls:
        if call.method == "GET" or "/typing" in call.path or "/commands" in call.path:
            continue
        body = call.body if isinstance(call.body, dict) else {}
        data = body.get("data") or {}
        parts = [f"{call.method} {call.path} -> {call.status}"]
        if "type" in body:
            parts.append(f"callback type {body['type']}")
        if body.get("name"):
            parts.append(f"thread {body['name']!r}")
        content = p.text_of(body) or p.text_of(data)
        if content:
            parts.append(repr(content[:70] + ("…" if len(content) > 70 else "")))
        buttons = p.buttons_of(body) or p.buttons_of(data)
        if buttons:
            labels = (f"{b['label']}{' (off)' if b.get('disabled') else ''}" for b in buttons)
            parts.append("buttons " + ", ".join(labels))
        if body.get("embeds"):
            parts.append(f"{len(body['embeds'][0]['description'].splitlines())} source(s)")
        lines.append("  ".join(parts))
    return "\n".join(lines)


async def until(condition: Any, timeout: float = 60.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def button(world: DiscordWorld, message: dict[str, Any], label: str) -> str:
    [custom_id] = [c["custom_id"] for c in p.buttons_of(message) if c["label"] == label]
    return custom_id


async def test_discord_conversation_end_to_end(world: DiscordWorld, app: App, tmp_path: Path) -> None:
    client = await world.client(app.service, db=app.db, data_dir=tmp_path)

    # a mention in #help: a thread on the question, an answer with sources and feedback buttons
    question = await world.say(client, world.alice, f"{world.mention()} how do I pair the remote with the hub?")
    thread_id = question["id"]
    await until(lambda: world.bot_messages(thread_id))
    [answered] = world.bot_messages(thread_id)
    assert "Home and Back" in p.text_of(answered)
    sources = p.text_of(answered)
    assert "Pairing the remote with the hub" in sources
    assert f"{DOCS_URL}getting-started/remote.md#pairing-the-remote-with-the-hub" in sources
    assert [c["label"] for c in p.buttons_of(answered)] == [
        "Helpful", "Not helpful", "Ask a human"
    ]
    client._connection.parse_thread_create(world.rest.channels[thread_id])  # type: ignore[arg-type]

    # feedback: one vote per person, the buttons stay for everyone, the thanks is private
    await world.press(client, answered["id"], button(world, answered, "Helpful"), world.alice)
    assert next(c["label"] for c in p.buttons_of(answered)) == "Helpful"
    assert not any(c.get("disabled") for c in p.buttons_of(answered))
    [thanks] = world.rest.find("POST", rf"/webhooks/{world.app_id}/[^/]+")
    assert thanks.body["flags"] == 64

    # a follow-up in the thread without a mention continues the conversation
    follow_up = "and how do I replace its batteries?"
    await world.say(client, world.alice, follow_up, channel_id=thread_id, mentions_bot=False)
    await until(lambda: len(world.bot_messages(thread_id)) == 2)
    assert "AAA" in p.text_of(world.bot_messages(thread_id)[1])

    # a vague question: a clarifying question with buttons
    vague = await world.say(client, world.bob, f"{world.mention()} it doesn't work")
    await until(lambda: world.bot_messages(vague["id"]))
    [clarifying] = world.bot_messages(vague["id"])
    assert clarifying["components"]

    # the bot restarts; the button on the old message still works
    client = await world.restart(client, app.service, db=app.db, data_dir=tmp_path)
    await world.press(client, clarifying["id"], button(world, clarifying, "Ask a human"), world.bob)
    await until(lambda: len(world.bot_messages(vague["id"])) == 2)
    handoff = world.bot_messages(vague["id"])[1]
    assert p.text_of(handoff).startswith(f"<@&{world.support_role_id}> ")
    handoff_call = world.rest.find("POST", f"/channels/{vague['id']}/messages")[-1]
    assert handoff_call.body["allowed_mentions"] == {"parse": [], "roles": [int(world.support_role_id)]}

    # the same gateway event again, now to the restarted bot: the inbox knows it, no second thread, no second answer
    await world.deliver_message(client, question)
    assert len(world.bot_messages(thread_id)) == 2
    assert [c.status for c in world.rest.find("POST", rf"/channels/\d+/messages/{thread_id}/threads")] == [201]

    print("\n" + transcript(world))
