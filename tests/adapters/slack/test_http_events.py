"""Signed Events API requests through the real bolt app over real HTTP, answered against the fake Web API."""

from __future__ import annotations

import json
import time

import pytest

from adapters.slack.fake_web_api import BOT_ID, BOT_USER
from tests.adapters.slack.conftest import (
    SECRET,
    MakeHarness,
    mention_event,
    message_event,
    signed_headers,
)

pytestmark = pytest.mark.integration

MENTION = "<@UBOT0001> how do I pair the remote?"


async def test_forged_signature_is_rejected_and_nothing_processed(make_harness: MakeHarness) -> None:
    h = await make_harness()
    ts = h.api.seed("C1", MENTION, user="UALICE")
    raw = json.dumps(mention_event(ts))
    forged = await h.post_json(json.loads(raw), headers=signed_headers(raw, secret="not-the-secret"))
    stale = await h.post_json(json.loads(raw), headers=signed_headers(raw, SECRET, int(time.time()) - 600))
    unsigned = await h.post_json(json.loads(raw), headers={"Content-Type": "application/json"})
    await h.settle()
    assert (forged.status, stale.status, unsigned.status) == (401, 401, 401)
    assert h.handler.messages == []
    assert [c.method for c in h.api.calls] == []


async def test_mention_gets_one_threaded_answer_with_sources(make_harness: MakeHarness) -> None:
    h = await make_harness()
    ts = h.api.seed("C1", MENTION, user="UALICE")
    response = await h.post_json(mention_event(ts))
    await h.settle()
    assert response.status == 200
    [inbound] = h.handler.messages
    assert (inbound.text, inbound.user_name, inbound.mentioned, inbound.thread_id) == (
        "how do I pair the remote?", "Alice", True, None)
    [reply] = h.api.bot_messages("C1")
    assert reply.thread_ts == ts
    assert "*pair*" in reply.blocks[0]["text"]["text"]
    [cards] = [b["elements"] for b in reply.blocks if b["type"] == "carousel"]
    assert [(c["title"]["text"], c["subtitle"]["text"]) for c in cards] == [("[1] Pairing", "Remote › Setup")]
    assert cards[0]["actions"][0]["url"] == "https://docs.example/remote#pair"
    # the placeholder was posted first and turned into the answer, not left behind
    [placeholder] = h.api.calls_to("chat.postMessage")
    [update] = h.api.calls_to("chat.update")
    assert update.args["ts"] == reply.ts == h.api.calls_to("chat.postMessage")[0].args.get("ts", reply.ts)
    assert "Looking through the docs" in placeholder.args["text"]


async def test_same_event_three_times_gets_one_answer(make_harness: MakeHarness) -> None:
    h = await make_harness()
    ts = h.api.seed("C1", MENTION, user="UALICE")
    body = mention_event(ts)
    statuses = [(await h.post_json(body, retry_num=n)).status for n in (None, 1, 2)]
    await h.settle()
    assert statuses == [200, 200, 200]
    assert len(h.handler.messages) == 1
    assert len(h.api.bot_messages("C1")) == 1


async def test_app_mention_and_message_pair_gets_one_answer(make_harness: MakeHarness) -> None:
    h = await make_harness()
    ts = h.api.seed("C1", MENTION, user="UALICE")
    await h.post_json(message_event(ts, MENTION))
    await h.post_json(mention_event(ts))
    await h.settle()
    assert len(h.handler.messages) == 1
    assert h.handler.messages[0].mentioned
    assert len(h.api.bot_messages("C1")) == 1


async def test_own_bot_and_edited_messages_are_ignored(make_harness: MakeHarness) -> None:
    h = await make_harness()
    root = h.api.seed("C1", MENTION, user="UALICE")
    await h.post_json(message_event(h.api.next_ts(), "mine", user=BOT_USER, thread_ts=root, bot_id=BOT_ID))
    await h.post_json(message_event(h.api.next_ts(), "other bot", user="UX", thread_ts=root, bot_id="B999"))
    await h.post_json(message_event(h.api.next_ts(), "", thread_ts=root, subtype="message_changed",
                                    message={"text": "edited"}))
    await h.post_json(message_event(h.api.next_ts(), "", thread_ts=root, subtype="message_deleted"))
    await h.post_json(message_event(h.api.next_ts(), "just chatting, no thread, no mention"))
    await h.settle()
    assert h.handler.messages == []
    assert h.api.bot_messages() == []


async def test_follow_up_without_mention_answered_only_in_engaged_thread(make_harness: MakeHarness) -> None:
    h = await make_harness()
    root = h.api.seed("C1", MENTION, user="UALICE")
    await h.post_json(mention_event(root))
    await h.settle()
    follow = h.api.seed("C1", "and for the TV?", user="UALICE", thread_ts=root)
    await h.post_json(message_event(follow, "and for the TV?", thread_ts=root))
    other_root = h.api.seed("C1", "unrelated thread", user="UBOB")
    stray = h.api.seed("C1", "a reply there", user="UBOB", thread_ts=other_root)
    await h.post_json(message_event(stray, "a reply there", user="UBOB", thread_ts=other_root))
    await h.settle()
    assert [m.mentioned for m in h.handler.messages] == [True, False, False]
    assert len(h.api.bot_messages("C1", thread_ts=root)) == 2
    assert h.api.bot_messages("C1", thread_ts=other_root) == []  # silent, no placeholder left behind


async def test_slow_follow_up_not_for_the_bot_leaves_no_placeholder(make_harness: MakeHarness) -> None:
    h = await make_harness(progress_delay_s=0.05)
    root = h.api.seed("C1", "a thread the bot is not in", user="UBOB")
    h.handler.engaged.add(f"slack:T0001:C1:{root}")
    h.handler.delay_s = 0.3
    h.handler.script = lambda inbound: None  # the service decides late that it stays silent
    stray = h.api.seed("C1", "hmm", user="UBOB", thread_ts=root)
    await h.post_json(message_event(stray, "hmm", user="UBOB", thread_ts=root))
    await h.settle()
    assert len(h.api.calls_to("chat.postMessage")) == 1  # the delayed placeholder appeared...
    assert len(h.api.calls_to("chat.delete")) == 1  # ...and was removed
    assert h.api.bot_messages("C1") == []


async def test_mention_in_existing_thread_reads_the_thread_once(make_harness: MakeHarness) -> None:
    h = await make_harness()
    root = h.api.seed("C1", "the remote blinks red", user="UBOB")
    h.api.seed("C1", "same here since the update", user="UALICE", thread_ts=root)
    h.api.seed("C1", "I asked the vendor", user="UBOB", thread_ts=root)
    ts = h.api.seed("C1", "<@UBOT0001> what does red blinking mean?", user="UALICE", thread_ts=root)
    h.api.seed("C1", "a later message", user="UBOB", thread_ts=root)
    await h.post_json(mention_event(ts, "<@UBOT0001> what does red blinking mean?", thread_ts=root))
    await h.settle()
    [history] = h.handler.fetched
    assert [(m.author, m.text) for m in history] == [
        ("Bob", "the remote blinks red"), ("Alice", "same here since the update"), ("Bob", "I asked the vendor")]
    assert len(h.api.calls_to("conversations.replies")) >= 2  # page size 2 in the fake: pagination was followed
    [reply] = h.api.bot_messages("C1", thread_ts=root)
    assert reply.blocks


async def test_refused_channel_gets_an_ephemeral_explanation(make_harness: MakeHarness) -> None:
    h = await make_harness(channel_policies=({"platform": "slack", "channel_id": "CNO", "allowed": False},))
    ts = h.api.seed("CNO", MENTION, user="UALICE")
    await h.post_json(mention_event(ts, channel="CNO"))
    await h.settle()
    [notice] = h.api.ephemerals()
    assert notice.ephemeral_to == "UALICE" and "Not in this channel" in notice.text
    assert h.api.bot_messages("CNO") == []
    assert h.api.calls_to("chat.postMessage") == []  # no placeholder in a refused channel


async def test_rate_limited_post_is_retried_and_delivered_once(make_harness: MakeHarness) -> None:
    h = await make_harness()
    h.api.fail_next("chat.postMessage", status=429, error="ratelimited", retry_after=0)
    ts = h.api.seed("C1", MENTION, user="UALICE")
    await h.post_json(mention_event(ts))
    await h.settle()
    assert len(h.api.calls_to("chat.postMessage", ok_only=False)) == 2
    assert len(h.api.bot_messages("C1")) == 1


async def test_server_error_on_update_is_retried(make_harness: MakeHarness) -> None:
    h = await make_harness()
    h.api.fail_next("chat.update", status=503, error="service_unavailable", retry_after=None)
    ts = h.api.seed("C1", MENTION, user="UALICE")
    await h.post_json(mention_event(ts))
    await h.settle()
    [reply] = h.api.bot_messages("C1")
    assert "pair" in reply.text and len(h.api.calls_to("chat.update", ok_only=False)) == 2


async def test_handler_failure_replaces_placeholder_with_apology(make_harness: MakeHarness) -> None:
    h = await make_harness()

    def boom(inbound: object) -> None:
        raise RuntimeError("pipeline exploded")

    h.handler.script = boom  # type: ignore[assignment]
    h.delivery.inbox.max_attempts = 1  # give up at once (retries with backoff are the inbox's own tests)
    ts = h.api.seed("C1", MENTION, user="UALICE")
    await h.post_json(mention_event(ts))
    await h.settle()
    [reply] = h.api.bot_messages("C1")  # the placeholder went; the apology stayed
    assert "went wrong" in reply.text
    assert any(b["type"] == "actions" for b in reply.blocks)  # with a Try-again button


async def test_twenty_thousand_character_answer_is_split_within_limits(make_harness: MakeHarness) -> None:
    h = await make_harness()
    from tests.adapters.slack.conftest import answer

    paragraph = ("The remote pairs over Bluetooth & needs < 2 m distance > 0 cm. " * 40).strip()
    long_text = "\n\n".join(f"{i}. {paragraph}" for i in range(8))
    assert len(long_text) >= 20_000
    h.handler.script = lambda inbound: answer(inbound.thread_key, long_text)
    ts = h.api.seed("C1", MENTION, user="UALICE")
    await h.post_json(mention_event(ts))
    await h.settle()
    replies = h.api.bot_messages("C1", thread_ts=ts)
    assert len(replies) >= 2
    for message in replies:
        sections = [b["text"]["text"] for b in message.blocks if b["type"] == "section"]
        assert len(message.blocks) <= 50
        assert all(len(s) <= 3000 for s in sections)
        assert sum(len(s) for s in sections) <= 12_000
    shown = " ".join(b["text"]["text"] for m in replies for b in m.blocks if b["type"] == "section")
    assert shown.count("&amp;") == long_text.count("&") and "<" not in shown.replace("<https", "")
    assert [b["type"] for b in replies[-1].blocks][-2:] == ["carousel", "context_actions"]  # sources, buttons last


async def test_assistant_thread_shows_status_and_answers_in_the_thread(make_harness: MakeHarness) -> None:
    h = await make_harness()
    started = {"type": "assistant_thread_started", "event_ts": "1.5",
               "assistant_thread": {"user_id": "UBOB", "channel_id": "D1", "thread_ts": "1.000001"}}  # fmt: skip
    from tests.adapters.slack.conftest import event_body

    await h.post_json(event_body(started))
    ts = h.api.seed("D1", "how do I pair the remote?", user="UBOB", thread_ts="1.000001")
    await h.post_json(message_event(ts, "how do I pair the remote?", user="UBOB", channel="D1",
                                    thread_ts="1.000001", channel_type="im"))
    await h.settle()
    [prompts] = h.api.calls_to("assistant.threads.setSuggestedPrompts")
    assert prompts.args["thread_ts"] == "1.000001" and len(prompts.args["prompts"]) >= 1
    assert "Wobei" in prompts.args["prompts"][0]["title"]  # Bob's Slack locale is de-DE
    [status] = h.api.calls_to("assistant.threads.setStatus")
    assert status.args["status"] == "denkt nach..." and status.args["channel_id"] == "D1"
    [reply] = h.api.bot_messages("D1", thread_ts="1.000001")
    assert "pair" in reply.text
    assert h.api.calls_to("chat.update") == []  # no placeholder in assistant threads: the status is the sign
    assert h.handler.messages[0].mentioned  # a DM is always addressed to the bot


async def test_events_are_acknowledged_once_stored_without_any_web_api_call(make_harness: MakeHarness) -> None:
    h = await make_harness(handler_delay_s=2.0)
    ts = h.api.seed("C1", MENTION, user="UALICE")
    response = await h.post_json(mention_event(ts))
    assert response.status == 200 and await h.delivery.inbox.counts() == {"pending": 1}
    assert h.api.calls == [] and h.handler.messages == []  # the ack path touched neither Slack nor the handler
    await h.settle()
    assert "pair" in h.api.bot_messages("C1")[0].text
