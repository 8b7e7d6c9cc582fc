"""A documentation site on 127.0.0.1 for crawl benchmarks and tests: a folder served as a static web server serves
it (a folder's `index.html` for its URL, ETag and Last-Modified with 304 answers to conditional requests), an
optional robots.txt and generated sitemap, a log of every request, and a fault layer that makes chosen paths time
out, fail, loop, drop the connection or answer with a huge or broken body.

    async with StaticSite(folder, sitemap=True) as site:
        await ingestor.ingest([site.url("/")])
        site.fault("/howto/sorting.html", Fault.SERVER_ERROR)

Also where the Python documentation of Debian's `python3-doc` package is, when it is installed."""

from __future__ import annotations

import asyncio
import email.utils
import gzip
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from glob import glob
from pathlib import Path

from aiohttp import web

PYTHON_DOCS_GLOB = "/usr/share/doc/python3*/html"


def python_docs() -> Path | None:
    """The HTML Python documentation installed by Debian's python3-doc, or None."""
    for found in sorted(glob(PYTHON_DOCS_GLOB), reverse=True):
        path = Path(found)
        if (path / "index.html").is_file() and (path / "tutorial" / "index.html").is_file():
            return path.resolve()
    return None


class Fault(StrEnum):
    TIMEOUT = "timeout"  # no answer until the site is closed
    SERVER_ERROR = "server error"  # 503 with an HTML body
    RATE_LIMITED = "rate limited"  # 429
    NOT_FOUND = "not found"  # 404
    GONE = "gone"  # 410
    MALFORMED = "malformed"  # text/html whose bytes are binary noise
    HUGE = "huge"  # a 50 MB body, streamed without a Content-Length
    REDIRECT_LOOP = "redirect loop"  # to a second URL that redirects back
    DROPPED = "dropped"  # headers, part of the body, then the connection closes


HUGE_BYTES = 50 * 1024 * 1024


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    status: int = 0
    bytes: int = 0
    at: float = 0.0  # the event loop's clock when it arrived


@dataclass
class StaticSite:
    root: Path
    sitemap: bool = False  # generate /sitemap.xml (an index naming a gzipped urlset) of every HTML file
    robots: str | None = None  # robots.txt text; None answers 404
    prefix_only: str = ""  # the sitemap lists only pages under this path prefix (e.g. "/tutorial/")
    requests: list[Request] = field(default_factory=list)
    faults: dict[str, Fault] = field(default_factory=dict)
    in_flight: int = 0
    most_in_flight: int = 0
    _runner: web.AppRunner | None = None
    _port: int = 0
    _release: asyncio.Event = field(default_factory=asyncio.Event)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self._port}{path}"

    def fault(self, path: str, kind: Fault | None) -> None:
        if kind is None:
            self.faults.pop(path, None)
        else:
            self.faults[path] = kind

    def paths(self, method: str = "GET") -> list[str]:
        return [r.path for r in self.requests if r.method == method]

    def html_files(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*.html") if p.is_file())

    async def __aenter__(self) -> StaticSite:
        app = web.Application(middlewares=[self._track])
        app.router.add_get("/robots.txt", self._robots)
        app.router.add_get("/sitemap.xml", self._sitemap_index)
        app.router.add_get("/sitemap-pages.xml.gz", self._sitemap_pages)
        app.router.add_get("/{path:.*}", self._file)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *_: object) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    @web.middleware
    async def _track(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        record = Request(request.method, request.path, dict(request.headers), at=asyncio.get_running_loop().time())
        self.requests.append(record)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            response = await handler(request)
            record.status = response.status
            record.bytes = response.content_length or 0
            return response
        except web.HTTPException as exc:
            record.status = exc.status
            raise
        finally:
            self.in_flight -= 1

    async def _robots(self, request: web.Request) -> web.StreamResponse:
        if "/robots.txt" in self.faults:
            return await self._faulty(request, self.faults["/robots.txt"])
        if self.robots is None:
            raise web.HTTPNotFound()
        return web.Response(text=self.robots, content_type="text/plain")

    def _page_urls(self) -> list[str]:
        urls = []
        for file in self.html_files():
            path = "/" + file.relative_to(self.root).as_posix()
            if path.startswith(self.prefix_only or "/"):
                urls.append(self.url(path))
        return urls

    async def _sitemap_index(self, request: web.Request) -> web.StreamResponse:
        if "/sitemap.xml" in self.faults:
            return await self._faulty(request, self.faults["/sitemap.xml"])
        if not self.sitemap:
            raise web.HTTPNotFound()
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{self.url('/sitemap-pages.xml.gz')}</loc></sitemap></sitemapindex>"
        )
        return web.Response(text=body, content_type="application/xml")

    async def _sitemap_pages(self, request: web.Request) -> web.StreamResponse:
        if not self.sitemap:
            raise web.HTTPNotFound()
        entries = "".join(f"<url><loc>{url}</loc></url>" for url in self._page_urls())
        xml = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
        return web.Response(body=gzip.compress(xml.encode()), content_type="application/gzip")

    async def _file(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in self.faults:
            return await self._faulty(request, self.faults[path])
        target = (self.root / path.lstrip("/")).resolve()
        if not target.is_relative_to(self.root):
            raise web.HTTPNotFound()
        if target.is_dir():
            if not path.endswith("/"):
                raise web.HTTPMovedPermanently(path + "/")
            target = target / "index.html"
        if not target.is_file():
            raise web.HTTPNotFound()
        body = target.read_bytes()
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        modified = email.utils.formatdate(target.stat().st_mtime, usegmt=True)
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag, "Last-Modified": modified})
        content_type = {".html": "text/html", ".txt": "text/plain", ".png": "image/png", ".md": "text/markdown",
                        ".pdf": "application/pdf"}.get(target.suffix, "application/octet-stream")  # fmt: skip
        return web.Response(
            body=body, content_type=content_type, charset="utf-8" if content_type.startswith("text/") else None,
            headers={"ETag": etag, "Last-Modified": modified},
        )  # fmt: skip

    async def _faulty(self, request: web.Request, kind: Fault) -> web.StreamResponse:
        if kind is Fault.TIMEOUT:
            await self._release.wait()
            return web.Response(status=504)
        if kind is Fault.SERVER_ERROR:
            return web.Response(status=503, text="<html><body><h1>Service Unavailable</h1></body></html>",
                                content_type="text/html")  # fmt: skip
        if kind is Fault.RATE_LIMITED:
            return web.Response(status=429, headers={"Retry-After": "1"})
        if kind is Fault.NOT_FOUND:
            return web.Response(status=404, text="not found")
        if kind is Fault.GONE:
            return web.Response(status=410, text="gone")
        if kind is Fault.MALFORMED:
            noise = bytes(range(256)) * 64
            return web.Response(body=noise, content_type="text/html")
        if kind is Fault.REDIRECT_LOOP:
            other = request.path + ".loop" if not request.path.endswith(".loop") else request.path[: -len(".loop")]
            self.faults.setdefault(other, Fault.REDIRECT_LOOP)
            raise web.HTTPFound(other)
        response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
        if kind is Fault.DROPPED:
            response.content_length = 100_000
            await response.prepare(request)
            await response.write(b"<html><body><h1>Cut short</h1><p>" + b"x" * 1000)
            assert request.transport is not None
            request.transport.close()
            return response
        await response.prepare(request)  # HUGE: chunked, so only the bytes received can tell
        piece = b"<p>" + b"y" * (1024 * 1024 - 7) + b"</p>\n"
        for _ in range(HUGE_BYTES // len(piece) + 1):
            await response.write(piece)
        await response.write_eof()
        return response
