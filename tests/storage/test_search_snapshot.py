"""The search snapshot: restored at start without reading chunk rows, brought up to date by reading only the
documents that changed (on the replica that ingested and on one that did not), and rebuilt when unreadable."""

from __future__ import annotations

import gc
import shutil
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import event

from pipeline.types import SearchRequest
from storage.db import Database
from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever, keyword
from storage.search.keyword import KeywordLevel
from storage.search.tokenize import tokenize

MANUAL = Path(__file__).resolve().parent.parent / "fixtures" / "manual"
BASE = "https://docs.example.com/manual"


@contextmanager
def statements(db: Database) -> Iterator[list[tuple[str, Any]]]:
    """Every SQL statement (with its parameters) the engine runs inside the block."""
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        seen.append((statement, parameters))

    event.listen(db.engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", record)


def reads_of(seen: list[tuple[str, Any]], table: str) -> list[tuple[str, Any]]:
    return [(s, p) for s, p in seen if s.lstrip().upper().startswith("SELECT") and f"FROM {table}" in s]


def replica(db: Database, folder: Path | None) -> tuple[HybridRetriever, LocalVectorIndex]:
    index = LocalVectorIndex(64)
    return HybridRetriever(db, HashingEmbedder(), index, snapshot_dir=folder), index


async def urls(retriever: HybridRetriever, question: str) -> list[str]:
    response = await retriever.search(SearchRequest(text=question, top_k=5))
    return [h.url for h in response.hits]


@pytest.fixture
def manual_copy(tmp_path: Path) -> Path:
    target = tmp_path / "manual"
    shutil.copytree(MANUAL, target)
    return target


@pytest.mark.integration
async def test_a_restart_restores_the_snapshot_without_reading_chunks(db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    first, first_index = replica(db, folder)
    await Ingestor(db, HashingEmbedder(), first_index, on_change=first.reload).ingest([str(MANUAL)], base_url=BASE)
    expected = await urls(first, "replace the remote batteries")
    assert expected

    restarted, index = replica(db, folder)
    with statements(db) as seen:
        await restarted.load()
    assert not reads_of(seen, "chunks") and not reads_of(seen, "embeddings")
    assert await index.count() == await first_index.count()
    assert await urls(restarted, "replace the remote batteries") == expected
    hit = (await restarted.search(SearchRequest(text="replace the remote batteries", top_k=1))).hits[0]
    assert "batter" in hit.text.lower()  # texts come from the memory-mapped snapshot


@pytest.mark.integration
async def test_an_edited_document_is_the_only_one_read_by_a_replica_that_did_not_ingest(
    db: Database, tmp_path: Path, manual_copy: Path
) -> None:
    ingesting, ingesting_index = replica(db, tmp_path / "a")
    ingestor = Ingestor(db, HashingEmbedder(), ingesting_index, on_change=ingesting.reload)
    await ingestor.ingest([str(manual_copy)], base_url=BASE)
    other, other_index = replica(db, tmp_path / "b")
    await other.load()
    assert not any("zanzibar" in u for u in await urls(other, "zanzibar quokka calibration"))

    page = manual_copy / "privacy.md"
    page.write_text(page.read_text() + "\n\n## Zanzibar quokka calibration\n\nCalibrate the quokka sensor first.\n")
    await ingestor.ingest([str(manual_copy)], base_url=BASE)
    with statements(db) as seen:
        await other.load()
    chunk_reads = reads_of(seen, "chunks")
    assert len(chunk_reads) == 1
    parameters = [str(v) for v in (chunk_reads[0][1] or ())]
    changed_ids = {h.doc_id for h in (await ingesting.search(SearchRequest(text="zanzibar quokka", top_k=1))).hits}
    assert set(parameters) & changed_ids == changed_ids and len(changed_ids) == 1
    assert any(u.endswith("privacy.md#zanzibar-quokka-calibration") for u in await urls(other, "zanzibar quokka"))
    assert await other_index.count() == await ingesting_index.count()


@pytest.mark.integration
async def test_a_removed_document_leaves_keywords_and_vectors(db: Database, tmp_path: Path, manual_copy: Path) -> None:
    ingesting, ingesting_index = replica(db, tmp_path / "a")
    ingestor = Ingestor(db, HashingEmbedder(), ingesting_index, on_change=ingesting.reload)
    await ingestor.ingest([str(manual_copy)], base_url=BASE)
    other, other_index = replica(db, tmp_path / "b")
    await other.load()
    before = await other_index.count()
    assert any("remote.md" in u for u in await urls(other, "replace the remote batteries"))

    (manual_copy / "getting-started" / "remote.md").unlink()
    await ingestor.ingest([str(manual_copy)], base_url=BASE)
    await other.load()
    assert not any("remote.md" in u for u in await urls(other, "replace the remote batteries"))
    assert await other_index.count() == await ingesting_index.count() < before
    restarted, restarted_index = replica(db, tmp_path / "b")
    await restarted.load()  # the snapshot saved after the removal
    assert await restarted_index.count() == await other_index.count()
    assert not any("remote.md" in u for u in await urls(restarted, "replace the remote batteries"))


@pytest.mark.integration
async def test_a_replaced_snapshot_is_freed_by_reference_counting_alone_and_the_live_one_frozen(
    db: Database, tmp_path: Path, manual_copy: Path
) -> None:
    """With `freeze_snapshots` (as `build_app` runs it) the snapshot in use is out of the cyclic collector's walks,
    so an old one must need no collector to be freed: with the collector off, the one an update replaced is gone as
    soon as the update is done. A reference cycle in a snapshot would keep every replaced one in memory."""
    index = LocalVectorIndex(64)
    retriever = HybridRetriever(db, HashingEmbedder(), index, snapshot_dir=tmp_path / "a", freeze_snapshots=True)
    ingestor = Ingestor(db, HashingEmbedder(), index, on_change=retriever.reload)
    await ingestor.ingest([str(manual_copy)], base_url=BASE)
    await retriever.wait_for_titles()
    assert gc.get_freeze_count() > 0
    old = weakref.ref(retriever.corpus)
    page = manual_copy / "privacy.md"
    page.write_text(page.read_text() + "\n\n## Zanzibar quokka calibration\n\nCalibrate the quokka sensor first.\n")
    gc.disable()
    try:
        await ingestor.ingest([str(manual_copy)], base_url=BASE)
        await retriever.wait_for_titles()  # the old snapshot's title task is over (cancelled or done)
        assert old() is None
    finally:
        gc.enable()
    assert any("zanzibar" in u for u in await urls(retriever, "zanzibar quokka calibration"))


@pytest.mark.integration
async def test_an_unreadable_snapshot_is_rebuilt_from_the_database(db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    first, first_index = replica(db, folder)
    await Ingestor(db, HashingEmbedder(), first_index, on_change=first.reload).ingest([str(MANUAL)], base_url=BASE)
    current = folder / (folder / "current").read_text()
    (current / "meta.json").write_text("{not json")

    restarted, index = replica(db, folder)
    await restarted.load()
    assert await index.count() == await first_index.count()
    assert await urls(restarted, "replace the remote batteries") == await urls(first, "replace the remote batteries")
    assert (folder / (folder / "current").read_text() / "meta.json").read_text().startswith('{"format"')


TEXTS = [
    "pair the remote with the hub",
    "replace the remote batteries",
    "",
    "connect bluetooth headphones",
    "night mode lowers loud sounds",
    "restore factory settings from the menu",
]


@pytest.mark.unit
@pytest.mark.parametrize("child_process", [False, True])
def test_an_updated_level_scores_like_one_built_from_scratch(
    monkeypatch: pytest.MonkeyPatch, child_process: bool
) -> None:
    if child_process:  # the path large corpora take: indexing in `python -m storage.search.keyword`
        monkeypatch.setattr(keyword, "PROCESS_BUILD_ROWS", 1)
    old = KeywordLevel(TEXTS)
    keep = np.array([0, 2, 3, 5], dtype=np.int64)
    added = ["remote control pairing button", "headphones volume"]
    [updated] = keyword.build_levels([old.table.splice(keep, added)])
    fresh = KeywordLevel([TEXTS[i] for i in keep] + added)
    for question in ("remote pairing", "headphones", "factory menu", "nothing matches"):
        tokens = tokenize(question)
        assert np.allclose(updated.scores(tokens), fresh.scores(tokens))
        assert updated.coverage(tokens) == pytest.approx(fresh.coverage(tokens))
