"""What readers produce and the ingestor stores: documents in the seed structure, with their chunks."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class SourceChunk:
    section: str  # anchor, "" for the whole document
    title: str
    crumbs: tuple[str, ...]
    text: str


@dataclass(slots=True)
class SourceDoc:
    """One document in the seed structure; empty derived fields are filled in before storing."""

    id: str
    source: str  # citation URL
    title: str
    crumbs: tuple[str, ...]
    content: str
    description: str = ""
    summary: str = ""
    keypoints: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    chunks: list[SourceChunk] = field(default_factory=list)
    # when the source says it last changed (file time, Last-Modified, a seed's `updated_at`); None: when the ingest
    # saw it change. Not part of the hash: a touched file with the same text is unchanged.
    changed_at: datetime | None = None

    def content_hash(self) -> str:
        """Changes whenever anything a reader or a citation would see changes."""
        blob = json.dumps(
            [
                self.source,
                self.title,
                list(self.crumbs),
                self.description,
                self.content,
                self.summary,
                self.keypoints,
                self.keywords,
                [[c.section, c.title, list(c.crumbs), c.text] for c in self.chunks],
            ],
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class SkippedSource:
    name: str
    reason: str


@dataclass(slots=True)
class IngestProgress:
    """Counts so far, handed to the progress callback after every change. For a folder, `found` and `fetched` are
    its files; for a site, the URLs met and the pages that answered with a body."""

    source: str = ""
    found: int = 0
    fetched: int = 0
    unchanged: int = 0  # 304 Not Modified, or the same content hash
    changed: int = 0  # documents stored, new or updated
    failed: int = 0  # pages that could not be fetched this time, documents the embedder failed
    skipped: int = 0  # not pages, disallowed, duplicates, noindex, unreadable files
    removed: int = 0
    chunks_embedded: int = 0
    chunks_waiting: int = 0  # chunks of read documents not embedded yet
    current: str = ""
    started: float = field(default_factory=time.monotonic)

    @property
    def settled(self) -> int:
        """URLs or files dealt with, whatever the outcome."""
        return self.unchanged + self.changed + self.failed + self.skipped

    @property
    def elapsed(self) -> float:
        return max(time.monotonic() - self.started, 1e-6)

    @property
    def rate(self) -> float:
        return self.settled / self.elapsed

    @property
    def seconds_left(self) -> float | None:
        left = max(self.found - self.settled, 0)
        return left / self.rate if self.rate > 0 else None

    def line(self) -> str:
        """One line for a person: how far it got, in counts."""
        parts = [
            f"{self.found} found",
            f"{self.fetched} fetched",
            f"{self.unchanged} unchanged",
            f"{self.changed} changed",
            f"{self.failed} failed",
        ]
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        parts.append(f"{self.chunks_embedded} chunks embedded")
        if self.chunks_waiting:
            parts.append(f"{self.chunks_waiting} waiting")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class CrawlReport:
    """One site's crawl, for the summary line, the log and `docbot doctor`."""

    site: str
    found: int = 0
    fetched: int = 0  # answered 200 with a page
    not_modified: int = 0  # answered 304
    gone: int = 0  # answered 404/410 (removed after the second crawl in a row)
    failed: tuple[SkippedSource, ...] = ()  # faults: kept as indexed before, retried next time
    not_pages: int = 0  # not HTML or Markdown (by extension, or by Content-Type)
    skipped: int = 0  # disallowed by robots.txt, noindex, duplicates, redirected outside the site
    not_visited: int = 0  # over the page limit: next time
    left_sitemap: int = 0
    sitemap_pages: int = 0
    requests: int = 0
    bytes: int = 0
    seconds: float = 0.0
    problem: str = ""  # why nothing was crawled (robots.txt unreachable), "" otherwise

    def summary(self) -> str:
        text = (
            f"{self.site}: {self.found} URLs found ({self.sitemap_pages} in sitemaps), {self.fetched} fetched, "
            f"{self.not_modified} not modified, {len(self.failed)} failed, {self.gone} gone, "
            f"{self.not_pages} not pages, {self.skipped} skipped; {self.requests} requests, "
            f"{self.bytes / 1e6:.1f} MB in {self.seconds:.1f} s"
        )
        if self.not_visited:
            text += f"; {self.not_visited} over the page limit, left for the next crawl"
        if self.problem:
            text += f"; nothing crawled: {self.problem}"
        return text


@dataclass(frozen=True, slots=True)
class IngestReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: tuple[SkippedSource, ...] = ()
    # documents not stored because the embedder failed (endpoint down, wrong dimension): nothing of them was
    # written, an updated one keeps its previous version, and the next ingest tries them again
    failed: tuple[SkippedSource, ...] = ()
    chunks: int = 0  # chunks stored by this run (new or replaced documents)
    embedded: int = 0  # passages embedded by this run
    seconds: float = 0.0
    crawls: tuple[CrawlReport, ...] = ()  # one per site crawled

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(f"{s.name}: {s.reason}" for s in self.skipped) + tuple(
            f"{f.name}: {f.reason} (kept as it was; tried again next time)" for c in self.crawls for f in c.failed
        )

    def summary(self) -> str:
        return (
            f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, {self.removed} removed, "
            f"{len(self.skipped)} skipped; {self.chunks} chunks embedded in {self.seconds:.1f} s"
            + (f"; {len(self.failed)} not ingested (embedder failed), run the same ingest again" if self.failed else "")
        )
