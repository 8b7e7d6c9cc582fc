"""An operator sees undelivered replies in `docbot doctor` and retries failed ones with `docbot outbox retry`
(issue 28: after a long Slack outage the outbox held rows `failed | 8` that nothing showed and nothing could resend)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import bot.cli as cli_module
from bot.cli import cli
from pipeline.messages import Reply, ReplyKind, ThreadRef
from storage.db import Database
from storage.outbox import Outbox, OutgoingReply

pytestmark = pytest.mark.integration

REF = ThreadRef("slack", "T1", "C1", "1700000000.000100")


async def seed(data_dir: Path) -> tuple[int, int]:
    db = Database(f"sqlite+aiosqlite:///{data_dir / 'docbot.db'}")
    await db.migrate()
    outbox = Outbox(db)
    try:
        for key in ("a", "b", "c"):
            await outbox.add(OutgoingReply(REF, Reply(ReplyKind.ANSWER, "QX-SECRET-ANSWER", "en", "conv"), key))
        first, second, _ = await outbox.claim(lease_s=0, limit=3)
        await outbox.mark_failed(first, "not_in_channel", permanent=True)
        await outbox.mark_sent(second, "1700000000.000200")
        return first.id, (await outbox.undelivered())["pending"]
    finally:
        await db.dispose()


async def undelivered(data_dir: Path) -> dict[str, int]:
    db = Database(f"sqlite+aiosqlite:///{data_dir / 'docbot.db'}")
    try:
        return await Outbox(db).undelivered()
    finally:
        await db.dispose()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name in list(os.environ):
        if name.startswith(("DOCBOT_", "SLACK_", "DISCORD_", "OPENAI_", "PINECONE_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli_module, "out", Console(width=250))  # tables unwrapped, whatever the test terminal
    return {"DOCBOT_DATA_DIR": str(tmp_path)}


def test_doctor_shows_pending_and_failed_deliveries_and_retry_queues_the_failed(
    env: dict[str, str], tmp_path: Path
) -> None:
    failed_id, pending = asyncio.run(seed(tmp_path))
    assert pending == 1
    runner = CliRunner()

    doctor = runner.invoke(cli, ["doctor"], env=env)
    [line] = [line for line in doctor.stdout.splitlines() if "outbox" in line and "pending" in line]
    assert "1 pending" in line and "1 failed" in line and "problem" in line
    assert doctor.exit_code == 1  # a failed delivery is a problem to look at

    listed = runner.invoke(cli, ["outbox", "list", "--failed"], env=env)
    assert listed.exit_code == 0 and "not_in_channel" in listed.stdout and f"│ {failed_id} " in listed.stdout
    assert "QX-SECRET-ANSWER" not in listed.stdout  # what was to be said stays out of an operator's table

    retried = runner.invoke(cli, ["outbox", "retry"], env=env)
    assert retried.exit_code == 0 and "1 failed delivery queued again" in retried.stdout
    assert asyncio.run(undelivered(tmp_path)) == {"pending": 2, "failed": 0}

    again = runner.invoke(cli, ["doctor"], env=env)
    [line] = [line for line in again.stdout.splitlines() if "outbox" in line and "pending" in line]
    assert "2 pending" in line and "0 failed" in line
