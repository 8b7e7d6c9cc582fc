"""Sitemaps (sitemaps.org 0.9): a `urlset`, a `sitemapindex` of further sitemaps, gzip or plain, or a text file of
URLs. Parsed with the standard library's XML parser (expat, which refuses entity expansion attacks since 2.4.1),
which raises on a truncated or broken file: a broken sitemap is an error, never a shorter list, because pages
missing from the sitemap are removed from the index."""

from __future__ import annotations

import gzip
import io
import logging
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field

from storage.ingest.site.fetch import Body, Failed, Fetcher, Gone, NotModified, Skipped
from storage.ingest.site.scope import SiteScope, is_http, normalise

log = logging.getLogger(__name__)

MAX_SITEMAPS = 500  # sitemap files read per crawl (an index names at most 50,000; docs sites have a handful)
_GZIP_MAGIC = b"\x1f\x8b"


class SitemapError(ValueError):
    """Not a sitemap: broken XML, an unknown root element, or too large once decompressed."""


@dataclass(frozen=True, slots=True)
class ParsedSitemap:
    pages: tuple[tuple[str, str | None], ...] = ()  # (URL, lastmod)
    sitemaps: tuple[str, ...] = ()  # further sitemaps named by an index


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse_sitemap(raw: bytes, *, max_bytes: int) -> ParsedSitemap:
    """One sitemap file's entries; raises SitemapError when it is not a complete sitemap."""
    if raw.startswith(_GZIP_MAGIC):
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unpacked:
                raw = unpacked.read(max_bytes + 1)
        except (OSError, EOFError) as exc:
            raise SitemapError(f"broken gzip: {exc}") from exc
        if len(raw) > max_bytes:
            raise SitemapError(f"more than {max_bytes} bytes once decompressed")
    if not raw.lstrip().startswith(b"<"):
        text = raw.decode("utf-8", errors="replace")
        urls = [line.strip() for line in text.splitlines() if is_http(line.strip())]
        if not urls and text.strip():
            raise SitemapError("neither XML nor a list of URLs")
        return ParsedSitemap(pages=tuple((u, None) for u in urls))
    try:
        root = ET.fromstring(raw)  # noqa: S314 - see the module's note
    except ET.ParseError as exc:
        raise SitemapError(f"broken XML: {exc}") from exc
    kind = _local(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        raise SitemapError(f"root element <{kind}> is not a sitemap")
    entries: list[tuple[str, str | None]] = []
    for entry in root:
        fields = {_local(child.tag): (child.text or "").strip() for child in entry}
        if fields.get("loc"):
            entries.append((fields["loc"], fields.get("lastmod") or None))
    if kind == "sitemapindex":
        return ParsedSitemap(sitemaps=tuple(url for url, _ in entries))
    return ParsedSitemap(pages=tuple(entries))


@dataclass(slots=True)
class SitemapPages:
    """The site's pages by its sitemaps. `complete` is False when a sitemap that was named (by robots.txt, an
    index or the start URL) could not be read: then no page counts as gone from the sitemap."""

    pages: dict[str, str | None] = field(default_factory=dict)
    read: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (sitemap URL, why)
    outside: int = 0  # listed pages outside the site's prefix, left out

    @property
    def found(self) -> bool:
        return bool(self.read)

    @property
    def complete(self) -> bool:
        return self.found and not self.failed


async def read_sitemaps(
    fetcher: Fetcher,
    named: list[str],
    guessed: list[str],
    scope: SiteScope,
    allows: Callable[[str], bool],
    *,
    max_bytes: int,
) -> SitemapPages:
    """Read the `named` sitemaps (robots.txt's Sitemap lines, a sitemap start URL) and, when none is named, the
    `guessed` usual places (whose absence is no error), following indexes."""
    result = SitemapPages()
    queue = [(url, True) for url in named] or [(url, False) for url in guessed]
    seen: set[str] = set()
    while queue and len(seen) < MAX_SITEMAPS:
        url, required = queue.pop(0)
        url = normalise(url)
        if url in seen:
            continue
        seen.add(url)
        if not allows(url):
            if required:
                result.failed.append((url, "disallowed by robots.txt"))
            continue
        outcome = await fetcher.get(url)
        if isinstance(outcome, Gone | Skipped | NotModified) or (
            isinstance(outcome, Body) and not required and outcome.content_type == "text/html"
        ):  # a usual place without a sitemap (some servers answer any path with their home page)
            if required:
                result.failed.append((url, f"HTTP {outcome.status}" if isinstance(outcome, Gone) else "not found"))
            continue
        if isinstance(outcome, Failed):
            result.failed.append((url, f"{outcome.failure.value} ({outcome.detail})"))
            continue
        try:
            parsed = parse_sitemap(outcome.body, max_bytes=max_bytes)
        except SitemapError as exc:
            log.warning("sitemap unreadable", extra={"url": url, "error": str(exc)})
            result.failed.append((url, str(exc)))
            continue
        result.read.append(url)
        queue.extend((child, True) for child in parsed.sitemaps)
        for page, lastmod in parsed.pages:
            page = normalise(page)
            if scope.contains(page):
                result.pages.setdefault(page, lastmod)
            else:
                result.outside += 1
    return result
