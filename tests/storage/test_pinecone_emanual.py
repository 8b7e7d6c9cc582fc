"""Issue 8's figure: e-manual search quality with the Pinecone backend (through the fake) equals the local index's.

Needs the e-manual under the shared data (`shared_path("emanual")`); it skips with the path it looked for otherwise."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from bench.emanual_data import load_emanual, session_embedder
from pipeline.types import SearchRequest, SearchResponse
from storage.db import Database
from storage.ingest import Ingestor
from storage.local_index import LocalVectorIndex
from storage.pinecone_index import PineconeIndex, reindex_from_database
from storage.search.retriever import HybridRetriever
from tests.conftest import shared_path
from tests.fakes.pinecone_server import FakePinecone
from tests.storage.dbutil import drop_database, make_database

# the e-manual's e5 vectors are shared with tests/storage/test_search_emanual.py on one xdist worker
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.xdist_group("emanual-e5")]


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = await make_database("sqlite", tmp_path)
    try:
        yield database
    finally:
        await drop_database(database)


def gold_ranks(gold: list[set[str]], responses: list[SearchResponse]) -> list[int | None]:
    ranks = []
    for wanted, response in zip(gold, responses, strict=True):
        sources = [h.url.split("#")[0] for h in response.hits]
        ranks.append(next((i + 1 for i, s in enumerate(sources) if s in wanted), None))
    return ranks


def hit_rates(ranks: list[int | None]) -> dict[str, float]:
    return {
        "hit@1": sum(r == 1 for r in ranks) / len(ranks),
        "hit@5": sum(r is not None and r <= 5 for r in ranks) / len(ranks),
        "mrr": sum(1 / r for r in ranks if r) / len(ranks),
    }


@pytest.mark.timeout(1800)  # the first e-manual test of a session embeds the corpus (memoised, cached on disk after)
async def test_emanual_quality_is_the_same_on_pinecone_as_on_the_local_index(db: Database, tmp_path: Path) -> None:
    corpus, qa = load_emanual(shared_path("emanual"))
    # every third question (deterministic): the comparison of two backends needs no more, and keeps the test short
    pairs = [(p["question"], set(p["gold"].split("|"))) for p in qa[::3] if p.get("gold")]
    seed = tmp_path / "emanual.jsonl"
    seed.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in corpus), encoding="utf-8")
    embedder, local = session_embedder(), LocalVectorIndex(384)
    await embedder.embed_queries([q for q, _ in pairs])  # one batch; the searches below then find them memoised
    await Ingestor(db, embedder, local).ingest([str(seed)])
    async with FakePinecone() as fake:
        target = PineconeIndex(
            api_key=SecretStr(fake.api_key), index_name="emanual", dimension=384, host=fake.url, ready_poll_s=0.01
        )
        try:
            await reindex_from_database(db, target)
            ranks = {}
            requests = [SearchRequest(text=q, top_k=5) for q, _ in pairs]
            for name, index in (("local", local), ("pinecone", target)):
                retriever = HybridRetriever(db, embedder, index)
                await retriever.load()
                # both without the title and unit levels (stopped before they are embedded: most of a cold cache's
                # e5 work would go to them): what is compared is the vector index
                await retriever.close()
                responses = [await retriever.search(r) for r in requests]
                ranks[name] = gold_ranks([g for _, g in pairs], responses)
        finally:
            await target.close()
    figures = {name: hit_rates(r) for name, r in ranks.items()}
    same = sum(a == b for a, b in zip(ranks["local"], ranks["pinecone"], strict=True)) / len(pairs)
    print(f"\ne-manual, {len(pairs)} questions: {figures}; the gold's rank is the same for {same:.1%}")
    # Not bit-equal: vectors go to Pinecone rounded to 7 decimals (cosines move < 1e-6) and the manual repeats
    # sections word for word, so exact ties among duplicates can break the other way (measured: hit@5 0.908 vs 0.914
    # over all 665 questions, hit@1 equal).
    assert same >= 0.97, ranks
    for metric in ("hit@1", "hit@5", "mrr"):
        assert abs(figures["pinecone"][metric] - figures["local"][metric]) <= 0.02, figures
    assert figures["local"]["hit@5"] >= 0.85 and figures["local"]["hit@1"] >= 0.58, figures  # measured .91 / .66
