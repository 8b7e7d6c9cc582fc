"""LocalVectorIndex: exact top-k, strict collections, updates and deletes, loading from the embeddings table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor
from storage.local_index import LocalVectorIndex
from storage.vector_index import VectorRecord
from tests.storage.dbutil import drop_database, make_database

MANUAL = Path(__file__).resolve().parent.parent / "fixtures" / "manual"


def unit_vectors(n: int, dim: int, seed: int = 0) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def records(vectors: np.ndarray, collection_of: list[str]) -> list[VectorRecord]:
    return [
        VectorRecord(id=f"c{i}", vector=v, doc_id=f"d{i}", section="", title="", crumbs=(), url="", collection=c)
        for i, (v, c) in enumerate(zip(vectors, collection_of, strict=True))
    ]


@pytest.mark.unit
async def test_query_matches_brute_force_and_honours_collections() -> None:
    vectors = unit_vectors(500, 32)
    collections = ["a" if i % 3 else "b" for i in range(500)]
    index = LocalVectorIndex(32, initial_capacity=8)  # forces growth
    await index.upsert(records(vectors, collections))
    query = vectors[7]
    hits = await index.query(query, top_k=10, collections=["b"])
    expected = sorted((i for i in range(500) if collections[i] == "b"), key=lambda i: -float(vectors[i] @ query))[:10]
    assert [h.id for h in hits] == [f"c{i}" for i in expected]
    assert all(collections[int(h.id[1:])] == "b" for h in hits)
    everywhere = await index.query(query, top_k=3, collections=["a", "b"])
    assert everywhere[0].id == "c7" and everywhere[0].score == pytest.approx(1.0, abs=1e-5)
    assert await index.query(query, top_k=3, collections=["missing"]) == []


@pytest.mark.unit
async def test_upsert_replaces_and_delete_is_per_collection() -> None:
    vectors = unit_vectors(4, 8)
    index = LocalVectorIndex(8)
    await index.upsert(records(vectors, ["a", "a", "b", "b"]))
    await index.upsert(records(vectors[::-1].copy(), ["a", "a", "b", "b"]))  # same ids, new vectors
    assert await index.count() == 4
    assert (await index.query(vectors[3], top_k=1, collections=["a"]))[0].id == "c0"
    await index.delete(["c0", "c2"], "a")  # c2 lives in b: untouched
    assert await index.count() == 3
    remaining = {h.id for h in await index.query(vectors[0], top_k=10, collections=["a", "b"])}
    assert remaining == {"c1", "c2", "c3"}
    with pytest.raises(ValueError, match="shape"):
        await index.upsert(records(unit_vectors(1, 4), ["a"]))


@pytest.mark.integration
async def test_load_restores_the_index_from_the_database(tmp_path: Path) -> None:
    db = await make_database("sqlite", tmp_path)
    try:
        live = LocalVectorIndex(64)
        embedder = HashingEmbedder()
        await Ingestor(db, embedder, live).ingest([str(MANUAL)], collection="manual")
        restored = LocalVectorIndex(64)
        assert await restored.load(db) == await live.count()
        query = (await embedder.embed_queries(["night mode loud explosions"]))[0]
        assert await restored.query(query, top_k=5, collections=["manual"]) == await live.query(
            query, top_k=5, collections=["manual"]
        )
    finally:
        await drop_database(db)


@pytest.mark.unit
@pytest.mark.slow
async def test_query_at_100k_chunks_returns_the_exact_top_k_of_the_allowed_collection() -> None:
    """Speed at this size is a benchmark (`python -m bench.retrieval --latency`, p95 against bare numpy in the same
    run); here, that the filtered top-k at 100k x 384 is exactly numpy's."""
    index = LocalVectorIndex(384)
    vectors = unit_vectors(100_000, 384)
    collections = ["a" if i % 4 else "b" for i in range(100_000)]
    await index.upsert(records(vectors, collections))
    allowed = np.array([c == "a" for c in collections])
    for i in range(5):
        hits = await index.query(vectors[i], top_k=20, collections=["a"])
        scores = np.where(allowed, vectors @ vectors[i], -np.inf)
        expected = set(np.argsort(-scores)[:20].tolist())
        assert len(hits) == 20 and {int(h.id[1:]) for h in hits} == expected
