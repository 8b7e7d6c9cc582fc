"""Payload parsing (our fixtures and, when present, bolt-python's real test payloads) and the Web API contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.events import delivery_key, ignorable, team_of
from adapters.slack.fake_web_api import Call, FakeSlackAPI
from adapters.slack.inbound import action_inbound, message_inbound
from adapters.slack.sink import SlackReplySink, is_assistant, ref_extra, slack_thread_ref
from pipeline.messages import InboundKind, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind
from tests.adapters.slack.conftest import USERS, mention_event, message_event
from tests.adapters.slack.contract import SPEC_PARTS, assert_calls_valid, load_spec, problems_with
from tests.conftest import shared_path


@pytest.mark.unit
def test_dm_thread_follow_up_and_chatter() -> None:
    dm = message_event("1.000001", "hi there", channel="D1", thread_ts="1.000000", channel_type="im")
    inbound, ref = message_inbound(dm, "UBOT0001") or pytest.fail("DM ignored")
    assert inbound.mentioned and is_assistant(ref) and ref.thread_id == "1.000000"
    follow = message_event("2.000002", "and then?", thread_ts="2.000000")
    inbound, ref = message_inbound(follow, "UBOT0001") or pytest.fail("follow-up ignored")
    assert not inbound.mentioned and inbound.thread_id == "2.000000" and not is_assistant(ref)
    assert message_inbound(message_event("3.000003", "lunch?"), "UBOT0001") is None
    mention = mention_event("4.000004", "<@UBOT0001|docbot>: reset <@UALICE>'s remote?")
    inbound, ref = message_inbound(mention, "UBOT0001") or pytest.fail("mention ignored")
    assert inbound.text == "reset <@UALICE>'s remote?" and inbound.thread_id is None and ref.thread_id == "4.000004"
    assert inbound.dedup_key == "slack:T0001:C1:4.000004"


@pytest.mark.unit
def test_a_thread_message_without_text_is_not_stored_but_a_bare_mention_is() -> None:
    # a file shared in a thread with no words would otherwise reach the service as an empty follow-up, which the
    # service answers with "type a question after the mention"
    for text in ("", "   "):
        shared = message_event("7.000007", text, thread_ts="7.000000", subtype="file_share")
        assert message_inbound(shared, "UBOT0001") is None, repr(text)
    inbound, _ = message_inbound(mention_event("8.000008", "<@UBOT0001>"), "UBOT0001") or pytest.fail("ignored")
    assert inbound.mentioned and inbound.text == ""


@pytest.mark.unit
def test_action_inbound_takes_the_thread_of_the_pressed_message() -> None:
    body = {"type": "block_actions", "team": {"id": "T9"}, "user": {"id": "U1", "username": "al"},
            "container": {"message_ts": "5.5", "channel_id": "C5", "thread_ts": "5.0"},
            "message": {"ts": "5.5", "thread_ts": "5.0"},
            "actions": [{"action_id": "docbot:search:0", "value": "opaque-1", "action_ts": "6.0",
                         "text": {"type": "plain_text", "text": "Remote"}}]}  # fmt: skip
    inbound, ref = action_inbound(body)
    assert (inbound.kind, inbound.action_id, inbound.thread_key) == (InboundKind.ACTION, "opaque-1", "slack:T9:C5:5.0")
    assert inbound.dedup_key == "slack:T9:C5:5.5:action:opaque-1:U1:6.000000" and ref_extra(ref, "asker") == "U1"
    assert delivery_key(body) == "act:T9:C5:5.5:6.0"


@pytest.mark.unit
def test_delivery_key_pairs_mention_and_message_and_ignores_edits() -> None:
    assert delivery_key(mention_event("7.1")) == delivery_key(message_event("7.1", "<@UBOT0001> x"))
    edited = message_event("7.2", "", subtype="message_changed", message={"text": "x"})
    assert ignorable(edited, "UBOT0001", "BBOT0001")
    assert ignorable(message_event("7.3", "mine", user="UBOT0001"), "UBOT0001", "BBOT0001")
    assert not ignorable(message_event("7.4", "a person"), "UBOT0001", "BBOT0001")


def _payload_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.json") if p.is_file())


@pytest.mark.unit
def test_bolt_python_test_payloads_parse() -> None:
    root = shared_path("slack", "bolt-python-test-payloads")
    files = _payload_files(root)
    assert files, f"no payloads under {root}"
    for path in files:
        body: Any = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(body, dict):
            continue
        team_of(body)
        delivery_key(body)
        ignorable(body, "UBOT0001", "BBOT0001")
        message_inbound(body, "UBOT0001")
        if body.get("type") == "block_actions":
            action_inbound(body)


@pytest.mark.unit
def test_contract_check_catches_bad_calls() -> None:
    spec = load_spec(shared_path(*SPEC_PARTS))
    assert problems_with(Call("chat.postMessage", {"channel": "C1", "text": "x"}, "xoxb", 200), spec) == []
    assert problems_with(Call("chat.postMessage", {"text": "x"}, "xoxb", 200), spec)
    assert problems_with(Call("chat.update", {"channel": "C1", "text": "x"}, "xoxb", 200), spec)
    assert problems_with(Call("chat.postMessag", {"channel": "C1", "text": "x"}, "xoxb", 200), spec)


@pytest.mark.integration
async def test_every_sink_call_matches_the_openapi_spec() -> None:
    spec = load_spec(shared_path(*SPEC_PARTS))
    api = FakeSlackAPI(users=USERS)
    await api.start()
    try:
        from adapters.slack.client import web_client

        client = web_client("xoxb-test", api.base_url)

        async def client_for(team: str) -> Any:
            return client

        sink = SlackReplySink(client_for, support_mention="<!subteam^S1>")
        ref = await sink.show_progress(slack_thread_ref("T0001", "C1", api.seed("C1", "q", user="UALICE"), "UALICE"),
                                       "en")
        reply = Reply(kind=ReplyKind.ANSWER, text="a", language="en", conversation_id="c",
                      actions=(ReplyAction("x", "Remote", ActionKind.SEARCH),))
        ts = await sink.post(ref, reply)
        # an accepted choice is shown on the message read back from Slack (conversations.replies, then chat.update)
        assert await sink.show_choice(ref, ts, "x", "Remote", "en")
        await sink.notify(ref, "only you")
        await sink.clear_progress(slack_thread_ref("T0001", "D1", "1.0", "UALICE", assistant=True))
    finally:
        await api.close()
    assert {c.method for c in api.calls} >= {"chat.postMessage", "chat.update", "chat.postEphemeral",
                                              "conversations.replies", "assistant.threads.setStatus"}
    assert_calls_valid(api.calls, spec)
