"""What the title and unit levels cost to embed, against the chunks themselves, on the e-manual, in one run.

    python -m bench.level_cost [--data DIR]

The e-manual is chunked by the real ingest (with the hashing embedder, so chunking costs nothing), then a fresh
`E5Embedder` embeds, one after the other and in batches of 16 as the retriever's background task does: the chunk
texts (what an ingest embeds), the distinct title paths, and the distinct units. Prints seconds and items/s for each
and the load average before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import emanual
from storage.db import Database
from storage.embedder import E5Embedder, HashingEmbedder
from storage.ingest import Ingestor
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever
from storage.search.fusion import TITLE_BATCH, title_path
from storage.search.units import text_units


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


async def texts_of(data: Path) -> dict[str, list[str]]:
    """The e-manual's chunk texts, distinct title paths and distinct units, as the retriever sees them."""
    manual = emanual.load(data)
    with tempfile.TemporaryDirectory() as scratch:
        db = Database(f"sqlite+aiosqlite:///{scratch}/cost.db")
        await db.migrate()
        seed = Path(scratch) / "corpus.jsonl"
        seed.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in manual.corpus), encoding="utf-8")
        embedder, index = HashingEmbedder(), LocalVectorIndex(64)
        await Ingestor(db, embedder, index).ingest([str(seed)], collection="cost")
        retriever = HybridRetriever(db, embedder, index)
        await retriever.load()
        corpus = retriever.corpus
        assert corpus is not None
        chunks = [corpus.text(row) for row in range(len(corpus))]
        titles = list(dict.fromkeys(title_path(c.crumbs, c.title) for c in corpus.chunks))
        units = list(dict.fromkeys(u for text in chunks for u in text_units(text)))
        await retriever.wait_for_levels()
        await db.dispose()
    return {"chunks": chunks, "titles": titles, "units": units}


async def run(data: Path) -> dict[str, Any]:
    texts = await texts_of(data)
    embedder = E5Embedder()
    await embedder.embed_passages(["warm up"])  # loading the model is not counted
    out: dict[str, Any] = {"load_start": _load()}
    for name, items in texts.items():
        started = time.perf_counter()
        for start in range(0, len(items), TITLE_BATCH):
            await embedder.embed_passages(items[start : start + TITLE_BATCH])
        seconds = time.perf_counter() - started
        out[name] = {"n": len(items), "chars": sum(map(len, items)), "s": round(seconds, 1),
                     "per_s": round(len(items) / seconds, 2)}  # fmt: skip
    out["load_end"] = _load()
    out["units_vs_chunks"] = round(out["units"]["s"] / out["chunks"]["s"], 2)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    from bench.shared import DEFAULT_DATA

    parser = argparse.ArgumentParser(prog="python -m bench.level_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(run(args.data)), indent=1))


if __name__ == "__main__":
    main()
