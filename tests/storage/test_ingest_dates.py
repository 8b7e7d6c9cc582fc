"""When a document last changed, as its source says (file time, HTTP Last-Modified, a seed's `updated_at`), kept
until its content changes; and documents made elsewhere stored under an origin of their own (`ingest_documents`)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp import web
from sqlalchemy import select

from storage.db import Database
from storage.doc_tables import DocumentRow
from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor, SourceChunk, SourceDoc
from storage.local_index import LocalVectorIndex
from tests.storage.dbutil import drop_database, make_database

pytestmark = pytest.mark.integration

MARCH = datetime(2025, 3, 2, 8, 30, tzinfo=UTC)


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = await make_database("sqlite", tmp_path)
    try:
        yield database
    finally:
        await drop_database(database)


async def changed_at(db: Database) -> dict[str, datetime]:
    async with db.session() as session:
        rows = await session.execute(select(DocumentRow.source, DocumentRow.updated_at))
        return {source: when for source, when in rows.all()}


async def test_a_file_is_dated_by_its_modification_time_until_its_text_changes(db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    page = folder / "pairing.md"
    page.write_text("# Pairing\n\nHold Home and Back for five seconds.\n")
    os.utime(page, (MARCH.timestamp(), MARCH.timestamp()))
    ingestor = Ingestor(db, HashingEmbedder(), LocalVectorIndex(64))
    await ingestor.ingest([str(folder)], base_url="https://docs.test")
    assert await changed_at(db) == {"https://docs.test/pairing.md": MARCH}

    os.utime(page)  # touched, same text: unchanged, still dated March
    assert (await ingestor.ingest([str(folder)], base_url="https://docs.test")).unchanged == 1
    assert await changed_at(db) == {"https://docs.test/pairing.md": MARCH}

    page.write_text("# Pairing\n\nHold Home and Back for ten seconds.\n")
    before = datetime.now(UTC)
    await ingestor.ingest([str(folder)], base_url="https://docs.test")
    assert (await changed_at(db))["https://docs.test/pairing.md"] >= before.replace(microsecond=0)


async def test_a_seed_record_and_a_web_page_say_when_they_changed(db: Database, tmp_path: Path) -> None:
    seed = tmp_path / "seed.jsonl"
    seed.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "source": "https://docs.test/a", "title": "A", "content": "Alpha text here.",
         "updated_at": "2024-05-06"},
        {"id": "b", "source": "https://docs.test/b", "title": "B", "content": "Beta text here.",
         "updated_at": "not a date"},
    ]))  # fmt: skip
    app = web.Application()

    async def page(_: web.Request) -> web.Response:
        return web.Response(text="<h1>Help</h1><p>Some help text.</p>", content_type="text/html",
                            headers={"Last-Modified": "Sun, 02 Mar 2025 08:30:00 GMT"})  # fmt: skip

    app.router.add_get("/help", page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/help"
    try:
        before = datetime.now(UTC).replace(microsecond=0)
        ingestor = Ingestor(db, HashingEmbedder(), LocalVectorIndex(64))
        await ingestor.ingest([str(seed), url])
    finally:
        await runner.cleanup()
    dates = await changed_at(db)
    assert dates["https://docs.test/a"] == datetime(2024, 5, 6, tzinfo=UTC)
    assert dates["https://docs.test/b"] >= before  # unreadable: when the ingest saw it
    assert dates[url] == MARCH


async def test_documents_made_elsewhere_fill_and_empty_their_own_origin(db: Database) -> None:
    changes: list[str] = []

    async def changed() -> None:
        changes.append("changed")

    index = LocalVectorIndex(64)
    ingestor = Ingestor(db, HashingEmbedder(), index, on_change=changed)
    doc = SourceDoc(id="answer-1", source="https://team/thread", title="Q?", crumbs=("Q?",), content="An answer.",
                    chunks=[SourceChunk("", "Q?", ("Q?",), "An answer.")], changed_at=MARCH)  # fmt: skip
    added = await ingestor.ingest_documents("answers/1", [doc], collection="team")
    assert (added.added, added.chunks) == (1, 1) and changes == ["changed"]
    assert await changed_at(db) == {"https://team/thread": MARCH}
    same = await ingestor.ingest_documents("answers/1", [doc], collection="team")
    assert same.unchanged == 1 and not same.changed and changes == ["changed"]
    emptied = await ingestor.ingest_documents("answers/1", [], collection="team")
    assert emptied.removed == 1 and await changed_at(db) == {} and await index.count() == 0
    assert changes == ["changed", "changed"]
