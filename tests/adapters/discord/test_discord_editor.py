"""The review editor's submission (MODAL_SUBMIT), read from the interaction itself rather than from a modal kept in
memory: a client that never opened the editor (the bot after a restart, another replica) stores it in the inbox as an
EDIT with the typed text and acknowledges it once; the same interaction delivered twice (replayed to one client, or
received by two replicas on one database) is stored and acknowledged once; a docbot modal that cannot be read is
answered privately and nothing is stored; another app's modal is left alone. Nothing typed reaches the logs.

Every submission is parsed by discord.py's own ConnectionState and handled by the real client; its inbox is the
`Delivery` on the world's SQLite database, and its responses go to the fake REST API on a real socket (which, like
Discord, takes one response per interaction)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from sqlalchemy import select

from adapters.discord import wording
from adapters.discord.client import DocbotClient
from pipeline.codec import from_json
from pipeline.messages import Inbound, InboundKind
from storage.inbox import INBOX
from tests.adapters.discord.test_gateway_payloads import complete, payloads
from tests.adapters.discord.world import DiscordWorld, FakeHandler
from tests.fakes import discord_payloads as p

pytestmark = pytest.mark.integration
EN = wording.ENGLISH  # the clients here are English (en-US)

TYPED = "Hold Home and Back for 5 s, then pair again (typed in the editor)"
DEFERRED_UPDATE, CHANNEL_MESSAGE, EPHEMERAL = 6, 4, 1 << 6


async def stored(world: DiscordWorld) -> list[Inbound]:
    """Every event in the world's inbox."""
    async with world.db.session() as session:
        rows = (await session.execute(select(INBOX.c.payload))).scalars().all()
    return [from_json(Inbound, row["inbound"]) for row in rows]


def responses(world: DiscordWorld, interaction: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(status, body) of every response docbot sent to `interaction`."""
    calls = world.rest.find("POST", rf"/interactions/{interaction['id']}/[^/]+/callback")
    return [(call.status, call.body) for call in calls]


def logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records)


async def new_client(world: DiscordWorld) -> DocbotClient:
    """A client that opened no editor: it stands for the bot after a restart, or for another replica."""
    return await world.client(FakeHandler(on_message=lambda inbound: None))


def review_message(world: DiscordWorld) -> dict[str, Any]:
    """A message of the bot's whose Edit button opened the editor (elsewhere: before the restart)."""
    message = p.message(world.channel_id, world.bot, "", guild_id=world.guild_id)
    message.pop("member", None)
    world.rest.messages[message["id"]] = message
    return message


def submission(world: DiscordWorld, custom_id: str, inputs: dict[str, str], *, labelled: bool = False
               ) -> dict[str, Any]:  # fmt: skip
    return p.modal_submit_interaction(
        app_id=world.app_id, submitter=world.bob, custom_id=custom_id, inputs=inputs, message=review_message(world),
        guild_id=world.guild_id, channel=world.rest.channels[world.channel_id], labelled=labelled,
    )  # fmt: skip


async def test_discords_modal_submit_example_is_taken_by_a_client_that_never_opened_the_editor(
    world: DiscordWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)  # as in production
    client = await new_client(world)
    [example] = [each for _, each in payloads("INTERACTION_CREATE") if each["type"] == p.INTERACTION_MODAL_SUBMIT]
    submit = complete(example, world.app_id)  # Discord's example, as docbot's editor would come back in it
    submit["data"]["custom_id"] = "docbot:edit:act_7Kq-2"
    submit["data"]["components"][0]["components"][0].update(custom_id="answer", value=TYPED)

    await world.interact(client, submit)

    [edit] = await stored(world)
    assert (edit.kind, edit.action_id, edit.text) == (InboundKind.EDIT, "act_7Kq-2", TYPED)
    assert (edit.user_id, edit.message_id, edit.workspace_id) == (
        submit["member"]["user"]["id"], submit["message"]["id"], submit["guild_id"])  # fmt: skip
    assert responses(world, submit) == [(200, {"type": DEFERRED_UPDATE})]  # acknowledged once, the message unchanged
    assert TYPED not in logged(caplog)


@pytest.mark.parametrize("labelled", [False, True], ids=["input in an action row", "input in a label"])
async def test_the_same_submission_is_stored_and_acknowledged_once(
    world: DiscordWorld, labelled: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)  # as in production
    client = await new_client(world)
    submit = submission(world, "docbot:edit:act_42", {"answer": TYPED}, labelled=labelled)

    await world.interact(client, submit)
    await world.interact(client, submit)  # replayed to the same session (a resumed gateway connection)
    replica = await new_client(world)  # the same event received by another replica on the same database
    await world.interact(replica, submit)

    [edit] = await stored(world)
    assert (edit.kind, edit.action_id, edit.text, edit.user_id) == (InboundKind.EDIT, "act_42", TYPED, world.bob["id"])
    assert responses(world, submit) == [(200, {"type": DEFERRED_UPDATE})]
    assert TYPED not in logged(caplog)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], logged(caplog)


@pytest.mark.parametrize(
    ("custom_id", "inputs", "notice"),
    [
        ("docbot:edit:act_42", {}, EN.edit_unreadable),  # no answer input
        ("docbot:edit:act_42", {"text": TYPED}, EN.edit_unreadable),  # an input docbot's editor does not have
        ("docbot:edit:act_42", {"answer": "  \n "}, EN.edit_empty),
        ("docbot:edit:", {"answer": TYPED}, EN.edit_unreadable),  # no stored action
        ("docbot:edit:act 42!", {"answer": TYPED}, EN.edit_unreadable),  # not an action id
        ("docbot:review:act_42", {"answer": TYPED}, EN.edit_unreadable),  # a docbot modal this version lacks
    ],
    ids=["no input", "another input", "blank", "no action id", "bad action id", "unknown docbot modal"],
)
async def test_a_docbot_submission_that_cannot_be_read_is_answered_privately_and_not_stored(
    world: DiscordWorld, caplog: pytest.LogCaptureFixture, custom_id: str, inputs: dict[str, str], notice: str
) -> None:
    caplog.set_level(logging.INFO)  # as in production
    client = await new_client(world)
    submit = submission(world, custom_id, inputs)

    await world.interact(client, submit)
    await world.interact(client, submit)  # delivered again: answered once

    assert await stored(world) == []
    [(status, body)] = responses(world, submit)
    assert (status, body["type"], body["data"]["content"]) == (200, CHANNEL_MESSAGE, notice)
    assert body["data"]["flags"] & EPHEMERAL  # to the person who submitted it alone
    assert "discord editor submission not readable" in logged(caplog)
    assert TYPED not in logged(caplog)


async def test_another_apps_modal_is_left_alone(world: DiscordWorld, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)  # as in production
    client = await new_client(world)
    submit = submission(world, "feedback-form", {"answer": TYPED})

    await world.interact(client, submit)

    assert await stored(world) == []
    assert responses(world, submit) == []
    assert "discord modal submit that is not docbot's ignored" in logged(caplog)
    assert TYPED not in logged(caplog)
