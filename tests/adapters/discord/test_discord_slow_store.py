"""Presses and editor submissions whose inbox write is slow (a PostgreSQL failover, a locked SQLite file): Discord wants
an interaction's initial response within 3 s, or the token dies ("This interaction failed"; a late response gets 404
10062, and follow-ups through the token fail). A write slower than `ack_within_s` is deferred first with the press's
own acknowledgement type (DEFERRED_UPDATE_MESSAGE), then the write's outcome is followed up.

Each write here waits on an event the test releases; the fake REST server keeps Discord's clock, which the test moves
past the 3 s window while the write is blocked, so only a response sent before that counts. Everything else is the
production path: discord.py's parsers, the real client, the `Delivery` on the world's SQLite file, real sockets."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest

from adapters.discord import wording
from adapters.discord.client import DocbotClient
from bot.delivery import Delivery
from pipeline.locales import texts
from pipeline.messages import ActionOutcome, Inbound, InboundKind, ThreadRef
from tests.adapters.discord.test_discord_client import clarification
from tests.adapters.discord.test_discord_editor import TYPED, stored, submission
from tests.adapters.discord.test_new_surfaces import Remembering, answer, forum_world
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.fakes import discord_payloads as p

pytestmark = pytest.mark.integration

DEFERRED_UPDATE = {"type": 6}  # DEFERRED_UPDATE_MESSAGE: acknowledged, the message unchanged for now
NOTED = "Noted: the voice remote."
SECRET = "password=QX-SECRET"  # in the database error's message: never logged


@dataclass
class DiscordClock:
    """The fake Discord's clock: time passes when the test says so."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


class HeldIntake:
    """The client's inbox whose write waits until the test releases it (then stores, or fails with `error`)."""

    def __init__(self, delivery: Delivery) -> None:
        self.delivery = delivery
        self.entered = asyncio.Event()
        self._released = asyncio.Event()
        self._error: Exception | None = None

    async def accept(self, inbound: Inbound, ref: ThreadRef) -> bool:
        self.entered.set()
        await self._released.wait()
        if self._error is not None:
            raise self._error
        return await self.delivery.accept(inbound, ref)

    def release(self, error: Exception | None = None) -> None:
        self._error = error
        self._released.set()


async def until(condition: Callable[[], Any], timeout_s: float = 30.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.01)


def responses(world: DiscordWorld, interaction: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(status, body) of every initial response docbot sent to `interaction`."""
    calls = world.rest.find("POST", rf"/interactions/{interaction['id']}/[^/]+/callback")
    return [(call.status, call.body) for call in calls]


def follow_ups(world: DiscordWorld, interaction: dict[str, Any]) -> list[Any]:
    return world.rest.find("POST", rf"/webhooks/{world.app_id}/{interaction['token']}")


def public_posts(world: DiscordWorld) -> list[Any]:
    return [c for c in world.rest.calls if c.method == "POST" and c.path.startswith("/channels/")]


def logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records)


def errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """ERROR records: a failed write's line, or an exception that escaped a handler (discord.py logs those)."""
    return [r for r in caplog.records if r.levelno >= logging.ERROR]


async def work(delivery: Delivery) -> None:
    """The worker handles what the inbox holds and delivers what it produced."""
    while await delivery.process_once():
        pass
    await delivery.sweep()


class SlowWrite:
    """One interaction delivered to a client whose inbox write is held: the deferral is checked while the write is
    blocked, Discord's 3 s pass, then the write is released."""

    def __init__(self, world: DiscordWorld, client: DocbotClient) -> None:
        self.world, self.client = world, client
        self.delivery = world.deliveries[id(client)]
        self.intake = HeldIntake(self.delivery)
        client.intake = self.intake
        client.ack_within_s = 0.01  # any write the test holds is slow
        self.clock = DiscordClock(world.rest.clock())  # Discord's time, from now on moved by the test
        world.rest.clock = self.clock

    async def deferred(self, interaction: dict[str, Any]) -> None:
        """Deliver it; Discord has its response while the write is still blocked."""
        before = await self.delivery.inbox.counts()
        self.world.dispatch(self.client, interaction)
        await until(self.intake.entered.is_set)
        await until(lambda: responses(self.world, interaction))
        assert responses(self.world, interaction) == [(200, DEFERRED_UPDATE)]
        assert await self.delivery.inbox.counts() == before  # not stored yet

    async def release(self, error: Exception | None = None) -> None:
        """Discord's window has passed: release the write, let the client finish, the worker handle what it stored."""
        self.clock.now += 10.0  # past the 3 s: a response sent only now would get 10062
        self.intake.release(error)
        async with asyncio.timeout(30):
            await self.client.wait_idle()
        await work(self.delivery)


async def clarifying_message(world: DiscordWorld, client: DocbotClient) -> tuple[dict[str, Any], str]:
    """A clarification with two buttons in a thread, and the custom_id of its first (Voice remote)."""
    question = await world.say(client, world.alice, f"{world.mention()} it doesn't work")
    [clarifying] = world.bot_messages(question["id"])
    return clarifying, world.custom_ids(clarifying)[0]


def noting_handler() -> FakeHandler:
    return FakeHandler(
        on_message=lambda inbound: clarification(),
        on_action=lambda inbound: ActionOutcome(accepted=True, chosen_label="Voice remote", notice=NOTED),
    )


async def test_a_slow_press_is_deferred_before_its_write_ends_and_handled_once(
    world: DiscordWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)  # as in production
    handler = noting_handler()
    client = await world.client(handler)
    clarifying, voice = await clarifying_message(world, client)
    slow = SlowWrite(world, client)
    press = world.button(clarifying["id"], voice, world.alice)

    await slow.deferred(press)
    await slow.release()

    assert [a.action_id for a in handler.actions] == ["opt-voice"]  # the press handled, once
    [choice] = world.rest.find("PATCH", rf"/channels/\d+/messages/{clarifying['id']}")
    assert [b["label"] for b in p.buttons_of(choice.body)] == ["✓ Voice remote", "Basic remote"]
    [note] = follow_ups(world, press)  # through the token: it works because the deferral came in time
    assert (note.status, note.body["content"], note.body["flags"]) == (200, NOTED, 64)
    assert responses(world, press) == [(200, DEFERRED_UPDATE)]  # nothing sent late
    assert await slow.delivery.process_once() == 0 and errors(caplog) == []


async def test_a_slow_press_whose_write_fails_is_told_privately_and_logged_by_type(
    world: DiscordWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)  # as in production
    handler = noting_handler()
    client = await world.client(handler)
    clarifying, voice = await clarifying_message(world, client)
    slow = SlowWrite(world, client)
    press = world.button(clarifying["id"], voice, world.alice)
    posted_before = len(public_posts(world))

    await slow.deferred(press)
    await slow.release(ConnectionRefusedError(f"could not reach the database ({SECRET})"))

    [notice] = follow_ups(world, press)  # only the presser sees it
    assert (notice.status, notice.body["content"], notice.body["flags"]) == (200, texts("en").failure, 64)
    assert len(public_posts(world)) == posted_before and not world.rest.find("PATCH", r"/channels/.*")
    assert responses(world, press) == [(200, DEFERRED_UPDATE)]
    assert handler.actions == [] and await slow.delivery.inbox.counts() == {"done": 1}  # the question alone
    [line] = errors(caplog)
    assert (line.getMessage(), line.__dict__["error"]) == ("discord press not stored", "ConnectionRefusedError")
    assert "QX-SECRET" not in logged(caplog) and press["token"] not in logged(caplog)


async def test_a_slow_publish_is_deferred_then_takes_its_button_away_and_posts_once(world: DiscordWorld) -> None:
    handler = Remembering(on_message=answer)
    client = await world.client(handler)
    target = await world.say(client, world.bob, "my remote blinks red and won't pair", mentions_bot=False)
    asked = await world.ask_about(client, world.alice, target)  # answered privately, with "Post in a thread"
    [publish] = [b["custom_id"] for b in p.buttons_of(world.rest.originals[asked["token"]])
                 if b["label"] == wording.ENGLISH.publish]  # fmt: skip
    slow = SlowWrite(world, client)
    press = world.private_button(asked["token"], publish, world.alice)

    await slow.deferred(press)  # not UPDATE_MESSAGE: the buttons stay until the press is stored
    await slow.release()

    [shown] = world.rest.find("PATCH", rf"/webhooks/{world.app_id}/{press['token']}/messages/@original")
    assert shown.status == 200 and all(b.get("disabled") for b in p.buttons_of(shown.body))
    assert all(b.get("disabled") for b in p.buttons_of(world.rest.originals[asked["token"]]))  # as the asker sees it
    assert len(world.rest.find("POST", rf"/channels/{world.channel_id}/messages/{target['id']}/threads")) == 1
    [public] = [c for c in world.rest.find("POST", f"/channels/{target['id']}/messages") if c.status == 200]
    assert p.text_of(public.body).startswith("Hold **Home**")


async def test_a_slow_solved_press_is_deferred_then_tags_the_post_and_confirms_privately(world: DiscordWorld) -> None:
    client, forum_id = await forum_world(world, FakeHandler(on_message=answer), [("9002", "Solved")])
    post_id = await world.post_in_forum(client, forum_id, world.alice, "Remote won't pair", "It blinks red.")
    [card] = world.rest.channel_messages(post_id)[1:]
    [solved] = [b["custom_id"] for b in p.buttons_of(card) if b["label"] == wording.ENGLISH.solved_label]
    slow = SlowWrite(world, client)
    press = world.button(card["id"], solved, world.alice)

    await slow.deferred(press)
    await slow.release()

    assert world.rest.channels[post_id]["applied_tags"] == ["9002"]
    [note] = follow_ups(world, press)
    assert (note.status, note.body["content"], note.body["flags"]) == (200, wording.ENGLISH.solved, 64)


async def test_a_slow_editor_submission_is_deferred_then_stored_once(
    world: DiscordWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)  # as in production
    client = await world.client(FakeHandler(on_message=lambda inbound: None))
    slow = SlowWrite(world, client)
    submit = submission(world, "docbot:edit:act_42", {"answer": TYPED})

    await slow.deferred(submit)
    await slow.release()

    [edit] = await stored(world)
    assert (edit.kind, edit.action_id, edit.text) == (InboundKind.EDIT, "act_42", TYPED)
    assert responses(world, submit) == [(200, DEFERRED_UPDATE)]
    assert await slow.delivery.inbox.counts() == {"done": 1}
    assert TYPED not in logged(caplog) and errors(caplog) == []


@pytest.mark.parametrize("first", ["slow replica", "fast replica"], ids=["slow one deferred first", "fast one first"])
async def test_a_press_two_replicas_receive_is_acknowledged_once_and_handled_once(
    world: DiscordWorld, caplog: pytest.LogCaptureFixture, first: str
) -> None:
    """The same interaction reaches two processes on one database. The slow one defers before its write finds the
    event already stored; whichever response comes second is refused by Discord (40060), which is no error."""
    caplog.set_level(logging.INFO)  # as in production
    handler = noting_handler()
    fast = await world.client(handler)
    clarifying, voice = await clarifying_message(world, fast)
    replica = await world.client(handler)  # the same world database
    slow = SlowWrite(world, replica)
    press = world.button(clarifying["id"], voice, world.alice)

    if first == "slow replica":
        await slow.deferred(press)
        await world.interact(fast, press)  # stored there; its DEFERRED_UPDATE_MESSAGE comes second
    else:
        await world.interact(fast, press)
        world.dispatch(replica, press)  # its deferral comes second
        await until(lambda: len(responses(world, press)) == 2)
    await slow.release()  # the replica's write finds the event stored

    callbacks = world.rest.find("POST", rf"/interactions/{press['id']}/[^/]+/callback")
    answered = [(c.status, c.code, c.body) for c in callbacks]
    assert answered == [(200, None, DEFERRED_UPDATE), (400, 40060, DEFERRED_UPDATE)]  # the second: acknowledged already
    assert [a.action_id for a in handler.actions] == ["opt-voice"]  # stored and handled once
    assert len(world.rest.find("PATCH", rf"/channels/\d+/messages/{clarifying['id']}")) == 1
    [note] = follow_ups(world, press)
    assert note.status == 200 and note.body["content"] == NOTED
    assert "discord interaction already acknowledged" in logged(caplog)
    assert "discord interaction already stored" in logged(caplog)
    assert errors(caplog) == [], logged(caplog)


async def test_the_fake_keeps_discords_windows_for_a_response_and_follow_ups(world: DiscordWorld) -> None:
    """What the tests above rely on, as Discord behaves: one initial response within 3 s of the event (late: 404
    10062), follow-ups through the token only after it and for 15 minutes (otherwise 404 10015), one response."""
    clock = DiscordClock()
    world.rest.clock = clock
    late, prompt = ({"id": p.snowflake(), "token": f"token-{n}", "channel_id": world.channel_id} for n in (1, 2))
    world.rest.expect_interaction(late)
    world.rest.expect_interaction(prompt)

    async with aiohttp.ClientSession(world.rest.api_url + "/") as http:

        async def call(path: str, body: dict[str, Any]) -> tuple[int, Any]:
            async with http.post(path, json=body) as response:
                return response.status, (await response.json()).get("code")

        def callback(interaction: dict[str, Any]) -> str:
            return f"interactions/{interaction['id']}/{interaction['token']}/callback"

        def follow_up(interaction: dict[str, Any]) -> str:
            return f"webhooks/{world.app_id}/{interaction['token']}"

        assert await call(follow_up(prompt), {"content": "too early"}) == (404, 10015)
        clock.now = 2.5
        assert await call(callback(prompt), DEFERRED_UPDATE) == (200, None)
        assert await call(follow_up(prompt), {"content": "note"}) == (200, None)
        assert await call(callback(prompt), DEFERRED_UPDATE) == (400, 40060)
        clock.now = 3.5
        assert await call(callback(late), DEFERRED_UPDATE) == (404, 10062)
        assert await call(follow_up(late), {"content": "note"}) == (404, 10015)
        clock.now = 15 * 60 + 1.0
        assert await call(follow_up(prompt), {"content": "note"}) == (404, 10015)
