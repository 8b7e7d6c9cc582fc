"""Running text from printed lines: the lines of a paragraph joined into one (a word hyphenated at a line's end
joined again), list items kept as items, tables as tables. A paragraph ends where the gap to the next line is
wider than the text's usual line spacing, where the next line is indented (a first line), set in another size,
or starts a list item; across a page or column break it goes on only mid-sentence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from storage.ingest.pdf.layout import Line, Page
from storage.ingest.pdf.tables import Table
from storage.ingest.text import merge_intros

Unit = Line | Table  # what a section's text is read from, in reading order

BULLETS = frozenset("•◦▪‣●○■□·\uf0b7\uf0a7")  # the last two: Symbol/Wingdings bullets as Word's PDFs print them
DASHES = frozenset({"-", "–", "—", "*"})  # bullets too, unless a sentence goes on across them
_SENTENCE_ENDS = (".", "!", "?", ":", ";")
_INTRODUCED = frozenset({"list", "table"})  # what a paragraph ending in ":" stays with


def usual_gap(pages: Sequence[Page]) -> float:
    """The space between two lines of one paragraph: the lower quartile of the gaps between a line and the next
    below it (most gaps are inside paragraphs; the wider ones separate them)."""
    gaps = sorted(a.y0 - b.y1 for page in pages for a, b in pairwise(page.lines) if b.y1 <= a.y0 + a.height / 2)
    return gaps[len(gaps) // 4] if gaps else 0.0


@dataclass(slots=True)
class _Piece:
    kind: str  # "paragraph", "item" (text starts with its marker: "- " or "3. "), "table"
    text: str
    last: Line | None = None


def blocks(units: Sequence[Unit], gap: float) -> list[str]:
    """A section's text as blocks: paragraphs, lists (consecutive items, one per line) and Markdown tables; a
    paragraph ending in ":" stays with the list or table it introduces."""
    pieces: list[_Piece] = []
    for unit in units:
        if isinstance(unit, Table):
            pieces.append(_Piece("table", unit.markdown()))
            continue
        previous = pieces[-1] if pieces else None
        if previous is not None and previous.kind == "item" and previous.text in ("-", ""):
            previous.text, previous.last = f"- {unit.text}", unit  # a bullet printed apart from its text
            continue
        marker, rest = _marker(unit.text)
        goes_on = previous is not None and _goes_on(previous, unit, gap)
        mid_sentence = (
            goes_on and previous is not None and previous.kind == "paragraph"
            and not previous.text.endswith(_SENTENCE_ENDS)
        )  # fmt: skip
        if marker and not (marker in DASHES and mid_sentence):
            pieces.append(_Piece("item", f"{'-' if marker in BULLETS | DASHES else marker} {rest}".rstrip(), unit))
        elif previous is not None and goes_on:
            previous.text, previous.last = _join(previous.text, unit.text), unit
        else:
            pieces.append(_Piece("paragraph", unit.text, unit))
    return _merged(pieces)


def _marker(text: str) -> tuple[str, str]:
    """A list item's marker and its text ("•", "-", "3." or "3)"), or ("", text)."""
    if text[:1] in BULLETS:
        return text[0], text[1:].strip()
    head, _, rest = text.partition(" ")
    if head in DASHES:
        return head, rest
    if rest and 2 <= len(head) <= 4 and head[:-1].isdigit() and head[-1] in ".)":
        return head, rest
    return "", text


def _goes_on(piece: _Piece, line: Line, gap: float) -> bool:
    """Whether `line` continues the paragraph or item `piece`."""
    last = piece.last
    if last is None or piece.kind == "table":
        return False
    if line.page != last.page or line.y1 > last.y0 + last.height / 2:  # another page or column
        return not piece.text.endswith(_SENTENCE_ENDS) and line.text[:1].islower()
    if abs(line.size - last.size) > 0.5 or last.y0 - line.y1 > gap + line.height / 2:
        return False
    return piece.kind == "item" or line.x0 <= last.x0 + line.size  # an indented line opens a paragraph


def _join(text: str, more: str) -> str:
    """Two lines of one paragraph: a word hyphenated across them is one word again ("manip-" "ulation");
    a hyphen inside a compound before a capital or a digit stays ("Wi-" "Fi", "E-" "2041"); an identifier typeset
    across two lines after an underscore is one identifier again."""
    if text.endswith("\u00ad"):  # a soft hyphen: only there because the line broke
        return text[:-1] + more
    if text.endswith("-") and text[-2:-1].isalpha():
        return text[:-1] + more if more[:1].islower() else text + more
    if text.endswith("_") and more[:1].isalnum():  # an identifier broken after its underscore ("asn1_der_" "decoding")
        return text + more
    return f"{text} {more}"


def _merged(pieces: list[_Piece]) -> list[str]:
    """Consecutive items as one list, and each list or table with the paragraph ending in ":" before it."""
    out: list[tuple[str, str]] = []  # (kind, block)
    for piece in pieces:
        if piece.kind == "item" and out and out[-1][0] == "list":
            out[-1] = ("list", f"{out[-1][1]}\n{piece.text}")
        else:
            out.append(("list" if piece.kind == "item" else piece.kind, piece.text))
    return [block for _, block in merge_intros(out, _INTRODUCED) if block.strip()]
