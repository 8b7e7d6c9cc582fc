"""Readers turning files, seed records and web pages into `SourceDoc`s with heading-based chunks."""

from __future__ import annotations

import email.utils
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.text import markdown_parser
from storage.ingest.errors import IngestError
from storage.ingest.model import SourceChunk, SourceDoc
from storage.ingest.text import (
    Section,
    extracted_lines_text,
    merge_intros,
    normalise_space,
    pack_blocks,
    pipe_table,
    slugify,
    split_long,
    unique_anchor,
)

if TYPE_CHECKING:  # the parsers load on the first document read, not with every process that can ingest
    from bs4 import Tag
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from pathspec import GitIgnoreSpec

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
RST_SUFFIXES = frozenset({".rst", ".rest"})
TEXT_SUFFIXES = frozenset({".txt", ".text"})
SEED_SUFFIXES = frozenset({".json", ".jsonl"})
PDF_SUFFIXES = frozenset({".pdf"})
WORD_SUFFIXES = frozenset({".docx"})
DOCUMENT_SUFFIXES = MARKDOWN_SUFFIXES | HTML_SUFFIXES | RST_SUFFIXES | TEXT_SUFFIXES | PDF_SUFFIXES | WORD_SUFFIXES
# Admonition kinds written as `:::kind` fences (Docusaurus) or `!!! kind` blocks (MkDocs, Python-Markdown).
ADMONITION_KINDS = ("note", "tip", "info", "warning", "danger", "caution", "important", "success", "secondary")

_EXPLICIT_ID = re.compile(r"\s*\{#([^}\s]+)\}\s*$")
_INDENT = "\x00"  # a nested list's indent while HTML text is tidied (whitespace there is layout, not structure)
_STRUCTURED = frozenset(
    {"table", "ordered_list", "bullet_list", "dl", "fence", "code_block", "blockquote", "html_block", "admonition"}
)


@cache
def _markdown() -> MarkdownIt:
    """CommonMark, GFM tables, definition lists, and admonitions in both common forms: MkDocs' `!!! note "Title"`
    (mdit-py-plugins' admon) and Docusaurus' `:::note[Title]` fences (its container plugin), built on the first
    document read."""
    from mdit_py_plugins.admon import admon_plugin
    from mdit_py_plugins.container import container_plugin

    parser = markdown_parser().use(admon_plugin)
    for kind in ADMONITION_KINDS:
        parser = parser.use(container_plugin, name=kind, validate=_container_of(kind))
    return parser


def _container_of(kind: str) -> Callable[..., bool]:
    def validate(params: str, *_: object) -> bool:  # `note`, `note Title` and `note[Title]` all open one
        return params.strip().partition(" ")[0].partition("[")[0].lower() == kind

    return validate


def _admonition(token: Token, lines: list[str]) -> str:
    """An admonition block as a bold lead-in and its text: `**Warning: Back up first**` then the content."""
    assert token.map is not None
    start, stop = token.map
    if token.type == "admonition_open":
        kind = str(token.meta.get("tag", "note"))
        title = token.content.strip()
    else:
        params = token.info.strip()
        head, bracket, bracketed = params.partition("[")  # `danger[Data loss]` (Docusaurus 3)
        if bracket:
            kind, title = head.strip(), bracketed.rpartition("]")[0].strip()
        else:
            kind, _, rest = params.partition(" ")  # `danger Data loss` (Docusaurus 2)
            title = rest.strip()
    body = [line for line in lines[start + 1 : stop] if line.strip() not in (":::", "::::")]
    lead = kind.capitalize() + (f": {title}" if title and title.lower() != kind.lower() else "")
    content = _dedent("\n".join(line.rstrip() for line in body))
    return f"**{lead}:** {content}" if content and "\n" not in content else f"**{lead}:**\n\n{content}".strip()


def _block_kind(token_type: str) -> str:
    return token_type.removesuffix("_open")


def markdown_sections(text: str) -> list[Section]:
    """Sections of a Markdown text, parsed by markdown-it-py (CommonMark + GFM tables), not by regex.

    Top-level headings (ATX or setext; never inside code, lists or quotes) start sections; `{#id}` after a heading
    sets its anchor. Every other top-level block (paragraph, table, list, code, quote) is kept as the source lines it
    spans, so a table keeps its header and a numbered list its steps; a paragraph ending in ":" stays with the
    table or list it introduces."""
    lines = text.splitlines()
    sections: list[Section] = []
    title, level, explicit = "", 0, ""
    blocks: list[tuple[str, str]] = []  # (kind, markdown)

    def close() -> None:
        merged = merge_intros(blocks, _STRUCTURED)
        body = "\n\n".join(b for _, b in merged)
        sections.append(
            Section(title=title, level=level, text=body, anchor=explicit, blocks=tuple(b for _, b in merged))
        )

    tokens = _markdown().parse(text)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.level != 0 or token.nesting == -1:
            i += 1
            continue
        if token.type == "heading_open":
            close()
            inline = tokens[i + 1].content if i + 1 < len(tokens) else ""
            found = _EXPLICIT_ID.search(inline)
            explicit = found.group(1) if found else ""
            title, level = _EXPLICIT_ID.sub("", inline).strip(), int(token.tag[1])
            blocks = []
            i += 3
            continue
        if token.type == "dl_open":
            definitions, i = _definition_list(tokens, i)
            if definitions:
                blocks.append(("dl", definitions))
            continue
        if token.type == "admonition_open" or (token.type.startswith("container_") and token.nesting == 1):
            blocks.append(("admonition", _admonition(token, lines)))
            closing = token.type.replace("_open", "_close")
            i = next((k for k in range(i + 1, len(tokens)) if tokens[k].type == closing
                      and tokens[k].level == token.level), len(tokens))  # fmt: skip
            i += 1
            continue
        if token.map is not None and token.type != "hr":
            start, stop = token.map
            chunk = "\n".join(line.rstrip() for line in lines[start:stop]).strip("\n")
            if chunk.strip():
                blocks.append((_block_kind(token.type), _dedent(chunk)))
        i += 1
    close()
    return [s for s in sections if s.title or s.text]


def _definition_list(tokens: list[Token], start: int) -> tuple[str, int]:
    """A definition list (`Term` / `: definition`) as `- **Term**: definition` items, the form HTML `<dl>`s take,
    which every chat renders as a list; and the index after its `dl_close`."""
    items: list[str] = []
    depth = 0
    i = start
    while i < len(tokens):
        token = tokens[i]
        depth += token.nesting if token.type in ("dl_open", "dl_close") else 0
        if token.type == "dl_close" and depth == 0:
            return "\n".join(items), i + 1
        if token.type == "dt_open":
            term = tokens[i + 1].content if i + 1 < len(tokens) else ""
            items.append(f"- **{' '.join(term.split())}**")
        elif token.type == "dd_open":
            closing = next((k for k in range(i + 1, len(tokens)) if tokens[k].type == "dd_close"
                            and tokens[k].level == token.level), len(tokens))  # fmt: skip
            words = " ".join(" ".join(t.content.split()) for t in tokens[i + 1 : closing] if t.type == "inline")
            if items and words:
                joint = ": " if items[-1].endswith("**") else (" " if items[-1].endswith((".", "!", "?")) else "; ")
                items[-1] = f"{items[-1]}{joint}{words}"
            i = closing
        i += 1
    return "\n".join(items), i


def _dedent(block: str) -> str:
    rows = block.splitlines()
    indent = min((len(r) - len(r.lstrip()) for r in rows if r.strip()), default=0)
    return "\n".join(r[indent:] for r in rows).strip()


def _cell(tag: Tag) -> str:
    return " ".join(tag.get_text(" ", strip=True).split())


def _html_table(table: Tag) -> str:
    return pipe_table([[_cell(c) for c in tr.find_all(["th", "td"])] for tr in table.find_all("tr")])


def _html_list(items: Tag, depth: int = 0) -> str:
    ordered = items.name == "ol"
    out: list[str] = []
    for number, item in enumerate(items.find_all("li", recursive=False), start=1):
        nested = [child.extract() for child in item.find_all(["ul", "ol"], recursive=False)]
        marker = f"{number}." if ordered else "-"
        pad = _INDENT * depth
        out.append(f"{pad}{marker} {' '.join(item.get_text(' ', strip=True).split())}")
        out.extend(_html_list(n, depth + 1) for n in nested)
    return "\n".join(out)


def _html_definitions(dl: Tag) -> str:
    out: list[str] = []
    for child in dl.find_all(["dt", "dd"]):
        words = " ".join(child.get_text(" ", strip=True).split())
        if child.name == "dt":
            out.append(f"- **{words}**")
        elif out:
            out[-1] = f"{out[-1]}: {words}" if out[-1].endswith("**") else f"{out[-1]}; {words}"
    return "\n".join(out)


def html_to_markdown(html: str) -> tuple[str, str]:
    """(page title, Markdown) of an HTML page: its main content without the site's chrome (see
    `storage.ingest.site.page`), converted by `main_html_to_markdown`."""
    from storage.ingest.site.page import scan_page

    scan = scan_page(html)
    return scan.title, main_html_to_markdown(scan.main_html)


def _heading_anchor(heading: Tag) -> str:
    """A heading's id, or that of the section it opens (Sphinx puts the id on `<section>`, not on `<h2>`)."""
    own = heading.get("id")
    if isinstance(own, str) and own:
        return own
    parent = heading.parent
    if parent is not None and parent.name in ("section", "div"):
        first = parent.find(re.compile(r"^h[1-6]$"))
        ids = parent.get("id")
        if first is heading and isinstance(ids, str) and ids:
            return ids
    return ""


def main_html_to_markdown(html: str) -> str:
    """Markdown of a page's content region, through BeautifulSoup: headings as `#` lines (anchors as `{#id}`),
    tables as pipe tables with their header, ordered and bullet lists as lists, definition lists as `**term**: text`
    items, `<pre>` as fenced code, inline `<code>`, `<kbd>` and `<samp>` in backticks."""
    from bs4 import BeautifulSoup, Tag

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "svg", "form", "title"]):
        tag.decompose()
    for pre in soup.find_all("pre"):
        assert isinstance(pre, Tag)
        pre.replace_with(f"\n\n```\n{pre.get_text().strip(chr(10))}\n```\n\n")
    for code in soup.find_all(["code", "kbd", "samp"]):
        # inline code stays code, as in a Markdown page ("`sys.argv[0]`"); a heading keeps its plain words
        assert isinstance(code, Tag)
        words = " ".join(code.get_text().split())
        if words and code.find_parent(["code", "kbd", "samp", "h1", "h2", "h3", "h4", "h5", "h6"]) is None:
            code.replace_with(f"`{words}`")
    for table in soup.find_all("table"):
        assert isinstance(table, Tag)
        table.replace_with(f"\n\n{_html_table(table)}\n\n")
    for dl in soup.find_all("dl"):
        assert isinstance(dl, Tag)
        if dl.parent is not None and dl.find_parent("dl") is None:  # nested lists go with their definition
            dl.replace_with(f"\n\n{_html_definitions(dl)}\n\n")
    for items in soup.find_all(["ul", "ol"]):
        assert isinstance(items, Tag)
        if items.parent is not None and items.find_parent(["ul", "ol"]) is None:  # nested lists go with their item
            items.replace_with(f"\n\n{_html_list(items)}\n\n")
    for heading in soup.find_all(re.compile(r"^h[1-6]$")):
        assert isinstance(heading, Tag)
        level = int(heading.name[1])
        anchor = _heading_anchor(heading)
        suffix = f" {{#{anchor}}}" if anchor else ""
        heading.replace_with(f"\n\n{'#' * level} {heading.get_text(' ', strip=True)}{suffix}\n\n")
    for block in soup.find_all(["p", "div", "br", "blockquote", "section"]):
        assert isinstance(block, Tag)
        block.insert_after("\n\n" if block.name in ("p", "blockquote") else "\n")
    return _tidy(soup.get_text())


def _tidy(text: str) -> str:
    """Collapse runs of spaces outside code fences; at most one blank line."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            out.append(line.strip())
            continue
        out.append(line.rstrip() if fenced else " ".join(line.split()))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip().replace(_INDENT, "   ")


def pretty(stem: str) -> str:
    words = re.sub(r"[_\-]+", " ", stem).strip()
    return words[:1].upper() + words[1:] if words else stem


def sections_to_doc(
    sections: list[Section],
    *,
    doc_id: str,
    source: str,
    fallback_title: str,
    path_crumbs: tuple[str, ...],
    title: str = "",
) -> SourceDoc:
    """One document: `title` if given (front matter), else the first level-1 heading (if it opens the text and is
    the only one), else `fallback_title`; the rest become chunks."""
    if not title:
        title = fallback_title
        if sections and sections[0].level == 1 and sum(s.level == 1 for s in sections) == 1:
            title = sections[0].title
    crumbs = (*path_crumbs, title) if not path_crumbs or path_crumbs[-1] != title else path_crumbs
    seen: dict[str, int] = {}
    stack: list[tuple[int, str]] = []
    chunks: list[SourceChunk] = []
    content_parts: list[str] = []
    for section in sections:
        if section.level:
            while stack and stack[-1][0] >= section.level:
                stack.pop()
            stack.append((section.level, section.title))
        is_title = section.level == 1 and section.title == title
        heading_chain = tuple(t for _, t in stack if t != title)
        anchor = "" if is_title or not section.level else unique_anchor(section.anchor or slugify(section.title), seen)
        if section.title and not is_title:
            content_parts.append(f"{'#' * section.level} {section.title}")
        if section.text:
            content_parts.append(section.text)
        if not section.text:
            continue
        chunk_title = section.title if section.level else title
        for piece in pack_blocks(section.blocks or (section.text,)):
            chunks.append(SourceChunk(section=anchor, title=chunk_title, crumbs=(*crumbs, *heading_chain), text=piece))
    return SourceDoc(
        id=doc_id, source=source, title=title, crumbs=crumbs, content="\n\n".join(content_parts), chunks=chunks
    )


@dataclass(frozen=True, slots=True)
class ReadText:
    """What a file's text gave: sections, and the page's own metadata where it has some (an HTML title, MkDocs or
    Docusaurus front matter)."""

    sections: list[Section]
    title_hint: str = ""  # used when the text has no single top heading
    title: str = ""  # the front matter's title: wins over the headings
    description: str = ""
    keywords: list[str] = field(default_factory=list)
    draft: bool = False  # front matter `draft: true`: not published, so not ingested


def text_to_doc(
    read: ReadText, *, doc_id: str, source: str, fallback_title: str, path_crumbs: tuple[str, ...]
) -> SourceDoc:
    """A document from what a file's text gave, its front matter's title, description and keywords included."""
    doc = sections_to_doc(
        read.sections,
        doc_id=doc_id,
        source=source,
        fallback_title=read.title_hint or fallback_title,
        path_crumbs=path_crumbs,
        title=read.title,
    )
    doc.description = read.description
    doc.keywords = list(read.keywords)
    return doc


def read_document_text(raw: bytes, suffix: str) -> ReadText:
    """A document file's sections: PDF and Word files by their own readers (binary formats, so before any
    decoding), Markdown, reStructuredText, HTML and text as UTF-8. Raises ValueError with the reason for a PDF or
    Word file that cannot be read (damaged, password-protected, a scan without text) and for front matter that is
    not valid YAML, UnicodeDecodeError on undecodable text."""
    if suffix in PDF_SUFFIXES:
        from storage.ingest.pdf import read_pdf

        return read_pdf(raw)
    if suffix in WORD_SUFFIXES:
        from storage.ingest.docx import read_docx

        return read_docx(raw)
    if b"\x00" in raw[:4096]:
        raise UnicodeDecodeError("utf-8", raw[:1], 0, 1, "binary content")
    text = raw.decode("utf-8-sig")
    if suffix in HTML_SUFFIXES:
        page_title, markdown = html_to_markdown(text)
        return ReadText(markdown_sections(markdown), title_hint=page_title)
    if suffix in MARKDOWN_SUFFIXES:
        return _markdown_with_front_matter(text)
    if suffix in RST_SUFFIXES:
        from storage.ingest.rst import rst_sections

        return ReadText(rst_sections(text))
    return ReadText([Section(title="", level=0, text=normalise_space(text))])


def _markdown_with_front_matter(text: str) -> ReadText:
    """Markdown after its front matter (YAML between `---` lines, as MkDocs and Docusaurus write it), read by
    python-frontmatter: `title`, `description`, `keywords`/`tags` and `draft` are used."""
    import frontmatter
    import yaml

    try:
        meta, body = frontmatter.parse(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"front matter is not valid YAML: {exc}") from exc
    words = meta.get("keywords") or meta.get("tags") or []
    return ReadText(
        markdown_sections(body),
        title=str(meta.get("title") or ""),
        description=str(meta.get("description") or ""),
        keywords=_as_list(words),
        draft=meta.get("draft") is True,
    )


# ---- seed records ------------------------------------------------------------------------------------------------


def _as_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        parts = re.split(r"\n+|;\s*", value) if "\n" in value or ";" in value else re.split(r",\s*", value)
        return [p.strip() for p in parts if p.strip()]
    return [str(v).strip() for v in value if str(v).strip()]


def _as_crumbs(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(p.strip() for p in re.split(r"\s*(?:>|›|/|»)\s*", value) if p.strip())
    return tuple(_as_list(value))


def seed_records(raw: str, name: str) -> list[Mapping[str, Any]]:
    """Records of a seed file: a JSON list, an object holding `documents`, one record, an id->record map, or JSONL."""
    text = raw.strip()
    if not text:
        return []
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}: neither JSON nor JSONL ({exc.msg} at line {exc.lineno})") from exc
    if isinstance(data, dict):
        if isinstance(data.get("documents"), list):
            data = data["documents"]
        elif "content" in data or "chunks" in data:
            data = [data]
        else:
            data = [{"id": key, **value} for key, value in data.items() if isinstance(value, dict)]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ValueError(f"{name}: expected a list of document objects")
    return data


def seed_to_doc(record: Mapping[str, Any], *, doc_id: str, default_source: str) -> SourceDoc:
    """A `SourceDoc` from one seed record; missing chunks are cut from `content` by heading."""
    key = str(record.get("id", ""))
    source = str(record.get("source") or record.get("url") or f"{default_source}#{slugify(key)}")
    crumbs = _as_crumbs(record.get("crumbs"))
    content = str(record.get("content") or "")
    if isinstance(record.get("text"), list):  # the printed lines of a page (a manual's PDF text)
        content = content or extracted_lines_text(record["text"])
    title = str(record.get("title") or (crumbs[-1] if crumbs else key))
    crumbs = crumbs or (title,)
    given = record.get("chunks") or []
    chunks: list[SourceChunk] = []
    if given:
        seen: dict[str, int] = {}
        for item in given:
            if not isinstance(item, str | Mapping):
                continue
            piece: Mapping[str, Any] = {"text": item} if isinstance(item, str) else item
            chunk_title = str(piece.get("title") or title)
            anchor = str(piece.get("section") or piece.get("anchor") or "")
            anchor = anchor if anchor else ("" if chunk_title == title else unique_anchor(slugify(chunk_title), seen))
            chunk_crumbs = _as_crumbs(piece.get("crumbs")) or crumbs
            for text in split_long(str(piece.get("text") or "").strip()):
                if text:
                    chunks.append(SourceChunk(section=anchor, title=chunk_title, crumbs=chunk_crumbs, text=text))
        doc = SourceDoc(id=doc_id, source=source, title=title, crumbs=crumbs, content=content, chunks=chunks)
    else:
        doc = sections_to_doc(
            markdown_sections(content), doc_id=doc_id, source=source, fallback_title=title, path_crumbs=crumbs
        )
        doc.content = content
    doc.description = str(record.get("description") or "")
    doc.summary = str(record.get("summary") or "")
    doc.keypoints = _as_list(record.get("keypoints"))
    doc.keywords = _as_list(record.get("keywords"))
    doc.changed_at = _as_time(record.get("updated_at") or record.get("last_modified"))
    return doc


def http_date(value: str | None) -> datetime | None:
    """An HTTP date header (`Last-Modified`, RFC 9110) as aware UTC; None when absent or unreadable."""
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _as_time(value: Any) -> datetime | None:
    """A seed's ISO 8601 date or time of its last change, as aware UTC (a date alone is its midnight UTC);
    None when absent or unreadable."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


IGNORE_FILE = ".docbotignore"


def iter_files(root: Path) -> Iterable[Path]:
    """Document files under `root` (or `root` itself), hidden folders skipped, in a stable order. A folder's
    `.docbotignore` (gitignore patterns, relative to the folder) leaves out what is not for answers, e.g. pages
    written for the developers of the docs rather than for the people asking."""
    if root.is_file():
        yield root
        return
    ignored = _ignore_spec(root)
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if ignored is not None and ignored.match_file(rel.as_posix()):
            continue
        if path.is_file() and path.suffix.lower() in DOCUMENT_SUFFIXES | SEED_SUFFIXES:
            yield path


def _ignore_spec(root: Path) -> GitIgnoreSpec | None:
    from pathspec import GitIgnoreSpec

    file = root / IGNORE_FILE
    if not file.is_file():
        return None
    return GitIgnoreSpec.from_lines(file.read_text(encoding="utf-8").splitlines())


def require_readable(name: str, docs: list[SourceDoc], skipped: int, seen_files: int) -> None:
    if seen_files == 0:
        raise IngestError(
            f"no Markdown, reStructuredText, HTML, text, PDF, Word (.docx) or seed files found in {name}",
            source=name,
            reason="no supported files",
        )
    if not docs and skipped:
        raise IngestError(f"none of the {skipped} files in {name} could be read", source=name, reason="unreadable")
