"""Running headers, footers and page numbers: a PDF prints them on every page, where they would make every page a
match for the words in them. A line is one when it sits in the top or bottom margin of its page and either is a
page number or repeats, at the same height, on another page (its numbers aside: "Page 3 of 9" is the template
"Page # of #"). Texinfo-style headers that name the chapter repeat on each page of that chapter, and go too."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from itertools import groupby

from storage.ingest.pdf.layout import Line, Page
from storage.ingest.text import is_marked_page_number

MARGIN = 0.12  # of the page's height, at the top and at the bottom: where running headers and footers print
SAME_HEIGHT_PT = 2.0  # one template prints its line at the same height on every page


def without_furniture(pages: list[Page]) -> list[Page]:
    """The pages without their running headers, footers and page numbers."""
    heights: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for page in pages:
        for line in page.lines:
            if _in_margin(line, page):
                heights[_template(line.text)].append((page.number, line.middle))

    def furniture(line: Line, page: Page) -> bool:
        if not _in_margin(line, page):
            return False
        if is_page_number(line.text):
            return True
        return any(
            number != page.number and abs(middle - line.middle) <= SAME_HEIGHT_PT
            for number, middle in heights[_template(line.text)]
        )

    return [replace(page, lines=tuple(line for line in page.lines if not furniture(line, page))) for page in pages]


def is_page_number(text: str) -> bool:
    """A line that is only a page number: "12", "xiv", "- 12 -", "Page 3 of 9". A plain check, not a pattern:
    the bare forms are two string tests, and `is_marked_page_number` already knows the marked ones."""
    word = text.strip()
    roman = 0 < len(word) <= 7 and set(word.lower()) <= set("ivxlc")
    return (word.isdigit() and len(word) <= 4) or roman or is_marked_page_number(word)


def _in_margin(line: Line, page: Page) -> bool:
    band = (page.top - page.bottom) * MARGIN
    return line.middle >= page.top - band or line.middle <= page.bottom + band


def _template(text: str) -> str:
    """The line with each run of digits as one "#", so that the header of page 9 and of page 10 are one."""
    return "".join("#" if digits else "".join(run) for digits, run in groupby(text.casefold(), str.isdigit))
