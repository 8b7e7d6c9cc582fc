"""Secrets never reach a log record at any level, and the text people write never reaches one at INFO or above:
a question goes through Delivery and the real service in LLM mode, including a model failure."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bench.fakes.openai_server import ScriptedOpenAI, unauthorized
from bot.app import App
from bot.delivery import Delivery
from pipeline.messages import Reply, ThreadRef
from storage.db import Database
from tests.security.conftest import ask

pytestmark = pytest.mark.integration

OPENAI_KEY = "sk-live-9c4e1f7a2b8d4e6f"
SLACK_TOKEN = "xoxb-1111-2222-abcdefSECRET"
SIGNING_SECRET = "signing-5e8b0c2d9a71"
DB_PASSWORD = "pw-7d1c3e9f5a"
SECRETS = (OPENAI_KEY, SLACK_TOKEN, SIGNING_SECRET, DB_PASSWORD)
USER_WORDS = "QX-UNIQUE-7731"


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def flattened(record: logging.LogRecord) -> str:
    """The message and every attribute of the record (structured `extra` fields included)."""
    values = [record.getMessage()] + [repr(value) for value in record.__dict__.values()]
    if record.exc_info and record.exc_info[1] is not None:
        values.append(repr(record.exc_info[1]))
    return "\n".join(values)


@pytest.fixture
def captured() -> Iterator[Capture]:
    capture = Capture()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    try:
        yield capture
    finally:
        root.removeHandler(capture)
        root.setLevel(previous)


class Sink:
    def __init__(self) -> None:
        self.replies: list[Reply] = []

    async def post(self, ref: ThreadRef, reply: Reply) -> str:
        self.replies.append(reply)
        return "1.0"


async def test_no_secret_at_any_level_and_no_user_text_at_info(
    make_secure_app: Callable[..., Any], captured: Capture
) -> None:
    async with ScriptedOpenAI() as server:
        app: App = await make_secure_app(
            openai_base_url=server.base_url,
            openai_api_key=OPENAI_KEY,
            slack_bot_token=SLACK_TOKEN,
            slack_signing_secret=SIGNING_SECRET,
            llm_timeout_s=5.0,
        )
        sink = Sink()
        delivery = Delivery(app.db, app.service, {"slack": sink}, "w1")
        first = ask(f"How do I pair the remote? My serial is {USER_WORDS}")
        second = ask(f"Which batteries does the remote take? {USER_WORDS}")
        for inbound in (first, second):
            await delivery.accept(inbound, ThreadRef("slack", "T1", "C-pub", inbound.message_id))
        server.queue(unauthorized())  # the model refuses the key once: errors are logged, the key is not
        await delivery.process_once()
    assert len(sink.replies) == 2
    assert captured.records, "nothing was logged: the capture is not working"
    for record in captured.records:
        text = flattened(record)
        for secret in SECRETS:
            assert secret not in text, f"secret in a {record.levelname} record from {record.name}: {record.msg}"
        if record.levelno >= logging.INFO:
            assert USER_WORDS not in text, f"user text at {record.levelname} from {record.name}: {record.msg}"


@pytest.mark.unit
def test_settings_and_database_never_show_secrets() -> None:
    from bot.settings import Settings

    settings = Settings(openai_api_key=OPENAI_KEY, slack_bot_token=SLACK_TOKEN, slack_signing_secret=SIGNING_SECRET,
                        database_url=f"postgresql+asyncpg://docbot:{DB_PASSWORD}@127.0.0.1:1/docbot")
    shown = repr(settings) + str(settings) + repr(settings.model_dump())
    assert not any(secret in shown for secret in (OPENAI_KEY, SLACK_TOKEN, SIGNING_SECRET))
    db = Database(settings.effective_database_url)
    assert DB_PASSWORD not in repr(db) and DB_PASSWORD not in db.url_masked
