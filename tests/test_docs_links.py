"""Every link between docbot's own pages leads somewhere: the file exists and, with `#anchor`, the heading does (an
edit that moved a section's heading once left three links pointing nowhere). Links are read by the Markdown parser
the ingestion uses, anchors are made as GitHub makes them (the same `slugify` the citations use)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from storage.ingest.text import slugify, unique_anchor

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
PAGES = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
PARSER = MarkdownIt("commonmark").enable("table")


def tokens(page: Path) -> list[Token]:
    found: list[Token] = []
    pending = PARSER.parse(page.read_text(encoding="utf-8"))
    while pending:
        token = pending.pop(0)
        found.append(token)
        pending[:0] = token.children or []
    return found


@cache
def anchors(page: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    parsed = tokens(page)
    return frozenset(
        unique_anchor(slugify(parsed[n + 1].content), seen)
        for n, token in enumerate(parsed)
        if token.type == "heading_open"
    )


def links(page: Path) -> list[str]:
    return [str(t.attrs["href"]) for t in tokens(page) if t.type == "link_open" and t.attrs.get("href")]


def broken(page: Path) -> list[str]:
    problems = []
    for href in links(page):
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            continue  # another site: not ours to check offline
        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not target.exists():
            problems.append(f"{href}: no such file")
        elif parts.fragment and target.suffix == ".md" and unquote(parts.fragment) not in anchors(target):
            problems.append(f"{href}: no such heading in {target.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_link_between_our_pages_leads_somewhere(page: Path) -> None:
    assert broken(page) == []


def test_the_check_finds_a_missing_heading_and_file(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## `docbot eval`\n\n## Setup\n\n## Setup\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#docbot-eval) [twice](other.md#setup-1) [here](#a-heading) [gone](other.md#nowhere) "
        "[missing](absent.md) [web](https://example.com/x#y)\n\n## A heading\n",
        encoding="utf-8",
    )
    assert broken(page) == ["other.md#nowhere: no such heading in other.md", "absent.md: no such file"]
