"""`docbot answers list|show|approve|edit|reject` and `docbot digest` through the real command line, on a data
folder holding the ingested fixture manual."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy import select
from typer.testing import CliRunner

import bot.cli as cli_module
from bot.cli import cli
from bot.settings import Settings
from storage.answers.model import AnswerDraft, AnswerStatus, TeamAnswer
from storage.answers.store import AnswerStore
from storage.db import Database
from storage.doc_tables import ChunkRow
from tests.helpers.app_template import AppTemplate

pytestmark = pytest.mark.integration

QUESTION = "Does the hub work with HDMI-CEC on 2024 Samsung TVs?"
ANSWER = "Yes, the 2024 models do: turn on Anynet+ (HDMI-CEC) under Settings, General, External Device Manager."


@pytest.fixture(autouse=True)
def process_logging_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands run in this test process: their logging set-up (a handler on the runner's stream, which closes,
    and structlog's loggers cached on first use) would stay for every later test of the worker."""
    monkeypatch.setattr(cli_module, "configure_logging", lambda *args, **kwargs: None)


def database(data: Path) -> Database:
    return Database(f"sqlite+aiosqlite:///{data / 'docbot.db'}")


async def _draft(data: Path) -> TeamAnswer:
    db = database(data)
    try:
        answer, _ = await AnswerStore(db).draft(AnswerDraft(
            question=QUESTION, answer=ANSWER, platform="slack", workspace_id="T1", channel_id="C-help",
            channel_name="help", thread_key="slack:T1:C-help:1", answer_message_id="m1", author_id="U-ALICE",
            author_name="alice", answered_at=datetime(2026, 11, 20, tzinfo=UTC), collection="default",
        ))  # fmt: skip
        return answer
    finally:
        await db.dispose()


async def _state(data: Path, answer_id: str) -> tuple[AnswerStatus, list[str]]:
    db = database(data)
    try:
        answer = await AnswerStore(db).get(answer_id)
        assert answer is not None
        async with db.session() as session:
            texts = list(await session.scalars(select(ChunkRow.text).where(ChunkRow.doc_id == answer.doc_id)))
        return answer.status, texts
    finally:
        await db.dispose()


def test_the_answers_commands_review_a_candidate_from_the_terminal(
    manual_template: AppTemplate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("SLACK_BOT_TOKEN", "DISCORD_BOT_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli_module, "out", Console(width=200))
    data = tmp_path / "data"
    manual_template.copy_into(Settings(_env_file=None, data_dir=data))
    answer = asyncio.run(_draft(data))
    short = answer.id[:8]
    runner = CliRunner()

    def run(*args: str) -> str:
        result = runner.invoke(cli, [*args, "--data-dir", str(data)])
        assert result.exit_code == 0, result.output
        return result.output

    listed = run("answers", "list")
    assert short in listed and "draft" in listed and "alice" in listed and "#help" in listed
    shown = run("answers", "show", short)
    assert "Question: Does the hub work with HDMI-CEC" in shown and "│ Yes, the 2024 models do" in shown

    assert f"approved: {answer.id}" in run("answers", "approve", short)
    assert asyncio.run(_state(data, answer.id)) == (AnswerStatus.APPROVED, [ANSWER])
    assert "no team answers awaiting review" in run("answers", "list")
    assert short in run("answers", "list", "--status", "approved")

    run("answers", "edit", short, "--answer", "Yes since firmware 3.0: turn on Anynet+ first.")
    assert asyncio.run(_state(data, answer.id)) == (AnswerStatus.APPROVED,
                                                   ["Yes since firmware 3.0: turn on Anynet+ first."])  # fmt: skip

    assert f"rejected: {answer.id}" in run("answers", "reject", short, "--reason", "superseded by the manual")
    assert asyncio.run(_state(data, answer.id)) == (AnswerStatus.REJECTED, [])

    again = runner.invoke(cli, ["answers", "reject", short, "--data-dir", str(data)])
    assert again.exit_code == 2 and "already rejected" in again.output
    unknown = runner.invoke(cli, ["answers", "approve", "zzzzzzzz", "--data-dir", str(data)])
    assert unknown.exit_code == 2 and "no team answer 'zzzzzzzz'" in unknown.output


def test_the_digest_command_shows_the_digest_without_a_channel(
    manual_template: AppTemplate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DOCBOT_DIGEST_CHANNEL", raising=False)
    monkeypatch.setattr(cli_module, "out", Console(width=200))
    data = tmp_path / "data"
    manual_template.copy_into(Settings(_env_file=None, data_dir=data))
    asyncio.run(_draft(data))
    result = CliRunner().invoke(cli, ["digest", "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    assert "Docs digest" in result.output and "1 awaiting review" in result.output
    refused = CliRunner().invoke(cli, ["digest", "--send", "--data-dir", str(data)])
    assert refused.exit_code == 2 and "DOCBOT_DIGEST_CHANNEL" in refused.output
