"""The three pieces of the Slack ingress, each on its own (the whole chain runs in the other tests of this package):
`IgnoreSelf` drops what is not a person talking, `AskGuard` refuses a /ask that cannot be asked before anything is
stored, `StoreThenAck` acknowledges only what the intake stored."""

from __future__ import annotations

import json
from typing import Any

import pytest
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from adapters.slack.middleware import AskGuard, IgnoreSelf, StoreThenAck
from adapters.slack.options import SlackOptions
from pipeline.messages import Inbound, ThreadRef

pytestmark = pytest.mark.unit

BOT = {"authorizations": [{"user_id": "UBOT0001", "is_bot": True}], "team_id": "T1"}


class Next:
    """Bolt's `next`: records that the chain went on."""

    def __init__(self) -> None:
        self.called = 0

    async def __call__(self) -> BoltResponse:
        self.called += 1
        return BoltResponse(status=200, body="listener")


class Intake:
    def __init__(self, fails: Exception | None = None) -> None:
        self.stored: list[tuple[Inbound, ThreadRef]] = []
        self.fails = fails

    async def accept(self, inbound: Inbound, ref: ThreadRef) -> bool:
        if self.fails is not None:
            raise self.fails
        self.stored.append((inbound, ref))
        return True


def request(body: dict[str, Any]) -> AsyncBoltRequest:
    return AsyncBoltRequest(body={**BOT, **body}, mode="socket_mode")


def ask(text: str, channel: str = "C1") -> dict[str, Any]:
    return {"command": "/ask", "text": text, "channel_id": channel, "user_id": "UALICE", "trigger_id": "tr1"}


def message(user: str, **event: Any) -> dict[str, Any]:
    return {"event": {"type": "app_mention", "user": user, "text": "<@UBOT0001> hi", "ts": "1700000000.000100",
                      "channel": "C1", **event}}  # fmt: skip


async def test_ignore_self_drops_our_own_posts_and_other_bots_and_passes_people_on() -> None:
    for dropped in (message("UBOT0001"), message("UOTHER", bot_id="B9"), message("UALICE", subtype="message_changed")):
        following = Next()
        response = await IgnoreSelf().async_process(req=request(dropped), resp=BoltResponse(status=200), next=following)
        assert response.status == 200 and following.called == 0
    following = Next()
    await IgnoreSelf().async_process(req=request(message("UALICE")), resp=BoltResponse(status=200), next=following)
    assert following.called == 1


@pytest.mark.parametrize(
    ("body", "said"),
    [(ask("   "), "/ask"), (ask("why " * 300), "characters"), (ask("how do I pair?", channel="C-no"), "channel")],
)
async def test_ask_guard_refuses_privately_and_stops_the_chain(body: dict[str, Any], said: str) -> None:
    options = SlackOptions(max_question_chars=1000, channel_allowed=lambda team, channel: channel != "C-no")
    following = Next()
    response = await AskGuard(options).async_process(req=request(body), resp=BoltResponse(status=200), next=following)
    assert response.status == 200 and following.called == 0
    assert said in json.loads(str(response.body))["text"]


async def test_ask_guard_lets_an_askable_question_through() -> None:
    following = Next()
    await AskGuard(SlackOptions()).async_process(
        req=request(ask("how do I pair the remote?")), resp=BoltResponse(status=200), next=following
    )
    assert following.called == 1


async def test_store_then_ack_acknowledges_only_what_was_stored() -> None:
    stored, broken = Intake(), Intake(fails=ConnectionError("database down"))
    cases = [(lambda: stored, 200), (lambda: broken, 500), (lambda: None, 503)]
    for intake, status in cases:
        following = Next()
        middleware = StoreThenAck(SlackOptions(), intake)
        response = await middleware.async_process(
            req=request(ask("how do I pair the remote?")), resp=BoltResponse(status=200), next=following
        )
        assert response.status == status and following.called == 0
    ((inbound, ref),) = stored.stored
    assert inbound.text == "how do I pair the remote?" and inbound.channel_id == "C1" and ref.channel_id == "C1"
