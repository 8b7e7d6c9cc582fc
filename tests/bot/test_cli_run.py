"""`docbot run --ingest PATH` in the terminal (what `make run` does): the chat opens at once and the documentation is
read in the background; a question asked meanwhile waits for the reading and is answered from it; a reading that
fails is said in the chat, which goes on over what was stored before; leaving the chat stops the reading and the
next ingest finishes it."""

from __future__ import annotations

import asyncio
import io
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from rich.console import Console
from typer.testing import CliRunner

import bot.cli as cli_module
from adapters.console import ConsoleChat
from bot.app import App
from bot.cli import ReadingDocs, cli
from pipeline.messages import ReplyKind
from storage.errors import EmbeddingFailure, EmbeddingUnavailable
from tests.bot.conftest import MANUAL

pytestmark = pytest.mark.integration

QUOKKA = "# Zanzibarquokka calibration\n\n## Calibrating the sensor\n\nHold the zanzibarquokka dial for nine seconds.\n"
QUESTION = "How do I calibrate the zanzibarquokka sensor?"


class HeldEmbedder:
    """The app's embedder, held at its next passages call until released (or failing there)."""

    def __init__(self, app: App, *, fail: bool = False) -> None:
        self.inner = app.ingestor._embedder  # the ingest's own embedder, wrapped in place
        self.release = asyncio.Event()
        self.entered = asyncio.Event()
        self.fail = fail
        app.ingestor._embedder = self

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.entered.set()
        await self.release.wait()
        if self.fail:
            raise EmbeddingUnavailable(EmbeddingFailure.SERVER_ERROR, "503 after retries")
        result: npt.NDArray[np.float32] = await self.inner.embed_passages(texts)
        return result


async def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


@pytest.fixture
def quokka(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "quokka.md").write_text(QUOKKA)
    return folder


async def test_a_question_asked_while_the_docs_are_read_waits_and_is_answered_from_them(
    make_app: Callable[..., Any], quokka: Path
) -> None:
    app: App = await make_app()
    held = HeldEmbedder(app)
    screen = io.StringIO()
    console = Console(file=screen, width=160)
    reading = ReadingDocs(app, [str(quokka)], None, console)
    chat = ConsoleChat(app.service, console=console, before_answer=reading.before_answer)
    await held.entered.wait()

    asking = asyncio.create_task(chat.ask(QUESTION))
    await wait_for(lambda: "Still reading the documentation" in screen.getvalue())
    assert not asking.done()  # held by the reading, not answered from the index without the new page
    # how far it got, while the first (and only) group of chunks is still with the embedder (issue 27)
    still = " ".join(screen.getvalue().split())
    assert "(1 found, 1 fetched, 0 unchanged, 0 changed, 0 failed, 0 chunks embedded, " in still, still
    assert " waiting; " in still
    held.release.set()
    reply = await asyncio.wait_for(asking, 60)

    assert reply is not None and reply.kind is ReplyKind.ANSWER, reply
    assert any("quokka" in c.url for c in reply.citations), reply.citations
    shown = screen.getvalue()
    assert shown.index("Documentation read: ") < shown.index("nine seconds")  # the report, then the answer
    assert shown.count("Documentation read: ") == 1
    await reading.stop()


async def test_a_reading_that_ends_while_the_person_is_at_the_prompt_is_reported_and_the_prompt_shown_again(
    make_app: Callable[..., Any], quokka: Path
) -> None:
    app: App = await make_app()
    screen = io.StringIO()
    reading = ReadingDocs(app, [str(quokka)], None, Console(file=screen, width=160))
    await wait_for(lambda: "Documentation read: 1 added" in screen.getvalue())
    assert screen.getvalue().endswith("you> ")
    await reading.before_answer()  # a question afterwards: not held, the report not shown twice
    assert screen.getvalue().count("Documentation read") == 1
    await reading.stop()


async def test_a_failed_reading_is_said_in_the_chat_and_answers_go_on_from_what_was_stored(
    make_app: Callable[..., Any], quokka: Path
) -> None:
    app: App = await make_app()
    held = HeldEmbedder(app, fail=True)
    screen = io.StringIO()
    console = Console(file=screen, width=160)
    reading = ReadingDocs(app, [str(quokka)], None, console)
    chat = ConsoleChat(app.service, console=console, before_answer=reading.before_answer)
    await held.entered.wait()
    held.release.set()

    reply = await asyncio.wait_for(chat.ask("How do I pair the remote?"), 60)

    shown = screen.getvalue()
    assert "not ingested: Zanzibarquokka calibration: embeddings endpoint server error" in shown, shown
    assert "1 document was not ingested because the embedder failed" in " ".join(shown.split()), shown
    assert "Answers use what was stored before" in shown
    assert reply is not None and reply.kind is ReplyKind.ANSWER and reply.citations  # the manual stored before
    await reading.stop()


async def test_leaving_the_chat_stops_the_reading_and_the_next_ingest_finishes_it(
    make_app: Callable[..., Any], quokka: Path
) -> None:
    app: App = await make_app()
    held = HeldEmbedder(app)
    reading = ReadingDocs(app, [str(quokka)], None, Console(file=io.StringIO()))
    await held.entered.wait()
    await reading.stop()  # /quit while the page is being embedded

    held.release.set()
    report = await app.ingest([str(quokka)])
    assert report.added == 1, report.summary()
    reply = await app.service.handle_message(_inbound(QUESTION))
    assert reply is not None and any("quokka" in c.url for c in reply.citations)


def _inbound(text: str) -> Any:
    from tests.bot.conftest import inbound

    return inbound(text)


def test_make_run_opens_the_prompt_and_answers_after_reading_the_docs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command `make run` runs, through the real command line: the prompt, then the report of the reading, then
    the answer citing the page just read."""
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DISCORD_BOT_TOKEN", "OPENAI_API_KEY", "DOCBOT_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    # the command's console is made at import, with the width of whatever terminal the suite runs in: a wide one,
    # so the checks below do not depend on where rich wraps a line
    monkeypatch.setattr(cli_module, "out", Console(width=400))
    docs = tmp_path / "docs"
    shutil.copytree(MANUAL, docs)
    (docs / "quokka.md").write_text(QUOKKA)

    result = CliRunner().invoke(
        cli, ["run", "--ingest", str(docs), "--data-dir", str(tmp_path / "data")], input=f"{QUESTION}\n/quit\n"
    )

    assert result.exit_code == 0, result.output
    shown = result.output
    assert "you>" in shown and "in the background" in shown
    assert shown.index("Documentation read: ") < shown.index("nine seconds"), shown
    assert "quokka" in shown[shown.index("nine seconds") :]  # its citation
