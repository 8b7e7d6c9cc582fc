"""One HTML page as a crawler and a reader need it, through selectolax (the lexbor HTML5 engine: browsers'
parsing rules, so broken markup reads as a browser shows it, and ~25x faster than BeautifulSoup on the Python docs):
links, canonical URL, robots meta, breadcrumb trail, and the main content with the site's chrome taken out.

The main content is found by the page's own landmarks (schema.org `articleBody`, ARIA `role=main`, `<main>`,
`<article>`), the way assistive technology finds it, and then cleaned of what is navigation even inside it: menus,
"edit this page" and "last updated" lines, pagers, heading permalinks, copy buttons, line numbers. Readability-style
text-density guessing was measured against this and kept under half of the text on a third of the Python docs'
pages (docs/ingesting-documents.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

# The first landmark present is the page's content; `body` when a page has none.
MAIN_SELECTORS = (
    "[itemprop=articleBody]",
    "main article",
    "[role=main]",
    "main",
    "article",
    "#content",
    "body",
)
# Chrome that themes put inside the content region (Sphinx, MkDocs/Material, Docusaurus, Read the Docs, GitBook).
CHROME = ", ".join(
    (
        "script", "style", "noscript", "template", "svg", "form", "button", "input", "select", "iframe", "nav",
        "[role=navigation]", "[role=search]", "[hidden]", "[aria-hidden=true]",
        "a.headerlink", "a.hash-link", "a.anchor-link", ".anchorjs-link",
        ".linenos", ".lineno", ".copybtn", ".sr-only", ".visually-hidden", ".screen-reader-text",
        ".sphinxsidebar", ".related", ".rst-footer-buttons", ".wy-breadcrumbs", ".breadcrumbs",
        ".edit-this-page", ".theme-edit-this-page", ".theme-last-updated", ".theme-doc-toc-mobile",
        ".theme-doc-footer", ".pagination-nav", ".md-source-file", ".md-content__button", ".md-footer",
        ".headerlink", ".toc", ".table-of-contents",
    )
)  # fmt: skip
BREADCRUMB_SELECTORS = (
    "[itemtype$=BreadcrumbList] [itemprop=itemListElement]",
    "nav[aria-label*=readcrumb] li",
    ".breadcrumbs li, .breadcrumb li",
    "div.related li.nav-item",  # Sphinx's classic and Python themes
)
ADMONITION_TITLES = ".admonition-title, .admonition-heading, [class*=admonitionHeading]"
_SEPARATORS = "»›>/|·"


@dataclass(frozen=True, slots=True)
class Crumb:
    text: str
    href: str  # "" when the item links nowhere (the current page)


@dataclass(frozen=True, slots=True)
class PageScan:
    title: str
    canonical: str  # "" when the page names none
    links: tuple[str, ...]  # every href as written, in page order
    base: str  # <base href>, "" when absent
    noindex: bool
    nofollow: bool
    breadcrumbs: tuple[Crumb, ...]
    main_html: str  # the content region without chrome; "" when the page has no body at all


def decode_html(raw: bytes, charset: str | None) -> str:
    """Text of an HTML body: its declared charset, else UTF-8, else Windows-1252 (what browsers fall back to)."""
    for encoding in (charset, "utf-8"):
        if encoding:
            try:
                return raw.decode(encoding)
            except (LookupError, UnicodeDecodeError):
                continue
    return raw.decode("cp1252", errors="replace")


def _text(node: LexborNode) -> str:
    return " ".join((node.text(deep=True, separator=" ") or "").split())


def _crumbs(tree: LexborHTMLParser) -> tuple[Crumb, ...]:
    for selector in BREADCRUMB_SELECTORS:
        items = tree.css(selector)
        if not items:
            continue
        crumbs: list[Crumb] = []
        for item in items:
            link = item if item.tag == "a" else item.css_first("a[href]")
            text = _text(item).strip(_SEPARATORS + " ")
            href = (link.attributes.get("href") or "") if link is not None else ""
            if text:
                crumbs.append(Crumb(text, href.strip()))
        return tuple(crumbs)
    return ()


def _mark_admonition_titles(main: LexborNode) -> None:
    """The "Note" / "Warning" heading of an admonition becomes the lead-in of its first paragraph ("Note: ..."), so
    the label stays with what it says and is never taken for a section heading (Docusaurus writes it as a <div>,
    older versions as an <h5>)."""
    for title in main.css(ADMONITION_TITLES):
        words = _text(title).rstrip(":")
        box = title.parent
        first = None
        if box is not None:
            first = next((p for p in box.css("p") if not p.css_matches(ADMONITION_TITLES)), None)
        if words and first is not None:
            first.inner_html = f"{_escape(words)}: {first.inner_html}"
        elif words:
            replacement = LexborHTMLParser(f"<p>{_escape(words)}:</p>").css_first("p")
            if replacement is not None:
                title.insert_before(replacement)
        title.decompose()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _strip_chrome(main: LexborNode) -> None:
    for node in main.css(CHROME):
        node.decompose()
    for region in main.css("header, footer"):
        if region.css_first("h1, h2, h3, h4, h5, h6") is None:  # Docusaurus keeps a page's title in a <header>
            region.decompose()


def main_content(tree: LexborHTMLParser) -> LexborNode | None:
    for selector in MAIN_SELECTORS:
        node = tree.css_first(selector)
        if node is not None and _text(node):
            return node
    return tree.body


def scan_page(html: str | bytes) -> PageScan:
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    canonical = tree.css_first("link[rel=canonical][href]")
    base = tree.css_first("base[href]")
    robots = " ".join((m.attributes.get("content") or "").lower() for m in tree.css("meta[name=robots]"))
    links = tuple(href for a in tree.css("a[href]") if (href := a.attributes.get("href")))
    crumbs = _crumbs(tree)
    main = main_content(tree)
    main_html = ""
    if main is not None:
        _strip_chrome(main)
        _mark_admonition_titles(main)
        main_html = main.html or ""
    return PageScan(
        title=_text(title_node) if title_node is not None else "",
        canonical=((canonical.attributes.get("href") or "").strip() if canonical is not None else ""),
        links=links,
        base=((base.attributes.get("href") or "").strip() if base is not None else ""),
        noindex="noindex" in robots or "none" in robots.split(),
        nofollow="nofollow" in robots or "none" in robots.split(),
        breadcrumbs=crumbs,
        main_html=main_html,
    )


def trail(
    crumbs: tuple[Crumb, ...], resolve: Callable[[str], str | None], home: frozenset[str], title: str
) -> tuple[str, ...]:
    """The breadcrumb texts that belong to the site: items linking outside it (the project's home page) or to its
    start page are left out, and so is the page's own title (it is added as the last crumb anyway)."""
    out: list[str] = []
    for crumb in crumbs:
        if crumb.href:
            target = resolve(crumb.href)
            if target is None or target in home:
                continue
        if crumb.text and crumb.text != title:
            out.append(crumb.text)
    return tuple(out)
