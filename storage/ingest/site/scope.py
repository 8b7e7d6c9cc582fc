"""Which URLs belong to a crawled site: the start URL's scheme, host and port, and its path prefix."""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass

from yarl import URL

# Pages whose type the path already gives away are not requested: a crawl of a documentation site meets many
# images, archives and "show source" files that could never become a document. A PDF is read: a docs site often
# links its manual.
PDF_TYPE = "application/pdf"
DOCUMENT_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/markdown", "text/x-markdown", PDF_TYPE})
SITEMAP_SUFFIXES = (".xml", ".xml.gz")


def normalise(url: str | URL) -> str:
    """The URL a page is known by: no fragment, host in lower case, default port and dot segments dropped (yarl)."""
    parsed = url if isinstance(url, URL) else URL(url)
    return str(parsed.with_fragment(None))


def is_http(url: str) -> bool:
    return url.startswith(("http://", "https://"))


def is_sitemap(url: str) -> bool:
    """A start URL naming a sitemap (`.../sitemap.xml`, `.xml.gz`): its pages are the site, no links are followed."""
    path = URL(url).path.lower()
    return path.endswith(SITEMAP_SUFFIXES)


def looks_like_page(url: str) -> bool:
    """False when the path's extension names a type that is not a document (image, archive, plain text): counted
    as skipped without a request. Paths without an extension are fetched and judged by their Content-Type."""
    guessed, _ = mimetypes.guess_type(URL(url).path, strict=False)
    return guessed is None or guessed in DOCUMENT_TYPES


@dataclass(frozen=True, slots=True)
class SiteScope:
    """The start URL and everything under its path prefix on the same scheme, host and port.

    `https://docs.example.com/guide/` covers `/guide/...`; a start URL naming a page (`/guide/intro.html`) or a
    sitemap (`/guide/sitemap.xml`) covers its folder, `/guide/`."""

    start: str
    origin: str  # scheme://host[:port]
    prefix: str  # path prefix, ends with "/"

    @classmethod
    def of(cls, start: str) -> SiteScope:
        url = URL(start)
        if not url.is_absolute() or url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"not an http(s) URL: {start}")
        if url.user is not None or url.password is not None:  # it would be in every citation and log line
            raise ValueError("a site URL must not carry a user name or password")
        path = url.path or "/"
        prefix = path if path.endswith("/") else path.rsplit("/", 1)[0] + "/"
        return cls(start=normalise(url), origin=str(url.origin()), prefix=prefix)

    def contains(self, url: str) -> bool:
        parsed = URL(url)
        if not parsed.is_absolute() or str(parsed.origin()) != self.origin:
            return False
        path = parsed.path or "/"
        return path.startswith(self.prefix) or path + "/" == self.prefix

    def resolve(self, base: str, href: str) -> str | None:
        """`href` on the page `base` as a normalised absolute URL inside the site, or None."""
        href = href.strip()
        if not href or href.startswith(("#", "mailto:", "javascript:", "tel:", "data:")):
            return None
        try:
            target = URL(base).join(URL(href))
        except ValueError:
            return None
        if target.scheme not in ("http", "https"):
            return None
        url = normalise(target)
        return url if self.contains(url) else None

    @property
    def homes(self) -> frozenset[str]:
        """The start page under the names a breadcrumb trail may link it by, and the host's home page."""
        folder = self.start if self.start.endswith("/") else self.start.rsplit("/", 1)[0] + "/"
        return frozenset({self.start, folder, f"{folder}index.html", f"{self.origin}/"})

    @property
    def robots_url(self) -> str:
        return f"{self.origin}/robots.txt"

    def default_sitemaps(self) -> tuple[str, ...]:
        """Where a sitemap usually is when robots.txt names none: under the prefix, then at the host's root."""
        places = [f"{self.origin}{self.prefix}sitemap.xml"]
        if self.prefix != "/":
            places.append(f"{self.origin}/sitemap.xml")
        return tuple(places)
