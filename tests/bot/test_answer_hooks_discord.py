"""Team answers on Discord end to end (`bot.answers.hooks`): the app as `build_app` wires it over the fixture manual,
the real Discord client fed gateway events through discord.py's own parsers, the delivery's inbox and outbox, and
the recording fake REST API on a real socket.

A question is refused, an expert (by role) answers in the thread, the asker reacts ✅ (MESSAGE_REACTION_ADD), the
candidate is posted for review in the review channel, a non-maintainer's press changes nothing, a maintainer
approves it, and the same question in another thread gets the expert's answer cited with author and date. A failed
review post is delivered later, once; a duplicated reaction event is handled once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from adapters.discord.client import DocbotClient
from bot.answers.hooks import TeamAnswerHooks
from bot.app import App
from bot.delivery import Delivery, DeliveryConfig
from storage.answers.model import AnswerStatus
from storage.answers.threads import read_thread
from storage.outbox import Outbox
from tests.adapters.discord.test_spec_rest import SPEC_PARTS, _load, problems_with
from tests.adapters.discord.world import DiscordWorld
from tests.bot.test_team_answers import CEC, CEC_ANSWER
from tests.conftest import shared_path
from tests.fakes import discord_payloads as p

pytestmark = [pytest.mark.integration, pytest.mark.slow]


class TeamWorld:
    def __init__(self, world: DiscordWorld, app: App, client: DocbotClient, review_id: str) -> None:
        self.world, self.app, self.client, self.review_id = world, app, client, review_id

    async def ask(self, author: dict[str, Any], question: str) -> str:
        """A mention in #help: the bot opens a thread on it and replies there; the thread's id."""
        world = self.world
        asked = await world.say(self.client, author, f"{world.mention()} {question}")
        thread_id = str(asked["id"])
        await until(lambda: world.bot_messages(thread_id))
        self.client._connection.parse_thread_create(world.rest.channels[thread_id])  # type: ignore[arg-type]
        return thread_id

    async def reply(self, author: dict[str, Any], thread_id: str, text: str, roles: list[str]) -> str:
        """A person writes in the thread without mentioning the bot (with the roles they have)."""
        payload = p.message(thread_id, author, text, guild_id=self.world.guild_id)
        payload["member"]["roles"] = roles
        await self.world.deliver_message(self.client, payload)
        return str(payload["id"])

    async def react(self, user: dict[str, Any], thread_id: str, message_id: str, emoji: str = "✅") -> None:
        """MESSAGE_REACTION_ADD as the gateway sends it for a guild message."""
        self.client._connection.parse_message_reaction_add({  # type: ignore[arg-type]
            "user_id": user["id"], "channel_id": thread_id, "message_id": message_id,
            "guild_id": self.world.guild_id, "member": p.member(user), "emoji": {"id": None, "name": emoji},
            "message_author_id": self.world.bob["id"], "burst": False, "burst_colors": [], "type": 0,
        })  # fmt: skip
        await self.client.wait_idle()
        await self.world.settle(self.client)

    def reviews(self) -> list[dict[str, Any]]:
        return self.world.bot_messages(self.review_id)

    async def press(self, message: dict[str, Any], label: str, who: dict[str, Any]) -> None:
        (custom_id,) = [c["custom_id"] for c in p.buttons_of(message) if c["label"] == label]
        await self.world.press(self.client, message["id"], custom_id, who)


async def until(condition: Callable[[], Any], timeout_s: float = 60.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.02)


@pytest.fixture
async def team(make_app: Callable[..., Any]) -> AsyncIterator[TeamWorld]:
    placeholder = DiscordWorld(None)  # type: ignore[arg-type]  # its fake REST and ids, before the app exists
    await placeholder.start()
    review_id = p.snowflake()
    placeholder.rest.channels[review_id] = p.text_channel(review_id, placeholder.guild_id, name="review")
    app: App = await make_app(
        discord_bot_token="fake-token", discord_api_url=placeholder.rest.api_url, user_rate_limit="100/minute",
        answers_experts=(f"discord:group:{placeholder.support_role_id}",),
        answers_maintainers=(f"discord:{placeholder.bob['id']}",),
        answers_review_channel=f"discord:{placeholder.guild_id}:{review_id}",
    )  # fmt: skip
    placeholder.db = app.db  # the inbox and outbox on the app's database, as in `serve`
    client = await wired_client(placeholder, app)
    yield TeamWorld(placeholder, app, client, review_id)
    await placeholder.close()


async def wired_client(world: DiscordWorld, app: App, **settings: Any) -> DocbotClient:
    """A client whose events go through a delivery with the team-answer hooks, as `serve` wires them."""
    client = await world.client(app.service, **settings)
    outbox = Outbox(app.db, base_backoff_s=0.05, max_backoff_s=0.2)  # retries in test time
    sinks = {"discord": client.sink}
    hooks = TeamAnswerHooks(app.team, outbox, sinks)
    delivery = Delivery(app.db, app.service, sinks, f"worker-{len(world.clients)}", fetcher_for=client.fetcher_for,
                        config=DeliveryConfig(progress_delay_s=0.0), outbox=outbox, hooks=hooks)  # fmt: skip
    client.intake = delivery
    client.review_text = hooks.editor_text_for("discord")
    world.deliveries[id(client)] = delivery
    return client


async def refused(team: TeamWorld, question: str) -> str:
    thread_id = await team.ask(team.world.alice, question)
    key = f"discord:{team.world.guild_id}:{team.world.channel_id}:{thread_id}"
    assert [m.reply_kind for m in await read_thread(team.app.db, key) if m.from_bot] == ["refusal"]
    return thread_id


async def test_an_experts_answer_is_reviewed_approved_and_cited_in_another_thread(team: TeamWorld) -> None:
    world, app = team.world, team.app
    thread_id = await refused(team, CEC)
    expert_role = world.support_role_id

    # bob has the expert role: his reply is drafted and posted for review, and not answered as a question
    answer_id = await team.reply(world.bob, thread_id, CEC_ANSWER, roles=[expert_role])
    assert len(world.bot_messages(thread_id)) == 1
    await team.react(world.alice, thread_id, answer_id)  # the asker's ✅: the same candidate, no second post
    await team.react(world.alice, thread_id, answer_id)  # the same gateway event again
    (review,) = team.reviews()
    assert "Anynet+" in p.text_of(review)
    (candidate,) = await app.team.answers.store.awaiting_review()
    assert candidate.answer_message_id == answer_id and candidate.author_name == "Bob"

    # unapproved: never quoted; a press by alice (no maintainer) changes nothing
    assert "Anynet+" not in p.text_of(world.bot_messages(await team.ask(world.alice, CEC))[-1])
    await team.press(review, "Approve", world.alice)
    assert (await app.team.answers.store.get(candidate.id)).status is AnswerStatus.DRAFT  # type: ignore[union-attr]

    await team.press(review, "Approve", world.bob)
    assert (await app.team.answers.store.get(candidate.id)).status is AnswerStatus.APPROVED  # type: ignore[union-attr]
    answered = p.text_of(world.bot_messages(await team.ask(world.alice, CEC))[-1])
    day = f"{datetime.now(UTC):%Y-%m-%d}"
    channel = world.rest.channels[world.channel_id]["name"]  # the channel's name, not its id
    assert "Anynet+" in answered and f"answered by @Bob in #{channel} on {day}" in answered, answered
    assert len(team.reviews()) == 1


async def test_a_checkmark_on_a_non_experts_answer_is_read_back_and_drafted_once(team: TeamWorld) -> None:
    world, app = team.world, team.app
    thread_id = await refused(team, CEC)
    answer_id = await team.reply(world.bob, thread_id, CEC_ANSWER, roles=[])  # no expert role: a follow-up
    assert team.reviews() == []
    before = len(world.rest.find("GET", rf"/channels/{thread_id}/messages/{answer_id}"))
    await team.react(world.bob, thread_id, answer_id)  # not the asker: nothing
    await team.react(world.alice, thread_id, answer_id, emoji="🎉")  # not ✅: nothing
    assert team.reviews() == []
    await team.react(world.alice, thread_id, answer_id)
    await team.react(world.alice, thread_id, answer_id)  # the same event again: handled once
    read_back = world.rest.find("GET", rf"/channels/{thread_id}/messages/{answer_id}")
    assert len(read_back) - before == 2  # bob's ✅, then alice's first; her repeat is not handled
    assert len(team.reviews()) == 1
    (candidate,) = await app.team.answers.store.awaiting_review()
    assert candidate.answer_message_id == answer_id


@pytest.mark.parametrize("status", [500, 503])
async def test_a_failed_review_post_is_delivered_later_exactly_once(team: TeamWorld, status: int) -> None:
    world = team.world
    thread_id = await refused(team, CEC)
    world.rest.fail_next("POST", rf"/channels/{team.review_id}/messages", status=status)
    await team.reply(world.bob, thread_id, CEC_ANSWER, roles=[world.support_role_id])
    assert [c.status for c in world.rest.find("POST", rf"/channels/{team.review_id}/messages")][:1] == [status]
    delivery = world.deliveries[id(team.client)]
    async with asyncio.timeout(30):
        while not team.reviews():
            await delivery.sweep()
            await asyncio.sleep(0.05)
    for _ in range(3):
        await delivery.sweep()
    assert len(team.reviews()) == 1
    assert (await delivery.outbox.undelivered()).get("pending", 0) == 0


async def test_edit_opens_a_modal_whose_text_is_approved_and_only_for_a_maintainer(team: TeamWorld) -> None:
    world, app = team.world, team.app
    thread_id = await refused(team, CEC)
    await team.reply(world.bob, thread_id, CEC_ANSWER, roles=[world.support_role_id])
    (review,) = team.reviews()

    await team.press(review, "Edit", world.alice)  # no maintainer: no editor, nothing changes
    assert [c for c in world.rest.calls if isinstance(c.body, dict) and c.body.get("type") == 9] == []

    await team.press(review, "Edit", world.bob)
    (opened,) = [c for c in world.rest.calls if isinstance(c.body, dict) and c.body.get("type") == 9]
    modal = opened.body["data"]
    assert CEC_ANSWER in str(modal["components"])
    assert not team.client._connection._view_store._modals  # discord.py keeps no modal: one path takes the submit
    edited = CEC_ANSWER.replace("restart the hub", "restart the hub and the TV (model year 2024 only)")
    submit = editor_submission(team, review, modal["custom_id"], edited)
    await world.interact(team.client, submit)

    (approved,) = await app.team.answers.store.list(statuses=[AnswerStatus.APPROVED])
    assert approved.answer == edited
    assert [c.status for c in world.rest.find("POST", rf"/interactions/{submit['id']}/.+")] == [200]  # handled once
    assert "model year 2024 only" in p.text_of(world.bot_messages(await team.ask(world.alice, CEC))[-1])
    spec = _load(shared_path(*SPEC_PARTS))  # every REST call of the scenario, as Discord's OpenAPI spec allows
    assert [problem for call in world.rest.calls for problem in problems_with(call, spec)] == []


async def test_an_editor_submitted_after_a_restart_is_saved_and_approved_once(team: TeamWorld) -> None:
    """The editor is opened by the bot before a restart and submitted to the bot after it (which never saw the Edit
    press): the maintainer's text is saved and approved, once, also when the submission is delivered twice."""
    world, app = team.world, team.app
    thread_id = await refused(team, CEC)
    await team.reply(world.bob, thread_id, CEC_ANSWER, roles=[world.support_role_id])
    (review,) = team.reviews()
    await team.press(review, "Edit", world.bob)
    (opened,) = [c for c in world.rest.calls if isinstance(c.body, dict) and c.body.get("type") == 9]

    await team.client.close()  # the restart, while the maintainer types
    world.clients.remove(team.client)
    team.client = await wired_client(world, app)
    edited = CEC_ANSWER.replace("restart the hub", "restart the hub and the TV (model year 2024 only)")
    submit = editor_submission(team, review, opened.body["data"]["custom_id"], edited)
    await world.interact(team.client, submit)
    await world.interact(team.client, submit)  # the same event again

    (approved,) = await app.team.answers.store.list(statuses=[AnswerStatus.APPROVED])
    assert approved.answer == edited
    assert [c.status for c in world.rest.find("POST", rf"/interactions/{submit['id']}/.+")] == [200]
    assert "model year 2024 only" in p.text_of(world.bot_messages(await team.ask(world.alice, CEC))[-1])


def editor_submission(team: TeamWorld, review: dict[str, Any], custom_id: str, text: str) -> dict[str, Any]:
    """The editor opened from `review`'s Edit button, submitted by the maintainer with `text` (MODAL_SUBMIT)."""
    world = team.world
    return p.modal_submit_interaction(
        app_id=world.app_id, submitter=world.bob, custom_id=custom_id, inputs={"answer": text},
        message=world.rest.messages[review["id"]], guild_id=world.guild_id, channel=world.rest.channels[team.review_id],
    )  # fmt: skip


async def test_solved_in_a_forum_post_drafts_the_answer_and_applies_the_tag(team: TeamWorld) -> None:
    world, app = team.world, team.app
    forum_id = world.forum([("9001", "Bug"), ("9002", "Solved")])
    client = await wired_client(world, app, discord_forum_channels=(int(forum_id),))
    post_id = await world.post_in_forum(client, forum_id, world.alice, "HDMI-CEC", CEC)
    (refusal,) = world.bot_messages(post_id)
    key = f"discord:{world.guild_id}:{forum_id}:{post_id}"
    assert [m.reply_kind for m in await read_thread(app.db, key) if m.from_bot] == ["refusal"]
    # a plain user's reply is a follow-up the bot answers; it is stored with the thread
    await world.say(client, world.bob, CEC_ANSWER, channel_id=post_id, mentions_bot=False)
    assert team.reviews() == []
    (solved,) = [b["custom_id"] for b in p.buttons_of(refusal) if b.get("custom_id", "").startswith("docbot:s:")]
    await world.press(client, refusal["id"], solved, world.alice)
    assert world.rest.channels[post_id]["applied_tags"] == ["9002"]
    assert len(team.reviews()) == 1
    (candidate,) = await app.team.answers.store.awaiting_review()
    assert candidate.author_name == "Bob" and "Anynet+" in candidate.answer


async def test_the_solved_tag_applied_in_discord_drafts_the_answer_once(team: TeamWorld) -> None:
    world, app = team.world, team.app
    forum_id = world.forum([("9001", "Bug"), ("9002", "Solved")])
    client = await wired_client(world, app, discord_forum_channels=(int(forum_id),))
    post_id = await world.post_in_forum(client, forum_id, world.alice, "HDMI-CEC", CEC)
    await world.say(client, world.bob, CEC_ANSWER, channel_id=post_id, mentions_bot=False)
    assert team.reviews() == []

    async def tagged(tags: list[str]) -> None:  # THREAD_UPDATE as the gateway sends it when the tags change
        client._connection.parse_thread_update({**world.rest.channels[post_id], "applied_tags": tags})  # type: ignore[arg-type]
        await client.wait_idle()
        await world.settle(client)

    await tagged(["9001"])  # another tag: nothing
    assert team.reviews() == []
    await tagged(["9001", "9002"])
    await tagged(["9001"])
    await tagged(["9001", "9002"])  # taken off and put on again: the same resolution, handled once
    assert len(team.reviews()) == 1
    (candidate,) = await app.team.answers.store.awaiting_review()
    assert candidate.author_name == "Bob" and candidate.answer == CEC_ANSWER
