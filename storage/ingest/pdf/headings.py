"""Headings of a PDF without an outline, by their type, as a reader sees them: a line set larger than the body
text, or a short line of its own set all in bold at the body's size. The larger the type, the higher the level;
a heading printed on two lines is one heading."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from storage.ingest.pdf.flow import Unit
from storage.ingest.pdf.layout import Line

LARGER_PT = 1.0  # a heading's type is at least this much larger than the body's
BOLD_HEADING_CHARS = 80  # a bold line longer than this is a bold paragraph


@dataclass(frozen=True, slots=True)
class Heading:
    index: int  # of its first line among the units
    lines: int  # how many lines it is printed on
    title: str
    level: int


def body_size(units: Sequence[Unit]) -> float:
    """The type size most of the text is set in."""
    sizes: Counter[float] = Counter()
    for unit in units:
        if isinstance(unit, Line):
            sizes[round(unit.size * 2) / 2] += len(unit.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def headings_by_type(units: Sequence[Unit], gap: float) -> list[Heading]:
    body = body_size(units)
    found: list[tuple[int, int, str, float | None]] = []  # (index, lines, title, size; None: bold at body size)
    i = 0
    while i < len(units):
        unit = units[i]
        if not isinstance(unit, Line) or not any(ch.isalpha() for ch in unit.text):
            i += 1
            continue
        if unit.size >= body + LARGER_PT:
            end = i + 1
            while end < len(units) and _same_heading(unit, units[end], gap):
                end += 1
            title = " ".join(u.text for u in units[i:end] if isinstance(u, Line))
            found.append((i, end - i, title, round(unit.size * 2) / 2))
            i = end
            continue
        if _bold_heading(units, i, gap, body):
            found.append((i, 1, unit.text, None))
        i += 1
    larger = sorted({size for *_, size in found if size is not None}, reverse=True)
    return [
        Heading(index, lines, title, min(6, larger.index(size) + 1 if size is not None else len(larger) + 1))
        for index, lines, title, size in found
    ]


def _same_heading(first: Line, unit: Unit, gap: float) -> bool:
    return (
        isinstance(unit, Line)
        and unit.page == first.page
        and abs(unit.size - first.size) < 0.3
        and 0 <= first.y0 - unit.y1 <= gap + unit.height
    )


def _bold_heading(units: Sequence[Unit], i: int, gap: float, body: float) -> bool:
    """A short bold line at the body's size, apart from the text before it, and not followed by more bold text."""
    line = units[i]
    assert isinstance(line, Line)
    if not line.bold or abs(line.size - body) > 0.5 or len(line.text) > BOLD_HEADING_CHARS:
        return False
    if line.text.endswith((".", ",", ";", ":")):
        return False
    before = units[i - 1] if i else None
    after = units[i + 1] if i + 1 < len(units) else None
    apart = not isinstance(before, Line) or before.page != line.page or before.y0 - line.y1 > gap + line.height / 2
    return apart and not (isinstance(after, Line) and after.bold)
