"""Plain-text helpers for ingestion: anchors, sentences, derived fields (summary, keypoints, keywords), chunking."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from storage.search.tokenize import CHUNK_OVERLAP_CHARS, overlap_tail, sentences, tokenize

MAX_CHUNK_CHARS = 1200

_SPACES = re.compile(r"[ \t]+")


def slugify(heading: str) -> str:
    """GitHub-style anchor: lower case, punctuation dropped, spaces to hyphens (unicode letters kept)."""
    text = unicodedata.normalize("NFKC", heading).strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def unique_anchor(slug: str, seen: dict[str, int]) -> str:
    """GitHub numbering for repeated headings: `setup`, `setup-1`, `setup-2`."""
    count = seen.get(slug, 0)
    seen[slug] = count + 1
    return slug if count == 0 else f"{slug}-{count}"


def normalise_space(text: str) -> str:
    lines = [_SPACES.sub(" ", line).strip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


# a line that is only a page number, as a PDF's text extraction leaves them between the lines of a page ("- 35 -")
_PAGE_NUMBER = re.compile(r"[-–—]\s*\d{1,4}\s*[-–—]|(?i:page)\s+\d{1,4}(?:\s+(?i:of)\s+\d{1,4})?")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([,.;:)])")


def is_marked_page_number(line: str) -> bool:
    """A page number that says it is one ("- 35 -", "Page 3", "Page 3 of 9"); a bare number may be text."""
    return _PAGE_NUMBER.fullmatch(line.strip()) is not None


def extracted_lines_text(lines: Iterable[object]) -> str:
    """A section given as the visual lines of a page (a PDF's text, one list item per printed line) as running
    text: the lines joined with spaces, page numbers and stray quote marks dropped ("+ / -", a key's label, stays).
    Joined with newlines instead, a page number "- 35 -" reads as a Markdown list item in mid-sentence."""
    kept = [str(line).strip() for line in lines]
    kept = [line for line in kept if line.strip("\"“”'") and not is_marked_page_number(line)]
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(kept))


def merge_intros(blocks: list[tuple[str, str]], structured: frozenset[str]) -> list[tuple[str, str]]:
    """(kind, block) pairs with a paragraph ending in ":" joined to the list, table or code block of a `structured`
    kind it introduces, which takes the pair's kind: the two are quoted together."""
    out: list[tuple[str, str]] = []
    for kind, block in blocks:
        if out and kind in structured and out[-1][0] == "paragraph" and out[-1][1].rstrip().endswith(":"):
            out[-1] = (kind, f"{out[-1][1]}\n\n{block}")
            continue
        out.append((kind, block))
    return out


def pipe_table(rows: Sequence[Sequence[str]]) -> str:
    """A Markdown (GFM) table with the first row as its header; short rows are padded and `|` in a cell escaped."""
    cells = [[cell.replace("|", "\\|") for cell in row] for row in rows if row]
    if not cells:
        return ""
    width = max(len(row) for row in cells)
    cells = [row + [""] * (width - len(row)) for row in cells]
    lines = [f"| {' | '.join(cells[0])} |", f"|{'---|' * width}"]
    lines += [f"| {' | '.join(row)} |" for row in cells[1:]]
    return "\n".join(lines)


def summary_of(text: str, *, max_chars: int = 300) -> str:
    """The lead sentences, up to `max_chars`."""
    out: list[str] = []
    size = 0
    for sentence in sentences(text):
        if out and size + len(sentence) > max_chars:
            break
        out.append(sentence)
        size += len(sentence) + 1
    return " ".join(out)[: max_chars * 2]


def keywords_of(text: str, *, limit: int = 10) -> list[str]:
    """Most characteristic terms: frequency dampened by length, a document-local stand-in for BM25 weight."""
    counts = Counter(tokenize(text))
    ranked = sorted(counts.items(), key=lambda kv: (-(1 + math.log(kv[1])) * min(len(kv[0]), 8), kv[0]))
    return [term for term, _ in ranked[:limit]]


def keypoints_of(text: str, *, limit: int = 3) -> list[str]:
    """The sentences that cover most of the document's keywords, in document order."""
    keywords = set(keywords_of(text, limit=15))
    candidates = [s for s in sentences(text) if 20 <= len(s) <= 400]
    scored = sorted(
        range(len(candidates)),
        key=lambda i: -len(keywords & set(tokenize(candidates[i]))),
    )[:limit]
    return [candidates[i] for i in sorted(scored)]


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the text under it; `level` 0 is the text before the first heading."""

    title: str
    level: int
    text: str
    anchor: str = ""
    crumbs: tuple[str, ...] = ()
    blocks: tuple[str, ...] = ()  # the text's top-level blocks (paragraph, list, table, code) in order, when parsed


_STRUCTURED_START = re.compile(r"^(?:[|>]|[-*+]\s|\d{1,3}[.)]\s|```|~~~)")
MAX_BLOCK_CHARS = 4 * MAX_CHUNK_CHARS  # a list or table up to this size stays whole in one chunk


def _is_table(block: str) -> bool:
    rows = block.splitlines()
    return len(rows) >= 2 and rows[0].lstrip().startswith("|") and set(rows[1].replace(" ", "")) <= set("|:-")


def _table_pieces(block: str, max_chars: int) -> list[str]:
    """A table too long for one chunk: runs of rows, each under the table's header."""
    rows = block.splitlines()
    header, body = rows[:2], rows[2:]
    pieces: list[str] = []
    current: list[str] = []
    for row in body:
        if current and len("\n".join([*header, *current, row])) > max_chars:
            pieces.append("\n".join([*header, *current]))
            current = []
        current.append(row)
    if current:
        pieces.append("\n".join([*header, *current]))
    return pieces


def pack_blocks(blocks: tuple[str, ...] | list[str], *, max_chars: int = MAX_CHUNK_CHARS) -> list[str]:
    """Chunks made of whole blocks: consecutive blocks share a chunk up to `max_chars`; a table or list is never
    split (up to `MAX_BLOCK_CHARS`; a longer table is cut into row runs that each repeat its header); only a
    paragraph longer than a chunk is cut, at sentence ends."""
    units: list[str] = []
    for block in blocks:
        block = block.strip()
        if not block:
            continue
        if len(block) <= max_chars:
            units.append(block)
        elif _is_table(block.split("\n\n")[-1]) and len(block) > MAX_BLOCK_CHARS:
            units.extend(_table_pieces(block, max_chars))
        elif _STRUCTURED_START.match(block) or "\n\n" in block:
            units.extend([block] if len(block) <= MAX_BLOCK_CHARS else split_long(block, max_chars=max_chars))
        else:
            units.extend(split_long(block, max_chars=max_chars))
    pieces: list[str] = []
    current = ""
    for unit in units:
        candidate = f"{current}\n\n{unit}" if current else unit
        if current and len(candidate) > max_chars:
            pieces.append(current)
            current = unit
        else:
            current = candidate
    if current:
        pieces.append(current)
    return pieces


def split_long(text: str, *, max_chars: int = MAX_CHUNK_CHARS, overlap: int = CHUNK_OVERLAP_CHARS) -> list[str]:
    """Pieces of at most `max_chars`, cut at paragraph or sentence ends, each repeating a little of the previous;
    the sentences of one paragraph stay one paragraph (a space between them, a blank line between paragraphs)."""
    if len(text) <= max_chars:
        return [text]
    units: list[tuple[str, bool]] = []  # (text, opens a paragraph)
    for paragraph in text.split("\n\n"):
        if len(paragraph) <= max_chars:
            units.append((paragraph, True))
        else:
            said = sentences(paragraph) or [paragraph]
            units.extend((sentence, i == 0) for i, sentence in enumerate(said))
    pieces: list[str] = []
    current = ""
    for unit, opens in units:
        while len(unit) > max_chars:  # one enormous sentence: hard cut
            units_head, unit = unit[:max_chars], unit[max_chars:]
            if current:
                pieces.append(current)
                current = ""
            pieces.append(units_head)
        candidate = f"{current}{chr(10) * 2 if opens else ' '}{unit}" if current else unit
        if len(candidate) <= max_chars:
            current = candidate
            continue
        pieces.append(current)
        tail = overlap_tail(current, overlap)
        current = f"{tail} {unit}" if len(tail) + len(unit) + 1 <= max_chars else unit
    if current:
        pieces.append(current)
    return pieces
