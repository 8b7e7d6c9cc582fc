"""An index that fails during ingest loses nothing: the database keeps the old state and the next ingest retries."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from storage.db import Database
from storage.doc_tables import DocumentRow
from storage.embedder import HashingEmbedder
from storage.ingest.ingestor import Ingestor
from storage.local_index import LocalVectorIndex
from storage.vector_index import VectorIndexUnavailable, VectorRecord
from tests.storage.test_ingest import count

pytestmark = pytest.mark.integration


class FlakyIndex(LocalVectorIndex):
    """Fails every upsert while `down` is set."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.down = False

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        if self.down:
            raise VectorIndexUnavailable("flaky", "upsert", "server_error", attempts=3)
        await super().upsert(records)


async def test_a_failed_upsert_leaves_the_document_for_the_next_ingest(sqlite_db: Database, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\n## Setup\n\nPlug the alpha unit in and wait for the green light.\n")
    embedder = HashingEmbedder()
    index = FlakyIndex(embedder.dim)
    ingestor = Ingestor(sqlite_db, embedder, index)

    index.down = True
    with pytest.raises(VectorIndexUnavailable):
        await ingestor.ingest([str(docs)])
    assert await count(sqlite_db, DocumentRow) == 0  # not marked as ingested, so not skipped next time
    assert await index.count() == 0

    index.down = False
    report = await ingestor.ingest([str(docs)])
    assert report.added == 1 and report.embedded > 0
    assert await count(sqlite_db, DocumentRow) == 1
    assert await index.count() == report.chunks
