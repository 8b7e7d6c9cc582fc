"""Pinecone behind the real ingestion and hybrid search: the reindex migration, and the same search figures as local."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from pydantic import SecretStr

from pipeline.types import SearchRequest, SearchResponse
from storage.db import Database
from storage.embedder import E5Embedder, HashingEmbedder
from storage.ingest import Ingestor
from storage.local_index import LocalVectorIndex
from storage.pinecone_index import PineconeIndex, embedding_records, reindex_from_database
from storage.search.retriever import HybridRetriever
from storage.vector_index import VectorIndexUnavailable
from tests.fakes.pinecone_server import FakePinecone
from tests.storage.dbutil import drop_database, make_database

pytestmark = pytest.mark.integration

MANUAL = Path(__file__).resolve().parent.parent / "fixtures" / "manual"

# Questions in our own words about the fixture manual, with the section that answers each (None: off-topic).
QUESTIONS: list[tuple[str, str | None]] = [
    ("how do I pair my remote with the hub", "pairing-the-remote-with-the-hub"),
    ("the remote stopped responding, what batteries does it take", "replacing-the-remote-batteries"),
    ("what does error E-2041 mean", "e-2041-the-hub-is-too-hot"),
    ("it says the storage is full", "e-3307-storage-is-full"),
    ("stop my kids from watching films for adults", "setting-a-parental-control-pin"),
    ("I forgot the PIN", "resetting-a-forgotten-pin"),
    ("connect wireless headphones", "connecting-bluetooth-headphones"),
    ("the wifi keeps disconnecting", "fixing-a-slow-or-dropping-connection"),
    ("use a network cable instead of wireless", "using-a-wired-ethernet-connection"),
    ("erase the recordings of what I said", "deleting-your-voice-history"),
    ("reset the device to how it was when new", "restoring-factory-settings"),
    ("can the hub hang on the wall", "mounting-the-hub-on-a-wall"),
    ("Wie verbinde ich die Fernbedienung mit dem Hub?", "pairing-the-remote-with-the-hub"),
    ("¿Cómo actualizo el software?", "installing-software-updates"),
    ("Comment baisser le son la nuit ?", "night-mode"),
    ("what is the capital of Australia", None),
    ("recipe for a lemon cake", None),
]


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = await make_database("sqlite", tmp_path)
    try:
        yield database
    finally:
        await drop_database(database)


@pytest.fixture
async def fake() -> AsyncIterator[FakePinecone]:
    async with FakePinecone() as server:
        yield server


def pinecone(fake: FakePinecone, dimension: int) -> PineconeIndex:
    return PineconeIndex(
        api_key=SecretStr(fake.api_key), index_name="manual", dimension=dimension, host=fake.url, ready_poll_s=0.01
    )


async def test_reindex_moves_the_local_corpus_without_reading_sources_or_embedding(
    db: Database, fake: FakePinecone
) -> None:
    embedder, local = HashingEmbedder(64), LocalVectorIndex(64)
    await Ingestor(db, embedder, local).ingest([str(MANUAL)])
    await Ingestor(db, embedder, local).ingest([str(MANUAL)], collection="support")
    embedded = embedder.passages_embedded
    target = pinecone(fake, 64)
    try:
        report = await reindex_from_database(db, target)

        assert embedder.passages_embedded == embedded  # nothing re-embedded
        assert report.upserted == report.read == await local.count() == report.target_count
        assert set(report.per_collection) == {"default", "support"}
        assert {ns: len(fake.stored_ids("manual", ns)) for ns in ("default", "support")} == report.per_collection
        queries = await embedder.embed_queries(["pair the remote", "factory reset", "voice history"])
        for query in queries:
            for collections in (["default"], ["support"], ["default", "support"]):
                expected = await local.query(query, top_k=5, collections=collections)
                got = await target.query(query, top_k=5, collections=collections)
                assert np.allclose([m.score for m in got], [m.score for m in expected], atol=1e-5)
                truth = local.scores_for(query, [m.id for m in got])  # same ranking, up to the order of ties
                assert all(abs(truth[m.id] - m.score) < 1e-5 for m in got)
        again = await reindex_from_database(db, target)  # idempotent
        assert again.target_count == report.target_count
    finally:
        await target.close()


async def test_ingest_straight_into_pinecone_updates_and_removes_vectors(
    db: Database, fake: FakePinecone, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n## One\nfirst part\n## Two\nsecond part\n", encoding="utf-8")
    (docs / "b.md").write_text("# Beta\n## Only\nthe only part\n", encoding="utf-8")
    target = pinecone(fake, 64)
    try:
        ingestor = Ingestor(db, HashingEmbedder(64), target)
        await ingestor.ingest([str(docs)])
        first = fake.stored_ids("manual", "default")
        (docs / "a.md").write_text("# Alpha\n## One\nfirst part, changed\n", encoding="utf-8")
        (docs / "b.md").unlink()
        fake.clear_calls()
        await ingestor.ingest([str(docs)])
        after = fake.stored_ids("manual", "default")
    finally:
        await target.close()
    assert len(first) >= 3 and len(after) == 1 and after < first
    # vectors of the changed document go up first, then its vanished section and the removed document go away
    assert [c.path for c in fake.calls] == ["/vectors/upsert", "/vectors/delete", "/vectors/delete"]


async def test_recorded_calls_of_an_ingest_a_reingest_and_a_filtered_query(
    db: Database, fake: FakePinecone, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "remote.md").write_text(
        "# Remote\n## Pairing\nHold Home and Back.\n## Batteries\nTwo AAA cells.\n", encoding="utf-8"
    )
    (docs / "wifi.md").write_text("# Wi-Fi\n## Joining a network\nOpen Settings, then Network.\n", encoding="utf-8")
    embedder = HashingEmbedder(64)
    target = pinecone(fake, 64)
    try:
        ingestor = Ingestor(db, embedder, target)
        await ingestor.ingest([str(docs)], collection="manual")
        ingest = [c.summary() for c in fake.calls]
        fake.clear_calls()

        (docs / "remote.md").write_text(
            "# Remote\n## Pairing\nHold Home and Back for five seconds.\n", encoding="utf-8"
        )
        await ingestor.ingest([str(docs)], collection="manual")  # wifi.md is unchanged: nothing is sent for it
        reingest = [c.summary() for c in fake.calls]
        fake.clear_calls()

        retriever = HybridRetriever(db, embedder, target)
        response = await retriever.search(SearchRequest(text="pair the remote", collections=("manual",), top_k=3))
        query = [c.summary() for c in fake.calls]
    finally:
        await target.close()

    print("\n-- ingest\n" + "\n".join(ingest))
    print("-- re-ingest with one changed document\n" + "\n".join(reingest))
    print("-- filtered query\n" + "\n".join(query))
    assert [line.split(" ")[2] for line in ingest] == [
        "/indexes/manual", "/indexes", "/indexes/manual", "/indexes/manual", "/vectors/upsert"
    ]  # fmt: skip  (both documents' vectors in one upsert: changed documents are embedded and sent in groups)
    assert [line.split(" ")[2] for line in reingest] == ["/vectors/upsert", "/vectors/delete"]
    assert '"ids": ["' in reingest[1] and reingest[1].count("-0001") == 1  # only the section that went away
    assert len(query) == 1 and '"namespace": "manual"' in query[0]
    assert '"filter": {"collection": {"$eq": "manual"}}' in query[0]
    assert response.hits and response.hits[0].section == "pairing"


def figures(responses: list[SearchResponse]) -> dict[str, float]:
    ranks: list[int | None] = []
    for (_, gold), response in zip(QUESTIONS, responses, strict=True):
        if gold is not None:
            sections = [h.section for h in response.hits]
            ranks.append(sections.index(gold) + 1 if gold in sections else None)
    answerable = len(ranks)
    return {
        "hit@1": sum(r == 1 for r in ranks) / answerable,
        "hit@3": sum(r is not None and r <= 3 for r in ranks) / answerable,
        "mrr": sum(1 / r for r in ranks if r) / answerable,
    }


class QueryCache:
    """E5 with the question vectors computed once, in one batch, and shared by both backends' searches."""

    def __init__(self, inner: E5Embedder) -> None:
        self._inner = inner
        self._queries: dict[str, np.ndarray] = {}

    @property
    def dim(self) -> int:
        return self._inner.dim

    async def warm(self, texts: list[str]) -> None:
        self._queries.update(zip(texts, await self._inner.embed_queries(texts), strict=True))

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        missing = [t for t in texts if t not in self._queries]
        if missing:
            await self.warm(missing)
        return np.vstack([self._queries[t] for t in texts]).astype(np.float32)

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._inner.embed_passages(texts)


@pytest.mark.slow
async def test_search_quality_is_the_same_with_the_pinecone_backend(db: Database, fake: FakePinecone) -> None:
    embedder, local = QueryCache(E5Embedder()), LocalVectorIndex(384)
    await embedder.warm([q for q, _ in QUESTIONS])
    await Ingestor(db, embedder, local).ingest([str(MANUAL)])
    target = pinecone(fake, 384)
    try:
        await reindex_from_database(db, target)
        results: dict[str, list[SearchResponse]] = {}
        for name, index in (("local", local), ("pinecone", target)):
            retriever = HybridRetriever(db, embedder, index)
            results[name] = [await retriever.search(SearchRequest(text=q, top_k=5)) for q, _ in QUESTIONS]
    finally:
        await target.close()

    local_figures, pinecone_figures = figures(results["local"]), figures(results["pinecone"])
    print(f"\nfixture manual, {len(QUESTIONS)} questions: local {local_figures}, pinecone {pinecone_figures}")
    assert pinecone_figures == local_figures
    assert local_figures["hit@3"] >= 0.5  # the comparison is about real rankings, not two empty lists
    for mine, theirs in zip(results["pinecone"], results["local"], strict=True):
        assert [(h.doc_id, h.section) for h in mine.hits] == [(h.doc_id, h.section) for h in theirs.hits]
        assert mine.quality == theirs.quality
        assert [h.score for h in mine.hits] == pytest.approx([h.score for h in theirs.hits], abs=1e-4)


async def test_an_ingest_that_pinecone_interrupted_is_finished_by_ingesting_again(
    db: Database, fake: FakePinecone
) -> None:
    target = PineconeIndex(
        api_key=SecretStr(fake.api_key),
        index_name="manual",
        dimension=64,
        host=fake.url,
        ready_poll_s=0.01,
        write_deadline_s=0.3,
    )
    try:
        await target.open()
        fake.fail("503", plane="data", path="/vectors/upsert")
        with pytest.raises(VectorIndexUnavailable):
            await Ingestor(db, HashingEmbedder(64), target).ingest([str(MANUAL)])
        assert [r.id async for r in embedding_records(db, dim=64)] == []  # nothing marked as ingested
        fake.heal()

        await Ingestor(db, HashingEmbedder(64), target).ingest([str(MANUAL)])
        stored = [r.id async for r in embedding_records(db, dim=64)]
        assert stored and fake.stored_ids("manual", "default") == set(stored)
    finally:
        await target.close()
