"""Fixtures of the Discord adapter tests: the fake Discord world and a migrated SQLite database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from storage.db import Database
from tests.adapters.discord.world import DiscordWorld


@pytest.fixture
async def world() -> AsyncIterator[DiscordWorld]:
    w = DiscordWorld()
    await w.start()
    yield w
    await w.close()


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'docbot.db'}")
    await database.migrate()
    yield database
    await database.dispose()
