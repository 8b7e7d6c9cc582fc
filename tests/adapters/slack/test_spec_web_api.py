"""Every Web API call the Slack adapter makes, checked against Slack's OpenAPI spec (../shared/data/slack/api-specs).

The calls are the ones the real adapter makes: scenarios go through the bolt app over signed HTTP (mention, follow-up
in an existing thread, /ask, clarification buttons pressed twice, an assistant DM thread, a mention that needs no
answer) and through the sink's answer stream, against the recording fake Web API. Every recorded call is then
checked by `contract.py` (method in the spec or in its named NEWER_THAN_SPEC list, every argument a parameter of the
method, every required parameter sent). The set of methods the adapter's source calls is read from the code, so a
new call that no scenario exercises fails here instead of going unchecked.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import time
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

import adapters.slack
from adapters.slack.editor import TRIGGER
from adapters.slack.fake_web_api import Call, Message
from adapters.slack.groups import GroupDirectory
from adapters.slack.sink import SlackReplySink, slack_thread_ref
from tests.adapters.slack.conftest import (
    TEAM,
    Harness,
    MakeHarness,
    SteppingHandler,
    action_body,
    event_body,
    mention_event,
    pressables,
)
from tests.adapters.slack.contract import (
    CLIENT_WIDE_ARGS,
    NEWER_THAN_SPEC,
    SPEC_PARTS,
    assert_calls_valid,
    load_spec,
    problems_with,
    spec_parameters,
)
from tests.conftest import shared_path

pytestmark = pytest.mark.integration

# May be called by bolt / slack_sdk on the adapter's behalf, not by adapter code: recorded and checked like the rest.
# Single-workspace authorization no longer calls auth.test (no Web API call on the ack path), so a run may make none.
LIBRARY_CALLS = {"auth.test"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return load_spec(shared_path(*SPEC_PARTS))


def adapter_methods() -> set[str]:
    """The Web API methods the adapter's source calls (`client.chat_postMessage(...)` → `chat.postMessage`)."""
    sdk_names = {name for name in dir(AsyncWebClient) if not name.startswith("_") and "_" in name}
    found: set[str] = set()
    for path in Path(adapters.slack.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = node.func if isinstance(node, ast.Call) else None
            if isinstance(called, ast.Attribute) and called.attr in sdk_names and called.attr != "api_call":
                found.add(called.attr.replace("_", "."))
    return found


def _buttons(message: Message) -> list[tuple[str, dict[str, Any]]]:
    return [(i, b) for i, b in pressables(message.blocks) if "value" in b]


def _assistant_started(channel: str, thread_ts: str) -> dict[str, Any]:
    return event_body({
        "type": "assistant_thread_started", "event_ts": f"{time.time():.6f}",
        "assistant_thread": {"user_id": "UALICE", "channel_id": channel, "thread_ts": thread_ts,
                             "context": {"channel_id": "C1", "team_id": TEAM, "enterprise_id": None}},
    })  # fmt: skip


def _dm(ts: str, text: str, thread_ts: str) -> dict[str, Any]:
    return event_body({"type": "message", "user": "UALICE", "text": text, "ts": ts, "channel": "D1",
                       "event_ts": ts, "thread_ts": thread_ts, "channel_type": "im"})  # fmt: skip


async def _drive_every_scenario(h: Harness) -> None:
    api = h.api
    # a mention in a channel: progress placeholder, then the answer with buttons in its place
    root = api.seed("C1", "<@UBOT0001> how do I pair the remote?", user="UALICE")
    assert (await h.post_json(mention_event(root))).status == 200
    # a mention inside an existing thread: the earlier messages are read (conversations.replies)
    old = api.seed("C2", "the remote blinks red", user="UBOB")
    api.seed("C2", "same here", user="UALICE", thread_ts=old)
    later = api.seed("C2", "<@UBOT0001> what does red mean?", user="UALICE", thread_ts=old)
    await h.post_json(mention_event(later, "<@UBOT0001> what does red mean?", channel="C2", thread_ts=old))
    # /ask: the question is posted in the channel, the answer in its thread
    status, _ = await h.post_form({
        "token": "legacy", "team_id": TEAM, "channel_id": "C3", "user_id": "UALICE", "user_name": "alice",
        "command": "/ask", "text": "how do I reset the remote?", "trigger_id": f"trig-{time.time_ns()}",
        "response_url": "https://hooks.slack.test/commands/1", "api_app_id": "A0001"})  # fmt: skip
    assert status == 200
    # an assistant DM thread: suggested prompts when it opens, the assistant status while answering
    dm_root = api.next_ts()
    await h.post_json(_assistant_started("D1", dm_root))
    await h.post_json(_dm(api.next_ts(), "how do I pair?", dm_root))
    # the delivery worker, not the ack path, makes the Web API calls: let it answer everything stored so far
    # before the script below changes what the (fake) service replies
    await h.settle()
    # a mention the service needs not answer: the placeholder is removed again (chat.delete)
    h.handler.script = lambda inbound: None
    quiet = api.seed("C4", "<@UBOT0001> never mind", user="UALICE")
    await h.post_json(mention_event(quiet, "<@UBOT0001> never mind", channel="C4"))
    await h.settle()
    h.handler.script = None
    # buttons: pressed once (the choice is shown in the message), pressed again (refused, privately)
    [answered] = api.bot_messages("C1", thread_ts=root)
    block_id, button = _buttons(answered)[0]
    private_before = len(api.ephemerals())
    for _ in range(2):
        assert await h.press(action_body(answered.as_api(), "C1", button, block_id)) == 200
        await h.settle()
    # the handler checked the stored action before the message was touched: accepted once, refused the second time
    assert h.handler.resumes == [button["text"]["text"]] and len(h.handler.actions_pressed) == 2
    [shown] = [m for m in api.messages["C1"] if m.ts == answered.ts]
    assert _buttons(shown) == [] and [m.ephemeral_to for m in api.ephemerals()[private_before:]] == ["UALICE"]
    # the streamed answer (chat.startStream / appendStream / stopStream), then one stream discarded
    sink = SlackReplySink(h.adapter.client_for, stream_interval_s=0.0)
    ref = slack_thread_ref(TEAM, "C1", root, "UALICE")
    stream = sink.open_stream(ref)
    for text in ("Hold", "Hold the pair", "Hold the pair button."):
        await stream.update(text)
    streamed = await stream.finish()
    assert streamed is not None
    await sink.post(dataclasses.replace(ref, placeholder_id=streamed), h.handler.clarification(h.handler.messages[0]))
    dropped = sink.open_stream(ref)
    await dropped.update("Half an answer")
    await dropped.discard()


async def _drive_the_agent_experience(h: Harness) -> None:
    """The agent messaging experience: the Messages tab opened (prompts, the DM's history, a greeting), a question
    whose work streams as a task timeline with an agent session, then one where streaming is refused (a status
    message), and the asker's stop of a running question."""
    api = h.api
    await h.post_json(event_body({"type": "app_home_opened", "user": "UALICE", "channel": "DALICE", "tab": "messages",
                                  "event_ts": "1.5"}))  # fmt: skip
    for streaming in (True, False):
        api.streaming_allowed = streaming
        root = api.seed("C5", "<@UBOT0001> how do I pair?", user="UALICE")
        await h.post_json(mention_event(root, "<@UBOT0001> how do I pair?", channel="C5"))
        await h.settle()
    api.streaming_allowed = True
    handler = h.handler
    assert isinstance(handler, SteppingHandler)
    handler.gate = asyncio.Event()
    root = api.seed("C6", "<@UBOT0001> how do I reset?", user="UALICE")
    await h.post_json(mention_event(root, "<@UBOT0001> how do I reset?", channel="C6"))
    settling = asyncio.create_task(h.settle())
    await asyncio.wait_for(handler.reached.wait(), 10)
    await h.post_json(event_body({"type": "agent_session_stopped", "channel": "C6", "thread_ts": root,
                                  "streaming_message_ts": api.press_stop("C6", root), "user": "UALICE",
                                  "event_ts": "2.5"}))  # fmt: skip
    await asyncio.wait_for(settling, 10)


async def test_every_web_api_call_of_the_adapter_matches_the_spec(
    make_harness: MakeHarness, spec: dict[str, Any]
) -> None:
    h = await make_harness(progress_delay_s=0.05)
    await _drive_every_scenario(h)
    await _drive_the_agent_experience(await make_harness(steps=True))
    # the review editor a maintainer's Edit press opens (the worker calls it with the press's trigger_id)
    pressed = dataclasses.replace(slack_thread_ref(TEAM, "C1", "1.1", "UALICE"), extra=((TRIGGER, "t-edit-1"),))
    assert await h.adapter.sink.open_editor(pressed, "1.1", "act-1", "Edit the team answer", "The answer.")
    # the configured user groups an expert's reply or a maintainer's press is looked up in
    h.api.usergroups["SLEADS"] = ["UALICE"]
    assert await GroupDirectory(h.adapter.client_for, frozenset({"SLEADS"})).groups_of(TEAM, "UALICE") == ("SLEADS",)
    # the channel's name a team answer's citation shows
    h.api.channel_names["C1"] = "help"
    assert await h.adapter.sink.channel_name(slack_thread_ref(TEAM, "C1", "1.1", "UALICE")) == "help"
    # the thread's permalink it links to
    linked = h.api.seed("C1", "how do I pair?", user="UALICE")
    assert await h.adapter.sink.permalink(slack_thread_ref(TEAM, "C1", linked, "UALICE"), linked)
    called = {c.method for c in h.api.calls}
    in_code = adapter_methods()
    assert in_code >= {
        "chat.postMessage",
        "chat.update",
        "chat.postEphemeral",
        "chat.delete",
        "users.info",
        "conversations.replies",
        "assistant.threads.setStatus",
    }, in_code  # the scan works
    assert in_code <= called, f"adapter methods no scenario exercised: {sorted(in_code - called)}"
    assert called - in_code <= LIBRARY_CALLS, f"calls from neither the adapter nor bolt: {called - in_code}"
    assert all(c.status == 200 for c in h.api.calls), [c for c in h.api.calls if c.status != 200]
    assert_calls_valid(h.api.calls, spec)
    print(f"\nchecked {len(h.api.calls)} calls of {len(called)} methods against the spec: {sorted(called)}")


def test_newer_than_spec_lists_only_methods_the_spec_lacks_with_a_source(spec: dict[str, Any]) -> None:
    for method, newer in NEWER_THAN_SPEC.items():
        assert spec_parameters(spec, method) is None, f"{method} is in the spec: check it there, not by the list"
        assert newer.source.startswith("https://") and newer.reason
        assert newer.required <= newer.required | newer.optional
    for name, reason in CLIENT_WIDE_ARGS.items():
        assert "https://" in reason, name


def test_the_check_rejects_what_slack_would(spec: dict[str, Any]) -> None:
    def call(method: str, token: str = "xoxb-1", **args: Any) -> Call:
        return Call(method, args, token, 200)

    assert problems_with(call("chat.postMessage", channel="C1", text="hi", thread_ts="1.0", unfurl_links="0"),
                         spec) == []  # fmt: skip
    assert problems_with(call("users.info", user="U1", include_locale="true", team_id="T1"), spec) == []
    assert problems_with(call("assistant.threads.setStatus", channel_id="D1", thread_ts="1.0", status=""), spec) == []
    [wrong_name] = problems_with(call("chat.postMessage", channel="C1", text="hi", thread="1.0"), spec)
    assert "'thread'" in wrong_name
    assert any("'ts'" in p for p in problems_with(call("chat.update", channel="C1", text="x"), spec))
    assert any("'channel'" in p for p in problems_with(call("chat.postEphemeral", user="U1", text="x"), spec))
    assert any("one of" in p for p in problems_with(call("chat.postMessage", channel="C1"), spec))
    assert any("not in the OpenAPI spec" in p for p in problems_with(call("chat.postMessag", channel="C1"), spec))
    assert any("'status'" in p for p in problems_with(call("assistant.threads.setStatus", channel_id="D1",
                                                           thread_ts="1.0"), spec))  # fmt: skip
    assert any("'recipient'" in p for p in problems_with(call("chat.startStream", channel="C1", recipient="U1"),
                                                         spec))  # fmt: skip
    assert any("token" in p for p in problems_with(call("chat.delete", token="", channel="C1", ts="1.0"), spec))
