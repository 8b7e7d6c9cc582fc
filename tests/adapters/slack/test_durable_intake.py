"""Durable mode: events go to an intake (the delivery inbox) and its worker posts through `adapter.sink`."""

from __future__ import annotations

import pytest

from adapters.slack.sink import slack_thread_ref
from bot.delivery import DeliveryRejected
from bot.messages import Inbound, ThreadRef
from tests.adapters.slack.conftest import MakeHarness, action_body, answer, mention_event

pytestmark = pytest.mark.integration


class RecordingIntake:
    def __init__(self) -> None:
        self.accepted: list[tuple[Inbound, ThreadRef]] = []
        self.keys: set[str] = set()

    async def accept(self, inbound: Inbound, ref: ThreadRef) -> bool:
        if inbound.dedup_key in self.keys:
            return False
        self.keys.add(inbound.dedup_key)
        self.accepted.append((inbound, ref))
        return True


async def test_mention_is_stored_with_its_placeholder_and_answered_by_the_worker(make_harness: MakeHarness) -> None:
    h = await make_harness()
    intake = RecordingIntake()
    h.adapter.intake = intake
    ts = h.api.seed("C1", "<@UBOT0001> how do I pair the remote?", user="UALICE")
    await h.post_json(mention_event(ts))
    await h.settle()
    [(inbound, ref)] = intake.accepted
    assert h.handler.messages == []  # not answered in the request path
    assert inbound.user_name == "Alice" and ref.placeholder_id is not None
    # the delivery worker, later: the sink turns the placeholder into the answer
    posted_ts = await h.adapter.sink.post(ref, answer(inbound.thread_key))
    [message] = h.api.bot_messages("C1", thread_ts=ts)
    assert posted_ts == ref.placeholder_id == message.ts and "pair" in message.text
    assert h.adapter.fetcher_for(inbound, ref) is None  # the mention started the thread: nothing to read


async def test_duplicate_accept_clears_the_placeholder(make_harness: MakeHarness) -> None:
    h = await make_harness()
    intake = RecordingIntake()
    h.adapter.intake = intake
    ts = h.api.seed("C1", "<@UBOT0001> hi", user="UALICE")
    intake.keys.add(f"slack:T0001:C1:{ts}")  # another replica stored it already
    await h.post_json(mention_event(ts, "<@UBOT0001> hi"))
    await h.settle()
    assert intake.accepted == [] and h.api.bot_messages("C1") == []
    assert len(h.api.calls_to("chat.delete")) == 1


async def test_button_shows_the_choice_at_once_and_is_stored(make_harness: MakeHarness) -> None:
    h = await make_harness()
    h.handler.script = lambda inbound: h.handler.clarification(inbound)
    root = h.api.seed("C1", "<@UBOT0001> it broke", user="UALICE")
    await h.post_json(mention_event(root, "<@UBOT0001> it broke"))
    await h.settle()
    [clarification] = h.api.bot_messages("C1", thread_ts=root)
    intake = RecordingIntake()
    h.adapter.intake = intake
    [block] = [b for b in clarification.blocks if b.get("block_id") == "docbot_options"]
    await h.press(action_body(clarification.as_api(), "C1", block["elements"][0], "docbot_options"))
    await h.settle()
    [(inbound, ref)] = intake.accepted
    assert inbound.action_id == "act-0-0" and ref.thread_id == root
    [updated] = h.api.bot_messages("C1", thread_ts=root)
    assert not [b for b in updated.blocks if b["type"] == "actions"] and "Remote" in str(updated.blocks[-1])


async def test_permanent_slack_errors_are_rejected_for_good(make_harness: MakeHarness) -> None:
    h = await make_harness()
    h.api.fail_next("chat.postMessage", status=200, error="channel_not_found", retry_after=None)
    with pytest.raises(DeliveryRejected) as rejected:
        await h.adapter.sink.post(slack_thread_ref("T0001", "CGONE", "1.0", "UALICE"), answer("c"))
    assert rejected.value.reason == "channel_not_found"
