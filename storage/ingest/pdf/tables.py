"""Tables in a PDF. pdfminer puts each cell of a table in a text box of its own and reads the boxes column by
column, which would set every code apart from its meaning; here cells that share a line of print are put back
into rows, and two or more rows in a row with as many cells each are a table."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import pairwise

from storage.ingest.pdf.layout import Page
from storage.ingest.text import pipe_table


@dataclass(frozen=True, slots=True)
class Table:
    page: int
    y0: float
    y1: float
    rows: tuple[tuple[str, ...], ...]

    def markdown(self) -> str:
        return pipe_table(self.rows)


def tables_on(page: Page) -> dict[int, tuple[Table, frozenset[int]]]:
    """The page's tables, each by the reading-order index of its first cell, with the indexes of all its cells."""
    lines = page.lines
    lines_in_box = Counter(line.box for line in lines)
    bands: list[list[int]] = []  # indexes of lines sharing a line of print, top to bottom
    for i in sorted(range(len(lines)), key=lambda i: -lines[i].middle):
        if bands and abs(lines[bands[-1][0]].middle - lines[i].middle) <= lines[i].height / 2:
            bands[-1].append(i)
        else:
            bands.append([i])
    rows: list[list[int] | None] = []
    for band in bands:
        cells = sorted(band, key=lambda i: lines[i].x0)
        # cells are one-line boxes side by side; a line of a paragraph's box is running text (a column of it)
        separate = all(lines[a].x1 <= lines[b].x0 + 1 for a, b in pairwise(cells))
        rows.append(cells if len(cells) >= 2 and separate and all(lines_in_box[lines[i].box] == 1 for i in cells)
                    else None)  # fmt: skip
    found: dict[int, tuple[Table, frozenset[int]]] = {}
    run: list[list[int]] = []
    for row in [*rows, None]:
        if row is not None and run and len(row) == len(run[-1]):
            run.append(row)
            continue
        if len(run) >= 2:
            members = frozenset(i for cells in run for i in cells)
            table = Table(
                page=page.number,
                y0=min(lines[i].y0 for i in members),
                y1=max(lines[i].y1 for i in members),
                rows=tuple(tuple(lines[i].text for i in cells) for cells in run),
            )
            found[min(members)] = (table, members)
        run = [row] if row is not None else []
    return found
