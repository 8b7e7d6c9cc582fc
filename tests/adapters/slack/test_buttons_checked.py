"""Issue 12, items 4 and 5, with the real conversation service and stores: a press is checked (exists, unexpired,
this thread, this workspace) before any message changes; a refused press gets an ephemeral notice and changes
nothing; an accepted choice is shown from the stored action on the message Slack holds; feedback is one vote per
person, each counted and acknowledged."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from adapters.slack.fake_web_api import Message
from adapters.slack.sink import slack_thread_ref
from bot.delivery import Delivery, DeliveryConfig
from bot.service import ConversationService
from pipeline.messages import Reply, ReplyAction, ReplyKind
from pipeline.runner import PipelineRunner
from pipeline.types import ActionKind
from storage.actions import ActionStore
from storage.conversations import ConversationStore
from storage.feedback import FeedbackStore
from storage.runs import RunStore
from tests.adapters.slack.conftest import TEAM, Harness, MakeHarness, action_body, button_of_kind
from tests.helpers.stored import stored_actions, stored_conversation

pytestmark = pytest.mark.integration

RUN = "run-1"


async def real_service(h: Harness) -> tuple[ConversationService, ActionStore, FeedbackStore]:
    """The production service over the harness's database, answering presses through the same delivery path."""
    db = h.delivery.inbox._db
    actions, feedback = ActionStore(db), FeedbackStore(db)
    service = ConversationService(
        settings=h.handler.settings, conversations=ConversationStore(db), runs=RunStore(db), actions=actions,
        feedback=feedback, runner=cast(PipelineRunner, None),  # presses here never run the pipeline
    )  # fmt: skip
    h.delivery = Delivery(db, service, {"slack": h.adapter.sink}, "w1", config=DeliveryConfig(poll_s=0.02))
    h.adapter.intake = h.delivery
    return service, actions, feedback


async def answer_in_thread(h: Harness, actions: ActionStore, root: str, *, expired: bool = False,
                           team: str = TEAM) -> Message:
    """A bot answer in thread `root` with stored Helpful / Not helpful / Ask a human buttons, posted by the sink."""
    db = h.delivery.inbox._db
    conversation = await stored_conversation(db, f"slack:{team}:C1:{root}", workspace_id=team)
    expires = datetime.now(UTC) + (timedelta(seconds=-1) if expired else timedelta(days=1))
    buttons = [("helpful", "Helpful", RUN), ("not_helpful", "Not helpful", RUN), ("human", "Ask a human", RUN)]
    stored = await stored_actions(db, conversation.id, buttons, expires_at=expires)
    reply = Reply(ReplyKind.ANSWER, "Hold the pair button.", "en", conversation.id,
                  actions=tuple(ReplyAction(a.id, a.label, a.kind) for a in stored))  # fmt: skip
    ts = await h.adapter.sink.post(slack_thread_ref(team, "C1", root, "UALICE"), reply)
    [message] = [m for m in h.api.bot_messages("C1", thread_ts=root) if m.ts == ts]
    return message


def button(message: Message, kind: ActionKind) -> tuple[dict[str, Any], str]:
    return button_of_kind(message.blocks, kind)


def updates_of(h: Harness, ts: str) -> list[dict[str, Any]]:
    return [c.args for c in h.api.calls_to("chat.update") if c.args["ts"] == ts]


async def test_refused_presses_change_nothing_and_are_told_privately(make_harness: MakeHarness) -> None:
    h = await make_harness()
    _, actions, _ = await real_service(h)
    root_a, root_b = h.api.seed("C1", "question A", user="UALICE"), h.api.seed("C1", "question B", user="UBOB")
    message_a = await answer_in_thread(h, actions, root_a)
    message_b = await answer_in_thread(h, actions, root_b)
    expired = await answer_in_thread(h, actions, h.api.seed("C1", "question C", user="UALICE"), expired=True)
    human_a, block = button(message_a, ActionKind.HUMAN)
    presses = [
        action_body(message_a.as_api(), "C1", {**human_a, "value": "forged-id"}, block),  # unknown
        action_body(expired.as_api(), "C1", button(expired, ActionKind.HUMAN)[0], block),  # expired
        {**action_body(message_a.as_api(), "C1", human_a, block), "team": {"id": "T0THER"}},  # other workspace
        action_body(message_b.as_api(), "C1", human_a, block),  # thread A's action on thread B's message
    ]
    for body in presses:
        assert await h.press(body) == 200
    await h.settle()
    assert len(h.api.ephemerals()) == len(presses)
    for message in (message_a, message_b, expired):
        assert updates_of(h, message.ts) == []  # no message was touched
    assert len(h.api.bot_messages("C1")) == 3  # nothing posted in any thread


async def test_a_valid_press_shows_the_stored_choice_only_on_its_own_message(make_harness: MakeHarness) -> None:
    h = await make_harness()
    _, actions, _ = await real_service(h)
    root_a, root_b = h.api.seed("C1", "question A", user="UALICE"), h.api.seed("C1", "question B", user="UBOB")
    message_a = await answer_in_thread(h, actions, root_a)
    message_b = await answer_in_thread(h, actions, root_b)
    human_b, block = button(message_b, ActionKind.HUMAN)
    tampered_label = {**human_b, "text": {"type": "plain_text", "text": "HACKED"}}
    # a valid press of thread B's button, but the payload says it was on thread A's message, with other blocks
    forged = action_body({**message_a.as_api(), "thread_ts": root_b, "blocks": []}, "C1", tampered_label, block)
    forged["container"]["thread_ts"] = root_b
    assert await h.press(forged) == 200
    await h.settle()
    assert updates_of(h, message_a.ts) == []  # thread A's answer is untouched
    human_a, block_a = button(message_a, ActionKind.HUMAN)
    assert await h.press(action_body(message_a.as_api(), "C1", {**human_a, "text": tampered_label["text"]},
                                     block_a)) == 200  # fmt: skip
    await h.settle()
    [update] = updates_of(h, message_a.ts)
    shown = json.dumps(update["blocks"])
    assert "Ask a human" in shown and "HACKED" not in shown  # the stored label, not the payload's
    assert "Hold the pair button." in shown  # rebuilt from the message Slack holds


async def test_feedback_from_three_people_is_three_votes_each_thanked(make_harness: MakeHarness) -> None:
    h = await make_harness()
    _, actions, feedback = await real_service(h)
    message = await answer_in_thread(h, actions, h.api.seed("C1", "question", user="UALICE"))
    helpful, block = button(message, ActionKind.HELPFUL)
    for user in ("UALICE", "UBOB", "UCAROL"):
        assert await h.press(action_body(message.as_api(), "C1", helpful, block, user=user)) == 200
    await h.settle()
    assert await feedback.counts(RUN) == (3, 0)
    assert sorted(m.ephemeral_to or "" for m in h.api.ephemerals()) == ["UALICE", "UBOB", "UCAROL"]
    assert updates_of(h, message.ts) == []  # feedback buttons stay for the next person
