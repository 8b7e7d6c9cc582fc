"""`python -m bench.site_crawl`: crawling a real documentation site no one here wrote, the Python docs of Debian's
python3-doc, served on 127.0.0.1 (bench/sites.py). One run measures:

1. discovery of the whole site from its root URL, crawling only (no embedding): pages found by links alone and
   with a generated sitemap, against the HTML files on disk;
2. the tutorial and HOWTO sections ingested from their path prefixes with the bundled embedder, through
   `build_app` as `docbot ingest` does: seconds, pages/s, passages/s, against the embedder's own ceiling (the same
   passages embedded alone, in the ingest's group size, in the same run);
3. navigation text in chunks: 50 chunks drawn at random (seeded), each checked for the theme's menu and footer
   words (target 0);
4. 30 questions with gold pages (bench/data/python_docs_qa.jsonl) through the bot's own answer path
   (`bot.evaluation.evaluate`): gold page cited;
5. a re-crawl with nothing changed (requests, bytes, seconds, passages re-embedded), then one after 3 pages
   changed and 2 removed.

    .venv/bin/python -m bench.site_crawl               # figures, and bench/results/site-crawl-<date>.json
    .venv/bin/python -m bench.site_crawl --no-write    # figures only

Skips with the reason when python3-doc is not installed (`apt-get install python3-doc`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.report import machine
from bench.sites import PYTHON_DOCS_GLOB, StaticSite, python_docs
from bot import evaluation
from bot.app import build_app, e5_engines
from bot.settings import Settings
from storage.embedder import E5Embedder
from storage.ingest.ingestor import EMBED_GROUP_CHUNKS
from storage.ingest.site.crawler import Outcome, SiteCrawler
from storage.ingest.site.limits import CrawlLimits

BENCH = Path(__file__).resolve().parent
QA = BENCH / "data" / "python_docs_qa.jsonl"
RESULTS = BENCH / "results"
SECTIONS = ("tutorial", "howto")
SAMPLE = 50
# The Python docs theme's navigation, sidebar and footer words: a chunk holding one carries chrome.
NAVIGATION = ("Previous topic", "Next topic", "This Page", "Report a Bug", "Show Source", "Quick search",
              "Table of Contents", "© Copyright", "Python Software Foundation", "Last updated on", "Found a bug",
              "modules |", "index |", "Theme", "Navigation", "¶")  # fmt: skip
CHANGED = ("tutorial/appetite.html", "howto/sorting.html", "howto/ipaddress.html")
REMOVED = ("tutorial/whatnow.html", "howto/cporting.html")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Recording:
    """The app's embedder, recording every passage the ingest path embeds and the time spent inside it."""

    def __init__(self, inner: E5Embedder) -> None:
        self.inner = inner
        self.texts: list[str] = []
        self.busy = 0.0

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self.inner.embed_queries(texts)

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        started = time.perf_counter()
        try:
            return await self.inner.embed_passages(texts)
        finally:
            self.busy += time.perf_counter() - started
            self.texts += list(texts)


async def discovery(docs: Path) -> dict[str, Any]:
    """The whole site from its root URL, crawling only: by links alone, then with a sitemap."""
    out: dict[str, Any] = {}
    for mode, sitemap in (("links", False), ("sitemap", True)):
        async with StaticSite(docs, sitemap=sitemap) as site:
            files = {"/" + p.relative_to(docs).as_posix() for p in site.html_files()}
            crawler = SiteCrawler(site.url("/"), CrawlLimits(concurrency=4))
            started = time.perf_counter()
            pages = {v.page_url.replace(site.url("/"), "/") async for v in crawler.crawl({})
                     if v.outcome is Outcome.READ}  # fmt: skip
            seconds = time.perf_counter() - started
        pages = {"/index.html" if p == "/" else p for p in pages}
        out[mode] = {
            "html_files_on_disk": len(files),
            "pages_found": len(pages & files),
            "files_not_found": sorted(files - pages),
            "seconds": round(seconds, 2),
            "pages_per_s": round(len(pages) / seconds, 1),
            "requests": crawler.stats.requests,
            "megabytes": round(crawler.stats.bytes / 1e6, 1),
        }
        log(f"discovery ({mode}): {len(pages & files)} of {len(files)} HTML files in {seconds:.1f} s")
    return out


def copy_sections(docs: Path, target: Path) -> None:
    for section in SECTIONS:
        shutil.copytree(docs / section, target / section)


async def ingest_and_ask(docs: Path, work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    root = work / "site"
    copy_sections(docs, root)
    settings = Settings(data_dir=work / "data")
    engines = e5_engines(settings)
    recording = Recording(E5Embedder(engines=engines))
    await recording.inner.embed_passages(["warm the engines up"] * engines)  # model loads are not the ingest's
    app = await build_app(settings, embedder=recording)
    try:
        async with StaticSite(root, sitemap=True) as site:
            starts = [site.url(f"/{section}/") for section in SECTIONS]
            started = time.perf_counter()
            report = await app.ingest(starts)
            ingest_s = time.perf_counter() - started
            chunk_passages = len(recording.texts)
            await app.retriever.wait_for_titles()
            levels_s = time.perf_counter() - started
            pages = sum(c.fetched for c in report.crawls)
            out["ingest"] = {
                "pages": pages,
                "documents": report.added,
                "chunks": report.chunks,
                "seconds_until_searchable": round(ingest_s, 1),
                "seconds_with_levels": round(levels_s, 1),
                "pages_per_s": round(pages / ingest_s, 2),
                "chunks_per_s": round(report.chunks / ingest_s, 2),
                "passages_embedded": len(recording.texts),
                "passages_per_s_with_levels": round(len(recording.texts) / levels_s, 2),
                "seconds_inside_embedder": round(recording.busy, 1),
                "crawls": [c.summary() for c in report.crawls],
                "failed": [f"{f.name}: {f.reason}" for c in report.crawls for f in c.failed],
            }
            log(f"ingest: {pages} pages, {report.chunks} chunks in {ingest_s:.1f} s ({levels_s:.1f} s with levels)")
            out["navigation_sample"] = await navigation_sample(app)
            log(f"navigation: {out['navigation_sample']['chunks_with_navigation']} of {SAMPLE} sampled chunks")
            pairs = evaluation.load_qa(QA)
            result = await evaluation.evaluate(app, pairs, name="python-docs")
            summary = result.summary()
            out["questions"] = {
                "count": len(pairs),
                "gold_cited": sum(bool(r.gold_cited) for r in result.rows),
                "gold_cited_rate": summary["gold_cited_rate"],
                "misses": [r.question for r in result.rows if not r.gold_cited],
            }
            log(f"questions: gold page cited for {out['questions']['gold_cited']} of {len(pairs)}")
            out["recrawl_unchanged"] = await recrawl(app, recording, site, starts)
            log(f"re-crawl, nothing changed: {out['recrawl_unchanged']}")
            for path in CHANGED:
                page = root / path
                page.write_text(page.read_text(encoding="utf-8").replace(
                    '<div class="body" role="main">',
                    '<div class="body" role="main"><p>Revised for the benchmark: this page changed.</p>', 1),
                    encoding="utf-8")  # fmt: skip
            for path in REMOVED:
                (root / path).unlink()
            out["recrawl_changed"] = await recrawl(app, recording, site, starts)
            log(f"re-crawl, 3 changed and 2 removed: {out['recrawl_changed']}")
        out["ceiling"] = await ceiling(recording.texts, engines, chunk_passages, out["ingest"])
    finally:
        await app.close()
    return out


async def navigation_sample(app: Any) -> dict[str, Any]:
    from sqlalchemy import select

    from storage.doc_tables import ChunkRow

    async with app.db.session() as session:
        chunks = list(await session.execute(select(ChunkRow.url, ChunkRow.text).order_by(ChunkRow.id)))
    drawn = random.Random(27).sample(chunks, min(SAMPLE, len(chunks)))
    hits = [(url, [w for w in NAVIGATION if w in text]) for url, text in drawn]
    hits = [(url, words) for url, words in hits if words]
    return {"sampled": len(drawn), "of_chunks": len(chunks), "chunks_with_navigation": len(hits), "hits": hits}


async def recrawl(app: Any, recording: Recording, site: StaticSite, starts: list[str]) -> dict[str, Any]:
    before_requests, before_texts = len(site.requests), len(recording.texts)
    started = time.perf_counter()
    report = await app.ingest(starts)
    seconds = time.perf_counter() - started
    sent = site.requests[before_requests:]
    return {
        "requests": len(sent),
        "answered_304": sum(r.status == 304 for r in sent),
        "bytes": sum(c.bytes for c in report.crawls),
        "seconds": round(seconds, 2),
        "chunk_passages_embedded": report.embedded,
        "passages_embedded_by_the_call": len(recording.texts) - before_texts,
        "updated": report.updated,
        "removed": report.removed,
        "unchanged": report.unchanged,
    }


async def ceiling(texts: list[str], engines: int, chunk_passages: int, ingest: dict[str, Any]) -> dict[str, Any]:
    """The same chunk passages the ingest embedded, embedded alone, in the ingest's groups: the embedder's limit."""
    alone = E5Embedder(engines=engines)
    await alone.embed_passages(["warm the engines up"] * engines)
    sample = texts[:chunk_passages]
    started = time.perf_counter()
    for i in range(0, len(sample), EMBED_GROUP_CHUNKS):
        await alone.embed_passages(sample[i : i + EMBED_GROUP_CHUNKS])
    seconds = time.perf_counter() - started
    rate = len(sample) / seconds
    return {
        "passages": len(sample),
        "seconds": round(seconds, 1),
        "chunks_per_s": round(rate, 2),
        "engines": engines,
        "ingest_over_ceiling": round(ingest["chunks_per_s"] / rate, 2),
    }


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-write", action="store_true", help="print the figures, write no results file")
    args = parser.parse_args(argv)
    docs = python_docs()
    if docs is None:
        print("skipped: python3-doc is not installed (apt-get install python3-doc); looked in " + PYTHON_DOCS_GLOB)
        return 0
    started = datetime.now(UTC)
    result: dict[str, Any] = {"site": str(docs), "machine": machine(), "started": started.isoformat(timespec="seconds")}
    result["discovery"] = await discovery(docs)
    with tempfile.TemporaryDirectory(prefix="docbot-site-bench-") as work:
        result.update(await ingest_and_ask(docs, Path(work)))
    result["seconds"] = round((datetime.now(UTC) - started).total_seconds(), 1)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if not args.no_write:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / f"site-crawl-{started:%Y%m%d-%H%M}.json"
        path.write_text(text + "\n", encoding="utf-8")
        log(f"written: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
