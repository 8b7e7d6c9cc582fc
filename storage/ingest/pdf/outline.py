"""A PDF's outline (its bookmarks): the author's own table of contents, each entry a title, a depth and a place
(a page, and on it the height the view opens at when the destination says)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pdfminer.pdfdocument import PDFDocument


@dataclass(frozen=True, slots=True)
class Entry:
    title: str
    level: int  # 1 for the outline's top entries
    page: int  # 1-based
    top: float | None  # the destination's top edge in PDF points, None when it names only the page


def outline(document: PDFDocument, page_numbers: Mapping[object, int]) -> list[Entry]:
    """The outline's entries in outline order; entries that lead nowhere in this file are left out, and a broken
    outline counts as none (the text is still read, with headings found by type)."""
    from pdfminer.pdfdocument import PDFNoOutlines
    from pdfminer.psparser import PSException

    entries: list[Entry] = []
    try:
        for level, title, dest, action, _ in document.get_outlines():
            place = _place(document, dest, action, page_numbers)
            if place is not None and str(title).strip():
                entries.append(Entry(" ".join(str(title).split()), int(level), *place))
    except PDFNoOutlines:
        return []
    except (PSException, KeyError, TypeError, ValueError):
        return []
    return entries


def _place(
    document: PDFDocument, dest: Any, action: Any, page_numbers: Mapping[object, int]
) -> tuple[int, float | None] | None:
    """(page, top) of a destination given directly, by name, or through a GoTo action (PDF 32000 §12.3.2)."""
    from pdfminer.pdfdocument import PDFDestinationNotFound
    from pdfminer.pdftypes import PDFObjRef, resolve1
    from pdfminer.psparser import PSLiteral

    target = resolve1(dest)
    if target is None and action is not None:
        act = resolve1(action)
        kind = resolve1(act.get("S")) if isinstance(act, dict) else None
        if isinstance(kind, PSLiteral) and kind.name == "GoTo":
            target = resolve1(act.get("D"))
    if isinstance(target, PSLiteral):
        target = target.name
    if isinstance(target, str | bytes):
        try:
            target = resolve1(document.get_dest(target))
        except (PDFDestinationNotFound, KeyError):
            return None
    if isinstance(target, dict):
        target = resolve1(target.get("D"))
    if not isinstance(target, list) or not target or not isinstance(target[0], PDFObjRef):
        return None
    page = page_numbers.get(target[0].objid)
    if page is None:
        return None
    view = resolve1(target[1]) if len(target) > 1 else None
    name = view.name if isinstance(view, PSLiteral) and isinstance(view.name, str) else ""
    # [page /XYZ left top zoom] and [page /FitH top] (also /FitBH) say where the view's top goes
    position = {"XYZ": 3, "FitH": 2, "FitBH": 2}.get(name, len(target))
    top = resolve1(target[position]) if position < len(target) else None
    return page, float(top) if isinstance(top, int | float) else None
