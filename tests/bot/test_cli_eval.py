"""`docbot eval` through the real command line: where its reports go when no --out is given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import cli

pytestmark = pytest.mark.integration


def test_eval_writes_its_reports_under_the_data_dir_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image's root file system is read-only (compose, Kubernetes): only the data dir and /tmp are writable, so
    the default must be the data dir. It was ./bench/results, which failed in the image (deploy/rehearse_image.py)."""
    monkeypatch.chdir(tmp_path)
    for name in ("SLACK_BOT_TOKEN", "DISCORD_BOT_TOKEN", "OPENAI_API_KEY", "DOCBOT_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"question": "How do I pair the remote?", "gold": "remote.md#pairing"}) + "\n")
    data_dir = tmp_path / "data"

    result = CliRunner().invoke(cli, ["eval", str(qa), "--data-dir", str(data_dir)])

    assert result.exit_code == 0, result.output
    report = json.loads((data_dir / "eval" / "eval-qa.json").read_text())
    assert len(report["rows"]) == 1
    assert (data_dir / "eval" / "eval-qa.md").is_file()
    assert not (tmp_path / "bench").exists()
