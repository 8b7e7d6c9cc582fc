"""JSON text of large lists and dicts, made a piece at a time.

One `json.dumps` of 100k items is a single C call that holds the GIL for tens of milliseconds: a worker thread
writing a search snapshot that way stalls the event loop of its process (acknowledgements, answers) for as long.
Between pieces the GIL can change hands. The text is what `json.dumps` gives for the whole (default separators).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

PIECE = 2_000


def dumps_list(items: Sequence[Any], *, piece: int = PIECE, ensure_ascii: bool = True) -> str:
    starts = range(0, len(items), piece)
    parts = (json.dumps(list(items[i : i + piece]), ensure_ascii=ensure_ascii)[1:-1] for i in starts)
    return "[" + ", ".join(parts) + "]"


def dumps_dict(mapping: Mapping[str, Any], *, piece: int = PIECE, ensure_ascii: bool = True) -> str:
    entries = iter(mapping.items())
    parts = []
    while batch := dict(itertools.islice(entries, piece)):
        parts.append(json.dumps(batch, ensure_ascii=ensure_ascii)[1:-1])
    return "{" + ", ".join(parts) + "}"
