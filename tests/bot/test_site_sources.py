"""A documentation site as a configured source: `docbot ingest URL` shows the crawl, the scheduled re-ingest job
re-crawls it (conditional requests), and `docbot doctor` shows each source's last crawl, pages and errors."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from bench.sites import Fault, StaticSite
from bot.app import App
from bot.cli import cli
from bot.doctor import doctor_report, source_states
from tests.storage.test_site_crawl import write_site

pytestmark = pytest.mark.integration


async def test_the_reingest_job_recrawls_a_configured_site_and_doctor_shows_it(
    make_app: Callable[..., Any], tmp_path: Path
) -> None:
    root = write_site(tmp_path / "site")
    async with StaticSite(root) as site:
        source = site.url("/guide/")
        app: App = await make_app(ingest_sources=(source,), ingest_schedule_minutes=60, crawl_timeout_s=2.0)
        (job,) = [j for j in app._jobs(delivery=None) if j.job_id == "reingest-sources"]  # type: ignore[arg-type]
        await job.run(datetime.now(UTC))
        site.fault("/guide/b.html", Fault.SERVER_ERROR)
        before = len(site.requests)
        await job.run(datetime.now(UTC))
        again = site.requests[before:]
        states = await source_states(app.settings)
        screen = io.StringIO()
        await doctor_report(app.settings, Console(file=screen, width=400))
    conditional = [r for r in again if r.path in ("/guide/", "/guide/a.html")]
    assert conditional and all(r.status == 304 for r in conditional)  # the second run asked only what changed
    (state,) = [s for s in states if s.origin == source]
    assert state.kind == "site" and state.documents == 4 and state.finished
    assert len(state.errors) == 1 and "b.html: server error" in state.errors[0]
    shown = screen.getvalue()
    assert "documentation sources" in shown and source in shown and "b.html: server error" in shown


async def test_doctor_lists_a_configured_source_never_ingested(make_app: Callable[..., Any]) -> None:
    app: App = await make_app(ingest_sources=("https://docs.example.com/never/",))
    states = await source_states(app.settings)
    assert any(s.origin == "https://docs.example.com/never/" and not s.finished for s in states)


def test_docbot_ingest_of_a_site_prints_the_crawl(tmp_path: Path) -> None:
    """As compose's `ingest` service runs it: no arguments, the sources from DOCBOT_INGEST_SOURCES."""
    root = write_site(tmp_path / "site")
    result: Any = None

    async def serve_and_ingest() -> None:
        nonlocal result
        async with StaticSite(root) as site:
            args = ["ingest", "--data-dir", str(tmp_path / "data"), "--max-depth", "1"]
            env = {"DOCBOT_INGEST_SOURCES": json.dumps([site.url("/guide/")])}
            result = await asyncio.to_thread(CliRunner().invoke, cli, args, env=env)

    asyncio.run(serve_and_ingest())
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "/guide/: " in output and "4 fetched" in output and "2 not pages" in output
    assert "4 added, 0 updated" in output


def test_docbot_ingest_without_sources_says_what_to_do(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["ingest", "--data-dir", str(tmp_path)], env={"DOCBOT_INGEST_SOURCES": "[]"})
    assert result.exit_code == 2 and "DOCBOT_INGEST_SOURCES" in result.output
