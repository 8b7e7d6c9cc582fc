"""Ingest through an OpenAI-compatible embeddings endpoint against the endpoint's own ceiling (issue 16).

A real model server on loopback: llama.cpp (xllamacpp) serving `POST /v1/embeddings` from SmolLM2-135M, mean
pooled (the model the LLM tests use; a chat model is a poor embedder, but the server does the real work per token).

- ceiling: the same chunk texts sent straight through `OpenAIEmbedder.embed_passages` (batches of 16, as ingest),
  best of 2;
- ingest: `docbot`'s whole ingest path (`build_app` with DOCBOT_EMBEDDINGS_BASE_URL, the fixture manual into three
  collections: reading, derived fields, grouping, embedding, SQL, index, snapshot), chunks per second;
- for scale: the bundled E5's rate on the same texts in the same run (one engine thread, its default).

    .venv/bin/python -m bench.remote_embeddings [--threads 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bench.fakes.llama_server import LlamaServer, unavailable
from bot.app import build_app
from bot.settings import Settings
from storage.doc_tables import ChunkRow
from storage.embedder import E5Embedder
from storage.ingest.ingestor import embedding_text
from storage.remote_embedder import OpenAIEmbedder

BATCH = 16
MANUAL = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "manual"


async def measure(base_url: str, work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    settings = Settings(
        data_dir=work,
        embeddings_base_url=base_url,
        embeddings_model="smollm2",
        embeddings_batch_size=BATCH,
        embeddings_timeout_s=120.0,  # a CPU model server on shared cores: one batch can take tens of seconds
        embeddings_deadline_s=400.0,
    )
    app = await build_app(settings)
    try:
        started = time.perf_counter()
        chunks = 0
        failed = 0
        for collection in ("a", "b", "c"):
            report = await app.ingest([str(MANUAL)], collection=collection)
            chunks += report.chunks
            failed += len(report.failed)
        if failed:
            raise SystemExit(f"{failed} documents not ingested: {report.failed[:1]}")
        seconds = time.perf_counter() - started
        out["ingest"] = {"chunks": chunks, "seconds": round(seconds, 2), "chunks_per_s": round(chunks / seconds, 1)}
        await app.retriever.wait_for_titles()
        async with app.db.session() as session:
            rows = (await session.execute(select(ChunkRow.crumbs, ChunkRow.text))).all()
        texts = [embedding_text(crumbs, text) for crumbs, text in rows]
    finally:
        await app.close()
    remote = OpenAIEmbedder(model="smollm2", base_url=base_url, batch_size=BATCH, timeout_s=120.0, deadline_s=400.0)
    try:
        await remote.resolve_dim()
        best = float("inf")
        for _ in range(2):
            started = time.perf_counter()
            await remote.embed_passages(texts)
            best = min(best, time.perf_counter() - started)
    finally:
        await remote.close()
    rate = round(len(texts) / best, 1)
    out["endpoint_ceiling"] = {"chunks": len(texts), "seconds": round(best, 2), "chunks_per_s": rate}
    out["ingest_over_ceiling"] = round(out["ingest"]["chunks_per_s"] / out["endpoint_ceiling"]["chunks_per_s"], 3)
    e5 = E5Embedder()
    await e5.embed_passages(texts[:2])
    sample = texts[:64]
    started = time.perf_counter()
    await e5.embed_passages(sample)
    out["bundled_e5_chunks_per_s"] = round(len(sample) / (time.perf_counter() - started), 1)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2, help="the model server's threads")
    args = parser.parse_args(argv)
    reason = unavailable()
    if reason is not None:
        raise SystemExit(f"real model server unavailable: {reason}")
    load_before = os.getloadavg()
    server = LlamaServer.start(ctx=4096, threads=args.threads, embedding=True)
    with server as llama, tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(measure(llama.base_url, Path(tmp)))
    result["loadavg_before"] = [round(x, 2) for x in load_before]
    result["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    result["server_threads"] = args.threads
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
