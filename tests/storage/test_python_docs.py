"""A real documentation site no one here wrote: the Python documentation of Debian's python3-doc package, served on
127.0.0.1. Discovery covers the whole site (crawling only, no embedding); ingestion covers the tutorial.
Skips with the reason where python3-doc is not installed (`make test` installs it where apt-get can)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from bench.sites import StaticSite, python_docs
from storage.db import Database
from storage.doc_tables import ChunkRow, DocumentRow
from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor
from storage.ingest.site.crawler import Outcome, SiteCrawler
from storage.ingest.site.limits import CrawlLimits
from storage.local_index import LocalVectorIndex

pytestmark = pytest.mark.integration

# Navigation and footer text of the Python docs' theme: none of it may reach a chunk.
NAVIGATION = ("Previous topic", "Next topic", "This Page", "Report a Bug", "Show Source", "Quick search",
              "Table of Contents", "© Copyright", "Python Software Foundation", "Last updated on", "Found a bug",
              "modules |", "index |", "Theme", "Navigation", "¶")  # fmt: skip


@pytest.fixture(scope="module")
def docs_root() -> Path:
    root = python_docs()
    if root is None:
        pytest.skip("python3-doc is not installed (apt-get install python3-doc): the Python docs are not on disk")
    return root


async def discover(site: StaticSite) -> tuple[set[str], SiteCrawler]:
    crawler = SiteCrawler(site.url("/"), CrawlLimits(concurrency=4))
    pages = {v.page_url async for v in crawler.crawl({}) if v.outcome is Outcome.READ}
    return pages, crawler


@pytest.mark.slow
async def test_the_whole_python_docs_are_discovered_from_the_root_url(docs_root: Path) -> None:
    async with StaticSite(docs_root) as site:
        files = {site.url("/" + p.relative_to(docs_root).as_posix()) for p in site.html_files()}
        by_links, _ = await discover(site)
    async with StaticSite(docs_root, sitemap=True) as site_with_sitemap:
        by_sitemap, crawler = await discover(site_with_sitemap)
        files_again = {site_with_sitemap.url("/" + p.relative_to(docs_root).as_posix())
                       for p in site_with_sitemap.html_files()}  # fmt: skip
    root_page = site.url("/index.html")
    found_by_links = {p.replace(site.url("/"), "/") for p in by_links}
    on_disk = {f.replace(site.url("/"), "/") for f in files}
    # by links alone: every page another page links to (a handful of pages are linked from nowhere)
    assert len(on_disk - found_by_links - {"/index.html"}) <= 0.01 * len(on_disk)
    assert site.url("/") in by_links and root_page not in by_links  # `/` and `/index.html`: one page
    # with a sitemap: every page on disk, each once
    assert {p.replace(site_with_sitemap.url("/"), "/") for p in by_sitemap} | {"/index.html"} == {
        f.replace(site_with_sitemap.url("/"), "/") for f in files_again
    } | {"/"}
    assert crawler.stats.sitemap_pages == len(files_again)


async def test_the_tutorial_is_ingested_with_its_structure_and_without_navigation(
    docs_root: Path, sqlite_db: Database
) -> None:
    async with StaticSite(docs_root) as site:
        report = await Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64), crawl=CrawlLimits()).ingest(
            [site.url("/tutorial/")]
        )
        base = site.url("/tutorial/")
    tutorial = {p.name for p in (docs_root / "tutorial").glob("*.html")}
    assert report.added == len(tutorial) and not report.crawls[0].failed
    async with sqlite_db.session() as session:
        chunks = list(await session.scalars(select(ChunkRow)))
        titles = set(await session.scalars(select(DocumentRow.title)))
    assert "4. More Control Flow Tools" in titles
    leaks = [(c.url, word) for c in chunks for word in NAVIGATION if word in c.text]
    assert not leaks, leaks[:5]
    html = (docs_root / "tutorial" / "controlflow.html").read_text(encoding="utf-8")
    controlflow = [c for c in chunks if c.url.startswith(f"{base}controlflow.html#")]
    anchors = {c.url.split("#", 1)[1] for c in controlflow}
    assert {"if-statements", "keyword-arguments", "lambda-expressions"} <= anchors
    assert all(f'id="{anchor}"' in html for anchor in anchors)  # every citation lands on the page's own section
    lambdas = next(c for c in controlflow if c.url.endswith("#lambda-expressions"))
    assert lambdas.crumbs[-3:] == ["4. More Control Flow Tools", "4.8. More on Defining Functions",
                                   "4.8.6. Lambda Expressions"]  # fmt: skip
    assert "```\n>>> def make_incrementor(n):\n...     return lambda x: x + n" in lambdas.text  # code whole
