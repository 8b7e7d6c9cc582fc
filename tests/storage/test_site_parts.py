"""The parts of a crawl on their own: the site's scope, sitemaps, robots.txt rules, and a page's main content,
links and breadcrumbs (markup as Sphinx, MkDocs Material and Docusaurus write it)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from storage.ingest.readers import html_to_markdown, markdown_sections
from storage.ingest.site.page import scan_page, trail
from storage.ingest.site.robots import RobotsRules
from storage.ingest.site.scope import SiteScope, is_sitemap, looks_like_page
from storage.ingest.site.sitemaps import SitemapError, parse_sitemap

pytestmark = pytest.mark.unit

# Pages in the markup Sphinx (Python's theme), MkDocs Material and Docusaurus 3 write, trimmed to the parts a
# crawler meets: navigation, breadcrumbs, permalinks, admonitions, edit links, footers.
SITES = Path(__file__).resolve().parent.parent / "fixtures" / "sites"


def test_scope_is_the_start_urls_host_and_folder() -> None:
    scope = SiteScope.of("https://Docs.Example.com:443/guide/intro.html#top")
    assert (scope.origin, scope.prefix) == ("https://docs.example.com", "/guide/")
    assert scope.start == "https://docs.example.com/guide/intro.html"
    assert scope.contains("https://docs.example.com/guide/deep/x.html")
    assert scope.contains("https://docs.example.com/guide")
    assert not scope.contains("https://docs.example.com/blog/x.html")
    assert not scope.contains("http://docs.example.com/guide/x.html")  # another scheme is another site
    assert not scope.contains("https://evil.example.com/guide/x.html")
    page = "https://docs.example.com/guide/a/b.html"
    assert scope.resolve(page, "../c.html#part") == "https://docs.example.com/guide/c.html"
    assert scope.resolve(page, "../../blog/") is None
    assert scope.resolve(page, "mailto:x@example.com") is None and scope.resolve(page, "#local") is None
    with pytest.raises(ValueError):
        SiteScope.of("ftp://docs.example.com/")
    with pytest.raises(ValueError, match="password"):  # it would show in citations and logs
        SiteScope.of("https://bot:s3cret@docs.example.com/")


def test_what_is_a_page_and_what_is_a_sitemap() -> None:
    assert looks_like_page("https://x/a.html") and looks_like_page("https://x/a/") and looks_like_page("https://x/a")
    assert looks_like_page("https://x/readme.md") and looks_like_page("https://x/manual.pdf")  # a linked manual
    assert not any(looks_like_page(f"https://x/f.{ext}") for ext in ("png", "zip", "txt", "css", "js"))
    assert is_sitemap("https://x/sitemap.xml") and is_sitemap("https://x/docs/sitemap-0.xml.gz")
    assert not is_sitemap("https://x/docs/")


URLSET = (
    b'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    b"<url><loc> https://x/a.html </loc><lastmod>2026-01-02</lastmod></url><url><loc>https://x/b.html</loc></url>"
    b"</urlset>"
)


def test_sitemaps_urlset_index_gzip_and_text() -> None:
    parsed = parse_sitemap(URLSET, max_bytes=10_000)
    assert parsed.pages == (("https://x/a.html", "2026-01-02"), ("https://x/b.html", None))
    index = parse_sitemap(
        b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://x/s1.xml.gz</loc>'
        b"</sitemap></sitemapindex>",
        max_bytes=10_000,
    )
    assert index.sitemaps == ("https://x/s1.xml.gz",) and not index.pages
    assert parse_sitemap(gzip.compress(URLSET), max_bytes=10_000).pages == parsed.pages
    text = parse_sitemap(b"https://x/a\nhttps://x/b\n", max_bytes=100)
    assert text.pages == (("https://x/a", None), ("https://x/b", None))


@pytest.mark.parametrize(
    "raw",
    [URLSET[: len(URLSET) // 2], b"<html><body>Not found</body></html>", b"hello there", gzip.compress(URLSET)[:30]],
    ids=["truncated", "html", "prose", "broken-gzip"],
)
def test_a_broken_sitemap_is_an_error_never_a_shorter_list(raw: bytes) -> None:
    with pytest.raises(SitemapError):
        parse_sitemap(raw, max_bytes=10_000)


def test_a_gzip_bomb_stops_at_the_size_limit() -> None:
    bomb = gzip.compress(b"<urlset>" + b" " * 5_000_000 + b"</urlset>")
    with pytest.raises(SitemapError, match="decompressed"):
        parse_sitemap(bomb, max_bytes=1_000_000)


def test_robots_rules_for_docbots_user_agent() -> None:
    from protego import Protego

    text = (
        "User-agent: *\nDisallow: /private/\nCrawl-delay: 3\nSitemap: https://x/sm.xml\n\n"
        "User-agent: docbot\nDisallow: /no-bots/\nRequest-rate: 1/5\n"
    )
    rules = RobotsRules(Protego.parse(text), "docbot/0.1 (documentation crawler)")
    assert not rules.allows("https://x/no-bots/a") and rules.allows("https://x/private/a")  # its own group wins
    assert rules.crawl_delay == 5.0 and rules.sitemaps == ("https://x/sm.xml",)
    assert not RobotsRules(None, "docbot", reachable=False).allows("https://x/")
    assert RobotsRules(None, "docbot").allows("https://x/anything")


SPHINX = (SITES / "sphinx.html").read_text(encoding="utf-8")

MKDOCS = (SITES / "mkdocs.html").read_text(encoding="utf-8")

DOCUSAURUS = (SITES / "docusaurus.html").read_text(encoding="utf-8")

CHROME_WORDS = ("Previous", "Next", "Edit this page", "Last update", "Copyright", "Table of Contents", "Corvid docs",
                "On this page", "Docs Blog", "¶", "Copy", "index", "sidebar")  # fmt: skip


@pytest.mark.parametrize("html", [SPHINX, MKDOCS, DOCUSAURUS], ids=["sphinx", "mkdocs", "docusaurus"])
def test_main_content_keeps_the_text_and_drops_the_chrome(html: str) -> None:
    _, markdown = html_to_markdown(html)
    leaked = [w for w in CHROME_WORDS if w in markdown]
    assert not leaked, (leaked, markdown)
    sections = markdown_sections(markdown)
    assert sections[0].level == 1 and len(sections) >= 2


def test_sphinx_sections_take_their_anchor_from_the_section_and_notes_keep_their_label() -> None:
    _, markdown = html_to_markdown(SPHINX)
    assert "## 4.1. if Statements {#if-statements}" in markdown
    assert "Note: Indentation matters." in markdown  # the label stays with what it says
    assert "```\n>>> x = 1\n```" in markdown


def test_mkdocs_and_docusaurus_admonitions_tables_and_titles() -> None:
    _, mkdocs = html_to_markdown(MKDOCS)
    assert "Back up first: It erases the disk." in mkdocs and "| Linux | 6.1 |" in mkdocs
    assert "## Requirements {#requirements}" in mkdocs
    _, docusaurus = html_to_markdown(DOCUSAURUS)
    assert docusaurus.startswith("# Pairing") and "tip: Restart the hub." in docusaurus
    assert "## Troubleshooting {#troubleshooting}" in docusaurus


def test_links_canonical_and_breadcrumbs() -> None:
    scan = scan_page(SPHINX)
    assert scan.canonical == "https://docs.python.org/3/tutorial/controlflow.html"
    assert "introduction.html" in scan.links and "../genindex.html" in scan.links  # links come from the whole page
    scope = SiteScope.of("https://docs.python.org/3/")
    page = "https://docs.python.org/3/tutorial/controlflow.html"
    crumbs = trail(scan.breadcrumbs, lambda href: scope.resolve(page, href), scope.homes, "4. More Control Flow Tools")
    assert crumbs == ("The Python Tutorial",)  # not the project's home, not the docs' start page, not the page itself
    docusaurus = scan_page(DOCUSAURUS)
    assert [c.text for c in docusaurus.breadcrumbs] == ["Guides", "Pairing"]
    assert not docusaurus.noindex


def test_robots_meta() -> None:
    assert scan_page('<html><head><meta name="robots" content="noindex,follow"></head><body>x</body></html>').noindex
    nofollow = scan_page('<html><head><meta name="robots" content="none"></head><body>x</body></html>')
    assert nofollow.noindex and nofollow.nofollow
