"""A PDF's text as printed lines, through pdfminer.six's layout analysis: characters grouped into lines and lines
into text boxes, the boxes put in reading order (columns one after the other). Each line keeps where it sits on its
page and the size and weight of its type: that is all the structure an untagged PDF has."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pdfminer.pdfdocument import PDFDocument

_BOLD_FACES = ("bold", "black", "heavy", "semibold", "demi")  # as font names say it ("Helvetica-Bold")


@dataclass(frozen=True, slots=True)
class Line:
    """One printed line; coordinates in PDF points from the page's bottom left (y grows upwards)."""

    page: int  # 1-based, as viewers count (`#page=N`)
    box: int  # the layout's text box, numbered across the document: a table's cell is a box of its own
    x0: float
    y0: float
    x1: float
    y1: float
    text: str  # its words, single-spaced
    size: float  # the most common type size of its characters
    bold: bool  # most of its characters are set in a bold face

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def middle(self) -> float:
        return (self.y0 + self.y1) / 2


@dataclass(frozen=True, slots=True)
class Page:
    number: int  # 1-based
    bottom: float
    top: float
    lines: tuple[Line, ...]  # in reading order


def read_pages(document: PDFDocument) -> tuple[list[Page], dict[object, int]]:
    """The pages with their lines, and each page's number by its object id (outline destinations name pages so)."""
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams, LTChar, LTTextBox, LTTextLine
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    resources = PDFResourceManager()
    device = PDFPageAggregator(resources, laparams=LAParams())
    interpreter = PDFPageInterpreter(resources, device)
    pages: list[Page] = []
    numbers: dict[object, int] = {}
    boxes = 0
    for number, pdf_page in enumerate(PDFPage.create_pages(document), start=1):
        numbers[pdf_page.pageid] = number
        interpreter.process_page(pdf_page)
        layout = device.get_result()
        lines: list[Line] = []
        for element in layout:
            if not isinstance(element, LTTextBox):
                continue
            boxes += 1
            for printed in element:
                text = " ".join(printed.get_text().split()) if isinstance(printed, LTTextLine) else ""
                if not text:
                    continue
                chars = [c for c in printed if isinstance(c, LTChar)]
                sizes = Counter(round(c.size, 1) for c in chars)
                size = sizes.most_common(1)[0][0] if sizes else printed.height
                bold = 2 * sum(any(face in c.fontname.lower() for face in _BOLD_FACES) for c in chars) > len(chars)
                lines.append(Line(number, boxes, printed.x0, printed.y0, printed.x1, printed.y1, text, size, bold))
        pages.append(Page(number, layout.y0, layout.y1, tuple(lines)))
    return pages, numbers
