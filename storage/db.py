"""The database: an async engine and session factory for SQLite (default) or PostgreSQL, plus Alembic migrations.

Build one `Database(url)` at start, `await db.migrate()` (Alembic `upgrade head` on this engine), use
`async with db.session() as session:` for one transaction (committed on exit), and `await db.dispose()` at the end.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, event, text
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    InterfaceError,
    InvalidRequestError,
    NoSuchModuleError,
    OperationalError,
)
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import StaticPool

from storage.base import Base
from storage.errors import MigrationFailed, StorageUnavailable

DEFAULT_URL = "sqlite+aiosqlite:///data/docbot.db"
ALEMBIC_DIR = Path(__file__).resolve().parent.parent / "alembic"
# How long a SQLite writer waits for the file's write lock before "database is locked". SQLite's busy handler polls
# (sleeps of up to 100 ms, no queue), so with dozens of concurrent conversations on a loaded 2-core box one writer
# can be passed over for seconds: 10 s failed once in two concurrent test suites (68 questions at once). 30 s stays
# well inside a question's 60 s deadline; PostgreSQL is the answer for sustained concurrent writes.
SQLITE_BUSY_TIMEOUT_MS = 30_000
_MIGRATION_LOCK_ID = 0x646F63626F74  # "docbot": serialises concurrent `migrate()` calls on PostgreSQL

if TYPE_CHECKING:  # the PostgreSQL dialect loads with a PostgreSQL URL only (SQLAlchemy imports it for such engines)
    from sqlalchemy.dialects import postgresql

    Insert = sqlite.Insert | postgresql.Insert


def utc_now() -> datetime:
    return datetime.now(UTC)


def mask_url(url: str | URL) -> str:
    """The URL with its password replaced by `***`, safe for logs and errors."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return re.sub(r"^((?:[^:/@]+://)?[^:/@]*:)[^@]*@", r"\1***@", str(url))


_UNREACHABLE_SQLSTATES = ("08", "28", "3D", "57P")  # connection, authorization, unknown database, server shutdown


def _unreachable(exc: BaseException) -> bool:
    """Whether `exc` means the database cannot be reached or opened (as opposed to a bad statement)."""
    if isinstance(exc, ConnectionError | TimeoutError | socket.gaierror | InterfaceError):
        return True
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return True
        sqlstate = str(getattr(exc.orig, "sqlstate", None) or "")
        if sqlstate.startswith(_UNREACHABLE_SQLSTATES):
            return True
    return isinstance(exc, OperationalError) and "unable to open database file" in str(exc)


class Database:
    """One database: engine, sessions and migrations. Build it once at start and share it."""

    def __init__(self, url: str = DEFAULT_URL, *, echo: bool = False, pool_size: int = 5) -> None:
        try:
            parsed = make_url(url)
        except (ArgumentError, ValueError) as exc:
            raise StorageUnavailable(mask_url(url), f"not a valid database URL ({exc})") from None
        self.url_masked = mask_url(parsed)
        self.dialect = parsed.get_backend_name()
        if self.dialect not in ("sqlite", "postgresql"):
            raise StorageUnavailable(self.url_masked, "only sqlite+aiosqlite and postgresql+asyncpg are supported")
        kwargs: dict[str, Any] = {"echo": echo}
        if self.dialect == "sqlite":
            memory = self._prepare_sqlite_file(parsed)
            if memory:
                kwargs["poolclass"] = StaticPool
        else:
            kwargs.update(pool_size=pool_size, pool_pre_ping=True)
        try:
            self.engine: AsyncEngine = create_async_engine(parsed, **kwargs)
        except (ArgumentError, InvalidRequestError, NoSuchModuleError, ImportError) as exc:
            raise StorageUnavailable(self.url_masked, f"cannot create an async engine ({exc})") from None
        if self.dialect == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)

    def __repr__(self) -> str:
        return f"Database({self.url_masked!r})"

    def _prepare_sqlite_file(self, url: URL) -> bool:
        """Create the file's folder and check it can hold a database; True for an in-memory database."""
        database = url.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            return database in ("", ":memory:")
        path = Path(database)
        if path.is_dir():
            raise StorageUnavailable(self.url_masked, f"{path} is a folder, not a database file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageUnavailable(
                self.url_masked, f"cannot create the folder {path.parent} ({exc.strerror or exc})"
            ) from None
        target = path if path.exists() else path.parent
        if not os.access(target, os.W_OK):
            raise StorageUnavailable(self.url_masked, f"{target} is not writable")
        return False

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session inside one transaction: committed when the block ends, rolled back when it raises."""
        try:
            async with self.sessions() as session, session.begin():
                yield session
        except Exception as exc:
            if _unreachable(exc):
                raise StorageUnavailable(self.url_masked, _reason(exc)) from exc
            raise

    def insert(self, table: type[Base] | Table) -> Insert:
        """A dialect-specific INSERT, so callers can use `on_conflict_do_nothing` on both backends."""
        if self.is_sqlite:
            return sqlite.insert(table)
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)

    async def check(self) -> None:
        """Open a connection and run a trivial query; raises StorageUnavailable with the reason when it cannot."""
        try:
            async with self.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception as exc:
            raise StorageUnavailable(self.url_masked, _reason(exc)) from exc

    async def migrate(self) -> None:
        """Bring the schema to the newest Alembic revision (`alembic upgrade head`) on this engine."""
        try:
            async with self.engine.begin() as connection:
                await connection.run_sync(_upgrade_to_head, self.is_sqlite)
        except Exception as exc:
            if _unreachable(exc):
                raise StorageUnavailable(self.url_masked, _reason(exc)) from exc
            raise MigrationFailed(self.url_masked, _reason(exc)) from exc

    async def dispose(self) -> None:
        await self.engine.dispose()


def _reason(exc: BaseException) -> str:
    """A one-line reason without the SQL statement or parameters SQLAlchemy appends."""
    if isinstance(exc, DBAPIError) and exc.orig is not None:
        exc = exc.orig
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


def _upgrade_to_head(connection: Connection, is_sqlite: bool) -> None:
    from alembic.config import Config

    from alembic import command

    if not (ALEMBIC_DIR / "env.py").is_file():  # a wheel install puts the alembic *library* at that path
        raise RuntimeError(
            f"docbot's migrations are not at {ALEMBIC_DIR}: run docbot from its source tree "
            "(an editable install, or the layout of deploy/Dockerfile)"
        )
    if not is_sqlite:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_ID})
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR).replace("%", "%%"))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")
