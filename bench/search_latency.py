"""Search latency and ingest throughput.

- Local vector index: query p50/p95 over random unit vectors (384 dims) in four collections, querying one (the
  collection filter applies before top-k). Baseline: a bare numpy matrix product and top-k over the same matrix,
  without ids or filtering, measured in the same run.
- Hybrid retriever (keywords, embeddings, crumbs, summaries, fusion) over the fixture manual with the real E5
  embedder, on the fixture questions; baseline: embedding-only search (query embedding + vector index).
- Ingest: chunks per second through the real Ingestor (reading, chunking, E5 passage embeddings, SQLite rows, index)
  of the fixture manual copied into several collections; baseline: the embedder alone on the same chunk texts.

    .venv/bin/python -m bench.search_latency [--sizes 10000,100000] [--queries 200] [--collections 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.retrieval import FIXTURE_MANUAL, fixture_questions, folder_to_seed
from bot.evaluation import p50_p95
from bot.logs import configure_logging
from pipeline.types import Embedder, SearchRequest
from storage.db import Database
from storage.embedder import E5Embedder
from storage.ingest import Ingestor
from storage.ingest.ingestor import embedding_text
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever
from storage.vector_index import VectorRecord

DIM = 384
TOP_K = 20
COLLECTIONS = ("a", "b", "c", "d")


def _unit(rng: np.random.Generator, n: int, dim: int) -> npt.NDArray[np.float32]:
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def _label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


async def vector_latency(n: int, queries: int = 200, dim: int = DIM, seed: int = 0) -> dict[str, float]:
    """p50/p95 ms of `LocalVectorIndex.query` with a one-collection filter, and of the bare numpy baseline."""
    rng = np.random.default_rng(seed)
    matrix = _unit(rng, n, dim)
    probes = _unit(rng, queries, dim)
    index = LocalVectorIndex(dim, initial_capacity=n)
    await index.upsert(
        [VectorRecord(f"c{i}", matrix[i], f"d{i}", "", "", (), "", COLLECTIONS[i % len(COLLECTIONS)]) for i in range(n)]
    )
    ours: list[float] = []
    bare: list[float] = []
    for probe in probes[: min(10, queries)]:  # warm caches
        await index.query(probe, top_k=TOP_K, collections=("a",))
    for probe in probes:
        started = time.perf_counter()
        matches = await index.query(probe, top_k=TOP_K, collections=("a",))
        ours.append((time.perf_counter() - started) * 1000)
        assert len(matches) == min(TOP_K, (n + 3) // 4)
        started = time.perf_counter()
        scores = matrix @ probe
        top = np.argpartition(-scores, TOP_K - 1)[:TOP_K] if n > TOP_K else np.arange(n)
        top[np.argsort(-scores[top])]
        bare.append((time.perf_counter() - started) * 1000)
    p50, p95 = p50_p95(ours)
    _, b95 = p50_p95(bare)
    label = _label(n)
    return {f"search_p50_ms_{label}": p50, f"search_p95_ms_{label}": p95, f"search_baseline_p95_ms_{label}": b95}


@dataclass(frozen=True, slots=True)
class IngestFigures:
    chunks: int
    seconds: float
    baseline_seconds: float

    @property
    def per_s(self) -> float:
        return self.chunks / self.seconds

    @property
    def baseline_per_s(self) -> float:
        return self.chunks / self.baseline_seconds


async def ingest_and_search(
    collections: int = 10, queries: int | None = None, *, embedder: Embedder | None = None
) -> dict[str, Any]:
    """Ingest the fixture manual into `collections` collections (timed), then time hybrid and dense-only search."""
    embedder = embedder or E5Embedder()
    await embedder.embed_passages(["warm up the model"])  # loading the model is not ingest time
    await embedder.embed_queries(["warm up"])
    with tempfile.TemporaryDirectory() as scratch:
        db = Database(f"sqlite+aiosqlite:///{scratch}/bench.db")
        await db.migrate()
        index = LocalVectorIndex(embedder.dim)
        ingestor = Ingestor(db, embedder, index)
        docs = folder_to_seed(FIXTURE_MANUAL)
        texts = [[embedding_text(c["crumbs"], c["text"]) for c in d["chunks"]] for d in docs]
        chunks = embedded = 0
        seconds = baseline_seconds = 0.0
        for n in range(collections):  # interleaved, so both see the same background load
            started = time.perf_counter()
            report = await ingestor.ingest([str(FIXTURE_MANUAL)], collection=f"c{n}")
            seconds += time.perf_counter() - started
            chunks += report.chunks
            started = time.perf_counter()
            for doc_texts in texts:  # one call per document, as the ingestor does
                embedded += len(await embedder.embed_passages(doc_texts))
            baseline_seconds += time.perf_counter() - started
        # the baseline embeds what the ingestor embedded, scaled if chunking differs slightly
        ingest = IngestFigures(chunks, seconds, baseline_seconds * chunks / max(embedded, 1))

        retriever = HybridRetriever(db, embedder, index)
        await retriever.load()
        questions = [str(p["question"]) for p in fixture_questions()]
        if queries is not None:
            questions = questions[:queries]
        hybrid: list[float] = []
        dense: list[float] = []
        for question in questions:
            started = time.perf_counter()
            await retriever.search(SearchRequest(text=question, top_k=8, collections=("c0",)))
            hybrid.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            vector = (await embedder.embed_queries([question]))[0]
            await index.query(vector, top_k=50, collections=("c0",))
            dense.append((time.perf_counter() - started) * 1000)
        await db.dispose()
    h50, h95 = p50_p95(hybrid)
    _, d95 = p50_p95(dense)
    return {
        "hybrid_p50_ms": h50,
        "hybrid_p95_ms": h95,
        "hybrid_baseline_p95_ms": d95,
        "ingest_chunks_per_s": ingest.per_s,
        "ingest_baseline_chunks_per_s": ingest.baseline_per_s,
        "ingest_chunks": ingest.chunks,
    }


async def run(
    sizes: Sequence[int] = (10_000, 100_000),
    queries: int = 200,
    collections: int = 10,
    hybrid_queries: int | None = None,
    *,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for n in sizes:
        figures.update(await vector_latency(n, queries))
    figures.update(await ingest_and_search(collections, hybrid_queries, embedder=embedder))
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.search_latency", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="index sizes, comma-separated")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--collections", type=int, default=10, help="copies of the fixture manual to ingest")
    parser.add_argument("--vectors-only", action="store_true", help="only the vector index latency")
    args = parser.parse_args(argv)
    configure_logging("WARNING")
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.vectors_only:
        figures: dict[str, Any] = {}
        for n in sizes:
            figures.update(asyncio.run(vector_latency(n, args.queries)))
        print(json.dumps(figures))
        return
    print(json.dumps(asyncio.run(run(sizes, args.queries, args.collections)), indent=2))


def vector_latency_one_blas_thread(sizes: Sequence[int], queries: int) -> dict[str, float]:
    """`vector_latency` in a child process whose BLAS runs one thread (`OPENBLAS_NUM_THREADS=1` and friends):
    a matrix-vector product gains nothing from threads on a small box where other work competes for the cores."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "bench.search_latency", "--vectors-only", "--queries", str(queries),
            "--sizes", ",".join(str(n) for n in sizes)]  # fmt: skip
    repo = Path(__file__).resolve().parent.parent
    done = subprocess.run(argv, env=env, cwd=repo, capture_output=True, text=True, check=True, timeout=600)
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return {f"{key}_blas1": value for key, value in figures.items()}


if __name__ == "__main__":
    main()
