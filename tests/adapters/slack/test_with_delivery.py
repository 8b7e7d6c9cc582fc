"""The adapter with the real durable delivery (`bot.delivery.Delivery`, inbox/outbox on SQLite): the stored
`ThreadRef` round-trips, the worker answers through `adapter.sink` and reads threads through `adapter.fetcher_for`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.delivery import Delivery, DeliveryConfig
from storage.db import Database
from tests.adapters.slack.conftest import MakeHarness, mention_event

pytestmark = pytest.mark.integration


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'delivery.db'}")
    await database.migrate()
    yield database
    await database.dispose()


async def test_mentions_are_answered_once_through_inbox_and_outbox(make_harness: MakeHarness, db: Database) -> None:
    h = await make_harness()
    delivery = Delivery(db, h.handler, {"slack": h.adapter.sink}, "w1", fetcher_for=h.adapter.fetcher_for,
                        config=DeliveryConfig(poll_s=0.02))  # fmt: skip
    h.adapter.intake = delivery
    root = h.api.seed("C1", "the remote blinks red", user="UBOB")
    h.api.seed("C1", "same here", user="UALICE", thread_ts=root)
    ts = h.api.seed("C1", "<@UBOT0001> what does it mean?", user="UALICE", thread_ts=root)
    event = mention_event(ts, "<@UBOT0001> what does it mean?", thread_ts=root)
    await h.post_json(event)
    await h.settle()
    assert await delivery.process_once() == 1
    await h.post_json(event, retry_num=1)  # Slack retries: the adapter drops it, the inbox would too
    await h.settle()
    assert await delivery.process_once() == 0
    [history] = h.handler.fetched
    assert [m.text for m in history] == ["the remote blinks red", "same here"]
    [reply] = h.api.bot_messages("C1", thread_ts=root)
    assert "pair" in reply.text and h.api.calls_to("chat.update")[0].args["ts"] == reply.ts  # placeholder reused
