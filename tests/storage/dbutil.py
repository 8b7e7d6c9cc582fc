"""Both database backends for tests: a migrated SQLite file, or a fresh uniquely named PostgreSQL database.

    db = await make_database("postgres", tmp_path, postgres_url)
    try:
        ...
    finally:
        await drop_database(db)

or, as an async context manager, `async with temporary_database(backend, tmp_path, postgres_url) as db:`.
Creating a PostgreSQL database costs 0.1-1.5 s on a busy server; tests that need many use one per session and
`empty_database(db)` between tests, as the `db` fixture in tests/storage/conftest.py does.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
from sqlalchemy import inspect, text
from sqlalchemy.engine import URL, Connection, make_url

from storage.db import Database

BACKENDS = ("sqlite", "postgres")
TEST_DB_PREFIX = "docbot_t_"


def _asyncpg_dsn(url: URL) -> str:
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


async def create_postgres_database(postgres_url: str) -> str:
    """Create an empty, uniquely named database on the server of `postgres_url`; returns its URL."""
    admin = make_url(postgres_url)
    name = f"{TEST_DB_PREFIX}{uuid.uuid4().hex[:12]}"
    connection = await asyncpg.connect(_asyncpg_dsn(admin))
    try:
        await connection.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
    finally:
        await connection.close()
    return admin.set(database=name).render_as_string(hide_password=False)


async def drop_postgres_database(database_url: str, admin_database: str = "postgres") -> None:
    url = make_url(database_url)
    name = url.database or ""
    if not name.startswith(TEST_DB_PREFIX):  # never drop anything a test did not create
        raise ValueError(f"refusing to drop {name!r}: not a test database")
    connection = await asyncpg.connect(_asyncpg_dsn(url.set(database=admin_database)))
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


async def make_database(
    backend: str, tmp_path: Path, postgres_url: str | None = None, *, migrate: bool = True
) -> Database:
    """A Database on `backend` ("sqlite" or "postgres"), migrated to the newest revision unless told not to."""
    if backend == "sqlite":
        db = Database(f"sqlite+aiosqlite:///{tmp_path / f'docbot-{uuid.uuid4().hex[:8]}.db'}")
    elif backend == "postgres":
        if postgres_url is None:
            raise ValueError("the postgres backend needs the postgres_url fixture")
        db = Database(await create_postgres_database(postgres_url))
    else:
        raise ValueError(f"unknown backend {backend!r}; use one of {BACKENDS}")
    if migrate:
        await db.migrate()
    return db


async def drop_database(db: Database) -> None:
    """Dispose the engine and, for PostgreSQL, drop the test database."""
    await db.dispose()
    if not db.is_sqlite:
        await drop_postgres_database(db.engine.url.render_as_string(hide_password=False))


@asynccontextmanager
async def temporary_database(
    backend: str, tmp_path: Path, postgres_url: str | None = None, *, migrate: bool = True
) -> AsyncIterator[Database]:
    db = await make_database(backend, tmp_path, postgres_url, migrate=migrate)
    try:
        yield db
    finally:
        await drop_database(db)


def _tables_children_first(connection: Connection) -> list[str]:
    ordered = [name for name, _ in inspect(connection).get_sorted_table_and_fkc_names() if name is not None]
    return [name for name in reversed(ordered) if name != "alembic_version"]


async def empty_database(db: Database) -> None:
    """Delete every row of every table except Alembic's version, so one migrated database serves many tests.

    DELETE rather than TRUNCATE: on tables this small it avoids PostgreSQL's file work and is several times faster.
    """
    async with db.engine.begin() as connection:
        for name in await connection.run_sync(_tables_children_first):
            await connection.execute(text(f'DELETE FROM "{name}"'))
