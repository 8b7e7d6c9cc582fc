"""A PDF file as sections, read by pdfminer.six.

Sections come from the PDF's outline (bookmarks) when it has one, each entry a section at its depth whose text runs
from where the entry points to where the next one does; else from headings found by their type; else, as a last
resort, one section a page. A section cites its first page as `file.pdf#page=N` (RFC 8118), and when it starts
below the top of that page, with the view opened at its heading: `#page=N&view=FitH,TOP` (Adobe's PDF open
parameters, which Acrobat and Chrome follow; pdf.js opens the page)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from storage.ingest.pdf.flow import Unit, blocks, usual_gap
from storage.ingest.pdf.furniture import without_furniture
from storage.ingest.pdf.headings import body_size, headings_by_type
from storage.ingest.pdf.layout import Line, Page, read_pages
from storage.ingest.pdf.outline import Entry, outline
from storage.ingest.pdf.tables import tables_on
from storage.ingest.readers import ReadText
from storage.ingest.text import Section

if TYPE_CHECKING:
    from pdfminer.pdfdocument import PDFDocument

HEADING_MATCH_LINES = 3  # an outline entry's printed heading may wrap over this many lines


@dataclass(frozen=True, slots=True)
class _Start:
    index: int  # of the section's first unit
    skip: int  # units that print its heading (not repeated in its text)
    title: str
    level: int
    anchor: str


def read_pdf(raw: bytes) -> ReadText:
    """The sections of a PDF; raises ValueError, with the reason, for a file that cannot be read: encrypted with a
    password, no text layer (a scan), or damaged."""
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFParser

    try:
        document = PDFDocument(PDFParser(io.BytesIO(raw)))
        pages, page_numbers = read_pages(document)
        entries = outline(document, page_numbers)
        title = _info_title(document)
    except PDFPasswordIncorrect as exc:
        raise ValueError("is password-protected") from exc
    except PDFEncryptionError as exc:
        raise ValueError(f"is encrypted in a way that cannot be read ({type(exc).__name__})") from exc
    except Exception as exc:  # a damaged file makes the parser raise whatever it trips on (PSEOF, KeyError, ...)
        raise ValueError(f"is not a readable PDF ({type(exc).__name__})") from exc
    if not any(page.lines for page in pages):
        raise ValueError("has no text layer (scanned?)")
    pages = without_furniture(pages)
    units = _units(pages)
    gap = usual_gap(pages)
    starts = _outline_starts(entries, units) or _heading_starts(units, gap) or _page_starts(units, len(pages))
    lead = units[: min((s.index for s in starts), default=len(units))]
    return ReadText(_sections(units, starts, gap), title=title, title_hint=_cover_title(lead, body_size(units)))


def _units(pages: Sequence[Page]) -> list[Unit]:
    """The lines of all pages in reading order, each table as one unit where its first cell was, and a printed
    table of contents' lines ("2.1 Naming . . . . 3") left out: the outline or the headings are the contents."""
    units: list[Unit] = []
    for page in pages:
        tables = tables_on(page)
        cells = frozenset(i for _, members in tables.values() for i in members)
        for i, line in enumerate(page.lines):
            if i in tables:
                units.append(tables[i][0])
            elif i not in cells and not _contents_line(line.text):
                units.append(line)
    return units


def _contents_line(text: str) -> bool:
    """A table of contents' line: leader dots, then a page number."""
    head, _, last = text.rpartition(" ")
    number = last.isdigit() or (bool(last) and set(last.lower()) <= set("ivxlc"))
    return number and (". . ." in head or "...." in head)


def _outline_starts(entries: Sequence[Entry], units: Sequence[Unit]) -> list[_Start]:
    on_page: dict[int, list[int]] = {}  # page -> its units' indexes, in reading order
    for i, unit in enumerate(units):
        on_page.setdefault(unit.page, []).append(i)
    pages = sorted(on_page)
    starts: list[_Start] = []
    for entry in entries:
        here = on_page.get(entry.page, [])
        index, skip = _where(entry, units, here)
        top: float | None = None
        if index < 0:  # nothing of its page is below where it points: it starts on the next page with text
            index = next((on_page[page][0] for page in pages if page > entry.page), len(units))
        elif index != here[0]:  # below the top of its page: the link opens the view there
            top = entry.top if entry.top is not None else units[index].y1
        starts.append(_Start(index, skip, entry.title, entry.level, _anchor(entry.page, top)))
    return starts


def _where(entry: Entry, units: Sequence[Unit], here: Sequence[int]) -> tuple[int, int]:
    """Where on its page an outline entry's section starts, and how many lines print its heading: at the heading
    printed where the entry points, else at the first line there; (-1, 0) when nothing there is below that point."""
    wanted = _squash(entry.title)
    # a destination's top is at or above its heading: the heading's lowest edge is below it
    placed = [i for i in here if entry.top is None or units[i].y0 <= entry.top + 2]
    for i in placed if wanted else ():
        for count in range(1, HEADING_MATCH_LINES + 1):
            printed = [u for u in units[i : i + count] if isinstance(u, Line) and u.page == entry.page]
            if len(printed) < count:
                break
            squashed = _squash(" ".join(u.text for u in printed))
            if squashed.endswith(wanted) and _numbering(squashed[: len(squashed) - len(wanted)], wanted):
                return i, count
            if len(squashed) >= len(wanted) + 12:
                break
    return (placed[0], 0) if placed else (-1, 0)


def _squash(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _numbering(prefix: str, title: str) -> bool:
    """What may print before an entry's title in its heading: a section number ("2.1"), or for a longer title
    a word and a number ("Chapter 2", "Appendix A")."""
    return not prefix or prefix.isdigit() or (len(prefix) <= 12 and len(title) >= 6)


def _heading_starts(units: Sequence[Unit], gap: float) -> list[_Start]:
    starts: list[_Start] = []
    for heading in headings_by_type(units, gap):
        line = units[heading.index]
        first_on_page = heading.index == 0 or units[heading.index - 1].page != line.page
        anchor = _anchor(line.page, None if first_on_page else line.y1)
        starts.append(_Start(heading.index, heading.lines, heading.title, heading.level, anchor))
    return starts


def _page_starts(units: Sequence[Unit], pages: int) -> list[_Start]:
    """One section a page, when nothing else tells where sections start; none for a single page."""
    if pages < 2:
        return []
    firsts: dict[int, int] = {}  # page -> index of its first unit
    for i, unit in enumerate(units):
        firsts.setdefault(unit.page, i)
    return [_Start(i, 0, f"Page {page}", 1, _anchor(page, None)) for page, i in firsts.items()]


def _anchor(page: int, top: float | None) -> str:
    return f"page={page}" if top is None else f"page={page}&view=FitH,{round(top)}"


def _sections(units: Sequence[Unit], starts: Sequence[_Start], gap: float) -> list[Section]:
    ordered = sorted(starts, key=lambda s: s.index)
    sections: list[Section] = []
    lead = units[: ordered[0].index] if ordered else units
    if lead:
        sections.append(_section("", 0, "", blocks(lead, gap)))
    for start, following in pairwise([*ordered, None]):
        assert start is not None
        end = following.index if following is not None else len(units)
        body = units[min(start.index + start.skip, end) : end]
        sections.append(_section(start.title, start.level, start.anchor, blocks(body, gap)))
    return sections


def _section(title: str, level: int, anchor: str, parts: list[str]) -> Section:
    return Section(title=title, level=level, text="\n\n".join(parts), anchor=anchor, blocks=tuple(parts))


def _info_title(document: PDFDocument) -> str:
    """The title in the document's information dictionary, "" when it has none."""
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text

    for info in document.info:
        value = resolve1(info.get("Title")) if isinstance(info, dict) else None
        if isinstance(value, bytes):
            value = decode_text(value)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return ""


def _cover_title(lead: Sequence[Unit], body: float) -> str:
    """The largest line of the first page, when it is larger than the body and comes before the first section:
    a manual's cover title (a first page that opens with a section has none)."""
    first = [u for u in lead if isinstance(u, Line) and u.page == lead[0].page] if lead else []
    if not first:
        return ""
    largest = max(first, key=lambda u: u.size)
    return largest.text if largest.size >= body * 1.2 else ""
