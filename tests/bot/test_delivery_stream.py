"""Streaming end to end: the real service and pipeline in LLM mode (scripted server, real SDK, `stream=true`), the
durable inbox/outbox, and the Slack sink against the fake Web API. The question's steps (a task timeline) and then the
answer stream into the thread, then the checked reply replaces it in the same message: after a clean stream, after
quality rejects the streamed draft, and after the stream breaks mid-answer."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.client import web_client
from adapters.slack.fake_web_api import FakeSlackAPI, Message
from adapters.slack.sink import SlackReplySink, slack_thread_ref
from bench.fakes.openai_server import Request, ScriptedOpenAI, Step, json_reply, plausible_model, schema_name
from bot.app import App
from bot.delivery import Delivery, DeliveryConfig
from bot.slack_demo import work_transcript
from tests.adapters.slack.contract import assert_calls_valid
from tests.bot.conftest import inbound

pytestmark = pytest.mark.integration

INTERVAL_S = 0.1
QUESTION = "How do I pair the remote?"


@pytest.fixture
async def slack_api() -> AsyncIterator[FakeSlackAPI]:
    api = FakeSlackAPI()
    await api.start()
    yield api
    await api.close()
    assert_calls_valid(api.calls)


def slow_stream(step: Step, request: Request, **changes: Any) -> Step:
    """Streamed answers arrive a word every 30 ms, so appends are throttled."""
    return dataclasses.replace(step, chunk_delay_s=0.03, **changes) if request.get("stream") else step


async def answer_streamed(
    make_app: Callable[..., Any], api: FakeSlackAPI, responder: Callable[[Request], Step]
) -> tuple[list[Message], str | None]:
    """Ask once through the delivery; the bot's messages in the thread and the streamed message's ts."""
    async with ScriptedOpenAI(responder=responder) as server:
        app: App = await make_app(openai_api_key="sk-test-not-real", openai_base_url=server.base_url,
                                  llm_streaming=True, llm_timeout_s=5.0)  # fmt: skip
        client = web_client("xoxb-test", api.base_url)

        async def client_for(team: str) -> AsyncWebClient:
            return client

        sink = SlackReplySink(client_for, stream_interval_s=INTERVAL_S)
        delivery = Delivery(app.db, app.service, {"slack": sink}, "w1", config=DeliveryConfig(stream_answers=True))
        question = inbound(QUESTION, workspace="T0001")
        ref = slack_thread_ref("T0001", "C1", question.message_id, "U1")
        assert await delivery.accept(question, ref)
        assert await delivery.process_once() == 1
        started = api.calls_to("chat.startStream")
        return api.bot_messages("C1", question.message_id), str(started[0].args.get("ts", "")) if started else None


def streamed_text(api: FakeSlackAPI) -> str:
    """The answer text the stream calls carried (as `markdown_text` or as markdown_text chunks), in order."""
    parts = []
    for call in api.calls:
        if call.method in ("chat.startStream", "chat.appendStream", "chat.stopStream"):
            parts.append(str(call.args.get("markdown_text") or ""))
            parts += [str(c.get("text") or "") for c in call.args.get("chunks") or [] if c["type"] == "markdown_text"]
    return "".join(parts)


def methods(api: FakeSlackAPI) -> list[str]:
    """The calls that change the thread, in order (users.info for the asker's name is a read)."""
    return [c.method for c in api.calls if c.method != "users.info"]


async def test_a_streamed_answer_becomes_the_final_reply_in_place(
    make_app: Callable[..., Any], slack_api: FakeSlackAPI
) -> None:
    messages, _ = await answer_streamed(
        make_app, slack_api, lambda request: slow_stream(plausible_model(request), request)
    )
    calls = methods(slack_api)
    first, last = calls.index("chat.startStream"), calls.index("chat.stopStream")
    assert "chat.postMessage" not in calls  # no placeholder message: the stream shows the work
    assert calls.count("agents.sessions.setStatus") == 1  # processing: the stop button (active comes with the stop)
    appends = slack_api.calls_to("chat.appendStream")
    assert appends and set(calls[first + 1 : last]) <= {"chat.appendStream", "agents.sessions.setStatus"}
    tasks = [c["title"] for a in appends for c in a.args["chunks"] if c["type"] == "task_update"]
    assert "Searching the docs" in tasks and "Checking the answer against the sources" in tasks  # the timeline
    spacing = [b.at - a.at for a, b in itertools.pairwise(appends)]
    assert all(gap >= INTERVAL_S * 0.9 for gap in spacing)
    streamed_ts = slack_api.calls_to("chat.stopStream")[0].args["ts"]
    assert calls[last + 1 :] == ["chat.update"] and slack_api.calls_to("chat.update")[0].args["ts"] == streamed_ts

    print("\n".join(work_transcript(slack_api.calls)))  # docs/slack.md quotes this (`pytest -s`)
    [message] = messages  # one bot message in the thread: the stream, updated into the reply
    assert message.ts == streamed_ts and not message.streaming
    assert "Here is what the documentation says" in message.text
    assert any(block.get("block_id") == "docbot_feedback" for block in message.blocks)


async def test_a_draft_quality_rejects_is_replaced_by_the_final_reply(
    make_app: Callable[..., Any], slack_api: FakeSlackAPI
) -> None:
    verdicts = iter(["regenerate"])

    def responder(request: Request) -> Step:
        if schema_name(request) == "quality_verdict":
            decision = next(verdicts, "approve")
            return json_reply({"decision": decision, "unsupported_claims": [], "notes": "say it differently"})
        if request.get("stream"):
            return slow_stream(Step(content="It pairs by magic, trust me."), request)
        return plausible_model(request)

    messages, _ = await answer_streamed(make_app, slack_api, responder)
    [message] = messages
    assert streamed_text(slack_api).startswith("It pairs by magic")
    assert "magic" not in message.text and "Here is what the documentation says" in message.text
    assert slack_api.calls_to("chat.update")[-1].args["ts"] == message.ts
    assert any(block.get("block_id") == "docbot_feedback" for block in message.blocks)


async def test_a_stream_broken_mid_answer_ends_in_the_offline_reply_in_place(
    make_app: Callable[..., Any], slack_api: FakeSlackAPI
) -> None:
    def responder(request: Request) -> Step:
        if request.get("stream"):
            return slow_stream(Step(content="Hold the pair button for three seconds [1]."), request, cut_after=3)
        return plausible_model(request)

    messages, _ = await answer_streamed(make_app, slack_api, responder)
    [message] = messages
    assert streamed_text(slack_api).startswith("Hold")
    assert "Hold the pair button for three seconds" not in message.text  # not the half-written stream
    assert slack_api.calls_to("chat.update")[-1].args["ts"] == message.ts
    assert any(block.get("block_id") == "docbot_feedback" for block in message.blocks)
