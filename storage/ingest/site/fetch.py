"""HTTP for crawling: one aiohttp session with docbot's user agent, per-host pacing and concurrency, redirects
followed one hop at a time (each hop checked against the site and robots.txt, loops caught), conditional requests
and a cap on body size. Every outcome is a typed value; nothing here raises for a page that cannot be had."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from yarl import URL

from storage.ingest.site.scope import normalise

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

REDIRECTS = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 10
GONE = frozenset({404, 410})
_READ_CHUNK = 64 * 1024
MAX_HOST_DELAY_S = 60.0  # a robots.txt crawl delay above this is taken as this (a crawl must end some day)


class Failure(StrEnum):
    """Why a page could not be had this time; each is retried by the next crawl."""

    TIMEOUT = "timeout"
    SERVER_ERROR = "server error"  # 5xx
    RATE_LIMITED = "rate limited"  # 429
    HTTP_ERROR = "http error"  # another 4xx (401, 403, ...)
    TOO_LARGE = "too large"
    REDIRECT_LOOP = "redirect loop"
    CONNECTION = "connection failed"  # refused, reset, dropped mid-body
    MALFORMED = "malformed"  # not decodable as a page, or nothing readable in it


class SkipReason(StrEnum):
    """Why a URL gives no document, by the site's own word; a page indexed before is removed."""

    NOT_A_PAGE = "not a page"  # its type is not HTML or Markdown
    OUTSIDE = "redirected outside the site"
    DISALLOWED = "disallowed by robots.txt"
    NOINDEX = "marked noindex"
    DUPLICATE = "duplicate of another page"  # the same canonical URL or redirect target as a page already read


@dataclass(frozen=True, slots=True)
class Body:
    """A page (or a sitemap, robots.txt) that answered 200."""

    url: str  # after redirects
    body: bytes
    content_type: str
    charset: str | None
    etag: str | None
    last_modified: str | None
    robots_header: str  # X-Robots-Tag


@dataclass(frozen=True, slots=True)
class NotModified:
    url: str


@dataclass(frozen=True, slots=True)
class Gone:
    url: str
    status: int


@dataclass(frozen=True, slots=True)
class Failed:
    url: str
    failure: Failure
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Skipped:
    url: str
    reason: SkipReason


Fetched = Body | NotModified | Gone | Failed | Skipped


@dataclass(slots=True)
class FetchStats:
    requests: int = 0
    bytes: int = 0  # bodies as received, after content decoding


@dataclass(slots=True)
class _HostGate:
    """At most `concurrency` requests to one host at once, and request starts at least `delay` apart."""

    concurrency: int
    delay: float
    _slots: asyncio.Semaphore = field(init=False)
    _pace: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)
    _next: float = 0.0

    def __post_init__(self) -> None:
        self._slots = asyncio.Semaphore(self.concurrency)

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        async with self._slots:
            if self.delay > 0:
                async with self._pace:
                    loop = asyncio.get_running_loop()
                    wait = self._next - loop.time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    self._next = loop.time() + self.delay
            yield


class Fetcher:
    """One crawl's HTTP client. `check(url)` says why a redirect target may not be requested (outside the site,
    disallowed by robots.txt), or None; the crawler checks the URLs it asks for itself."""

    def __init__(
        self,
        *,
        user_agent: str,
        timeout_s: float,
        max_bytes: int,
        concurrency: int,
        delay_s: float = 0.0,
    ) -> None:
        self.user_agent = user_agent
        self._timeout_s = timeout_s
        self._max_bytes = max_bytes
        self._concurrency = concurrency
        self._delay_s = delay_s
        self._gates: dict[str, _HostGate] = {}
        self._session: aiohttp.ClientSession | None = None
        self.stats = FetchStats()

    async def __aenter__(self) -> Fetcher:
        import aiohttp  # only when crawling: a process that never fetches a page does not load the HTTP client

        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self._timeout_s),
            headers={"User-Agent": self.user_agent},
            connector=aiohttp.TCPConnector(limit_per_host=self._concurrency),
        )
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _gate(self, url: str) -> _HostGate:
        origin = str(URL(url).origin())
        gate = self._gates.get(origin)
        if gate is None:
            gate = self._gates[origin] = _HostGate(self._concurrency, self._delay_s)
        return gate

    def pace(self, origin: str, delay_s: float) -> None:
        """Start requests to `origin` at least `delay_s` apart (robots.txt's crawl delay; never below the setting)."""
        gate = self._gate(origin + "/")
        gate.delay = max(self._delay_s, min(delay_s, MAX_HOST_DELAY_S))

    async def get(
        self,
        url: str,
        *,
        check: Callable[[str], SkipReason | None] | None = None,
        accept: frozenset[str] | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> Fetched:
        """GET `url`, following redirects hop by hop. `accept`: the content types read (others are skipped without
        reading the body; None reads any). `etag`/`last_modified` make the request conditional (304: NotModified)."""
        chain = [normalise(url)]
        current = chain[0]
        headers: dict[str, str] = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        for _ in range(MAX_REDIRECTS + 1):
            outcome = await self._one(current, headers, accept)
            if not isinstance(outcome, str):
                return outcome
            target = normalise(outcome)
            if target in chain:
                return Failed(url, Failure.REDIRECT_LOOP, " -> ".join([*chain, target]))
            refused = check(target) if check is not None else None
            if refused is not None:
                return Skipped(url, refused)
            chain.append(target)
            current = target
            headers = {}  # validators belong to the URL first asked for
        return Failed(url, Failure.REDIRECT_LOOP, f"more than {MAX_REDIRECTS} redirects")

    async def _one(self, url: str, headers: dict[str, str], accept: frozenset[str] | None) -> Fetched | str:
        """One request: an outcome, or the next URL of a redirect."""
        import aiohttp

        assert self._session is not None, "use `async with Fetcher(...)`"
        async with self._gate(url).turn():
            self.stats.requests += 1
            try:
                async with self._session.get(url, headers=headers, allow_redirects=False) as response:
                    return await self._answer(url, response, accept)
            except TimeoutError:
                return Failed(url, Failure.TIMEOUT, f"no complete answer within {self._timeout_s:g} s")
            except aiohttp.InvalidURL:
                return Failed(url, Failure.HTTP_ERROR, "invalid URL")
            except (aiohttp.ClientError, OSError) as exc:
                return Failed(url, Failure.CONNECTION, type(exc).__name__)

    async def _answer(
        self, url: str, response: aiohttp.ClientResponse, accept: frozenset[str] | None
    ) -> Fetched | str:
        status = response.status
        if status in REDIRECTS:
            location = response.headers.get("Location")
            if not location:
                return Failed(url, Failure.HTTP_ERROR, f"HTTP {status} without a Location")
            return str(URL(url).join(URL(location)))
        if status == 304:
            return NotModified(url)
        if status in GONE:
            return Gone(url, status)
        if status == 429:
            self._gate(url).delay = min(max(2 * self._gate(url).delay, 1.0), MAX_HOST_DELAY_S)
            return Failed(url, Failure.RATE_LIMITED, "HTTP 429")
        if status >= 500:
            return Failed(url, Failure.SERVER_ERROR, f"HTTP {status}")
        if status != 200:
            return Failed(url, Failure.HTTP_ERROR, f"HTTP {status}")
        content_type = response.content_type.lower()
        if accept is not None and content_type not in accept:
            return Skipped(url, SkipReason.NOT_A_PAGE)
        if response.content_length is not None and response.content_length > self._max_bytes:
            return Failed(url, Failure.TOO_LARGE, f"{response.content_length} bytes announced")
        received = bytearray()
        async for piece in response.content.iter_chunked(_READ_CHUNK):
            received += piece
            self.stats.bytes += len(piece)
            if len(received) > self._max_bytes:
                return Failed(url, Failure.TOO_LARGE, f"more than {self._max_bytes} bytes")
        return Body(
            url=url,
            body=bytes(received),
            content_type=content_type,
            charset=response.charset,
            etag=response.headers.get("ETag"),
            last_modified=response.headers.get("Last-Modified"),
            robots_header=response.headers.get("X-Robots-Tag", ""),
        )
