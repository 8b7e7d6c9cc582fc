"""Issue 8's figure: e-manual search quality with the Pinecone backend (through the fake) equals the local index's.

Needs the e-manual under the shared data (`shared_path("emanual")`); it skips with the path it looked for otherwise."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from pipeline.types import SearchRequest, SearchResponse
from storage.db import Database
from storage.ingest import Ingestor
from storage.local_index import LocalVectorIndex
from storage.pinecone_index import PineconeIndex, reindex_from_database
from storage.search.retriever import HybridRetriever
from tests.conftest import shared_path
from tests.fakes.pinecone_server import FakePinecone
from tests.helpers.emanual import load_emanual, session_embedder
from tests.storage.dbutil import drop_database, make_database

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = await make_database("sqlite", tmp_path)
    try:
        yield database
    finally:
        await drop_database(database)


def hit_rates(gold: list[set[str]], responses: list[SearchResponse]) -> dict[str, float]:
    ranks = []
    for wanted, response in zip(gold, responses, strict=True):
        sources = [h.url.split("#")[0] for h in response.hits]
        ranks.append(next((i + 1 for i, s in enumerate(sources) if s in wanted), None))
    return {
        "hit@1": sum(r == 1 for r in ranks) / len(ranks),
        "hit@5": sum(r is not None and r <= 5 for r in ranks) / len(ranks),
        "mrr": sum(1 / r for r in ranks if r) / len(ranks),
    }


@pytest.mark.timeout(900)  # the first e-manual test of a session embeds the corpus and questions (memoised after)
async def test_emanual_quality_is_the_same_on_pinecone_as_on_the_local_index(db: Database, tmp_path: Path) -> None:
    corpus, qa = load_emanual(shared_path("emanual"))
    pairs = [(p["question"], set(p["gold"].split("|"))) for p in qa if p.get("gold")]
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
            figures = {}
            for name, index in (("local", local), ("pinecone", target)):
                retriever = HybridRetriever(db, embedder, index)
                responses = [await retriever.search(SearchRequest(text=q, top_k=5)) for q, _ in pairs]
                figures[name] = hit_rates([g for _, g in pairs], responses)
        finally:
            await target.close()
    print(f"\ne-manual, {len(pairs)} questions: {figures}")
    assert figures["pinecone"] == figures["local"]
    assert figures["local"]["hit@5"] >= 0.8  # real rankings, not two empty lists
