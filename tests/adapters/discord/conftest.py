"""Fixtures of the Discord adapter tests: the fake Discord world and a migrated SQLite database."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from storage.db import Database
from tests.adapters.discord.test_spec_rest import SPEC_PARTS, _load, problems_with
from tests.adapters.discord.world import DiscordWorld
from tests.conftest import shared_path


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated once per session; each world gets a copy."""
    path = tmp_path_factory.mktemp("discord-db") / "template.db"

    async def migrate() -> None:
        database = Database(f"sqlite+aiosqlite:///{path}")
        await database.migrate()
        await database.dispose()

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, migrate()).result()
    return path


@pytest.fixture
async def world(migrated_template: Path, tmp_path: Path) -> AsyncIterator[DiscordWorld]:
    shutil.copy(migrated_template, tmp_path / "world.db")
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'world.db'}")
    w = DiscordWorld(database)
    await w.start()
    yield w
    await w.close()
    await database.dispose()


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'docbot.db'}")
    await database.migrate()
    yield database
    await database.dispose()


@pytest.fixture
def checked(world: DiscordWorld) -> Iterator[DiscordWorld]:
    """The world, with every REST call the test made checked against Discord's OpenAPI spec at the end."""
    yield world
    spec = _load(shared_path(*SPEC_PARTS))
    problems = sorted({problem for call in world.rest.calls for problem in problems_with(call, spec)})
    assert problems == [], "\n".join(problems)
