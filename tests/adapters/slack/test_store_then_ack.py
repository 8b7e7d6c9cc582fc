"""Issue 12, items 1-3: a Slack event is stored before it is acknowledged, whatever the Web API or the database do,
and only the worker that claimed it shows progress."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from bot.delivery import Delivery, DeliveryConfig
from tests.adapters.slack.conftest import Harness, MakeHarness, mention_event

pytestmark = pytest.mark.integration

MENTION = "<@UBOT0001> how do I pair the remote?"


async def test_web_api_500_with_html_body_loses_nothing(make_harness: MakeHarness) -> None:
    """Item 1: users.info and the placeholder answer 500 with a proxy's HTML page (not JSON)."""
    h = await make_harness()
    h.api.fail_next("users.info", status=500, html=True, times=3)  # slack_sdk retries 500 twice
    # the placeholder's post, then the reply's: a post is not repeated by the client (it may have landed), the event
    # and the outbox retry it after looking in the thread
    h.api.fail_next("chat.postMessage", status=500, html=True, times=3)
    ts = h.api.seed("C1", MENTION, user="UALICE")
    response = await h.post_json(mention_event(ts))
    assert response.status == 200 and await h.delivery.inbox.counts() == {"pending": 1}
    await h.settle()
    await h.delivered()
    [reply] = h.api.bot_messages("C1", thread_ts=ts)
    assert "pair" in reply.text and await h.delivery.inbox.counts() == {"done": 1}


async def test_hanging_web_api_does_not_delay_the_ack_or_lose_the_event(make_harness: MakeHarness) -> None:
    """Item 1: a Web API that never answers. The ack never waits for it; the worker answers once it is back."""
    h = await make_harness()
    h.delivery.config = DeliveryConfig(poll_s=0.02, progress_timeout_s=0.5)
    h.api.fail_next("users.info", mode="hang")
    h.api.fail_next("chat.postMessage", mode="hang")  # the placeholder hangs; the answer's post goes through
    ts = h.api.seed("C1", MENTION, user="UALICE")
    response = await h.post_json(mention_event(ts))
    assert response.status == 200 and await h.delivery.inbox.counts() == {"pending": 1}
    await h.settle()
    answered = [m for m in h.api.bot_messages("C1", thread_ts=ts) if "pair" in m.text]
    assert len(answered) == 1


class BrokenDatabase:
    """Makes the SQLite file unreachable for real (the engine reconnects to an empty file with no tables)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.aside = path.with_suffix(".aside")

    async def stop(self, h: Harness) -> None:
        await h.delivery.inbox._db.engine.dispose()
        os.rename(self.path, self.aside)

    async def start(self, h: Harness) -> None:
        await h.delivery.inbox._db.engine.dispose()
        os.remove(self.path)
        os.rename(self.aside, self.path)


async def test_database_down_is_not_acknowledged_and_the_retry_is_answered(
    make_harness: MakeHarness, tmp_path: Path
) -> None:
    """Item 2: with the database gone the event gets a 5xx (Slack retries), no Web API call, no placeholder;
    Slack's retry after the database is back is stored and answered once."""
    h = await make_harness()
    broken = BrokenDatabase(tmp_path / "slack0.db")
    ts = h.api.seed("C1", MENTION, user="UALICE")
    await broken.stop(h)
    response = await h.post_json(mention_event(ts))
    assert response.status >= 500 and h.api.calls == []
    await broken.start(h)
    retried = await h.post_json(mention_event(ts), retry_num=1)
    assert retried.status == 200
    await h.settle()
    [reply] = h.api.bot_messages("C1", thread_ts=ts)
    assert "pair" in reply.text and h.api.calls_to("chat.delete") == []


async def test_two_replicas_one_placeholder_and_one_post_per_message(make_harness: MakeHarness) -> None:
    """Item 3: the same event reaches two replicas (a retry landing elsewhere); only the claim's winner posts
    progress, so the thread gets one placeholder turned into one answer, nothing deleted."""
    h = await make_harness()
    other = Delivery(h.delivery.inbox._db, h.handler, {"slack": h.adapter.sink}, "w2",
                     config=DeliveryConfig(poll_s=0.02))  # fmt: skip
    ts = h.api.seed("C1", MENTION, user="UALICE")
    first = await h.post_json(mention_event(ts))
    second = await h.post_json(mention_event(ts), retry_num=1)  # Slack's retry, as another replica would get it
    assert (first.status, second.status) == (200, 200)
    await asyncio.gather(h.delivery.process_once(), other.process_once())
    await h.settle()
    posts = [c for c in h.api.calls_to("chat.postMessage") if c.args.get("thread_ts") == ts]
    assert len(posts) == 1 and h.api.calls_to("chat.delete") == []
    [reply] = h.api.bot_messages("C1", thread_ts=ts)
    assert "pair" in reply.text


async def test_error_name_of_a_non_json_5xx_is_its_status(make_harness: MakeHarness) -> None:
    """Item 1: the error helper raised AttributeError on a 500 whose body is an HTML page."""
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    from adapters.slack.client import slack_error

    h = await make_harness()
    h.api.fail_next("chat.postMessage", status=502, html=True)
    client = AsyncWebClient(token="xoxb-test-token", base_url=h.api.base_url)  # no retry handlers
    with pytest.raises(SlackApiError) as raised:
        await client.chat_postMessage(channel="C1", text="hi")
    assert slack_error(raised.value) == "http_502"
