"""An app built on the fixture manual: ingested once per session into a template folder (database and search
snapshot), copied per test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from bot.app import App
from bot.settings import Settings
from pipeline.messages import Inbound, InboundKind
from tests.helpers.app_template import AppTemplate, make_template

MANUAL = Path(__file__).resolve().parent.parent / "fixtures" / "manual"
_ids = count(1)


@pytest.fixture(scope="session")
def manual_template(tmp_path_factory: pytest.TempPathFactory) -> AppTemplate:
    folder = tmp_path_factory.mktemp("manual-db")

    async def ingest(app: App) -> None:
        report = await app.ingest([str(MANUAL)], base_url="https://docs.example.com/")
        assert report.added > 5, report.summary()

    return asyncio.run(make_template(folder, ingest))


@pytest.fixture
async def make_app(manual_template: AppTemplate, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """`await make_app(**settings)` builds an app on a private copy of the ingested manual, its search snapshot
    included (restored as on a restart; closed after the test)."""
    apps: list[App] = []

    async def build(**overrides: Any) -> App:
        app = await manual_template.build_app(Settings(data_dir=tmp_path / f"data{len(apps)}", **overrides))
        apps.append(app)
        return app

    yield build
    for built in apps:
        await built.close()


@pytest.fixture
async def app(make_app: Callable[..., Any]) -> App:
    built: App = await make_app()
    return built


def inbound(
    text: str,
    *,
    thread: str | None = None,
    message_id: str | None = None,
    channel: str = "C1",
    workspace: str = "T1",
    platform: str = "slack",
    user: str = "U1",
    mentioned: bool = True,
    action_id: str | None = None,
) -> Inbound:
    return Inbound(
        platform=platform,
        workspace_id=workspace,
        channel_id=channel,
        thread_id=thread,
        message_id=message_id or f"{1700000000 + next(_ids)}.000100",
        user_id=user,
        user_name=f"user-{user}",
        text=text,
        ts=datetime.now(UTC),
        kind=InboundKind.ACTION if action_id else InboundKind.MESSAGE,
        action_id=action_id,
        mentioned=mentioned,
    )
