"""The Discord client against a recording fake REST server, with gateway events parsed by discord.py itself."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from adapters.discord.buttons import ButtonRef
from adapters.discord.client import DocbotClient
from adapters.discord.layout import CARD_TEXT_LIMIT
from adapters.discord.sink import discord_thread_ref
from bot.adapter_options import discord_options
from pipeline.messages import ActionOutcome, Citation, DeliveryRejected, InboundKind, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.fakes import discord_payloads as p

pytestmark = pytest.mark.integration


CITATION = Citation(
    1, "Pairing the remote", ("Remote", "Pairing the remote"), "https://docs.test/remote#pair", "c1", 0.9
)
USED = "This choice was already used."
FEEDBACK = (
    ReplyAction("helpful-1", "Helpful", ActionKind.HELPFUL),
    ReplyAction("not-helpful-1", "Not helpful", ActionKind.NOT_HELPFUL),
    ReplyAction("human-1", "Ask a human", ActionKind.HUMAN),
)


def answer(text: str = "Hold **Home** and **Back** for 5 seconds [1].", **kw: Any) -> Reply:
    fields: dict[str, Any] = {"citations": (CITATION,), "actions": FEEDBACK, **kw}
    return Reply(kind=ReplyKind.ANSWER, text=text, language="en", conversation_id="conv-1", **fields)


def clarification() -> Reply:
    return Reply(
        kind=ReplyKind.CLARIFICATION,
        text="Which remote do you mean?",
        language="en",
        conversation_id="conv-1",
        actions=(
            ReplyAction("opt-voice", "Voice remote", ActionKind.SEARCH),
            ReplyAction("opt-basic", "Basic remote", ActionKind.SEARCH),
        ),
    )


def posts(world: DiscordWorld, channel_id: str) -> list[Any]:
    return [c for c in world.rest.find("POST", f"/channels/{channel_id}/messages") if c.status == 200]


async def test_mention_creates_thread_and_answers_in_it_with_buttons(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer())
    client = await world.client(handler)

    question = await world.say(client, world.alice, f"{world.mention()} how do I pair the remote?")

    thread_calls = world.rest.find("POST", f"/channels/{world.channel_id}/messages/{question['id']}/threads")
    assert len(thread_calls) == 1
    assert thread_calls[0].body["name"] == "how do I pair the remote?"
    thread_id = question["id"]  # a thread started from a message takes the message's id
    [inbound] = handler.messages
    assert (inbound.channel_id, inbound.thread_id, inbound.message_id) == (world.channel_id, thread_id, question["id"])
    assert inbound.text == "how do I pair the remote?" and inbound.mentioned and inbound.workspace_id == world.guild_id
    assert world.rest.find("POST", f"/channels/{thread_id}/typing")
    [post] = posts(world, thread_id)
    assert p.text_of(post.body).startswith("Hold **Home**")
    assert post.body["flags"] == p.FLAG_COMPONENTS_V2  # the answer card: one container
    assert "**Sources**\n**[1]** [Pairing the remote › Remote](https://docs.test" in p.text_of(post.body)
    custom_ids = [c["custom_id"] for c in p.buttons_of(post.body)]
    asker = world.alice["id"]
    assert custom_ids == [f"docbot:a:helpful-1:{asker}", f"docbot:a:not-helpful-1:{asker}", f"docbot:h:human-1:{asker}"]
    assert all(len(c) <= 100 for c in custom_ids)
    assert world.rest.find("PUT", f"/applications/{world.app_id}/commands")[0].body[0]["name"] == "ask"


async def test_vague_question_clarifies_then_click_resumes_the_answer(world: DiscordWorld) -> None:
    handler = FakeHandler(
        on_message=lambda inbound: clarification(),
        on_action=lambda inbound: ActionOutcome(accepted=True, chosen_label="Voice remote", reply=answer()),
    )
    client = await world.client(handler)
    question = await world.say(client, world.alice, f"{world.mention()} it doesn't work")
    thread_id = question["id"]
    [clarifying] = world.bot_messages(thread_id)
    voice, basic = world.custom_ids(clarifying)

    await world.press(client, clarifying["id"], voice, world.alice)

    [pressed] = handler.actions
    assert pressed.kind is InboundKind.ACTION and pressed.action_id == "opt-voice"
    assert pressed.thread_key == handler.messages[0].thread_key  # the service finds the same conversation
    [callback] = world.rest.find("POST", r"/interactions/\d+/[^/]+/callback")
    assert callback.body["type"] == 6  # DEFERRED_UPDATE_MESSAGE: stored, nothing changed before the check
    [edit] = world.rest.find("PATCH", rf"/channels/{thread_id}/messages/{clarifying['id']}")  # after the check
    buttons = p.buttons_of(edit.body)
    assert all(b["disabled"] for b in buttons)
    assert [b["label"] for b in buttons] == ["✓ Voice remote", "Basic remote"]
    assert [b["custom_id"] for b in buttons] == [voice, basic]
    resumed = posts(world, thread_id)[-1]
    assert p.text_of(resumed.body).startswith("Hold **Home**")


async def test_click_after_a_restart_still_works(world: DiscordWorld) -> None:
    handler = FakeHandler(
        on_message=lambda inbound: clarification(),
        on_action=lambda inbound: ActionOutcome(accepted=True, chosen_label="Basic remote", reply=answer()),
    )
    first = await world.client(handler)
    question = await world.say(first, world.alice, f"{world.mention()} it doesn't work")
    [clarifying] = world.bot_messages(question["id"])

    second = await world.restart(first, handler)  # a new process: nothing in memory but the registered item class
    await world.press(second, clarifying["id"], world.custom_ids(clarifying)[1], world.alice)

    assert [a.action_id for a in handler.actions] == ["opt-basic"]
    assert world.rest.find("POST", r"/interactions/\d+/[^/]+/callback")[0].body["type"] == 6
    assert world.rest.find("PATCH", rf"/channels/\d+/messages/{clarifying['id']}")  # the choice shown
    assert len(world.bot_messages(question["id"])) == 2


async def test_rate_limited_create_message_is_retried_and_delivered_once(world: DiscordWorld) -> None:
    client = await world.client(FakeHandler(on_message=lambda inbound: answer()))
    question_id = p.snowflake()
    world.rest.fail_next("POST", rf"/channels/{question_id}/messages", status=429)

    await world.say(client, world.alice, f"{world.mention()} pairing?", message_id=question_id)

    statuses = [c.status for c in world.rest.find("POST", f"/channels/{question_id}/messages")]
    assert statuses == [429, 200]
    assert len(world.bot_messages(question_id)) == 1


async def test_long_answer_is_split_on_paragraphs_with_buttons_on_the_last_part(world: DiscordWorld) -> None:
    paragraphs = [f"Step {i}: " + "press the button and wait. " * 14 for i in range(14)]
    text = "\n\n".join(paragraphs)
    assert len(text) > 5000
    client = await world.client(FakeHandler(on_message=lambda inbound: answer(text)))
    question = await world.say(client, world.alice, f"{world.mention()} full setup?")

    sent = posts(world, question["id"])
    assert len(sent) == 2  # two answer cards
    assert all(len(p.text_of(c.body)) <= CARD_TEXT_LIMIT for c in sent)
    answer_parts = [next(c["content"] for c in p.components_of(s.body) if c["type"] == 10) for s in sent]
    assert "\n\n".join(answer_parts) == text.strip()
    assert all(part.startswith("Step ") for part in answer_parts)  # each part starts at a paragraph
    assert [bool(p.buttons_of(c.body)) for c in sent] == [False, True]  # buttons and sources on the last
    assert ["**Sources**" in p.text_of(c.body) for c in sent] == [False, True]


async def test_doc_text_with_everyone_and_role_mentions_pings_nobody(world: DiscordWorld) -> None:
    leaked = "Announce it to @everyone and @here, or ping <@&123456789012345678> and <@987654321098765432>."
    client = await world.client(FakeHandler(on_message=lambda inbound: answer(leaked)))
    question = await world.say(client, world.alice, f"{world.mention()} how do I announce?")

    [post] = posts(world, question["id"])
    assert "@everyone" in p.text_of(post.body)
    assert post.body["allowed_mentions"] == {"parse": []}  # no @everyone/@here, no roles, no users


async def test_ask_a_human_mentions_only_the_support_role(world: DiscordWorld) -> None:
    handoff = Reply(kind=ReplyKind.NOTICE, text="I've asked a person. @everyone", language="en", conversation_id="c")
    handler = FakeHandler(
        on_message=lambda inbound: answer(),
        on_action=lambda inbound: ActionOutcome(accepted=True, chosen_label="Ask a human", reply=handoff),
    )
    client = await world.client(handler)
    question = await world.say(client, world.alice, f"{world.mention()} pairing?")
    [answered] = world.bot_messages(question["id"])

    await world.press(client, answered["id"], world.custom_ids(answered)[2], world.bob)

    post = posts(world, question["id"])[-1]
    assert p.text_of(post.body).startswith(f"<@&{world.support_role_id}> ")
    assert post.body["allowed_mentions"] == {"parse": [], "roles": [int(world.support_role_id)]}


async def test_asker_only_policy_refuses_other_people_privately(world: DiscordWorld) -> None:
    handler = FakeHandler(
        on_message=lambda inbound: clarification(),
        on_action=lambda inbound: ActionOutcome(accepted=True, chosen_label="x", reply=answer()),
    )
    client = await world.client(handler, discord_click_policy="asker")
    question = await world.say(client, world.alice, f"{world.mention()} it doesn't work")
    [clarifying] = world.bot_messages(question["id"])

    await world.press(client, clarifying["id"], world.custom_ids(clarifying)[0], world.bob)
    [refusal] = world.rest.find("POST", r"/interactions/\d+/[^/]+/callback")
    assert refusal.body["type"] == 4 and refusal.body["data"]["flags"] == 64  # ephemeral message
    assert handler.actions == []

    await world.press(client, clarifying["id"], world.custom_ids(clarifying)[0], world.alice)
    assert [a.user_id for a in handler.actions] == [world.alice["id"]]


async def test_refused_press_explains_privately(world: DiscordWorld) -> None:
    handler = FakeHandler(
        on_message=lambda inbound: clarification(),
        on_action=lambda inbound: ActionOutcome(accepted=False, chosen_label="", notice=USED),
    )
    client = await world.client(handler)
    question = await world.say(client, world.alice, f"{world.mention()} it doesn't work")
    [clarifying] = world.bot_messages(question["id"])

    await world.press(client, clarifying["id"], world.custom_ids(clarifying)[0], world.alice)

    [followup] = world.rest.find("POST", rf"/webhooks/{world.app_id}/[^/]+")
    assert p.text_of(followup.body) == USED and followup.body["flags"] == 64
    assert len(world.bot_messages(question["id"])) == 1


async def test_same_gateway_event_twice_gets_one_reply(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer())
    client = await world.client(handler)
    question = await world.say(client, world.alice, f"{world.mention()} pairing?")

    await world.deliver_message(client, question)  # a resumed gateway session replays the event

    assert len(handler.messages) == 1
    assert len(posts(world, question["id"])) == 1
    assert len(world.rest.find("POST", r"/channels/\d+/messages/\d+/threads")) == 1


async def test_bots_and_self_are_ignored(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer())
    client = await world.client(handler)

    await world.say(client, world.other_bot, f"{world.mention()} hello")
    await world.say(client, world.bot, f"{world.mention()} hello")

    assert handler.messages == []
    assert world.rest.find("POST", r"/channels/\d+/messages.*") == []


async def test_channel_chatter_is_ignored_and_thread_follow_ups_reach_the_service(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer() if inbound.mentioned else None)
    client = await world.client(handler)
    await world.say(client, world.bob, "lunch anyone?", mentions_bot=False)
    assert handler.messages == []

    question = await world.say(client, world.alice, f"{world.mention()} how do I pair the remote?")
    thread_id = question["id"]
    client._connection.parse_thread_create(world.rest.channels[thread_id])  # type: ignore[arg-type]
    await world.say(client, world.alice, "and the voice remote?", channel_id=thread_id, mentions_bot=False)

    follow_up = handler.messages[-1]
    assert not follow_up.mentioned
    assert (follow_up.channel_id, follow_up.thread_id) == (world.channel_id, thread_id)
    assert follow_up.thread_key == handler.messages[0].thread_key
    assert [h.text for h in handler.histories[-1]] == ["Hold **Home** and **Back** for 5 seconds [1]."]
    assert handler.histories[-1][0].from_bot
    assert len(posts(world, thread_id)) == 1  # the service stayed silent on the follow-up


async def test_ask_command_acknowledges_privately_then_posts_the_question_and_answers_in_a_new_thread(
    world: DiscordWorld,
) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer())
    client = await world.client(handler)

    command = await world.ask(client, world.alice, "How do I pair the remote?")

    [ack] = world.rest.find("POST", rf"/interactions/{command['id']}/[^/]+/callback")
    assert ack.body["type"] == 4 and ack.body["data"]["flags"] == 64  # CHANNEL_MESSAGE_WITH_SOURCE, ephemeral
    [echo] = posts(world, world.channel_id)  # the question, posted by the bot, not through the interaction
    assert p.text_of(echo.body) == f"<@{world.alice['id']}> asked:\n> How do I pair the remote?"
    echo_id = world.rest.channel_messages(world.channel_id)[-1]["id"]
    [thread] = world.rest.find("POST", f"/channels/{world.channel_id}/messages/{echo_id}/threads")
    [inbound] = handler.messages
    assert inbound.thread_id == echo_id and inbound.message_id == echo_id and inbound.mentioned
    assert inbound.text == "How do I pair the remote?"
    [post] = posts(world, echo_id)
    assert post.body["components"]
    assert world.rest.calls.index(ack) < world.rest.calls.index(echo) < world.rest.calls.index(thread)
    assert world.rest.calls.index(thread) < world.rest.calls.index(post)


async def test_without_message_content_intent_the_client_asks_without_it_and_says_so(
    world: DiscordWorld, caplog: pytest.LogCaptureFixture
) -> None:
    world.rest.message_content_intent = False
    with caplog.at_level(logging.WARNING, logger="adapters.discord.client"):
        client = await world.client(FakeHandler(on_message=lambda inbound: None))
    assert not client.sees_all_messages
    assert "only mentions, replies to the bot" in caplog.text

    world.rest.message_content_intent = True
    granted = await world.client(FakeHandler(on_message=lambda inbound: None))
    assert granted.sees_all_messages


async def test_button_ref_round_trips_through_the_custom_id() -> None:
    ref = ButtonRef(action_id="a1_B-2", asker_id=42, ask_human=True)
    assert ButtonRef.parse(ref.custom_id) == ref
    assert ButtonRef.parse("other:thing") is None
    with pytest.raises(ValueError, match="custom_id"):
        _ = ButtonRef(action_id="has space", asker_id=1).custom_id
    with pytest.raises(ValueError, match="custom_id"):
        _ = ButtonRef(action_id="x" * 90, asker_id=10**18).custom_id


async def test_direct_message_is_one_conversation_answered_in_the_dm(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer())
    client = await world.client(handler)
    dm_id = p.snowflake()
    first = p.message(dm_id, world.alice, "how do I pair the remote?")
    await world.deliver_message(client, first)
    await world.deliver_message(client, p.message(dm_id, world.alice, "and the voice one?"))

    assert world.rest.find("POST", r"/channels/\d+/messages/\d+/threads") == []
    assert [m.workspace_id for m in handler.messages] == ["dm", "dm"]
    assert all(m.mentioned and m.thread_id == dm_id for m in handler.messages)
    assert handler.messages[0].thread_key == handler.messages[1].thread_key
    assert [h.text for h in handler.histories[1]] == [
        "how do I pair the remote?",
        "Hold **Home** and **Back** for 5 seconds [1].",
    ]
    assert len(posts(world, dm_id)) == 2


async def test_refused_channel_gets_the_notice_in_place_without_a_thread(world: DiscordWorld) -> None:
    notice = Reply(kind=ReplyKind.NOTICE, text="I'm not set up to answer in this channel.", language="en",
                   conversation_id="", reason="channel_not_allowed")
    handler = FakeHandler(on_message=lambda inbound: notice)
    policy = {"platform": "discord", "channel_id": world.channel_id, "allowed": False}
    client = await world.client(handler, channel_policies=[policy])

    await world.say(client, world.alice, f"{world.mention()} hello?")

    assert world.rest.find("POST", r"/channels/\d+/messages/\d+/threads") == []
    assert handler.messages[0].thread_id is None
    assert [p.text_of(c.body) for c in posts(world, world.channel_id)] == [notice.text]


async def test_a_failing_service_still_gets_a_reply(world: DiscordWorld) -> None:
    def explode(inbound: object) -> Reply:
        raise RuntimeError("boom")

    client = await world.client(FakeHandler(on_message=explode))
    world.deliveries[id(client)].inbox.max_attempts = 1  # give up at the first failure (5 by default, with backoff)
    question = await world.say(client, world.alice, f"{world.mention()} pairing?")

    [post] = posts(world, question["id"])
    assert p.text_of(post.body).startswith("Something went wrong")
    assert [b["label"] for b in p.buttons_of(post.body)] == ["Try again"]


class RecordingIntake:
    def __init__(self) -> None:
        self.events: list[tuple[Any, Any]] = []

    async def accept(self, inbound: Any, ref: Any) -> bool:
        self.events.append((inbound, ref))
        return True


async def test_with_a_durable_intake_events_are_stored_and_the_sink_answers_later(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: pytest.fail("the intake's worker calls the service"))
    intake = RecordingIntake()
    client = DocbotClient(discord_options(world.settings()), intake=intake)
    world.clients.append(client)
    await client.login("fake-token")
    question = p.message(
        world.channel_id, world.alice, f"{world.mention()} pairing?", guild_id=world.guild_id, mentions=[world.bot]
    )
    await world.deliver_message(client, question)  # unknown guild: the channel is a PartialMessageable

    [(inbound, ref)] = intake.events
    assert inbound.thread_id == question["id"] and ref.thread_id == question["id"]
    assert inbound.workspace_id == world.guild_id and inbound.channel_id == world.channel_id
    assert dict(ref.extra)["asker"] == world.alice["id"]

    later = await world.restart(client, handler)  # the outbox may deliver from another process
    message_id = await later.sink.post(ref, clarification())

    [posted] = world.bot_messages(question["id"])
    assert posted["id"] == message_id
    assert world.custom_ids(posted)[0] == f"docbot:a:opt-voice:{world.alice['id']}"


async def test_sink_reports_a_refusal_for_good_as_delivery_rejected(world: DiscordWorld) -> None:
    client = await world.client(FakeHandler(on_message=lambda inbound: None))
    thread_id = p.snowflake()
    missing_access = {"message": "Missing Access", "code": 50001}
    world.rest.fail_next("POST", f"/channels/{thread_id}/messages", status=403, body=missing_access)

    with pytest.raises(DeliveryRejected, match="403"):
        await client.sink.post(discord_thread_ref(world.guild_id, world.channel_id, thread_id, asker_id=1), answer())


async def test_ask_command_inside_a_thread_answers_in_that_thread(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer())
    client = await world.client(handler)
    question = await world.say(client, world.alice, f"{world.mention()} how do I pair the remote?")
    thread_id = question["id"]
    client._connection.parse_thread_create(world.rest.channels[thread_id])  # type: ignore[arg-type]

    await world.ask(client, world.bob, "and the voice remote?", channel_id=thread_id)

    assert len(world.rest.find("POST", r"/channels/\d+/messages/\d+/threads")) == 1  # no second thread
    follow_up = handler.messages[-1]
    assert (follow_up.channel_id, follow_up.thread_id) == (world.channel_id, thread_id)
    assert follow_up.user_id == world.bob["id"]
    assert follow_up.thread_key == handler.messages[0].thread_key
    assert "Hold **Home**" in " ".join(h.text for h in handler.histories[-1])
    _, echo, answer_post = posts(world, thread_id)  # the first answer, the /ask question the bot posted, its answer
    assert p.text_of(echo.body) == f"<@{world.bob['id']}> asked:\n> and the voice remote?"
    assert follow_up.message_id == world.rest.channel_messages(thread_id)[-2]["id"]  # the posted question
    assert p.text_of(answer_post.body)


async def test_ask_in_a_refused_channel_answers_privately_without_the_service(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer())
    policy = {"platform": "discord", "channel_id": world.channel_id, "allowed": False}
    client = await world.client(handler, channel_policies=[policy])

    await world.ask(client, world.alice, "How do I pair the remote?")

    [callback] = world.rest.find("POST", r"/interactions/\d+/[^/]+/callback")
    assert callback.body["type"] == 4 and callback.body["data"]["flags"] == 64
    assert callback.body["data"]["content"] == "I'm not set up to answer in this channel."
    assert handler.messages == []


async def test_when_thread_creation_is_refused_the_answer_comes_in_place(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer())
    client = await world.client(handler)
    question_id = p.snowflake()
    world.rest.fail_next("POST", rf"/channels/\d+/messages/{question_id}/threads", status=403,
                         body={"message": "Missing Permissions", "code": 50013})

    await world.say(client, world.alice, f"{world.mention()} pairing?", message_id=question_id)

    assert handler.messages[0].thread_id is None
    assert len(posts(world, world.channel_id)) == 1


async def test_mentioning_the_bots_managed_role_counts_as_a_mention(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer())
    managed = {**p.role(p.snowflake(), "docbot"), "managed": True, "tags": {"bot_id": world.bot["id"]}}
    client = await world.client(handler)
    client._connection.parse_guild_role_create({"guild_id": world.guild_id, "role": managed})  # type: ignore[arg-type]
    payload = p.message(world.channel_id, world.alice, f"<@&{managed['id']}> pairing?", guild_id=world.guild_id)
    payload["mention_roles"] = [managed["id"]]

    await world.deliver_message(client, payload)

    [inbound] = handler.messages
    assert inbound.mentioned and inbound.text == "pairing?" and inbound.thread_id == payload["id"]


async def test_replayed_mention_after_a_restart_reuses_the_existing_thread(world: DiscordWorld) -> None:
    handler = FakeHandler(on_message=lambda inbound: answer())
    first = await world.client(handler)
    question = await world.say(first, world.alice, f"{world.mention()} pairing?")

    second = await world.restart(first, handler)  # the in-memory dedupe is gone; Discord refuses a second thread
    await world.deliver_message(second, question)

    assert [m.thread_id for m in handler.messages] == [question["id"]]  # the inbox knows it: dropped at the door
    assert [c.status for c in world.rest.find("POST", r"/channels/\d+/messages/\d+/threads")] == [201]
    assert len(world.bot_messages(question["id"])) == 1
