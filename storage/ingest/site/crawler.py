"""Crawl one documentation site: robots.txt first, then its sitemaps, then the pages (the start page, the sitemap's
pages and every page known from the last crawl, and the links of each page read), a few at a time per host.

The crawler only fetches and discovers; `SiteReading` turns what it found into documents and remembers it. Each URL
ends as exactly one `Visit`, and a fault never stops the crawl: it is that URL's outcome, retried next time."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from storage.ingest.site.fetch import Body, Failed, Failure, Fetcher, Gone, NotModified, Skipped, SkipReason
from storage.ingest.site.limits import CrawlLimits
from storage.ingest.site.page import PageScan, scan_page
from storage.ingest.site.robots import RobotsRules, read_robots
from storage.ingest.site.scope import DOCUMENT_TYPES, PDF_TYPE, SiteScope, is_sitemap, looks_like_page
from storage.ingest.site.sitemaps import SitemapPages, read_sitemaps

log = logging.getLogger(__name__)

_DONE = object()


@dataclass(frozen=True, slots=True)
class KnownPage:
    """What the last crawl left of a URL: its validators for a conditional request, and how often it was gone."""

    url: str
    doc_id: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    missing: int = 0  # consecutive crawls that answered 404/410
    in_sitemap: bool = False
    depth: int = 0
    page_url: str | None = None  # the URL its document is known by (canonical, or where redirects ended)
    body_hash: str | None = None  # of the body last read


class Outcome(StrEnum):
    READ = "read"  # answered 200 with a page: `body`, `scan` and `body_hash` are set
    UNCHANGED = "unchanged"  # 304 to a conditional request
    GONE = "gone"  # 404 / 410
    FAILED = "failed"  # a fault: retried next time, nothing removed
    SKIPPED = "skipped"  # not a document by the site's own word (type, robots, noindex, duplicate, redirect out)
    NOT_VISITED = "not visited"  # over the page or depth limit: `detail` says which
    LEFT_SITEMAP = "left the sitemap"  # listed last time, not now: removed without a request


@dataclass(frozen=True, slots=True)
class Visit:
    url: str  # as asked for (the key of the crawl state)
    outcome: Outcome
    depth: int
    in_sitemap: bool
    page_url: str = ""  # READ: the URL the page is known by (canonical, or where the redirects ended)
    body: Body | None = None
    scan: PageScan | None = None
    status: int = 0
    failure: Failure | None = None
    skip: SkipReason | None = None
    detail: str = ""
    body_hash: str = ""


@dataclass(slots=True)
class CrawlStats:
    found: int = 0  # distinct URLs of the site met (start, sitemaps, known, links)
    requests: int = 0  # every request: robots.txt, sitemaps, pages, redirect hops
    bytes: int = 0
    seconds: float = 0.0
    sitemap_pages: int = 0
    sitemaps_read: int = 0
    sitemap_problems: list[tuple[str, str]] = field(default_factory=list)
    robots_problem: str = ""  # robots.txt unreachable: nothing was crawled


class SiteCrawler:
    """`crawl(known)` yields one `Visit` per URL; `stats` is filled in as it goes."""

    def __init__(self, start: str, limits: CrawlLimits) -> None:
        self.scope = SiteScope.of(start)
        self.sitemap_only = is_sitemap(start)
        self.limits = limits
        self.stats = CrawlStats()
        self.robots: RobotsRules | None = None
        self.sitemap: SitemapPages | None = None

    async def crawl(self, known: Mapping[str, KnownPage]) -> AsyncGenerator[Visit, None]:
        started = time.perf_counter()
        limits = self.limits
        fetcher = Fetcher(
            user_agent=limits.user_agent,
            timeout_s=limits.timeout_s,
            max_bytes=limits.max_page_bytes,
            concurrency=limits.concurrency,
            delay_s=limits.delay_s,
        )
        try:
            async with fetcher, contextlib.aclosing(self._crawl(fetcher, known)) as visits:
                async for visit in visits:
                    yield visit
        finally:
            self.stats.requests = fetcher.stats.requests
            self.stats.bytes = fetcher.stats.bytes
            self.stats.seconds = time.perf_counter() - started

    async def _crawl(self, fetcher: Fetcher, known: Mapping[str, KnownPage]) -> AsyncGenerator[Visit, None]:
        scope = self.scope
        robots = self.robots = await read_robots(fetcher, scope.robots_url)
        if not robots.reachable:
            self.stats.robots_problem = robots.problem
            return
        fetcher.pace(scope.origin, robots.crawl_delay)
        named = [scope.start] if self.sitemap_only else list(robots.sitemaps)
        guessed = [] if self.sitemap_only else list(scope.default_sitemaps())
        sitemap = self.sitemap = await read_sitemaps(
            fetcher, named, guessed, scope, robots.allows, max_bytes=self.limits.max_page_bytes
        )
        self.stats.sitemap_pages = len(sitemap.pages)
        self.stats.sitemaps_read = len(sitemap.read)
        self.stats.sitemap_problems = list(sitemap.failed)
        # a page listed last time and not now is gone, if every sitemap was read and still lists something
        left = set()
        if sitemap.complete and sitemap.pages:
            left = {url for url, page in known.items() if page.in_sitemap and url not in sitemap.pages}
        for url in sorted(left):
            yield Visit(url, Outcome.LEFT_SITEMAP, known[url].depth, False)
        seeds: dict[str, int] = {}
        if not self.sitemap_only:
            seeds[scope.start] = 0
        for url in sitemap.pages:
            seeds.setdefault(url, 0)
        for url, page in known.items():
            if url not in left and scope.contains(url):
                seeds.setdefault(url, page.depth)
        async with contextlib.aclosing(self._visit_all(fetcher, seeds, known, set(left))) as visits:
            async for visit in visits:
                yield visit

    async def _visit_all(
        self, fetcher: Fetcher, seeds: dict[str, int], known: Mapping[str, KnownPage], seen: set[str]
    ) -> AsyncGenerator[Visit, None]:
        frontier: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        results: asyncio.Queue[Visit | object] = asyncio.Queue(maxsize=4 * self.limits.concurrency)
        # page URLs (canonical or final) and bodies already given to a document, by the URL that owns them: another
        # URL giving the same is a duplicate (`dir/` and `dir/index.html`); the last crawl's owners keep theirs
        claimed: dict[str, str] = {}
        for page in known.values():
            if page.doc_id is not None and page.page_url:
                claimed.setdefault(page.page_url, page.url)
                if page.body_hash:
                    claimed.setdefault(f"sha1:{page.body_hash}", page.url)
        budget = [self.limits.max_pages]

        def enqueue(url: str, depth: int) -> None:
            if url not in seen:
                seen.add(url)
                self.stats.found += 1
                frontier.put_nowait((url, depth))

        for url, depth in seeds.items():
            enqueue(url, depth)

        async def worker() -> None:
            while True:
                url, depth = await frontier.get()
                try:
                    visit = await self._visit(fetcher, url, depth, known.get(url), budget, claimed)
                    if visit.scan is not None and self._follows(visit.scan, depth):
                        base = visit.body.url if visit.body is not None else url
                        if visit.scan.base:
                            base = self.scope.resolve(base, visit.scan.base) or base
                        for href in visit.scan.links:
                            target = self.scope.resolve(base, href)
                            if target is not None:
                                enqueue(target, depth + 1)
                    await results.put(visit)
                except Exception as exc:  # a bug must not hang the crawl: that URL fails, the rest goes on
                    log.exception("crawling a page failed unexpectedly", extra={"url": url})
                    await results.put(Visit(url, Outcome.FAILED, depth, False, failure=Failure.MALFORMED,
                                            detail=type(exc).__name__))  # fmt: skip
                finally:
                    frontier.task_done()

        async def close_when_done() -> None:
            await frontier.join()
            await results.put(_DONE)

        tasks = [asyncio.create_task(worker()) for _ in range(self.limits.concurrency)]
        tasks.append(asyncio.create_task(close_when_done()))
        try:
            while True:
                item = await results.get()
                if item is _DONE:
                    break
                assert isinstance(item, Visit)
                yield item
        finally:
            for task in tasks:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _visit(
        self,
        fetcher: Fetcher,
        url: str,
        depth: int,
        before: KnownPage | None,
        budget: list[int],
        claimed: dict[str, str],
    ) -> Visit:
        listed = self.sitemap is not None and url in self.sitemap.pages
        assert self.robots is not None
        if not self.robots.allows(url):
            return Visit(url, Outcome.SKIPPED, depth, listed, skip=SkipReason.DISALLOWED)
        if not looks_like_page(url):
            return Visit(url, Outcome.SKIPPED, depth, listed, skip=SkipReason.NOT_A_PAGE)
        if depth > self.limits.max_depth:  # remembered, so a crawl allowed deeper finds it behind unchanged pages
            return Visit(url, Outcome.NOT_VISITED, depth, listed, detail="depth limit")
        if budget[0] <= 0:
            return Visit(url, Outcome.NOT_VISITED, depth, listed, detail="page limit")
        budget[0] -= 1
        outcome = await fetcher.get(
            url,
            check=self._refusal,
            accept=DOCUMENT_TYPES,
            etag=before.etag if before is not None else None,
            last_modified=before.last_modified if before is not None else None,
        )
        if isinstance(outcome, NotModified):
            return Visit(url, Outcome.UNCHANGED, depth, listed, status=304)
        if isinstance(outcome, Gone):
            return Visit(url, Outcome.GONE, depth, listed, status=outcome.status)
        if isinstance(outcome, Skipped):
            return Visit(url, Outcome.SKIPPED, depth, listed, skip=outcome.reason)
        if isinstance(outcome, Failed):
            log.warning(
                "page skipped this time",
                extra={"url": url, "failure": outcome.failure.value, "detail": outcome.detail},
            )
            return Visit(url, Outcome.FAILED, depth, listed, failure=outcome.failure, detail=outcome.detail)
        return await self._read(url, depth, listed, outcome, claimed)

    async def _read(self, url: str, depth: int, listed: bool, body: Body, claimed: dict[str, str]) -> Visit:
        pdf = body.content_type == PDF_TYPE  # read whole by `SiteReading`; it has no links to follow
        if not pdf and b"\x00" in body.body[:4096]:
            log.warning("page skipped this time", extra={"url": url, "failure": "malformed", "detail": "binary"})
            return Visit(url, Outcome.FAILED, depth, listed, failure=Failure.MALFORMED, detail="binary content")
        markdown = body.content_type in ("text/markdown", "text/x-markdown")
        scan = None if markdown or pdf else await asyncio.to_thread(_scan, body)
        if scan is not None and "noindex" in body.robots_header.lower():
            scan = _with_noindex(scan)
        page_url = body.url
        if scan is not None and scan.canonical:
            canonical = self.scope.resolve(body.url, scan.canonical)
            if canonical is not None:  # a canonical URL outside the site (another host, file://) is ignored
                page_url = canonical
        if scan is not None and scan.noindex:
            return Visit(url, Outcome.SKIPPED, depth, listed, body=body, scan=scan, skip=SkipReason.NOINDEX)
        digest = hashlib.sha1(body.body).hexdigest()  # noqa: S324 - tells equal bodies apart, not security
        owners = {claimed.get(page_url, url), claimed.get(f"sha1:{digest}", url)}
        if owners != {url}:
            return Visit(url, Outcome.SKIPPED, depth, listed, body=body, scan=scan, skip=SkipReason.DUPLICATE,
                         page_url=page_url, body_hash=digest)  # fmt: skip
        claimed[page_url] = claimed[f"sha1:{digest}"] = url
        return Visit(url, Outcome.READ, depth, listed, page_url=page_url, body=body, scan=scan, status=200,
                     body_hash=digest)  # fmt: skip

    def _follows(self, scan: PageScan, depth: int) -> bool:
        return not scan.nofollow and not self.sitemap_only and depth <= self.limits.max_depth

    def _refusal(self, url: str) -> SkipReason | None:
        if not self.scope.contains(url):
            return SkipReason.OUTSIDE
        assert self.robots is not None
        return None if self.robots.allows(url) else SkipReason.DISALLOWED


def _scan(body: Body) -> PageScan:
    from storage.ingest.site.page import decode_html

    return scan_page(decode_html(body.body, body.charset))


def _with_noindex(scan: PageScan) -> PageScan:
    from dataclasses import replace

    return replace(scan, noindex=True)
