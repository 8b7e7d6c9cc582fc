"""Socket Mode against a fake Slack websocket server (websockets library) and the fake Web API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from adapters.slack.app import SlackAdapter
from adapters.slack.fake_web_api import FakeSlackAPI
from bot.adapter_options import slack_options
from tests.adapters.slack.conftest import FakeHandler, make_settings, mention_event, wire

pytestmark = pytest.mark.integration


class FakeSocketModeServer:
    """Sends `hello`, then each queued envelope; records the acknowledgements (envelope ids) it receives."""

    def __init__(self, envelopes: list[dict[str, Any]]) -> None:
        self.envelopes = envelopes
        self.acks: list[str] = []
        self.connections = 0
        self.port = 0
        self.later: list[dict[str, Any]] = []  # sent once `release` is set
        self.release = asyncio.Event()

    async def handle(self, connection: ServerConnection) -> None:
        self.connections += 1
        await connection.send(json.dumps({"type": "hello", "num_connections": 1,
                                          "connection_info": {"app_id": "A0001"}}))
        for envelope in self.envelopes:
            await connection.send(json.dumps(envelope))

        async def send_later() -> None:
            await self.release.wait()
            for envelope in self.later:
                await connection.send(json.dumps(envelope))

        later = asyncio.create_task(send_later())
        try:
            async for raw in connection:
                self.acks.append(json.loads(raw)["envelope_id"])
        finally:
            later.cancel()


@pytest.fixture
async def socket_server() -> AsyncIterator[FakeSocketModeServer]:
    fake = FakeSocketModeServer([])
    async with serve(fake.handle, "127.0.0.1", 0) as server:
        fake.port = next(iter(server.sockets)).getsockname()[1]
        yield fake


def envelope(envelope_id: str, payload: dict[str, Any], attempt: int) -> dict[str, Any]:
    return {"envelope_id": envelope_id, "type": "events_api", "accepts_response_payload": False,
            "retry_attempt": attempt, "retry_reason": "timeout" if attempt else "", "payload": payload}


async def test_redelivered_envelope_gets_one_answer(slack_api: FakeSlackAPI, socket_server: FakeSocketModeServer,
                                                    tmp_path: Path) -> None:
    slack_api.socket_url = f"ws://127.0.0.1:{socket_server.port}/link/?ticket=t1"
    ts = slack_api.seed("C1", "<@UBOT0001> how do I pair the remote?", user="UALICE")
    payload = mention_event(ts)
    socket_server.envelopes = [envelope("env-1", payload, 0), envelope("env-2", payload, 1)]
    settings = make_settings(slack_api, slack_signing_secret=None)
    handler = FakeHandler(settings)
    adapter = SlackAdapter(slack_options(settings))
    wired = await wire(adapter, handler, tmp_path)
    try:
        await adapter.start_socket_mode()
        async with asyncio.timeout(30):
            while sorted(socket_server.acks) != ["env-1", "env-2"]:
                await asyncio.sleep(0.02)
        await wired.settle(adapter)
    finally:
        await adapter.close()
        await wired.close()
    [opened] = slack_api.calls_to("apps.connections.open")
    assert opened.token == "xapp-test-token"
    assert len(handler.messages) == 1
    assert len(slack_api.bot_messages("C1", thread_ts=ts)) == 1


async def test_socket_mode_needs_an_app_token(slack_api: FakeSlackAPI) -> None:
    settings = make_settings(slack_api, slack_app_token=None)
    adapter = SlackAdapter(slack_options(settings))
    with pytest.raises(ValueError, match="SLACK_APP_TOKEN"):
        await adapter.start_socket_mode()
    await adapter.close()


async def test_an_envelope_not_stored_is_not_acknowledged_and_its_redelivery_is_answered(
    slack_api: FakeSlackAPI, socket_server: FakeSocketModeServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 12 item 2 in Socket Mode: with the database gone the envelope gets no ack, so Slack redelivers it."""
    from tests.adapters.slack.test_store_then_ack import BrokenDatabase

    slack_api.socket_url = f"ws://127.0.0.1:{socket_server.port}/link/?ticket=t1"
    ts = slack_api.seed("C1", "<@UBOT0001> how do I pair the remote?", user="UALICE")
    payload = mention_event(ts)
    socket_server.envelopes = [envelope("env-1", payload, 0)]
    socket_server.later = [envelope("env-2", payload, 1)]
    settings = make_settings(slack_api, slack_signing_secret=None)
    handler = FakeHandler(settings)
    adapter = SlackAdapter(slack_options(settings))
    wired = await wire(adapter, handler, tmp_path)
    broken = BrokenDatabase(tmp_path / "wired.db")
    await wired.db.engine.dispose()
    import os

    os.rename(broken.path, broken.aside)
    try:
        await adapter.start_socket_mode()
        async with asyncio.timeout(30):
            while not any("not stored" in r.getMessage() for r in caplog.records):
                await asyncio.sleep(0.02)
        assert socket_server.acks == [] and slack_api.bot_messages() == []
        await wired.db.engine.dispose()
        os.remove(broken.path)
        os.rename(broken.aside, broken.path)
        socket_server.release.set()
        async with asyncio.timeout(30):
            while socket_server.acks != ["env-2"]:
                await asyncio.sleep(0.02)
        await wired.settle(adapter)
    finally:
        await adapter.close()
        await wired.close()
    assert len(slack_api.bot_messages("C1", thread_ts=ts)) == 1
