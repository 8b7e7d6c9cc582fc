"""Cheap fresh databases for the reliability tests, which need dozens of them.

PostgreSQL: one database per test session, created and migrated on first use (~1.5 s), emptied before each test and
dropped when the session ends. SQLite: one migrated template file per session, copied for each test. A test module
gets the `pg_url` and `db` fixtures with `pg_url, db = database_fixtures()`.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from storage.db import Database
from tests.conftest import postgres_reachable
from tests.storage.dbutil import create_postgres_database, drop_postgres_database

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class Clock:
    """A clock tests move by hand: pass it where code takes `now: Callable[[], datetime]`."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
_shared: dict[str, str] = {}


async def _migrated(url: str) -> None:
    db = Database(url)
    try:
        await db.migrate()
    finally:
        await db.dispose()


def module_postgres(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The session's migrated PostgreSQL database (None when the server is unreachable); also prepares the SQLite
    template `fresh_database` copies."""
    _sqlite_template(request.config)
    if not postgres_reachable():
        yield None
        return
    if "postgres" not in _shared:
        admin_url: str = request.getfixturevalue("postgres_url")

        async def create() -> str:
            url = await create_postgres_database(admin_url)
            await _migrated(url)
            return url

        url = asyncio.run(create())
        _shared["postgres"] = url
        request.config.add_cleanup(lambda: asyncio.run(drop_postgres_database(url)))
    yield _shared["postgres"]


def _sqlite_template(config: pytest.Config) -> Path:
    if "sqlite" not in _shared:
        folder = Path(tempfile.mkdtemp(prefix="docbot-template-"))
        template = folder / "template.db"
        asyncio.run(_migrated(f"sqlite+aiosqlite:///{template}"))
        _shared["sqlite"] = str(template)
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    return Path(_shared["sqlite"])


@asynccontextmanager
async def fresh_database(backend: str, tmp_path: Path, pg_url: str | None) -> AsyncIterator[Database]:
    """A migrated SQLite file of its own, or the session's PostgreSQL database with every table emptied."""
    if backend == "sqlite":
        if "sqlite" not in _shared:
            raise RuntimeError("use fresh_database with a `module_postgres` fixture: it prepares the SQLite template")
        path = tmp_path / "docbot.db"
        shutil.copy(_shared["sqlite"], path)
        db = Database(f"sqlite+aiosqlite:///{path}")
        try:
            yield db
        finally:
            await db.dispose()
        return
    if pg_url is None:
        pytest.skip("PostgreSQL is not reachable at 127.0.0.1:5432 (set DOCBOT_TEST_POSTGRES_URL)")
    db = Database(pg_url)
    try:
        async with db.session() as session:
            listing = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
            tables = (await session.execute(text(listing))).scalars()
            for name in list(tables):  # DELETE is much cheaper than TRUNCATE on a few small tables
                await session.execute(text(f'DELETE FROM "{name}"'))
        yield db
    finally:
        await db.dispose()


def database_fixtures() -> tuple[Any, Any]:
    """The `pg_url` (per module) and `db` (per test, on every backend) fixtures, for a module to bind by name."""

    @pytest.fixture(scope="module")
    def pg_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
        yield from module_postgres(request)

    @pytest.fixture(params=BACKENDS)
    async def db(request: pytest.FixtureRequest, tmp_path: Path, pg_url: str | None) -> AsyncIterator[Database]:
        async with fresh_database(request.param, tmp_path, pg_url) as database:
            yield database

    return pg_url, db
