"""The Database: migrations, SQLite setup, clear failures, masked secrets, UTC timestamps."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import Table, inspect, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import StatementError

import storage.tables as tables
from alembic import command
from storage.base import Base
from storage.db import ALEMBIC_DIR, Database, mask_url
from storage.errors import StorageUnavailable
from storage.settlement import NewMessage
from tests.helpers.stored import stored_conversation, stored_messages
from tests.storage.dbutil import drop_database, make_database

pytestmark = pytest.mark.integration

OPERATIONAL_TABLES = {
    "conversations",
    "messages",
    "runs",
    "hops",
    "actions",
    "feedback",
    "inbox",
    "outbox",
    "semantic_cache",
    "scheduler_leases",
    "usage_counters",
}


def _table_names(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


def _tables_named_in(diff: Any) -> set[str]:
    """Table names a `compare_metadata` entry mentions (modify_* entries come as lists of tuples)."""
    names: set[str] = set()
    for entry in diff if isinstance(diff, list) else [diff]:
        for part in entry:
            if isinstance(part, str):
                names.add(part)
            elif isinstance(part, Table):
                names.add(part.name)
            elif isinstance(getattr(part, "table", None), Table):
                names.add(part.table.name)
    return names


def _drift(connection: Connection) -> list[Any]:
    """Differences between the migrated schema and the models, limited to this module's tables."""
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return [d for d in compare_metadata(context, Base.metadata) if _tables_named_in(d) & OPERATIONAL_TABLES]


async def test_migrate_creates_the_schema_on_an_empty_database(backend: str, backend_url: str | None, tmp_path: Path):
    db = await make_database(backend, tmp_path, backend_url, migrate=False)
    try:
        async with db.engine.connect() as connection:
            assert await connection.run_sync(_table_names) == set()
        await db.migrate()
        await db.migrate()  # a second run is a no-op
        async with db.engine.connect() as connection:
            names = await connection.run_sync(_table_names)
            version = (await connection.execute(text("SELECT version_num FROM alembic_version"))).scalars().all()
            drift = await connection.run_sync(_drift)
        assert names >= OPERATIONAL_TABLES | {"alembic_version"}
        assert len(version) == 1
        assert drift == [], f"tables.py and the migrations disagree: {drift}"
    finally:
        await drop_database(db)


@pytest.mark.postgres
async def test_concurrent_migrations_on_postgres_do_not_collide(postgres_url: str, tmp_path: Path):
    first = await make_database("postgres", tmp_path, postgres_url, migrate=False)
    second = Database(first.engine.url.render_as_string(hide_password=False))
    try:
        await asyncio.gather(first.migrate(), second.migrate())
        async with first.engine.connect() as connection:
            assert await connection.run_sync(_table_names) >= OPERATIONAL_TABLES
    finally:
        await second.dispose()
        await drop_database(first)


async def test_sqlite_pragmas_and_parent_folder(tmp_path: Path):
    path = tmp_path / "nested" / "deeper" / "docbot.db"
    db = Database(f"sqlite+aiosqlite:///{path}")
    try:
        assert path.parent.is_dir()
        await db.migrate()
        async with db.session() as session:
            assert (await session.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
            assert (await session.execute(text("PRAGMA foreign_keys"))).scalar() == 1
            assert (await session.execute(text("PRAGMA busy_timeout"))).scalar() >= 1000
        assert path.is_file()
    finally:
        await db.dispose()


@pytest.mark.slow
async def test_a_sqlite_writer_waits_out_a_write_lock_held_longer_than_ten_seconds(tmp_path: Path):
    """Under a burst on a loaded box SQLite's polling busy handler can pass one writer over for more than 10 s (seen
    in a loaded CI run: 'database is locked' for one of 68 concurrent questions); the wait must outlast that."""
    path = tmp_path / "docbot.db"
    db = Database(f"sqlite+aiosqlite:///{path}")
    try:
        await db.migrate()
        holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the file's write lock
        release = asyncio.get_running_loop().call_later(11.0, holder.commit)
        try:
            async with db.session() as session:
                await session.execute(text("CREATE TABLE waited (x INTEGER)"))
            assert not holder.in_transaction, "the write went through while the other writer still held the lock"
        finally:
            release.cancel()
            holder.close()
    finally:
        await db.dispose()


def test_a_file_in_place_of_the_folder_is_a_clear_storage_error(tmp_path: Path):
    blocker = tmp_path / "data"
    blocker.write_text("not a folder")
    with pytest.raises(StorageUnavailable) as caught:
        Database(f"sqlite+aiosqlite:///{blocker / 'docbot.db'}")
    assert "cannot create the folder" in str(caught.value)
    assert str(blocker) in caught.value.reason


def test_a_folder_in_place_of_the_file_is_a_clear_storage_error(tmp_path: Path):
    with pytest.raises(StorageUnavailable, match="is a folder, not a database file"):
        Database(f"sqlite+aiosqlite:///{tmp_path}")


def test_an_unsupported_url_is_a_storage_error():
    with pytest.raises(StorageUnavailable, match="not a valid database URL"):
        Database("definitely not a url")
    with pytest.raises(StorageUnavailable, match="only sqlite"):
        Database("mysql+aiomysql://u:p@127.0.0.1/x")
    with pytest.raises(StorageUnavailable, match="cannot create an async engine") as caught:
        Database("postgresql+psycopg2://u:s3cret@127.0.0.1/x")  # a synchronous driver
    assert "s3cret" not in str(caught.value)


async def test_an_unreachable_server_names_the_url_without_its_password():
    db = Database("postgresql+asyncpg://docbot:hunter2secret@127.0.0.1:1/docbot")
    try:
        assert "hunter2secret" not in repr(db)
        with pytest.raises(StorageUnavailable) as caught:
            await db.check()
        with pytest.raises(StorageUnavailable) as caught_migrate:
            await db.migrate()
    finally:
        await db.dispose()
    for error in (caught.value, caught_migrate.value):
        assert "hunter2secret" not in str(error)
        assert "docbot:***@127.0.0.1:1/docbot" in str(error)


def test_mask_url_hides_passwords_even_in_unparsable_urls():
    assert mask_url("postgresql+asyncpg://u:s3cret@h/db") == "postgresql+asyncpg://u:***@h/db"
    assert "s3cret" not in mask_url("weird://u:s3cret@h:notaport/db")
    assert mask_url("u:s3cret@h/db") == "u:***@h/db"


async def test_timestamps_come_back_as_the_same_instant_in_utc(db: Database):
    before = datetime.now(UTC)
    conversation = await stored_conversation(db, "slack:T:C:1")
    local = datetime(2026, 11, 22, 19, 3, 10, 123456, tzinfo=timezone(timedelta(hours=5)))
    await stored_messages(db, conversation.id, NewMessage("m1", "U1", "alice", "hello", local))
    async with db.session() as session:
        stored = (await session.execute(select(tables.MessageRow.ts))).scalar_one()
    assert stored == local
    assert stored.utcoffset() == timedelta(0)
    assert stored.hour == 14
    assert conversation.created_at.tzinfo is not None
    # the instant it was made, not one hours off (a local time read as UTC): between the calls around it
    assert before - timedelta(seconds=1) <= conversation.created_at <= datetime.now(UTC) + timedelta(seconds=1)


async def test_naive_timestamps_are_refused(db: Database):
    conversation = await stored_conversation(db, "slack:T:C:2")
    with pytest.raises(StatementError, match="naive datetime"):
        await stored_messages(db, conversation.id, NewMessage("m1", "U1", "alice", "hi", datetime(2026, 1, 1)))


@pytest.mark.postgres
async def test_a_missing_postgres_database_is_unavailable_not_a_migration_bug(postgres_url: str):
    db = Database(postgres_url.rsplit("/", 1)[0] + "/docbot_t_does_not_exist")
    try:
        with pytest.raises(StorageUnavailable, match="does not exist"):
            await db.migrate()
        with pytest.raises(StorageUnavailable):
            async with db.session() as session:
                await session.execute(text("SELECT 1"))
    finally:
        await db.dispose()


async def test_errors_raised_inside_a_session_are_not_disguised(db: Database):
    with pytest.raises(FileNotFoundError):
        async with db.session():
            raise FileNotFoundError("a file the caller was reading")


def _migrate_to(connection: Connection, target: str, *, down: bool = False) -> None:
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    config.attributes["connection"] = connection
    if target == "base" or down:
        command.downgrade(config, target)
    else:
        command.upgrade(config, target)


async def test_downgrade_to_base_and_back(db: Database):
    async with db.engine.begin() as connection:
        await connection.run_sync(_migrate_to, "base")
    async with db.engine.connect() as connection:
        assert await connection.run_sync(_table_names) & OPERATIONAL_TABLES == set()
    await db.migrate()
    async with db.engine.connect() as connection:
        assert await connection.run_sync(_table_names) >= OPERATIONAL_TABLES


async def _a_run_with_a_hop(db: Database, thread_key: str) -> None:
    """One run of a new conversation, with one hop (what a migration that copies `runs` would cascade away)."""
    conversation = await stored_conversation(db, thread_key)
    now = datetime.now(UTC)
    async with db.session() as session:
        session.add(tables.RunRow(id="r1", conversation_id=conversation.id, message_id="m1", started_at=now,
                                  finished_at=now, status="answered", total_ms=1.0))  # fmt: skip
        await session.flush()
        session.add(tables.HopRow(run_id="r1", seq=0, role="retrieve", decision="-", started_at=now,
                                  duration_ms=1.0, strategy="hybrid"))  # fmt: skip


async def test_dropping_a_column_of_runs_keeps_its_hops(backend: str, backend_url: str | None, tmp_path: Path):
    # hops reference runs ON DELETE CASCADE: had 0008 copied runs on SQLite (batch's copy-and-drop, foreign keys on),
    # every hop would be gone
    db = await make_database(backend, tmp_path, backend_url, migrate=False)
    try:
        async with db.engine.begin() as connection:
            await connection.run_sync(_migrate_to, "0007_team_answers")
        await _a_run_with_a_hop(db, "slack:T:C:3")
        await db.migrate()
        async with db.engine.connect() as connection:
            assert (await connection.execute(text("SELECT count(*) FROM hops"))).scalar_one() == 1
            assert await connection.run_sync(_drift) == []
    finally:
        await drop_database(db)


async def test_downgrading_past_columns_of_runs_keeps_its_hops(backend: str, backend_url: str | None, tmp_path: Path):
    # the downgrades of 0004 (runs.reply) and 0005 (runs.event_key) drop a column of runs: the same cascade as above
    db = await make_database(backend, tmp_path, backend_url)
    try:
        await _a_run_with_a_hop(db, "slack:T:C:4")
        async with db.engine.begin() as connection:
            await connection.run_sync(_migrate_to, "0003_front_door", down=True)
        async with db.engine.connect() as connection:
            assert (await connection.execute(text("SELECT count(*) FROM runs"))).scalar_one() == 1
            assert (await connection.execute(text("SELECT count(*) FROM hops"))).scalar_one() == 1
    finally:
        await drop_database(db)
