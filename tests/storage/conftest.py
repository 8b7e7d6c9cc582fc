"""The `db` fixture: every repository test runs on SQLite and on PostgreSQL (skipped when unreachable)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from storage.db import Database
from tests.storage.dbutil import drop_database, make_database

BACKEND_PARAMS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


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
async def db(backend: str, backend_url: str | None, tmp_path: Path) -> AsyncIterator[Database]:
    """A freshly migrated database of its own for each test."""
    database = await make_database(backend, tmp_path, backend_url)
    try:
        yield database
    finally:
        await drop_database(database)
