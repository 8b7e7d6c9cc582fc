"""`docbot ask` starts without loading what only serving, ingesting web pages or LLM mode need (issue 16: cold ask)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
# what the offline question path never needs: the OpenAI SDK, the HTTP server and client, the scheduler, the
# platform SDKs, Pinecone, the HTML and Markdown parsers of ingest, the PostgreSQL dialect
HEAVY = ("openai", "aiohttp", "apscheduler", "slack_bolt", "slack_sdk", "discord", "pinecone", "bs4",
         "selectolax", "docutils", "protego", "frontmatter", "sqlalchemy.dialects.postgresql")  # fmt: skip


def test_the_cli_and_the_composition_root_import_nothing_heavy() -> None:
    code = (
        "import sys, json; import bot.cli, bot.app, bot.service, storage.ingest.ingestor; "
        f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
