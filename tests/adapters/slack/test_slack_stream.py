"""Streaming an answer into a Slack thread against the fake Web API: chat.startStream / appendStream / stopStream
(throttled, checked against the contract table when the fixture closes), the placeholder replaced by the stream,
and the final reply updating the same message."""

from __future__ import annotations

import dataclasses

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.client import web_client
from adapters.slack.fake_web_api import TEAM, FakeSlackAPI
from adapters.slack.sink import SlackReplySink, slack_thread_ref
from adapters.slack.stream import SlackAnswerStream, stream_safe
from pipeline.messages import ThreadRef
from tests.adapters.slack.conftest import answer

pytestmark = pytest.mark.integration

ANSWER = "Hold the pair button for three seconds [1] until the light blinks ."
STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def sink_for(api: FakeSlackAPI) -> SlackReplySink:
    client = web_client("xoxb-test", api.base_url)

    async def client_for(team: str) -> AsyncWebClient:
        return client

    return SlackReplySink(client_for)


async def thread_with_placeholder(api: FakeSlackAPI, sink: SlackReplySink) -> ThreadRef:
    root = api.seed("C1", "how do I pair the remote?", user="UALICE")
    return await sink.show_progress(slack_thread_ref(TEAM, "C1", root, "UALICE"), "en")


def stream_for(api: FakeSlackAPI, ref: ThreadRef, clock: Clock) -> SlackAnswerStream:
    sink = sink_for(api)
    return SlackAnswerStream(sink._client_for, ref, asker_id="UALICE", min_interval_s=1.0, clock=clock)


def stream_calls(api: FakeSlackAPI) -> list[str]:
    return [c.method for c in api.calls if c.method in STREAM_METHODS]


async def test_appends_are_throttled_and_the_final_reply_replaces_the_stream(slack_api: FakeSlackAPI) -> None:
    sink, clock = sink_for(slack_api), Clock()
    ref = await thread_with_placeholder(slack_api, sink)
    stream = stream_for(slack_api, ref, clock)
    words = ANSWER.split()
    for index in range(len(words)):
        await stream.update(" ".join(words[: index + 1]))
        clock.now += 0.3  # a word every 0.3 s: appends at most every 1 s
    streamed_ts = await stream.finish()

    assert stream_calls(slack_api) == ["chat.startStream", "chat.appendStream", "chat.appendStream",
                                       "chat.appendStream", "chat.stopStream"]  # fmt: skip
    start = slack_api.calls_to("chat.startStream")[0].args
    assert start["thread_ts"] == ref.thread_id and start["recipient_user_id"] == "UALICE"
    assert start["recipient_team_id"] == TEAM and start["markdown_text"] == "Hold"
    assert slack_api.deleted == [("C1", ref.placeholder_id)]  # the stream took the placeholder's place
    streamed = slack_api.bot_messages("C1", ref.thread_id)
    assert [m.ts for m in streamed] == [streamed_ts] and streamed[0].text == " ".join(words)
    assert not streamed[0].streaming

    final = answer("conv-1")
    assert streamed_ts is not None
    posted_ts = await sink.post(dataclasses.replace(ref, placeholder_id=streamed_ts), final)
    assert posted_ts == streamed_ts
    [message] = slack_api.bot_messages("C1", ref.thread_id)
    assert "pair" in message.text and any(b["type"] == "context_actions" for b in message.blocks)
    assert slack_api.calls_to("chat.update")[-1].args["ts"] == streamed_ts


async def test_a_new_draft_stops_appending(slack_api: FakeSlackAPI) -> None:
    sink, clock = sink_for(slack_api), Clock()
    ref = await thread_with_placeholder(slack_api, sink)
    stream = stream_for(slack_api, ref, clock)
    await stream.update("It pairs by")
    clock.now += 2
    await stream.update("Press OK for")  # a regenerated draft: appending cannot rewrite what Slack shows
    clock.now += 2
    await stream.update("Press OK for five seconds")
    assert await stream.finish() is not None
    assert stream_calls(slack_api) == ["chat.startStream", "chat.stopStream"]
    assert slack_api.calls_to("chat.stopStream")[0].args.get("markdown_text") is None


async def test_slack_refusing_the_stream_leaves_the_placeholder_for_the_reply(slack_api: FakeSlackAPI) -> None:
    sink, clock = sink_for(slack_api), Clock()
    ref = await thread_with_placeholder(slack_api, sink)
    stream = stream_for(slack_api, ref, clock)
    slack_api.fail_next("chat.startStream", status=200, error="channel_type_not_supported", retry_after=None)
    await stream.update("Hold the pair button")
    clock.now += 2
    await stream.update("Hold the pair button for three seconds")  # no second try
    assert await stream.finish() is None
    assert len(slack_api.calls_to("chat.startStream", ok_only=False)) == 1 and not slack_api.deleted
    await sink.post(ref, answer("conv-1"))
    [message] = slack_api.bot_messages("C1", ref.thread_id)
    assert message.ts == ref.placeholder_id and message.blocks


async def test_discard_removes_the_streamed_message(slack_api: FakeSlackAPI) -> None:
    sink, clock = sink_for(slack_api), Clock()
    ref = await thread_with_placeholder(slack_api, sink)
    stream = stream_for(slack_api, ref, clock)
    await stream.update("Hold the pair")
    await stream.discard()
    assert stream_calls(slack_api) == ["chat.startStream", "chat.stopStream"]
    assert slack_api.bot_messages("C1", ref.thread_id) == []


@pytest.mark.unit
def test_streamed_text_cannot_mention_or_broadcast() -> None:
    unsafe = "Ask <!channel> or <@U123> or @here"
    safe = stream_safe(unsafe)
    assert "<" not in safe and ">" not in safe and "@here" not in safe and "@channel" not in safe
    assert stream_safe(unsafe[:9]) == safe[: len(stream_safe(unsafe[:9]))]  # a prefix stays a prefix
