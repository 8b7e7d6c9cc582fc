"""The `db` fixture: every repository test runs on SQLite and on PostgreSQL (skipped when unreachable).

Each test gets an empty, migrated database: SQLite as a copy of a file migrated once per session, PostgreSQL as
one uniquely named database per session (dropped at the end), emptied before each test.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from storage.db import Database
from tests.storage.dbutil import (
    create_postgres_database,
    drop_database,
    drop_postgres_database,
    empty_database,
    make_database,
)

T = TypeVar("T")

BACKEND_PARAMS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from a synchronous session fixture, on a loop of its own."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _migrate(url: str) -> None:
    db = Database(url)
    try:
        await db.migrate()
    finally:
        await db.dispose()


def _sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to the newest revision once per session."""
    path = tmp_path_factory.mktemp("db-template") / "template.db"
    _run(_migrate(_sqlite_url(path)))
    return path


@pytest.fixture(scope="session")
def postgres_database(postgres_url: str) -> Iterator[str]:
    """URL of a uniquely named PostgreSQL database, migrated once and dropped at the end of the session."""
    url = _run(create_postgres_database(postgres_url))
    try:
        _run(_migrate(url))
        yield url
    finally:
        _run(drop_postgres_database(url))


@pytest.fixture(params=BACKEND_PARAMS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def backend_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    """The PostgreSQL server URL for the postgres backend (skips when unreachable); None for SQLite."""
    if backend == "postgres":
        url: str = request.getfixturevalue("postgres_url")
        return url
    return None


@pytest.fixture
async def db(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Database]:
    """An empty, migrated database for each test."""
    if backend == "sqlite":
        path = tmp_path / "docbot.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        database = Database(_sqlite_url(path))
    else:
        database = Database(request.getfixturevalue("postgres_database"))
        await empty_database(database)
    try:
        yield database
    finally:
        await database.dispose()


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    """A migrated SQLite database of the test's own, for tests that ingest through the real path on one backend."""
    database = await make_database("sqlite", tmp_path)
    try:
        yield database
    finally:
        await drop_database(database)
