"""Issue 12, items 6 and 7: the process's real log configuration (`bot.logs.configure_logging`, default level and
DEBUG), the real adapter and delivery, driven through faults; the whole rendered log is then searched for the bot
token, the signing secret and every text a person sent."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.logs import configure_logging
from pipeline.messages import Inbound
from tests.adapters.slack.conftest import SECRET, MakeHarness, mention_event, signed_headers
from tests.adapters.slack.test_store_then_ack import BrokenDatabase

pytestmark = pytest.mark.integration

TOKEN = "xoxb-test-token"  # make_settings' bot token


@pytest.fixture
def rendered_log(request: pytest.FixtureRequest) -> Iterator[io.StringIO]:
    """Everything the process would write to stderr, rendered by the production formatter."""
    level = getattr(request, "param", "INFO")
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    buffer = io.StringIO()
    stderr = sys.stderr
    sys.stderr = buffer
    try:
        configure_logging(level, secrets=[TOKEN, SECRET])
    finally:
        sys.stderr = stderr
    yield buffer
    root.handlers, root.level = saved_handlers, saved_level


@pytest.mark.parametrize("rendered_log", ["INFO", "DEBUG"], indirect=True)
async def test_no_secret_or_user_text_in_the_log_through_faults(
    make_harness: MakeHarness, rendered_log: io.StringIO, tmp_path: Path
) -> None:
    h = await make_harness()
    texts = [f"question number {i} QX-PRIVATE-{i}" for i in range(5)]

    def explode(inbound: Inbound) -> None:
        raise RuntimeError(f"pipeline broke on {inbound.text} with Bearer {TOKEN}")  # the worst exception message

    h.delivery.inbox.max_attempts = 1
    h.api.fail_next("users.info", status=500, html=True, times=3)
    h.api.fail_next("chat.postMessage", status=500, html=True, times=3)
    h.api.fail_next("chat.update", status=429, error="ratelimited", retry_after=0)
    ts = [h.api.seed("C1", f"<@UBOT0001> {text}", user="UALICE") for text in texts]
    await h.post_json(mention_event(ts[0], f"<@UBOT0001> {texts[0]}"))  # a 500 HTML Web API
    h.handler.script = explode  # type: ignore[assignment]
    await h.post_json(mention_event(ts[1], f"<@UBOT0001> {texts[1]}"))  # a handler exception carrying the text
    await h.settle()
    h.handler.script = None
    forged = json.dumps(mention_event(ts[2], f"<@UBOT0001> {texts[2]}"))
    bad = await h.post_json(json.loads(forged), headers=signed_headers(forged, secret="not-the-secret"))
    assert bad.status == 401  # a bad signature: refused before bolt (whose own line would carry the body)
    broken = BrokenDatabase(tmp_path / "slack0.db")
    await broken.stop(h)
    down = await h.post_json(mention_event(ts[3], f"<@UBOT0001> {texts[3]}"))
    await broken.start(h)
    assert down.status >= 500
    async with h.session.post(h.url, data=f'{{"text": "{texts[4]}", broken', headers={}) as unsigned:
        assert unsigned.status == 401
    await h.settle()
    log = rendered_log.getvalue()
    assert log, "nothing was logged"
    for needle in (TOKEN, SECRET, "QX-PRIVATE"):
        assert needle not in log, f"{needle!r} leaked into the log"


async def test_malformed_unsigned_request_gets_one_short_line(
    make_harness: MakeHarness, rendered_log: io.StringIO
) -> None:
    """Item 7: a malformed JSON body without a signature was parsed first: HTTP 500 and ~180 log lines."""
    h = await make_harness()
    async with h.session.post(h.url, data='{"type": "event_callback", "event": {', headers={}) as response:
        assert response.status == 401
    lines = [line for line in rendered_log.getvalue().splitlines() if line.strip()]
    assert len(lines) == 1 and "bad signature" in lines[0] and len(lines[0]) < 300
    signed_garbage = '{"type": "event_callback", "event": {'
    async with h.session.post(h.url, data=signed_garbage, headers=signed_headers(signed_garbage)) as response:
        assert response.status == 400
    assert len([line for line in rendered_log.getvalue().splitlines() if line.strip()]) == 2
