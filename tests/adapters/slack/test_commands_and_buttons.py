"""/ask and button presses through the real bolt app over real HTTP."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from adapters.slack.fake_web_api import Message
from pipeline.messages import Inbound, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind
from tests.adapters.slack.conftest import TEAM, Harness, MakeHarness, action_body, mention_event, pressables

pytestmark = pytest.mark.integration


def ask_form(text: str, channel: str = "C1", user: str = "UALICE") -> dict[str, str]:
    return {"token": "legacy", "team_id": TEAM, "channel_id": channel, "user_id": user, "user_name": "alice",
            "command": "/ask", "text": text, "response_url": "https://hooks.slack.test/commands/1",
            "trigger_id": f"trig-{time.time_ns()}", "api_app_id": "A0001"}  # fmt: skip


async def test_ask_posts_the_question_and_answers_in_its_thread(make_harness: MakeHarness) -> None:
    h = await make_harness(handler_delay_s=2.0)
    status, body = await h.post_form(ask_form("how do I pair <the> remote @here?"))
    assert status == 200 and body == "" and h.api.calls == []  # stored and acknowledged; nothing posted yet
    await h.settle()
    question, answer_msg = h.api.bot_messages("C1")
    assert question.thread_ts is None
    assert question.text == "<@UALICE> asked: how do I pair &lt;the&gt; remote @\u2060here?"
    assert answer_msg.thread_ts == question.ts
    [inbound] = h.handler.messages
    assert (inbound.message_id, inbound.thread_id, inbound.user_name, inbound.text) == (
        question.ts, None, "Alice", "how do I pair <the> remote @here?")


async def test_ask_without_question_or_in_refused_channel_answers_ephemerally(make_harness: MakeHarness) -> None:
    h = await make_harness(channel_policies=({"platform": "slack", "channel_id": "CNO", "allowed": False},))
    empty_status, empty_body = await h.post_form(ask_form("  "))
    refused_status, refused_body = await h.post_form(ask_form("a question", channel="CNO"))
    await h.settle()
    assert (empty_status, refused_status) == (200, 200)
    assert "/ask how do I" in empty_body and "not set up to answer in this channel" in refused_body
    assert h.handler.messages == [] and h.api.bot_messages() == []


async def test_ask_that_is_too_long_is_refused_privately_before_anything_is_posted(make_harness: MakeHarness) -> None:
    """Issue 12 item 9: /ask with 5,000 characters posted the whole text publicly, then said it was too long."""
    h = await make_harness()
    status, body = await h.post_form(ask_form("why " * 1250))
    await h.settle()
    assert status == 200 and "too long" in body and "4000" in body  # the ephemeral command response
    assert h.api.calls == [] and await h.delivery.inbox.counts() == {}  # nothing posted, nothing stored


def _buttons(message: Message, block_prefix: str) -> list[tuple[str, dict[str, Any]]]:
    """(block_id, button) of the pressable buttons in blocks whose id starts with `block_prefix`."""
    return [(i, b) for i, b in pressables(message.blocks) if i.startswith(block_prefix)]


async def _clarified_thread(h: Harness, channel: str = "C1") -> tuple[str, Message]:
    h.handler.script = lambda inbound: h.handler.clarification(inbound)
    root = h.api.seed(channel, "<@UBOT0001> it does not work", user="UALICE")
    await h.post_json(mention_event(root, "<@UBOT0001> it does not work", channel=channel))
    await h.settle()
    [clarification] = h.api.bot_messages(channel, thread_ts=root)
    h.handler.script = None
    return root, clarification


async def test_click_resumes_marks_choice_and_removes_buttons(make_harness: MakeHarness) -> None:
    h = await make_harness()
    root, clarification = await _clarified_thread(h)
    buttons = _buttons(clarification, "docbot_option")
    assert [b["value"] for _, b in buttons] == ["act-0-0", "act-0-1"]  # opaque ids, nothing else
    block_id, button = buttons[1]
    await h.press(action_body(clarification.as_api(), "C1", button, block_id))
    await h.settle()
    [pressed] = h.handler.actions_pressed
    assert (pressed.action_id, pressed.thread_id, pressed.message_id) == ("act-0-1", root, clarification.ts)
    updated, resumed = h.api.bot_messages("C1", thread_ts=root)
    assert _buttons(updated, "docbot_option") == []
    assert "TV" in json.dumps(updated.blocks[-1])
    assert "About the TV" in resumed.text
    assert h.handler.resumes == ["TV"]


async def test_same_button_twice_resumes_once(make_harness: MakeHarness) -> None:
    h = await make_harness()
    root, clarification = await _clarified_thread(h)
    block_id, button = _buttons(clarification, "docbot_option")[0]
    await h.press(action_body(clarification.as_api(), "C1", button, block_id))
    await h.press(action_body(clarification.as_api(), "C1", button, block_id))
    await h.settle()
    assert h.handler.resumes == ["Remote"]
    assert len(h.api.bot_messages("C1", thread_ts=root)) == 2  # the clarification and one resumed answer
    [notice] = h.api.ephemerals()
    assert "already used" in notice.text and notice.ephemeral_to == "UALICE"


async def test_button_from_another_thread_is_refused(make_harness: MakeHarness) -> None:
    h = await make_harness()
    _, clarification_a = await _clarified_thread(h)
    root_b = h.api.seed("C1", "<@UBOT0001> other question", user="UBOB")
    await h.post_json(mention_event(root_b, "<@UBOT0001> other question", user="UBOB"))
    await h.settle()
    [answer_b] = h.api.bot_messages("C1", thread_ts=root_b)
    # a press arriving on thread B's message but carrying thread A's stored action id
    block_id, stolen = _buttons(clarification_a, "docbot_option")[0]
    await h.press(action_body(answer_b.as_api(), "C1", dict(stolen), block_id, user="UBOB"))
    await h.settle()
    assert h.handler.actions_pressed[0].thread_id == root_b
    assert h.handler.resumes == []
    assert [m.text for m in h.api.ephemerals()] == ["That button belongs to another thread."]
    assert [c.args["ts"] for c in h.api.calls_to("chat.update")].count(answer_b.ts) == 1  # only placeholder→answer


async def test_ask_a_human_pings_the_configured_support_group(make_harness: MakeHarness) -> None:
    h = await make_harness()

    def with_human(inbound: Inbound) -> Reply:
        return Reply(kind=ReplyKind.ANSWER, text="Here is what I found.", language="en",
                     conversation_id=inbound.thread_key,
                     actions=(ReplyAction("human-1", "Ask a human", ActionKind.HUMAN),))

    async def hand_over(inbound: Inbound) -> object:
        from pipeline.messages import ActionOutcome

        reply = Reply(kind=ReplyKind.NOTICE, text="I've asked a person to look.", language="en",
                      conversation_id=inbound.thread_key, reason="human_requested")
        return ActionOutcome(accepted=True, chosen_label="Ask a human", reply=reply)

    h.handler.script = with_human
    root = h.api.seed("C1", "<@UBOT0001> help", user="UALICE")
    await h.post_json(mention_event(root, "<@UBOT0001> help"))
    await h.settle()
    [message] = h.api.bot_messages("C1", thread_ts=root)
    h.handler.handle_action = hand_over  # type: ignore[method-assign, assignment]
    block_id, human = _buttons(message, "docbot_feedback")[0]
    await h.press(action_body(message.as_api(), "C1", human, block_id))
    await h.settle()
    handover = h.api.bot_messages("C1", thread_ts=root)[-1]
    texts = json.dumps(handover.blocks)
    assert "<!subteam^S0SUPPORT>" in texts and "<@UALICE>" in texts
