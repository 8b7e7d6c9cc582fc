"""Notices never flood a channel (issue 28, item 6): one rate-limit notice per person per window, to that person only
where Slack allows it; the terminal, one person at their own machine, is not rate-limited (it was held to 10
questions a minute, undocumented)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest

from adapters.slack.blocks import PROGRESS_BLOCK
from adapters.slack.fake_web_api import FakeSlackAPI
from bot.app import App
from pipeline.locales import texts
from pipeline.messages import ReplyKind
from tests.adapters.slack.conftest import SECRET, USERS, mention_event, signed_headers
from tests.bot.conftest import inbound

pytestmark = pytest.mark.integration

QUESTION = "what does error E-2041 mean?"


async def test_one_rate_limit_notice_per_person_per_window(make_app: Callable[..., Any]) -> None:
    app: App = await make_app(user_rate_limit="3/minute")
    replies = [await app.service.handle_message(inbound(QUESTION, user="UALICE")) for _ in range(12)]
    kinds = [(r.kind, r.reason) if r is not None else None for r in replies]
    assert kinds[:3] == [(ReplyKind.ANSWER, None)] * 3
    assert kinds[3] == (ReplyKind.NOTICE, "rate_limited") and kinds[4:] == [None] * 8  # told once, then quiet
    other = await app.service.handle_message(inbound(QUESTION, user="UBOB"))  # someone else is not held back
    assert other is not None and other.kind is ReplyKind.ANSWER


async def test_the_terminal_is_not_rate_limited(make_app: Callable[..., Any]) -> None:
    app: App = await make_app(user_rate_limit="3/minute", workspace_rate_limit="5/minute")
    replies = [await app.service.handle_message(inbound(QUESTION, platform="console")) for _ in range(15)]
    assert all(r is not None and r.kind is ReplyKind.ANSWER for r in replies)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
async def test_thirty_mentions_get_ten_answers_and_one_private_notice(make_app: Callable[..., Any]) -> None:
    """The observation, end to end: `docbot run` with Slack, one person mentions the bot 30 times in a minute."""
    api = FakeSlackAPI(users=USERS)
    await api.start()
    port = free_port()
    app: App = await make_app(
        slack_bot_token="xoxb-test-token", slack_signing_secret=SECRET, slack_api_url=api.base_url,
        http_host="127.0.0.1", http_port=port, user_rate_limit="10/minute",
    )  # fmt: skip
    stop = asyncio.Event()
    serving = asyncio.create_task(app.serve(stop))
    roots = [f"17000003{n:02d}.000100" for n in range(30)]
    try:
        async with aiohttp.ClientSession() as http:
            async with asyncio.timeout(60):
                while True:
                    try:
                        async with http.get(f"http://127.0.0.1:{port}/readyz") as response:
                            if response.status == 200:
                                break
                    except aiohttp.ClientConnectionError:
                        await asyncio.sleep(0.1)
            for root in roots:
                body = json.dumps(mention_event(root, f"<@UBOT0001> {QUESTION}"))
                async with http.post(
                    f"http://127.0.0.1:{port}/slack/events", data=body, headers=signed_headers(body)
                ) as response:
                    assert response.status == 200
            async with asyncio.timeout(120):
                while await _open_events(app):
                    await asyncio.sleep(0.2)
    finally:
        stop.set()
        await asyncio.wait_for(serving, timeout=60)
        await api.close()
    public = api.bot_messages()
    assert len(public) == 10 and all("E-2041" in str(m.blocks) for m in public)  # ten answers
    assert not any(any(b.get("block_id") == PROGRESS_BLOCK for b in m.blocks) for m in public)  # no placeholder left
    notices = [m for m in api.ephemerals() if m.text == texts("en").rate_limited]
    assert len(notices) == 1 and notices[0].ephemeral_to == "UALICE"


async def _open_events(app: App) -> int:
    from storage.inbox import Inbox
    from storage.outbox import Outbox

    open_events = sum(n for status, n in (await Inbox(app.db).counts()).items() if status in ("pending", "claimed"))
    return open_events + (await Outbox(app.db).undelivered())["pending"]
