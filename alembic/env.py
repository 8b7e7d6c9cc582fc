"""Alembic environment (async recipe).

`storage.db.Database.migrate()` passes its own connection in `config.attributes["connection"]`; run by hand,
Alembic opens a `Database` on `-x url=...` or `sqlalchemy.url` in alembic.ini.
"""

from __future__ import annotations

import asyncio
import contextlib
from logging.config import fileConfig

from sqlalchemy.engine import Connection

import storage.tables
from alembic import context
from storage.base import Base
from storage.db import Database

with contextlib.suppress(ImportError):
    import storage.answer_tables  # registers the team answer tables
    import storage.doc_tables  # noqa: F401 - registers the document tables

config = context.config
target_metadata = Base.metadata

if config.config_file_name is not None and "connection" not in config.attributes:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database URL: pass -x url=... or set sqlalchemy.url in alembic.ini")
    return url


def _configure(**kwargs: object) -> None:
    context.configure(target_metadata=target_metadata, render_as_batch=True, compare_type=True, **kwargs)


def run_migrations_offline() -> None:
    _configure(url=_url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    _configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    db = Database(_url())  # creates the SQLite folder and sets the pragmas, as the service does
    try:
        async with db.engine.connect() as connection:
            await connection.run_sync(do_run_migrations)
            await connection.commit()
    finally:
        await db.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        asyncio.run(run_async_migrations())
    else:
        do_run_migrations(connection)


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
