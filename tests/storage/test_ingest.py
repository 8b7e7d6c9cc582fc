"""Ingestion into the document store and the vector index: folders, seeds, web pages, incremental updates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from aiohttp import web
from sqlalchemy import func, select

from pipeline.types import SearchRequest
from storage.db import Database
from storage.doc_tables import ChunkRow, DocumentRow, EmbeddingRow
from storage.embedder import HashingEmbedder
from storage.ingest import IngestError, Ingestor, corpus_version
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever

MANUAL = Path(__file__).resolve().parent.parent / "fixtures" / "manual"
BASE = "https://docs.example.com/manual"


@pytest.fixture
def manual_copy(tmp_path: Path) -> Path:
    target = tmp_path / "manual"
    shutil.copytree(MANUAL, target)
    return target


async def count(db: Database, model: type[DocumentRow] | type[ChunkRow] | type[EmbeddingRow]) -> int:
    async with db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(model)) or 0)


@pytest.mark.integration
async def test_markdown_folder_becomes_documents_chunks_and_vectors(sqlite_db: Database) -> None:
    embedder, index = HashingEmbedder(), LocalVectorIndex(64)
    progress: list[tuple[int, int, int, int]] = []
    report = await Ingestor(sqlite_db, embedder, index).ingest(
        [str(MANUAL)], base_url=BASE,
        on_progress=lambda p: progress.append((p.found, p.fetched, p.settled, p.chunks_embedded)),
    )  # fmt: skip
    files = [p for p in MANUAL.rglob("*") if p.suffix in (".md", ".txt")]
    assert report.added == len(files) and not report.skipped
    assert report.chunks == await count(sqlite_db, ChunkRow) == await count(sqlite_db, EmbeddingRow)
    assert await index.count() == report.chunks
    # the count is known once the folder is read, before anything is embedded, and moves as groups are stored
    assert progress[1] == (len(files), len(files), 0, 0)
    assert [settled for *_, settled, _ in progress] == sorted(settled for *_, settled, _ in progress)
    assert progress[-1] == (len(files), len(files), len(files), report.embedded)
    async with sqlite_db.session() as session:
        chunk = await session.scalar(select(ChunkRow).where(ChunkRow.title == "Pairing the remote with the hub"))
        doc = await session.scalar(select(DocumentRow).where(DocumentRow.title == "Error messages"))
    assert chunk is not None and doc is not None
    assert chunk.url == f"{BASE}/getting-started/remote.md#pairing-the-remote-with-the-hub"
    assert chunk.crumbs == ["Getting started", "The Corvid remote", "Pairing the remote with the hub"]
    assert "Home and Back" in chunk.text
    # derived fields were computed because a folder of Markdown has none
    assert doc.summary.startswith("Error E-2041 appears")
    flat = " ".join(doc.content.split())
    assert doc.keypoints and all(k in flat for k in doc.keypoints)
    assert "e" not in doc.keywords and doc.keywords
    assert await corpus_version(sqlite_db, "default") == 1


@pytest.mark.integration
async def test_default_citation_link_is_the_file_uri(sqlite_db: Database, manual_copy: Path) -> None:
    await Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64)).ingest([str(manual_copy / "privacy.md")])
    async with sqlite_db.session() as session:
        urls = set(await session.scalars(select(ChunkRow.url)))
    assert f"{(manual_copy / 'privacy.md').resolve().as_uri()}#deleting-your-voice-history" in urls


@pytest.mark.integration
async def test_reingest_is_incremental(db: Database, manual_copy: Path) -> None:
    embedder, index = HashingEmbedder(), LocalVectorIndex(64)
    # the same (deterministic) vectors, counted apart: the retriever embeds section titles on reload, not the ingest
    retriever = HybridRetriever(db, HashingEmbedder(), index)
    changes: list[int] = []

    async def changed() -> None:
        changes.append(1)
        await retriever.reload()

    ingestor = Ingestor(db, embedder, index, on_change=changed)
    first = await ingestor.ingest([str(manual_copy)], base_url=BASE)
    embedded_first = embedder.passages_embedded
    privacy = f"{BASE}/privacy.md#deleting-your-voice-history"
    before_removal = await retriever.search(SearchRequest(text="delete voice history Keep History switch"))
    assert before_removal.hits[0].url == privacy

    unchanged = await ingestor.ingest([str(manual_copy)], base_url=BASE)
    assert (unchanged.added, unchanged.updated, unchanged.removed) == (0, 0, 0)
    assert unchanged.unchanged == first.added
    assert embedder.passages_embedded == embedded_first  # nothing re-embedded
    assert len(changes) == 1 and await corpus_version(db, "default") == 1

    sound = manual_copy / "audio" / "sound.md"
    sound.write_text(sound.read_text() + "\n## Lip sync delay\n\nShift the audio by up to 200 ms in Settings.\n")
    (manual_copy / "privacy.md").unlink()
    before = await index.count()
    second = await ingestor.ingest([str(manual_copy)], base_url=BASE)
    assert (second.added, second.updated, second.removed) == (0, 1, 1)
    assert second.unchanged == first.added - 2
    assert second.chunks == 5  # sound.md stored again with its five chunks ...
    assert embedder.passages_embedded - embedded_first == second.embedded == 1  # ... of which only the new one embedded
    assert await index.count() == before + 1 - 2  # one section more, privacy.md's two sections gone
    async with db.session() as session:
        titles = set(await session.scalars(select(ChunkRow.title)))
        vectors = await session.scalar(select(func.count()).select_from(EmbeddingRow))
    assert "Lip sync delay" in titles and "Deleting your voice history" not in titles
    assert vectors == await index.count()
    assert len(changes) == 2 and await corpus_version(db, "default") == 2
    after_removal = await retriever.search(SearchRequest(text="delete voice history Keep History switch", top_k=50))
    assert all(not h.url.startswith(f"{BASE}/privacy.md") for h in after_removal.hits)
    lip_sync = await retriever.search(SearchRequest(text="lip sync delay 200 ms"))
    assert lip_sync.hits[0].title == "Lip sync delay"


@pytest.mark.integration
async def test_undecodable_file_is_skipped_and_named(sqlite_db: Database, manual_copy: Path) -> None:
    broken = manual_copy / "broken.md"
    broken.write_bytes(b"# Title\n\xff\xfe\x00\x81 not text")
    bad_seed = manual_copy / "bad.jsonl"
    bad_seed.write_text('{"id": 1, "content": "x"}\n{not json\n')
    report = await Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64)).ingest([str(manual_copy)])
    assert {s.name for s in report.skipped} == {str(broken.resolve()), str(bad_seed.resolve())}
    assert any(str(broken.resolve()) in w for w in report.warnings)
    assert report.added == 10


@pytest.mark.unit
async def test_folder_without_readable_files_is_an_error(sqlite_db: Database, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "picture.png").write_bytes(b"\x89PNG")
    ingestor = Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64))
    with pytest.raises(IngestError) as caught:
        await ingestor.ingest([str(empty)])
    assert caught.value.source == str(empty) and caught.value.reason == "no supported files"
    (empty / "bad.md").write_bytes(b"\xff\xfe\x00\x00")
    with pytest.raises(IngestError) as caught:
        await ingestor.ingest([str(empty)])
    assert caught.value.reason == "unreadable"
    with pytest.raises(IngestError) as caught:
        await ingestor.ingest([str(tmp_path / "nowhere")])
    assert caught.value.reason == "missing"


SEED = [
    {
        "id": "pair-remote",
        "source": "https://help.example.com/remote",
        "crumbs": ["Remote", "Pairing"],
        "description": "",
        "content": "Hold Home and Back for five seconds. The light blinks blue three times.",
        "summary": "",
        "keypoints": [],
        "keywords": [],
        "chunks": [],
    },
    {
        "id": "reset",
        "source": "https://help.example.com/reset",
        "crumbs": "System > Reset",
        "content": "# Reset\n\n## Soft reset\n\nHold Back for ten seconds.\n\n## Factory reset\n\nErases everything.",
        "summary": "How to reset the box.",
        "keypoints": ["Soft reset keeps data."],
        "keywords": ["reset", "factory"],
        "chunks": [{"title": "Soft reset", "text": "Hold Back for ten seconds."}, "Erases everything."],
    },
]


@pytest.mark.integration
@pytest.mark.parametrize("layout", ["jsonl", "json-list", "json-object"])
async def test_seed_records_keep_given_fields_and_fill_empty_ones(
    sqlite_db: Database, tmp_path: Path, layout: str
) -> None:
    path = tmp_path / ("seed.jsonl" if layout == "jsonl" else "seed.json")
    if layout == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in SEED))
    elif layout == "json-list":
        path.write_text(json.dumps(SEED))
    else:
        path.write_text(json.dumps({"documents": SEED}))
    report = await Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64)).ingest([str(path)], collection="kb")
    assert report.added == 2
    async with sqlite_db.session() as session:
        docs = {d.source: d for d in await session.scalars(select(DocumentRow))}
        chunks = list(await session.scalars(select(ChunkRow).order_by(ChunkRow.doc_id, ChunkRow.ord)))
    reset, remote = docs["https://help.example.com/reset"], docs["https://help.example.com/remote"]
    assert reset.summary == "How to reset the box." and reset.keywords == ["reset", "factory"]
    assert reset.crumbs == ["System", "Reset"] and reset.collection == "kb"
    assert remote.summary.startswith("Hold Home and Back") and remote.keywords  # computed
    reset_chunks = [c for c in chunks if c.doc_id == reset.id]
    assert [c.url for c in reset_chunks] == ["https://help.example.com/reset#soft-reset", "https://help.example.com/reset"]
    assert all(c.collection == "kb" for c in chunks)


@pytest.mark.integration
async def test_web_page_by_url(sqlite_db: Database) -> None:
    page = """<html><head><title>Hub help</title><script>var x = 1;</script></head><body>
    <nav>Home | Docs</nav><h1>Hub help</h1><p>Intro text about the hub.</p>
    <h2 id="wifi-setup">Wi-Fi setup</h2><p>Open <b>Settings</b> and pick a network.</p>
    <ul><li>2.4 GHz</li><li>5 GHz</li></ul>
    <h2>Resetting</h2><p>Hold the button.</p></body></html>"""
    app = web.Application()

    async def help_page(_: web.Request) -> web.Response:
        return web.Response(text=page, content_type="text/html")

    async def gone(_: web.Request) -> web.Response:
        return web.Response(status=404)

    app.router.add_get("/help", help_page)
    app.router.add_get("/gone", gone)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        ingestor = Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64))
        report = await ingestor.ingest([f"http://127.0.0.1:{port}/help"])
        with pytest.raises(IngestError) as caught:
            await ingestor.ingest([f"http://127.0.0.1:{port}/gone"])
    finally:
        await runner.cleanup()
    assert report.added == 1 and caught.value.reason == "http error"
    async with sqlite_db.session() as session:
        chunks = {c.title: c for c in await session.scalars(select(ChunkRow))}
    wifi = chunks["Wi-Fi setup"]
    assert wifi.url == f"http://127.0.0.1:{port}/help#wifi-setup"  # the page's own anchor
    assert "pick a network" in wifi.text and "5 GHz" in wifi.text and "var x" not in wifi.text
    assert chunks["Resetting"].url.endswith("#resetting") and "Home | Docs" not in chunks["Hub help"].text


@pytest.mark.integration
async def test_a_docbotignore_leaves_pages_out_and_a_newly_ignored_page_is_removed(
    sqlite_db: Database, manual_copy: Path
) -> None:
    ingestor = Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64))
    first = await ingestor.ingest([str(manual_copy)], base_url=BASE)
    (manual_copy / ".docbotignore").write_text("# not for answers\nprivacy.md\naudio/*.md\n!audio/sound.md\n")
    second = await ingestor.ingest([str(manual_copy)], base_url=BASE)
    async with sqlite_db.session() as session:
        sources = set(await session.scalars(select(DocumentRow.source)))
    assert not any(s.startswith(f"{BASE}/privacy.md") for s in sources)
    assert any(s.startswith(f"{BASE}/audio/sound.md") for s in sources)  # re-included by the negated pattern
    audio = [p for p in (manual_copy / "audio").glob("*.md") if p.name != "sound.md"]
    assert second.removed == 1 + len(audio) and second.added == 0
    assert second.unchanged == first.added - second.removed
