"""Discord's newer surfaces through discord.py's own parsing of gateway payloads shaped like Discord's documented
examples (tests/fakes/discord_payloads.py names the example each builder follows), the real client, the durable inbox
and outbox on SQLite, and the fake REST server; every REST call checked against Discord's OpenAPI spec (shared data):

- "Ask docbot" on a message: answered privately about that message's text, then posted in a thread on it;
- user installation: `integration_types`/`contexts` on both commands; where the bot is not a member, private answers;
- forum channels: a new post answered in its thread; "Solved" applies the forum's tag, for the post's author;
- the new calls failing (an expired interaction 404, 5xx, 429).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from adapters.discord import wording
from bot.delivery import Delivery
from pipeline.messages import Citation, Inbound, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.fakes import discord_payloads as p

pytestmark = pytest.mark.integration

CITATION = Citation(1, "Pairing the remote", ("Remote", "Pairing"), "https://docs.test/remote#pair", "c1", 0.9)
CALLBACKS = r"/interactions/\d+/[^/]+/callback"


def answer(inbound: Inbound) -> Reply:
    return Reply(ReplyKind.ANSWER, f"Hold **Home** and **Back** for 5 seconds [1]. ({inbound.message_id})", "en",
                 "conv-1", citations=(CITATION,), actions=(ReplyAction(f"fb-{inbound.message_id}", "Helpful",
                                                                       ActionKind.HELPFUL),))  # fmt: skip


@dataclass
class Remembering(FakeHandler):
    """Keeps each reply with its message, as the service keeps it with the run (`reply_on_record`)."""

    replies: dict[str, Reply] = field(default_factory=dict)

    async def handle_message(self, inbound: Inbound, fetcher: Any = None) -> Reply | None:
        reply = await super().handle_message(inbound, fetcher)
        if reply is not None:
            self.replies[f"{inbound.thread_key}|{inbound.message_id}"] = reply
        return reply

    async def reply_on_record(self, thread_key: str, message_id: str) -> Reply | None:
        return self.replies.get(f"{thread_key}|{message_id}")


def callback(world: DiscordWorld, interaction: dict[str, Any]) -> dict[str, Any]:
    [call] = world.rest.find("POST", rf"/interactions/{interaction['id']}/[^/]+/callback")
    return dict(call.body)


def channel_posts(world: DiscordWorld, channel_id: str) -> list[dict[str, Any]]:
    return [c.body for c in world.rest.find("POST", f"/channels/{channel_id}/messages") if c.status == 200]


# -- the commands ------------------------------------------------------------------------------------------------------


async def test_both_commands_are_installable_by_people_and_usable_anywhere(checked: DiscordWorld) -> None:
    world = checked
    await world.client(FakeHandler(on_message=answer))
    [sync] = world.rest.find("PUT", f"/applications/{world.app_id}/commands")
    commands = {c["name"]: c for c in sync.body}
    assert (commands["ask"]["type"], commands["Ask docbot"]["type"]) == (1, 3)  # a slash and a message command
    for command in commands.values():
        assert command["integration_types"] == [0, 1]  # GUILD_INSTALL, USER_INSTALL
        assert command["contexts"] == [0, 1, 2]  # GUILD, BOT_DM, PRIVATE_CHANNEL


# -- "Ask docbot" on a message -----------------------------------------------------------------------------------------


async def test_ask_docbot_answers_privately_about_the_message_then_posts_it_in_a_thread_on_it(
    checked: DiscordWorld,
) -> None:
    world = checked
    handler = Remembering(on_message=answer)
    client = await world.client(handler)
    target = await world.say(client, world.bob, "my remote blinks red and won't pair", mentions_bot=False)
    assert handler.messages == []  # channel chatter: nothing for the bot

    asked = await world.ask_about(client, world.alice, target)
    [question] = handler.messages
    assert (question.text, question.user_id, question.mentioned) == (target["content"], world.alice["id"], True)
    assert (question.channel_id, question.thread_id) == (world.channel_id, target["id"])  # the thread on it
    assert (callback(world, asked)["type"], callback(world, asked)["data"]["flags"]) == (5, 64)  # "thinking", privately
    original = world.rest.originals[asked["token"]]
    assert original["flags"] & p.FLAG_EPHEMERAL and original["flags"] & p.FLAG_COMPONENTS_V2
    assert p.text_of(original).startswith("Hold **Home**")
    publish = [c for c in p.buttons_of(original) if c["label"] == wording.ENGLISH.publish]
    assert [b["custom_id"] for b in publish] == [f"docbot:p:{asked['id']}-{target['id']}:{world.alice['id']}"]
    assert channel_posts(world, world.channel_id) == [] and not world.rest.find("POST", r".*/threads")

    pressed = await world.press_private(client, asked["token"], publish[0]["custom_id"], world.alice)
    ack = callback(world, pressed)
    assert ack["type"] == 7 and all(b.get("disabled") for b in p.buttons_of(ack["data"]))  # not posted twice
    [thread] = world.rest.find("POST", rf"/channels/{world.channel_id}/messages/{target['id']}/threads")
    assert thread.body["name"] == target["content"]  # named after the message it is about
    [public] = channel_posts(world, target["id"])
    assert p.text_of(public) == p.text_of(original)  # the answer the asker saw, now for everyone
    assert public["flags"] == p.FLAG_COMPONENTS_V2 and not [b for b in p.buttons_of(public)
                                                            if b["label"] == wording.ENGLISH.publish]  # fmt: skip
    assert [a.action_id for a in handler.actions] == []  # carried out by the delivery, not a stored action


async def test_only_the_asker_can_post_their_private_answer(checked: DiscordWorld) -> None:
    world = checked
    client = await world.client(Remembering(on_message=answer))
    target = await world.say(client, world.bob, "the voice remote does nothing", mentions_bot=False)
    asked = await world.ask_about(client, world.alice, target)
    [publish] = [c["custom_id"] for c in p.buttons_of(world.rest.originals[asked["token"]])
                 if c["label"] == wording.ENGLISH.publish]  # fmt: skip
    pressed = await world.press_private(client, asked["token"], publish, world.bob)
    assert (callback(world, pressed)["data"]["content"], callback(world, pressed)["data"]["flags"]) == (
        wording.ENGLISH.only_asker, 64)  # fmt: skip
    assert not world.rest.find("POST", r".*/threads")


async def test_a_message_without_text_gets_a_private_note(checked: DiscordWorld) -> None:
    world = checked
    handler = FakeHandler(on_message=answer)
    client = await world.client(handler)
    target = await world.say(client, world.bob, "", mentions_bot=False)
    asked = await world.ask_about(client, world.alice, target)
    data = callback(world, asked)["data"]
    assert (data["content"], data["flags"]) == (wording.ENGLISH.ask_about_empty, 64)
    assert handler.messages == [] and await world.deliveries[id(client)].inbox.counts() == {}


# -- user installation -------------------------------------------------------------------------------------------------


async def test_a_user_installed_ask_where_the_bot_is_not_a_member_is_answered_privately(
    checked: DiscordWorld,
) -> None:
    world = checked
    handler = FakeHandler(on_message=answer)
    client = await world.client(handler)
    asked = p.installed_by_the_user(p.ask_command_interaction(
        app_id=world.app_id, command_id=world.rest.command_id, asker=world.alice, question="how do I pair?",
        guild_id=world.guild_id, channel=world.rest.channels[world.channel_id]), world.alice["id"])  # fmt: skip
    await world.interact(client, asked)
    [question] = handler.messages
    assert (question.text, question.thread_id) == ("how do I pair?", asked["id"])  # its own conversation
    assert (callback(world, asked)["type"], callback(world, asked)["data"]["flags"]) == (5, 64)
    assert p.text_of(world.rest.originals[asked["token"]]).startswith("Hold **Home**")
    assert channel_posts(world, world.channel_id) == []  # no echo, no thread: the bot is not a member here
    assert not world.rest.find("POST", r".*/threads") and not world.rest.find("POST", r".*/typing")


async def test_ask_docbot_installed_by_the_user_offers_no_thread(checked: DiscordWorld) -> None:
    world = checked
    client = await world.client(Remembering(on_message=answer))
    target = await world.say(client, world.bob, "how do I reset it?", mentions_bot=False)
    asked = await world.ask_about(client, world.alice, target, user_install=True)
    original = world.rest.originals[asked["token"]]
    assert p.text_of(original).startswith("Hold **Home**")
    assert wording.ENGLISH.publish not in [b["label"] for b in p.buttons_of(original)]  # the bot could not post there


# -- forum channels ----------------------------------------------------------------------------------------------------


async def forum_world(world: DiscordWorld, handler: FakeHandler, tags: list[tuple[str, str]]) -> tuple[Any, str]:
    forum_id = world.forum(tags)
    client = await world.client(handler, discord_forum_channels=(int(forum_id),))
    return client, forum_id


async def test_a_new_forum_post_is_answered_in_its_thread_and_solved_applies_the_tag(checked: DiscordWorld) -> None:
    world = checked
    handler = FakeHandler(on_message=answer)
    client, forum_id = await forum_world(world, handler, [("9001", "Bug"), ("9002", "Solved")])
    post_id = await world.post_in_forum(client, forum_id, world.alice, "Remote won't pair", "It blinks red.")
    [question] = handler.messages
    assert (question.text, question.mentioned) == ("Remote won't pair\n\nIt blinks red.", True)
    assert (question.channel_id, question.thread_id) == (forum_id, post_id)
    assert not world.rest.find("POST", r".*/threads")  # the post is its own thread
    [card] = channel_posts(world, post_id)
    assert p.text_of(card).startswith("Hold **Home**") and card["flags"] == p.FLAG_COMPONENTS_V2
    [solved] = [b["custom_id"] for b in p.buttons_of(card) if b["label"] == wording.ENGLISH.solved_label]
    assert solved == f"docbot:s:{post_id}:{world.alice['id']}"

    await world.say(client, world.bob, "same here, any idea?", channel_id=post_id, mentions_bot=False)
    assert (handler.messages[-1].thread_id, handler.messages[-1].mentioned) == (post_id, False)  # a follow-up

    card_id = world.rest.channel_messages(post_id)[1]["id"]
    await world.press(client, card_id, solved, world.bob)  # not the post's author
    refused = world.rest.find("POST", CALLBACKS)[-1]
    assert refused.body["data"]["content"] == wording.ENGLISH.only_owner_solves
    assert not world.rest.find("PATCH", f"/channels/{post_id}")

    await world.press(client, card_id, solved, world.alice)
    assert world.rest.find("POST", CALLBACKS)[-1].body["type"] == 6
    [tagged] = world.rest.find("PATCH", f"/channels/{post_id}")
    assert tagged.body["applied_tags"] == ["9002"] and world.rest.channels[post_id]["applied_tags"] == ["9002"]
    [note] = world.rest.find("POST", rf"/webhooks/{world.app_id}/[^/]+")
    assert (note.body["content"], note.body["flags"]) == (wording.ENGLISH.solved, 64)
    assert [a for a in handler.actions] == []


async def test_a_forum_without_a_solved_tag_says_so_and_other_forums_are_left_alone(checked: DiscordWorld) -> None:
    world = checked
    handler = FakeHandler(on_message=lambda inbound: answer(inbound) if inbound.mentioned else None)
    client, forum_id = await forum_world(world, handler, [("9001", "Bug")])
    other = world.forum([("9003", "Solved")])
    elsewhere = await world.post_in_forum(client, other, world.bob, "Unrelated", "Not a forum docbot answers.")
    assert [m.mentioned for m in handler.messages] == [False]  # a thread message like any other: not addressed
    assert channel_posts(world, elsewhere) == []
    post_id = await world.post_in_forum(client, forum_id, world.alice, "Pairing?", "How?")
    [card] = world.rest.channel_messages(post_id)[1:]
    [solved] = [b["custom_id"] for b in p.buttons_of(card) if b["label"] == wording.ENGLISH.solved_label]
    await world.press(client, card["id"], solved, world.alice)
    [note] = world.rest.find("POST", rf"/webhooks/{world.app_id}/[^/]+")
    assert note.body["content"] == wording.ENGLISH.no_solved_tag.format(tag="Solved")
    assert not world.rest.find("PATCH", f"/channels/{post_id}")


# -- faults -----------------------------------------------------------------------------------------------------------


async def test_an_expired_interaction_drops_the_private_answer_for_good(checked: DiscordWorld) -> None:
    world = checked
    client = await world.client(FakeHandler(on_message=answer))
    target = await world.say(client, world.bob, "the remote is dead", mentions_bot=False)
    world.rest.fail_next("PATCH", r"/webhooks/\d+/[^/]+/messages/@original", status=404,
                         body={"message": "Unknown Webhook", "code": 10015})  # fmt: skip
    await world.ask_about(client, world.alice, target)
    delivery: Delivery = world.deliveries[id(client)]
    assert await delivery.outbox.counts() == {"failed": 1}  # rejected: not retried, never posted in public
    assert channel_posts(world, world.channel_id) == []


@pytest.mark.parametrize("status", [500, 429])
async def test_a_failing_private_answer_is_delivered_once(checked: DiscordWorld, status: int) -> None:
    """A 5xx or a 429 on the interaction's webhook: discord.py waits and sends again; the answer arrives once."""
    world = checked
    client = await world.client(FakeHandler(on_message=answer))
    target = await world.say(client, world.bob, "the remote is dead", mentions_bot=False)
    world.rest.fail_next("PATCH", r"/webhooks/\d+/[^/]+/messages/@original", status=status,
                         body={"message": "oops", "code": 0} if status == 500 else None)  # fmt: skip
    asked = await world.ask_about(client, world.alice, target)
    edits = world.rest.find("PATCH", rf"/webhooks/{world.app_id}/{asked['token']}/messages/@original")
    assert [c.status for c in edits] == [status, 200]
    assert p.text_of(world.rest.originals[asked["token"]]).startswith("Hold **Home**")
    assert await world.deliveries[id(client)].outbox.counts() == {"sent": 1}


async def test_a_failing_tag_edit_is_sent_again_and_applied_once(checked: DiscordWorld) -> None:
    world = checked
    client, forum_id = await forum_world(world, FakeHandler(on_message=answer), [("9002", "Solved")])
    post_id = await world.post_in_forum(client, forum_id, world.alice, "Pairing?", "How?")
    [card] = world.rest.channel_messages(post_id)[1:]
    [solved] = [b["custom_id"] for b in p.buttons_of(card) if b["label"] == wording.ENGLISH.solved_label]
    world.rest.fail_next("PATCH", rf"/channels/{post_id}", status=500, body={"message": "oops", "code": 0})
    await world.press(client, card["id"], solved, world.alice)
    assert [c.status for c in world.rest.find("PATCH", f"/channels/{post_id}")] == [500, 200]
    assert world.rest.channels[post_id]["applied_tags"] == ["9002"]
    [note] = world.rest.find("POST", rf"/webhooks/{world.app_id}/[^/]+")
    assert note.body["content"] == wording.ENGLISH.solved
