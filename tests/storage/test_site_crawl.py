"""Crawling a documentation site into the index: discovery (sitemaps, links, prefix), politeness (robots.txt,
crawl delay, user agent, concurrency), dedupe, incremental re-crawls, removals, and every fault, against a real
HTTP server on 127.0.0.1 (bench/sites.py) with a fault layer."""

from __future__ import annotations

import asyncio
import logging
from itertools import pairwise
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from fpdf import FPDF
from sqlalchemy import func, select

from bench.sites import Fault, StaticSite
from storage.db import Database
from storage.doc_tables import ChunkRow, CrawlPageRow, DocumentRow, IngestRunRow
from storage.embedder import HashingEmbedder
from storage.errors import EmbeddingFailure, EmbeddingUnavailable
from storage.ingest import IngestError, Ingestor
from storage.ingest.model import IngestProgress, IngestReport
from storage.ingest.site.limits import CrawlLimits
from storage.local_index import LocalVectorIndex

pytestmark = pytest.mark.integration

UA = "docbot-test/1.0 (documentation crawler)"
LIMITS = CrawlLimits(user_agent=UA, timeout_s=2.0, concurrency=3)
CHROME = '<nav class="menu"><a href="/guide/index.html">Guide home</a> | <a href="/guide/a.html">Alpha</a></nav>'
FOOTER = '<footer>© Example Corp · <a href="/guide/edit">Edit this page</a></footer>'


def page(title: str, body: str, *, links: tuple[str, ...] = (), head: str = "") -> str:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return (
        f"<!DOCTYPE html><html><head><title>{title} — Example docs</title>{head}</head><body>"
        f'<header><a href="/">Example</a> <form role="search"><input name=q></form></header>{CHROME}'
        f'<div role="main"><section id="{title.lower().replace(" ", "-")}"><h1>{title}</h1>{body}</section>'
        f"<ul>{anchors}</ul></div>{FOOTER}</body></html>"
    )


def write_site(root: Path) -> Path:
    """A small guide under /guide/, with pages outside the prefix and files that are not pages."""
    guide = root / "guide"
    (guide / "deep").mkdir(parents=True)
    (root / "blog").mkdir()
    (guide / "index.html").write_text(page(
        "Guide", "<p>Welcome to the guide.</p>",
        links=("a.html", "b.html", "deep/c.html", "/blog/post.html", "logo.png", "notes.txt",
               "https://elsewhere.example/x.html", "a.html#section-two", "mailto:docs@example.com"),
    ))  # fmt: skip
    (guide / "a.html").write_text(page(
        "Alpha", '<p>Alpha explains pairing.</p><section id="section-two"><h2>Section two</h2>'
        "<p>Hold the button for five seconds.</p><table><tr><th>Light</th><th>Meaning</th></tr>"
        "<tr><td>Blue</td><td>Pairing</td></tr></table></section>", links=("b.html",),
    ))  # fmt: skip
    (guide / "b.html").write_text(page("Beta", "<p>Beta covers resetting the hub.</p><pre>hub reset --hard</pre>"))
    (guide / "deep" / "c.html").write_text(page("Gamma", "<p>Gamma is about firmware updates.</p>"))
    (root / "blog" / "post.html").write_text(page("Post", "<p>A blog post outside the guide.</p>"))
    (guide / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    (guide / "notes.txt").write_text("plain notes")
    return root


@pytest.fixture
def site_root(tmp_path: Path) -> Path:
    return write_site(tmp_path / "site")


def ingestor(db: Database, **kwargs: object) -> Ingestor:
    return Ingestor(db, HashingEmbedder(), LocalVectorIndex(64), crawl=LIMITS, **kwargs)  # type: ignore[arg-type]


async def sources(db: Database) -> dict[str, str]:
    async with db.session() as session:
        return {d.source: d.title for d in await session.scalars(select(DocumentRow))}


async def crawl(db: Database, site: StaticSite, path: str = "/guide/", **kwargs: object) -> IngestReport:
    return await ingestor(db).ingest([site.url(path)], **kwargs)  # type: ignore[arg-type]


async def test_a_site_is_crawled_from_its_url_within_its_prefix(
    sqlite_db: Database, site_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    states: list[IngestProgress] = []
    async with StaticSite(site_root) as site:
        with caplog.at_level(logging.INFO, logger="storage.ingest"):
            report = await crawl(sqlite_db, site, on_progress=lambda p: states.append(p.line()))  # type: ignore[arg-type]
        requested = site.paths()
        agents = {r.headers.get("User-Agent") for r in site.requests}
    found = await sources(sqlite_db)
    base = site.url("/guide/")
    assert set(found) == {base, f"{base}a.html", f"{base}b.html", f"{base}deep/c.html"}  # index.html: the same
    assert found[f"{base}a.html"] == "Alpha"
    assert "/blog/post.html" not in requested  # outside the path prefix
    assert "/guide/logo.png" not in requested and "/guide/notes.txt" not in requested  # not pages: never asked
    assert requested.count("/guide/a.html") == 1  # the fragment link is the same page
    assert agents == {UA}
    (crawled,) = report.crawls
    assert crawled.fetched == 4 and crawled.not_pages == 2 and not crawled.failed
    assert report.added == 4
    assert states and f"{crawled.found} found, 4 fetched" in states[-1] and "chunks embedded" in states[-1]
    (summary,) = [r for r in caplog.records if r.getMessage() == "site crawled"]  # one line per crawl
    assert summary.fetched == 4 and summary.requests == crawled.requests


async def test_structure_is_kept_and_chrome_dropped(sqlite_db: Database, site_root: Path) -> None:
    async with StaticSite(site_root) as site:
        await crawl(sqlite_db, site)
        base = site.url("/guide/")
    async with sqlite_db.session() as session:
        chunks = list(await session.scalars(select(ChunkRow)))
    texts = " ".join(c.text for c in chunks)
    for chrome in ("Guide home", "Edit this page", "© Example Corp", "Example docs"):
        assert chrome not in texts
    section = next(c for c in chunks if c.title == "Section two")
    assert section.url == f"{base}a.html#section-two"  # the citation points at page#section
    assert "| Light | Meaning |" in section.text and "| Blue | Pairing |" in section.text  # the table whole
    assert any("```\nhub reset --hard\n```" in c.text for c in chunks)


def pdf_manual() -> bytes:
    """A PDF with an outline: two sections on one page."""
    pdf = FPDF()
    pdf.add_page()
    for title, text in (("Installing", "Mount the hub on its wall bracket."),
                        ("Warranty", "The hub is covered for two years from the date of purchase.")):  # fmt: skip
        pdf.set_font("helvetica", "B", 16)
        pdf.start_section(title)
        pdf.cell(0, 10, title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", "", 11)
        pdf.cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(8)
    return bytes(pdf.output())


async def test_a_pdf_manual_the_site_links_is_read_and_cites_its_pages(sqlite_db: Database, site_root: Path) -> None:
    (site_root / "guide" / "manual.pdf").write_bytes(pdf_manual())
    (site_root / "blog" / "old.pdf").write_bytes(pdf_manual())
    index = site_root / "guide" / "index.html"
    index.write_text(index.read_text().replace("</ul>", '<li><a href="manual.pdf">The manual (PDF)</a></li>'
                                               '<li><a href="/blog/old.pdf">Old manual</a></li></ul>'))  # fmt: skip
    async with StaticSite(site_root) as site:
        report = await crawl(sqlite_db, site)
        requested = site.paths()
        base = site.url("/guide/")
    assert "/guide/manual.pdf" in requested and "/blog/old.pdf" not in requested  # under the site's path only
    assert report.crawls[0].fetched == 5 and report.added == 5 and not report.crawls[0].failed
    async with sqlite_db.session() as session:
        chunks = {c.title: c for c in await session.scalars(select(ChunkRow).where(ChunkRow.url.like("%.pdf%")))}
    assert chunks["Installing"].url == f"{base}manual.pdf#page=1"
    assert chunks["Warranty"].url.startswith(f"{base}manual.pdf#page=1&view=FitH,")
    assert "covered for two years" in chunks["Warranty"].text


async def test_sitemap_index_gzip_and_robots_sitemap_line(sqlite_db: Database, tmp_path: Path) -> None:
    root = write_site(tmp_path / "site")
    (root / "guide" / "orphan.html").write_text(page("Orphan", "<p>Linked from nowhere, listed in the sitemap.</p>"))
    async with StaticSite(root, sitemap=True, robots="User-agent: *\nAllow: /\n") as site:
        site.robots += f"Sitemap: {site.url('/sitemap.xml')}\n"
        report = await crawl(sqlite_db, site)
        requested = site.paths()
    assert requested[:3] == ["/robots.txt", "/sitemap.xml", "/sitemap-pages.xml.gz"]
    assert any(s.endswith("/guide/orphan.html") for s in await sources(sqlite_db))
    assert report.crawls[0].sitemap_pages == 5  # the guide's pages; the blog post is outside the prefix


async def test_a_sitemap_url_crawls_the_pages_it_lists(sqlite_db: Database, site_root: Path) -> None:
    async with StaticSite(site_root, sitemap=True, prefix_only="/guide/deep/") as site:
        await ingestor(sqlite_db).ingest([site.url("/sitemap.xml")])
        requested = site.paths()
    assert set(await sources(sqlite_db)) == {site.url("/guide/deep/c.html")}
    assert "/guide/index.html" not in requested


async def test_robots_txt_forbidding_a_path_means_no_request_to_it(sqlite_db: Database, site_root: Path) -> None:
    robots = "User-agent: *\nDisallow: /guide/deep/\n\nUser-agent: docbot-test\nDisallow: /guide/b.html\n"
    async with StaticSite(site_root, robots=robots) as site:
        report = await crawl(sqlite_db, site)
        requested = site.paths()
    assert "/guide/b.html" not in requested  # the group naming docbot applies, and only it
    assert "/guide/deep/c.html" in requested
    assert {s.rsplit("/", 1)[-1] for s in await sources(sqlite_db)} == {"", "a.html", "c.html"}
    assert report.crawls[0].fetched == 3


async def test_a_page_robots_txt_now_forbids_is_removed(sqlite_db: Database, site_root: Path) -> None:
    async with StaticSite(site_root) as site:
        await crawl(sqlite_db, site)
        site.robots = "User-agent: *\nDisallow: /guide/b.html\n"
        before = len(site.requests)
        report = await crawl(sqlite_db, site)
        requested = [r.path for r in site.requests[before:]]
    assert "/guide/b.html" not in requested and report.removed == 1
    assert not any(s.endswith("/guide/b.html") for s in await sources(sqlite_db))


async def test_crawl_delay_spaces_requests_and_concurrency_is_bounded(sqlite_db: Database, site_root: Path) -> None:
    for n in range(12):
        (site_root / "guide" / f"extra{n}.html").write_text(page(f"Extra {n}", f"<p>Extra page {n}.</p>"))
    index = site_root / "guide" / "index.html"
    index.write_text(index.read_text().replace("</ul>", "".join(
        f'<li><a href="extra{n}.html">e</a></li>' for n in range(12)) + "</ul>"))  # fmt: skip
    async with StaticSite(site_root, robots="User-agent: *\nCrawl-delay: 0.2\n") as site:
        await Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64),
                       crawl=CrawlLimits(user_agent=UA, concurrency=2)).ingest([site.url("/guide/")])  # fmt: skip
        started = [r.at for r in site.requests if r.path.startswith("/guide/")]
    gaps = [b - a for a, b in pairwise(started)]
    assert len(started) >= 10 and min(gaps) >= 0.19  # the delay robots.txt asked for, between every two requests


async def test_concurrency_per_host_is_bounded(sqlite_db: Database, site_root: Path) -> None:
    for n in range(20):
        (site_root / "guide" / f"extra{n}.html").write_text(page(f"Extra {n}", f"<p>Extra page {n}.</p>"))
    index = site_root / "guide" / "index.html"
    index.write_text(index.read_text().replace("</ul>", "".join(
        f'<li><a href="extra{n}.html">e</a></li>' for n in range(20)) + "</ul>"))  # fmt: skip
    async with StaticSite(site_root) as site:
        await crawl(sqlite_db, site)
        most = site.most_in_flight
    assert 1 <= most <= LIMITS.concurrency


async def test_page_and_depth_limits(sqlite_db: Database, site_root: Path) -> None:
    async with StaticSite(site_root) as site:
        start = site.url("/guide/")
        shallow = await ingestor(sqlite_db).ingest([start], crawl=CrawlLimits(user_agent=UA, max_depth=0))
        assert set(await sources(sqlite_db)) == {start}
        assert shallow.crawls[0].fetched == 1 and shallow.crawls[0].not_visited >= 3
        limited = await ingestor(sqlite_db).ingest([start], crawl=CrawlLimits(user_agent=UA, max_pages=2))
        assert limited.crawls[0].requests == 3 + 2  # robots.txt, two usual sitemap places, and two pages
        assert limited.crawls[0].not_visited >= 2
        assert limited.removed == 0  # pages over the limit are left for the next crawl, not removed
        full = await crawl(sqlite_db, site)
    # the start page answers 304 from the second crawl on, yet the pages it links were remembered and are read
    assert full.crawls[0].not_modified >= 1
    assert set(await sources(sqlite_db)) == {start, f"{start}a.html", f"{start}b.html", f"{start}deep/c.html"}


async def test_redirects_and_canonical_urls_are_one_document(sqlite_db: Database, site_root: Path) -> None:
    guide = site_root / "guide"
    (guide / "print.html").write_text(page("Alpha", "<p>Alpha explains pairing.</p>",
                                           head='<link rel="canonical" href="a.html">'))  # fmt: skip
    (guide / "external.html").write_text(page("Beta copy", "<p>Mirror.</p>",
                                              head='<link rel="canonical" href="file:///elsewhere/b.html">'))
    index = guide / "index.html"
    index.write_text(index.read_text().replace("</ul>", '<li><a href="print.html">p</a></li>'
                                               '<li><a href="external.html">x</a></li>'
                                               '<li><a href="old">old</a></li></ul>'))  # fmt: skip
    async with StaticSite(site_root) as site:
        app_router_redirect(site, "/guide/old", "/guide/b.html")
        await crawl(sqlite_db, site)
    found = await sources(sqlite_db)
    base = site.url("/guide/")
    assert f"{base}print.html" not in found and f"{base}a.html" in found  # the canonical URL, once
    assert f"{base}old" not in found and f"{base}b.html" in found  # where the redirect ended, once
    assert f"{base}external.html" in found  # a canonical URL outside the site is ignored
    assert len([s for s in found if s.endswith(("a.html", "b.html"))]) == 2


def app_router_redirect(site: StaticSite, old: str, new: str) -> None:
    """`old` answers 301 to `new` (through the fault layer's hook: a file handler wrapper)."""
    original = site._file

    async def handler(request):  # type: ignore[no-untyped-def]
        from aiohttp import web

        if request.path == old:
            raise web.HTTPMovedPermanently(new)
        return await original(request)

    site._file = handler  # type: ignore[method-assign]


# ---- incremental re-crawls ---------------------------------------------------------------------------------------


async def test_a_recrawl_with_nothing_changed_sends_conditional_requests_and_embeds_nothing(
    sqlite_db: Database, site_root: Path
) -> None:
    async with StaticSite(site_root, sitemap=True) as site:
        first = await crawl(sqlite_db, site)
        before = len(site.requests)
        again = await crawl(sqlite_db, site)
        later = site.requests[before:]
    documents = {"/guide/", "/guide/a.html", "/guide/b.html", "/guide/deep/c.html"}
    pages = [r for r in later if r.path in documents]
    assert len(pages) == 4 and all("If-None-Match" in r.headers and r.status == 304 for r in pages)
    assert again.embedded == 0 and again.added == again.updated == again.removed == 0
    assert again.unchanged == first.added == 4
    assert again.crawls[0].not_modified >= 4 and again.crawls[0].bytes < first.crawls[0].bytes / 10
    assert len(later) == first.crawls[0].requests == again.crawls[0].requests  # nothing asked twice


async def test_changed_pages_are_re_embedded_and_removed_pages_go(sqlite_db: Database, site_root: Path) -> None:
    guide = site_root / "guide"
    async with StaticSite(site_root) as site:  # no sitemap: only the 404s tell
        await crawl(sqlite_db, site)
        (guide / "b.html").write_text(page("Beta", "<p>Beta now covers factory resets too.</p>"))
        (guide / "deep" / "c.html").unlink()  # 404: removed on the second crawl in a row that says so
        second = await crawl(sqlite_db, site)
        assert second.updated == 1 and second.removed == 0
        assert any(s.endswith("deep/c.html") for s in await sources(sqlite_db))  # one 404 is not enough
        third = await crawl(sqlite_db, site)
    found = await sources(sqlite_db)
    assert third.removed == 1 and not any(s.endswith("deep/c.html") for s in found)
    async with sqlite_db.session() as session:
        text = " ".join(await session.scalars(select(ChunkRow.text).where(ChunkRow.url.like("%b.html%"))))
    assert "factory resets" in text


async def test_a_page_gone_from_the_sitemap_is_removed_at_once(sqlite_db: Database, site_root: Path) -> None:
    (site_root / "guide" / "orphan.html").write_text(page("Orphan", "<p>Only the sitemap lists me.</p>"))
    async with StaticSite(site_root, sitemap=True) as site:
        await crawl(sqlite_db, site)
        assert any(s.endswith("orphan.html") for s in await sources(sqlite_db))
        (site_root / "guide" / "orphan.html").rename(site_root / "orphan-moved.txt")
        before = len(site.requests)
        report = await crawl(sqlite_db, site)
        requested = [r.path for r in site.requests[before:]]
    assert report.removed == 1 and "/guide/orphan.html" not in requested
    assert not any(s.endswith("orphan.html") for s in await sources(sqlite_db))


async def test_a_broken_sitemap_removes_nothing(sqlite_db: Database, site_root: Path) -> None:
    (site_root / "guide" / "orphan.html").write_text(page("Orphan", "<p>Only the sitemap lists me.</p>"))
    async with StaticSite(site_root, sitemap=True) as site:
        await crawl(sqlite_db, site)
        site.fault("/sitemap.xml", Fault.SERVER_ERROR)
        report = await crawl(sqlite_db, site)
    assert report.removed == 0 and any(s.endswith("orphan.html") for s in await sources(sqlite_db))


# ---- faults ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [Fault.TIMEOUT, Fault.SERVER_ERROR, Fault.RATE_LIMITED, Fault.MALFORMED, Fault.HUGE, Fault.REDIRECT_LOOP,
     Fault.DROPPED],
)  # fmt: skip
async def test_a_faulty_page_is_skipped_with_one_log_line_kept_and_retried(
    sqlite_db: Database, site_root: Path, fault: Fault, caplog: pytest.LogCaptureFixture
) -> None:
    async with StaticSite(site_root) as site:
        await crawl(sqlite_db, site)
        site.fault("/guide/a.html", fault)
        (site_root / "guide" / "b.html").write_text(page("Beta", "<p>Beta changed during the fault.</p>"))
        with caplog.at_level(logging.WARNING, logger="storage.ingest"):
            report = await crawl(sqlite_db, site)
        lines = [r for r in caplog.records if getattr(r, "url", "").endswith("/guide/a.html")]
        site.fault("/guide/a.html", None)
        (site_root / "guide" / "a.html").write_text(page("Alpha", "<p>Alpha after the fault.</p>"))
        before = len(site.requests)
        healed = await crawl(sqlite_db, site)
        retried = [r for r in site.requests[before:] if r.path == "/guide/a.html"]
    (crawled,) = report.crawls
    assert [f.name for f in crawled.failed] == [site.url("/guide/a.html")], crawled.failed
    assert len(lines) == 1, [r.getMessage() for r in lines]  # one log line for the operator
    assert report.removed == 0 and report.updated == 1  # the crawl went on: the changed page was stored
    assert retried and "If-None-Match" in retried[0].headers  # asked again, with the validators it had
    assert healed.updated == 1 and not healed.crawls[0].failed
    async with sqlite_db.session() as session:
        text = " ".join(await session.scalars(select(ChunkRow.text).where(ChunkRow.url.like("%a.html%"))))
    assert "after the fault" in text


async def test_a_page_that_never_read_is_not_an_error_for_the_rest(sqlite_db: Database, site_root: Path) -> None:
    async with StaticSite(site_root) as site:
        site.fault("/guide/b.html", Fault.SERVER_ERROR)
        report = await crawl(sqlite_db, site)
    assert report.added == 3 and [f.reason for f in report.crawls[0].failed] == ["server error (HTTP 503)"]
    assert any("kept as it was" in w for w in report.warnings)


async def test_robots_txt_unreachable_crawls_nothing_and_removes_nothing(sqlite_db: Database, site_root: Path) -> None:
    async with StaticSite(site_root) as site:
        site.fault("/robots.txt", Fault.SERVER_ERROR)
        with pytest.raises(IngestError) as first:
            await crawl(sqlite_db, site)
        assert site.paths() == ["/robots.txt"]  # RFC 9309: a 5xx robots.txt means "disallow everything"
        site.fault("/robots.txt", None)
        await crawl(sqlite_db, site)
        site.fault("/robots.txt", Fault.TIMEOUT)
        again = await crawl(sqlite_db, site)
    assert first.value.reason == "robots unreachable"
    assert again.removed == 0 and len(await sources(sqlite_db)) == 4
    assert again.crawls[0].problem.startswith("timeout")


async def test_an_unreachable_start_page_is_an_ingest_error(sqlite_db: Database, site_root: Path) -> None:
    async with StaticSite(site_root) as site:
        site.fault("/guide/", Fault.SERVER_ERROR)
        with pytest.raises(IngestError) as caught:
            await crawl(sqlite_db, site)
        with pytest.raises(IngestError) as missing:
            await crawl(sqlite_db, site, "/nothing-here/")
    assert caught.value.reason == "unreachable" and "HTTP 503" in str(caught.value)
    assert missing.value.reason == "http error"


class FailingOnce:
    """An embedder whose first call fails as an unreachable endpoint does."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.calls = 0
        self.dim = self.inner.dim
        self.model_name = "hashing"

    async def embed_queries(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return await self.inner.embed_queries(texts)

    async def embed_passages(self, texts: list[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        if self.calls == 1:
            raise EmbeddingUnavailable(EmbeddingFailure.SERVER_ERROR, "503")
        return await self.inner.embed_passages(texts)


async def test_pages_the_embedder_failed_are_fetched_whole_next_time(sqlite_db: Database, site_root: Path) -> None:
    embedder = FailingOnce()
    ingest = Ingestor(sqlite_db, embedder, LocalVectorIndex(64), crawl=LIMITS)
    async with StaticSite(site_root) as site:
        first = await ingest.ingest([site.url("/guide/")])
        before = len(site.requests)
        second = await ingest.ingest([site.url("/guide/")])
        statuses = {r.status for r in site.requests[before:] if r.path.startswith("/guide/")}
    assert first.failed and first.added < 4
    assert 200 in statuses  # no validators were kept for what was not stored
    assert first.added + second.added == 4


async def test_crawl_state_and_runs_are_remembered(sqlite_db: Database, site_root: Path) -> None:
    async with StaticSite(site_root) as site:
        site.fault("/guide/b.html", Fault.SERVER_ERROR)
        await crawl(sqlite_db, site)
    async with sqlite_db.session() as session:
        pages = {p.url.rsplit("/", 1)[-1]: p for p in await session.scalars(select(CrawlPageRow))}
        run = await session.scalar(select(IngestRunRow))
        runs = await session.scalar(select(func.count()).select_from(IngestRunRow))
    assert pages["a.html"].etag and pages["a.html"].doc_id and pages["b.html"].error.startswith("server error")
    assert run is not None and runs == 1 and run.kind == "site" and run.documents == 3 and run.failed == 1
    assert run.errors and "b.html: server error" in run.errors[0]


async def test_an_index_outage_mid_crawl_stops_the_crawl_and_loses_nothing(
    sqlite_db: Database, site_root: Path
) -> None:
    from storage.vector_index import VectorIndexUnavailable
    from tests.storage.test_ingest_index_failure import FlakyIndex

    for n in range(40):  # enough pages for several groups of chunks
        (site_root / "guide" / f"extra{n}.html").write_text(page(f"Extra {n}", f"<p>{'Extra words. ' * 300}</p>"))
    index = site_root / "guide" / "index.html"
    index.write_text(index.read_text().replace("</ul>", "".join(
        f'<li><a href="extra{n}.html">e</a></li>' for n in range(40)) + "</ul>"))  # fmt: skip
    flaky = FlakyIndex(64)
    flaky.down = True
    ingest = Ingestor(sqlite_db, HashingEmbedder(), flaky, crawl=CrawlLimits(user_agent=UA, concurrency=1))
    async with StaticSite(site_root) as site:
        with pytest.raises(VectorIndexUnavailable):
            await ingest.ingest([site.url("/guide/")])
        stopped_at = len(site.requests)
        await asyncio.sleep(0.3)
        assert len(site.requests) == stopped_at  # no request after the ingest gave up
        assert stopped_at < 40  # it gave up early, not after crawling everything
        flaky.down = False
        report = await ingest.ingest([site.url("/guide/")])
    assert report.added == 44 and report.removed == 0
