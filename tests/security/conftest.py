"""Apps built on the security fixture docs (tests/fixtures/security): one collection per folder, ingested once per
session into a template SQLite file and copied per test. Channels see collections through `ChannelPolicy`s."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from bot.app import App
from bot.settings import ChannelPolicy, Settings
from pipeline.messages import Inbound
from tests.helpers.app_template import AppTemplate, make_template

DOCS = Path(__file__).resolve().parent.parent / "fixtures" / "security"
COLLECTIONS = ("public", "secret", "acme", "poisoned")
BASE_URL = "https://docs.example.com/"
_ids = count(1)

# Workspace T1: C-pub sees the public docs, C-sec the secret ones. Workspace T2 (another company) sees only its own.
POLICIES = (
    ChannelPolicy(collections=("public",)),
    ChannelPolicy(platform="slack", workspace_id="T1", channel_id="C-sec", collections=("secret",)),
    ChannelPolicy(platform="slack", workspace_id="T2", collections=("acme",)),
    ChannelPolicy(platform="slack", workspace_id="T1", channel_id="C-poison", collections=("poisoned", "public")),
)


@pytest.fixture(scope="session")
def security_template(tmp_path_factory: pytest.TempPathFactory) -> AppTemplate:
    folder = tmp_path_factory.mktemp("security-db")

    async def ingest(app: App) -> None:
        for collection in COLLECTIONS:
            report = await app.ingest([str(DOCS / collection)], collection=collection, base_url=BASE_URL)
            assert report.added >= 1, report.summary()

    return asyncio.run(make_template(folder, ingest))


@pytest.fixture
async def make_secure_app(security_template: AppTemplate, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """`await make_secure_app(**settings)`: an app on a private copy of the ingested docs (search snapshot included),
    with `POLICIES`."""
    apps: list[App] = []

    async def build(**overrides: Any) -> App:
        settings = Settings(**{"data_dir": tmp_path / f"data{len(apps)}", "channel_policies": POLICIES, **overrides})
        app = await security_template.build_app(settings)
        apps.append(app)
        return app

    yield build
    for built in apps:
        await built.close()


def ask(text: str, *, channel: str = "C-pub", workspace: str = "T1", platform: str = "slack",
        thread: str | None = None) -> Inbound:
    return Inbound(
        platform=platform,
        workspace_id=workspace,
        channel_id=channel,
        thread_id=thread,
        message_id=f"{1800000000 + next(_ids)}.000100",
        user_id="U1",
        user_name="mallory",
        text=text,
        ts=datetime.now(UTC),
    )
