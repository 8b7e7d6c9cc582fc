"""A site as an ingest input: the crawler's visits become documents, and the crawl state (validators, 404 counts)
is kept so the next crawl asks only for what changed and removes only what is really gone.

Rules (docs/ingesting-documents.md): a page answering 404/410 on two crawls in a row, or no longer listed by a
sitemap that was read whole, or now refused by the site itself (robots.txt, noindex, not a page any more), is
removed. A fault (timeout, 5xx, a body over the limit, a redirect loop, a broken page) removes nothing: the page
keeps what was indexed and is asked for again next time. A page's validators are saved only once its document is
stored, so a page whose embedding failed is fetched whole again."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, insert, select

from storage.doc_tables import CrawlPageRow, SessionFactory
from storage.ingest.errors import IngestError
from storage.ingest.model import CrawlReport, IngestProgress, SkippedSource, SourceDoc
from storage.ingest.site.crawler import KnownPage, Outcome, SiteCrawler, Visit
from storage.ingest.site.fetch import Failure, SkipReason
from storage.ingest.site.limits import CrawlLimits
from storage.ingest.site.page import decode_html, trail
from storage.ingest.site.scope import PDF_TYPE

log = logging.getLogger(__name__)

GONE_AFTER = 2  # crawls in a row answering 404/410 before a page is removed
_SAVE_EVERY = 200  # crawl state rows written per transaction while crawling


def _row_id(collection: str, origin: str, url: str) -> str:
    return hashlib.sha1(f"{collection}\0{origin}\0{url}".encode()).hexdigest()[:24]  # noqa: S324 - an id


@dataclass(slots=True)
class _Counts:
    fetched: int = 0
    not_modified: int = 0
    gone: int = 0
    not_pages: int = 0
    skipped: int = 0
    not_visited: int = 0
    left_sitemap: int = 0
    failed: list[SkippedSource] = field(default_factory=list)


class SiteReading:
    """One crawl of one site for `Ingestor`: `documents()` yields the pages read; then `stored()`/`not_stored()`
    settle each, `vanished()` says which stored documents of the site go, and `finish()` saves the state."""

    kind = "site"

    def __init__(
        self,
        db: SessionFactory,
        collection: str,
        start: str,
        limits: CrawlLimits,
        progress: IngestProgress,
        doc_id: Callable[[str], str],
    ) -> None:
        self._db = db
        self._collection = collection
        self._crawler = SiteCrawler(start, limits)
        self.origin = self._crawler.scope.start
        self._progress = progress
        self._doc_id = doc_id
        self._known: dict[str, KnownPage] = {}
        self._retained: set[str] = set()  # documents kept as they are without being read again
        self._not_modified: set[str] = set()  # of those, the ones whose page answered 304
        self._rows: dict[str, dict[str, Any]] = {}  # url -> crawl state to write
        self._dropped: set[str] = set()  # urls whose crawl state goes
        self._waiting: dict[str, list[dict[str, Any]]] = {}  # doc id -> state of the visits that read it
        self._counts = _Counts()
        self.skipped: list[SkippedSource] = []
        self._read_any = False

    # ---- reading -------------------------------------------------------------------------------------------

    async def documents(self) -> AsyncGenerator[SourceDoc, None]:
        self._known = await self._load_known()
        async with contextlib.aclosing(self._crawler.crawl(self._known)) as visits:  # stops with its reader
            async for visit in visits:
                self._progress.found = max(self._crawler.stats.found, self._progress.found)
                doc = await self._settle(visit)
                if doc is not None:
                    self._read_any = True
                    yield doc
                if len(self._rows) + len(self._dropped) >= _SAVE_EVERY:
                    await self._save()
        self._require_something()

    def _require_something(self) -> None:
        """A first crawl that read nothing at all is the input failing, as an unreachable folder is."""
        if self._read_any or self._known:
            return
        counts = self._counts
        problem = self._crawler.stats.robots_problem
        if problem:
            raise IngestError(f"robots.txt of {self.origin} could not be read ({problem}): nothing may be crawled "
                              "until it can (RFC 9309)", source=self.origin, reason="robots unreachable")  # fmt: skip
        if counts.failed:
            first = counts.failed[0]
            raise IngestError(f"cannot fetch {first.name}: {first.reason}", source=self.origin, reason="unreachable")
        if counts.gone:
            raise IngestError(f"{self.origin} answered HTTP 404", source=self.origin, reason="http error")
        raise IngestError(f"no page of {self.origin} could be read ({counts.not_pages} not pages, "
                          f"{counts.skipped} skipped)", source=self.origin, reason="empty")  # fmt: skip

    async def _settle(self, visit: Visit) -> SourceDoc | None:
        """Count the visit, remember what it taught, and give the document it read (if any)."""
        before = self._known.get(visit.url)
        keep = before.doc_id if before is not None else None
        counts, progress = self._counts, self._progress
        outcome = visit.outcome
        if outcome is Outcome.READ:
            counts.fetched += 1
            progress.fetched += 1
            try:
                doc = await asyncio.to_thread(self._to_doc, visit)
            except ValueError as exc:  # nothing readable in it, or a PDF that cannot be read (the reason says)
                log.warning("page skipped this time", extra={"url": visit.url, "failure": "malformed",
                                                             "detail": str(exc)})  # fmt: skip
                self._failed(visit, before, Failure.MALFORMED, str(exc))
                return None
            self._waiting.setdefault(doc.id, []).append(
                self._row(visit, None, doc_id=doc.id, page_url=visit.page_url, body_hash=visit.body_hash)
            )
            return doc
        if outcome is Outcome.UNCHANGED:
            counts.not_modified += 1
            progress.unchanged += 1
            self._retain(keep)
            if keep is not None:
                self._not_modified.add(keep)
            self._rows[visit.url] = self._row(visit, before)
        elif outcome is Outcome.GONE:
            counts.gone += 1
            progress.skipped += 1
            missing = (before.missing if before is not None else 0) + 1
            if missing >= GONE_AFTER:
                self._dropped.add(visit.url)  # its document is not retained: removed as vanished
            else:
                self._retain(keep)
                self._rows[visit.url] = self._row(visit, before, missing=missing, validators=False)
        elif outcome is Outcome.FAILED:
            assert visit.failure is not None
            self._failed(visit, before, visit.failure, visit.detail)
        elif outcome is Outcome.NOT_VISITED:
            counts.not_visited += 1
            self._retain(keep)
            self._rows[visit.url] = self._row(visit, before, error=visit.detail)  # known next time
        elif outcome is Outcome.LEFT_SITEMAP:
            counts.left_sitemap += 1
            progress.skipped += 1
            self._dropped.add(visit.url)
        else:
            assert visit.skip is not None
            if visit.skip is SkipReason.NOT_A_PAGE:
                counts.not_pages += 1
            else:
                counts.skipped += 1
            progress.skipped += 1
            # known next time without a document of its own (a duplicate keeps its validators: a 304 then)
            self._rows[visit.url] = self._row(visit, None, body_hash=visit.body_hash or None, error=visit.skip.value)
        return None

    def _failed(self, visit: Visit, before: KnownPage | None, failure: Failure, detail: str) -> None:
        self._counts.failed.append(SkippedSource(visit.url, f"{failure.value}" + (f" ({detail})" if detail else "")))
        self._progress.failed += 1
        self._retain(before.doc_id if before is not None else None)
        self._rows[visit.url] = self._row(visit, before, error=f"{failure.value}: {detail}"[:300])

    def _retain(self, doc_id: str | None) -> None:
        if doc_id is not None:
            self._retained.add(doc_id)

    def _row(
        self,
        visit: Visit,
        before: KnownPage | None,
        *,
        doc_id: str | None = None,
        page_url: str | None = None,
        body_hash: str | None = None,
        missing: int | None = None,
        validators: bool = True,
        error: str = "",
    ) -> dict[str, Any]:
        """The crawl state of `visit.url`: what this visit learnt, else what the last crawl knew."""
        etag = last_modified = None
        if visit.body is not None:
            etag, last_modified = visit.body.etag, visit.body.last_modified
        elif before is not None:
            etag, last_modified = before.etag, before.last_modified
        if before is not None:
            doc_id = doc_id or before.doc_id
            page_url = page_url or before.page_url
            body_hash = body_hash or before.body_hash
        return {
            "id": _row_id(self._collection, self.origin, visit.url),
            "collection": self._collection,
            "origin": self.origin,
            "url": visit.url,
            "doc_id": doc_id,
            "page_url": page_url,
            "body_hash": body_hash,
            "etag": etag[:500] if etag and validators else None,
            "last_modified": last_modified[:100] if last_modified and validators else None,
            "missing": missing if missing is not None else 0,
            "in_sitemap": visit.in_sitemap,
            "depth": visit.depth,
            "status": visit.status,
            "error": error,
            "checked_at": datetime.now(UTC),
        }

    def _to_doc(self, visit: Visit) -> SourceDoc:
        """The page as a document (off the event loop): its content's sections, its title, the site's breadcrumbs;
        a PDF the site links to as a PDF file is read. Raises ValueError when it gives no readable text."""
        from storage.ingest.readers import ReadText, http_date, main_html_to_markdown, markdown_sections, text_to_doc

        assert visit.body is not None
        scope = self._crawler.scope
        crumbs: tuple[str, ...] = ()
        if visit.body.content_type == PDF_TYPE:
            from storage.ingest.pdf import read_pdf

            read = read_pdf(visit.body.body)
        elif visit.scan is None:  # Markdown served as such
            read = ReadText(markdown_sections(decode_html(visit.body.body, visit.body.charset)))
        else:
            sections = markdown_sections(main_html_to_markdown(visit.scan.main_html))
            read = ReadText(sections, title_hint=visit.scan.title)
            page = visit.body.url
            title = next((s.title for s in sections if s.level == 1), "")
            crumbs = trail(visit.scan.breadcrumbs, lambda href: scope.resolve(page, href), scope.homes, title)
        if not read.sections:
            raise ValueError("no readable text")
        doc = text_to_doc(
            read,
            doc_id=self._doc_id(visit.page_url),
            source=visit.page_url,
            fallback_title=visit.page_url.rstrip("/").rsplit("/", 1)[-1],
            path_crumbs=crumbs,
        )
        doc.changed_at = http_date(visit.body.last_modified)  # the page's own date, when the server says it
        return doc

    # ---- settling ------------------------------------------------------------------------------------------

    def stored(self, doc_ids: Iterable[str]) -> None:
        """These documents are in the index as read: their pages' validators can be used next time."""
        for doc_id in doc_ids:
            for row in self._waiting.pop(doc_id, []):
                self._rows[row["url"]] = row

    def not_stored(self, doc_ids: Iterable[str]) -> None:
        """These documents could not be stored (the embedder failed): next time their pages are fetched whole."""
        for doc_id in doc_ids:
            for row in self._waiting.pop(doc_id, []):
                self._rows[row["url"]] = {**row, "etag": None, "last_modified": None, "error": "not stored"}

    def unchanged_unread(self, kept: set[str]) -> int:
        """Documents kept because their page answered 304 (not read again, so not counted by the ingestor)."""
        return len(self._not_modified - kept)

    def vanished(self, known: Iterable[str], kept: set[str]) -> list[str]:
        """Stored documents of this site that no page gave or kept this time. Nothing goes when the crawl could
        not start (robots.txt unreachable)."""
        if self._crawler.stats.robots_problem:
            return []
        return [doc_id for doc_id in known if doc_id not in kept and doc_id not in self._retained]

    async def _save(self) -> None:
        rows, dropped = list(self._rows.values()), set(self._dropped)
        self._rows.clear()
        self._dropped.clear()
        ids = [r["id"] for r in rows] + [_row_id(self._collection, self.origin, url) for url in dropped]
        if not ids:
            return
        async with self._db.session() as session:
            for start in range(0, len(ids), 500):
                await session.execute(delete(CrawlPageRow).where(CrawlPageRow.id.in_(ids[start : start + 500])))
            if rows:
                await session.execute(insert(CrawlPageRow), rows)

    async def finish(self) -> CrawlReport:
        self.not_stored(list(self._waiting))  # read but never stored (the ingest stopped early)
        await self._save()
        stats, counts = self._crawler.stats, self._counts
        return CrawlReport(
            site=self.origin,
            found=stats.found,
            fetched=counts.fetched,
            not_modified=counts.not_modified,
            gone=counts.gone,
            failed=tuple(counts.failed),
            not_pages=counts.not_pages,
            skipped=counts.skipped,
            not_visited=counts.not_visited,
            left_sitemap=counts.left_sitemap,
            sitemap_pages=stats.sitemap_pages,
            requests=stats.requests,
            bytes=stats.bytes,
            seconds=stats.seconds,
            problem=stats.robots_problem,
        )

    async def _load_known(self) -> dict[str, KnownPage]:
        async with self._db.session() as session:
            rows = await session.scalars(
                select(CrawlPageRow).where(
                    CrawlPageRow.collection == self._collection, CrawlPageRow.origin == self.origin
                )
            )
            return {
                row.url: KnownPage(
                    url=row.url,
                    doc_id=row.doc_id,
                    etag=row.etag,
                    last_modified=row.last_modified,
                    missing=row.missing,
                    in_sitemap=row.in_sitemap,
                    depth=row.depth,
                    page_url=row.page_url,
                    body_hash=row.body_hash,
                )
                for row in rows
            }
