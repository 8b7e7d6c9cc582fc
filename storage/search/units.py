"""Short units of a chunk (its sentences, very short ones joined to the next) for the unit level.

A short question in another language than the docs lines up with one short sentence far better than with a whole
passage, as it does with a section title (`python -m bench.crosslang`; figures in docs/benchmarks.md). Each unit is
embedded once as a passage, in the background after the retriever loads, and kept beside the search snapshot.
"""

from __future__ import annotations

from storage.search.tokenize import sentences

MIN_UNIT_CHARS = 25  # a shorter sentence ("Select Reset.") is joined to the next one
MAX_UNIT_CHARS = 300  # longer sentences are cut: the unit stays short enough to align with a question


def text_units(text: str) -> list[str]:
    """The units of `text` in order: sentences of at least `MIN_UNIT_CHARS` (shorter ones joined to the next, a
    short tail to the last), each at most `MAX_UNIT_CHARS`."""
    units: list[str] = []
    pending = ""
    for sentence in sentences(text):
        pending = f"{pending} {sentence}" if pending else sentence
        if len(pending) >= MIN_UNIT_CHARS:
            units.append(pending[:MAX_UNIT_CHARS])
            pending = ""
    if pending:
        if units:
            units[-1] = f"{units[-1]} {pending}"[:MAX_UNIT_CHARS]
        else:
            units.append(pending[:MAX_UNIT_CHARS])
    return units
