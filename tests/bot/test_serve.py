"""`docbot run` with Slack configured: the real HTTP server, bolt over signed HTTP, the inbox/outbox worker and the
scheduler, against the recording fake Slack Web API; plus the health, readiness and metrics endpoints."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest

from adapters.slack.fake_web_api import FakeSlackAPI, Message
from bot.app import App
from tests.adapters.slack.conftest import SECRET, USERS, mention_event, signed_headers

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def until(condition: Callable[[], Any], timeout: float = 60.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


async def test_run_answers_a_slack_mention_through_the_outbox_and_serves_health(
    make_app: Callable[..., Any],
) -> None:
    api = FakeSlackAPI(users=USERS)
    await api.start()
    port = free_port()
    app: App = await make_app(
        slack_bot_token="xoxb-test-token",
        slack_signing_secret=SECRET,
        slack_api_url=api.base_url,
        http_host="127.0.0.1",
        http_port=port,
    )
    stop = asyncio.Event()
    serving = asyncio.create_task(app.serve(stop))
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:

            async def up() -> bool:
                try:
                    async with http.get(f"{base}/healthz") as response:
                        return response.status == 200
                except aiohttp.ClientConnectionError:
                    return False

            async with asyncio.timeout(60):
                while not await up():
                    await asyncio.sleep(0.1)
            body = json.dumps(mention_event("1700000100.000100", "<@UBOT0001> what does error E-2041 mean?"))
            for _ in range(2):  # Slack retried: still one answer
                async with http.post(f"{base}/slack/events", data=body, headers=signed_headers(body)) as response:
                    assert response.status == 200
            def answers() -> list[Message]:
                return [m for m in api.bot_messages("C1", thread_ts="1700000100.000100") if "E-2041" in str(m.blocks)]

            await until(answers)  # the placeholder turned into the answer (no fixed sleep)
            [answer] = answers()
            assert len(api.bot_messages("C1", thread_ts="1700000100.000100")) == 1
            assert "errors.md#e-2041" in str(answer.blocks)

            async with http.get(f"{base}/readyz") as response:
                assert response.status == 200
            async with http.get(f"{base}/metrics") as response:
                metrics = await response.text()
            assert 'docbot_replies_total{kind="answer"} 1.0' in metrics
            assert "docbot_role_queue_depth" in metrics and "docbot_inbox_lag_seconds" in metrics
            assert 'docbot_outbox_rows{status="failed"} 0.0' in metrics  # counted at each sweep (issue 28)
    finally:
        stop.set()
        await asyncio.wait_for(serving, timeout=30)
        await api.close()


async def test_run_streams_the_answer_when_streaming_is_on(make_app: Callable[..., Any]) -> None:
    from bench.fakes.openai_server import ScriptedOpenAI

    api = FakeSlackAPI(users=USERS)
    await api.start()
    port = free_port()
    async with ScriptedOpenAI() as model:
        app: App = await make_app(
            slack_bot_token="xoxb-test-token",
            slack_signing_secret=SECRET,
            slack_api_url=api.base_url,
            http_host="127.0.0.1",
            http_port=port,
            openai_api_key="sk-test-not-real",
            openai_base_url=model.base_url,
            llm_streaming=True,
        )
        stop = asyncio.Event()
        serving = asyncio.create_task(app.serve(stop))
        try:
            async with aiohttp.ClientSession() as http:
                async with asyncio.timeout(60):
                    while True:
                        try:
                            async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                                if response.status == 200:
                                    break
                        except aiohttp.ClientConnectionError:
                            await asyncio.sleep(0.1)
                body = json.dumps(mention_event("1700000200.000100", "<@UBOT0001> how do I pair the remote?"))
                async with http.post(
                    f"http://127.0.0.1:{port}/slack/events", data=body, headers=signed_headers(body)
                ) as response:
                    assert response.status == 200
                await until(lambda: api.calls_to("chat.stopStream"))
                await until(lambda: api.bot_messages("C1", thread_ts="1700000200.000100"))
            assert api.calls_to("chat.startStream")
            assert len(api.bot_messages("C1", thread_ts="1700000200.000100")) == 1  # one message per answer
        finally:
            stop.set()
            await asyncio.wait_for(serving, timeout=30)
            await api.close()
