"""A PostgreSQL database created and migrated once per test module and emptied before each test.

Creating and migrating a database costs ~1.5 s on PostgreSQL; the reliability tests need dozens of fresh ones.

    @pytest.fixture(scope="module")
    def pg_url(request) -> Iterator[str | None]:
        yield from module_postgres(request)

    @pytest.fixture(params=BACKENDS)
    async def db(request, tmp_path, pg_url) -> AsyncIterator[Database]:
        async with fresh_database(request.param, tmp_path, pg_url) as database:
            yield database
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.db import Database
from tests.conftest import postgres_reachable
from tests.storage.dbutil import create_postgres_database, drop_database, drop_postgres_database, make_database

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def module_postgres(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A migrated PostgreSQL database for the module (None when the server is unreachable); dropped afterwards."""
    if not postgres_reachable():
        yield None
        return
    admin_url: str = request.getfixturevalue("postgres_url")

    async def create() -> str:
        url = await create_postgres_database(admin_url)
        db = Database(url)
        try:
            await db.migrate()
        finally:
            await db.dispose()
        return url

    url = asyncio.run(create())
    try:
        yield url
    finally:
        asyncio.run(drop_postgres_database(url))


@asynccontextmanager
async def fresh_database(backend: str, tmp_path: Path, pg_url: str | None) -> AsyncIterator[Database]:
    """A migrated SQLite file, or the module's PostgreSQL database with every table emptied."""
    if backend == "sqlite":
        db = await make_database("sqlite", tmp_path)
        try:
            yield db
        finally:
            await drop_database(db)
        return
    if pg_url is None:
        pytest.skip("PostgreSQL is not reachable at 127.0.0.1:5432 (set DOCBOT_TEST_POSTGRES_URL)")
    db = Database(pg_url)
    try:
        async with db.session() as session:
            listing = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
            tables = (await session.execute(text(listing))).scalars()
            names = ", ".join(f'"{name}"' for name in tables)
            if names:
                await session.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
        yield db
    finally:
        await db.dispose()
