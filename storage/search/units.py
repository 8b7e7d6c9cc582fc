"""Short units of a chunk (its sentences, very short ones joined to the next) for the unit level.

A short question in another language than the docs lines up with one short sentence far better than with a whole
passage, as it does with a section title (`python -m bench.crosslang`; figures in docs/benchmarks.md). Each unit is
embedded once as a passage, in the background after the retriever loads, and kept beside the search snapshot.
"""

from __future__ import annotations

from pipeline import text as textutil
from storage.search.tokenize import sentences

MIN_UNIT_CHARS = 25  # a shorter sentence ("Select Reset.") is joined to the next one
MAX_UNIT_CHARS = 300  # longer sentences are cut: the unit stays short enough to align with a question


def text_units(text: str) -> list[str]:
    """The units of `text` in order: each row of a table and each item of a list on its own (a settings table's row
    "`DOCBOT_MAX_QUESTION_CHARS` | `4000` | longer questions are refused" is what "can I cap how long a question can
    be?" asks about, and it has no sentence end to be cut at), the rest as sentences; a piece shorter than
    `MIN_UNIT_CHARS` is joined to the next (a short tail to the last), each unit is at most `MAX_UNIT_CHARS`."""
    pieces: list[str] = []
    for block in textutil.blocks(text):
        if block.kind == "table":
            lead, _header, rows = textutil.table_rows(block.text)
            pieces += sentences("\n".join(lead)) + [cells for cells in map(_row, rows) if cells]
        elif block.kind == "list":
            lead, items = textutil.list_items(block.text)
            pieces += sentences("\n".join(lead)) + items
        else:
            pieces += sentences(block.text)
    units: list[str] = []
    pending = ""
    for piece in pieces:
        pending = f"{pending} {piece}" if pending else piece
        if len(pending) >= MIN_UNIT_CHARS:
            units.append(pending[:MAX_UNIT_CHARS])
            pending = ""
    if pending:
        if units:
            units[-1] = f"{units[-1]} {pending}"[:MAX_UNIT_CHARS]
        else:
            units.append(pending[:MAX_UNIT_CHARS])
    return units


def _row(line: str) -> str:
    """A table row's cells as plain words ("DOCBOT_MAX_QUESTION_CHARS 4000 longer questions are refused ...")."""
    return " ".join(" ".join(cell.replace("`", "").split()) for cell in line.strip().strip("|").split("|")).strip()
