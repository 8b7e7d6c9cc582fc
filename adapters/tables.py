"""Pipe tables in the neutral reply markup, rewritten for chats that have no tables (Slack, Discord, a terminal).

Answers quote a table as Markdown (`| a | b |` lines with a `|---|` rule under the header). Slack mrkdwn and Discord
markdown render none of it, so each renderer turns a table into what its chat shows well: one line per row naming
each column (Slack, narrow phones) or a monospace block with aligned columns (Discord, the terminal).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_RULE = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")

Table = tuple[list[str], list[list[str]]]  # header cells, body rows


def cells(line: str) -> list[str]:
    """The cells of one `| a | b |` row, trimmed (an escaped `\\|` stays inside its cell)."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(inner)]


@dataclass(frozen=True, slots=True)
class TableSegment:
    """A pipe table found in the text, with each column's alignment from its rule line (`:--`, `:-:`, `--:`)."""

    table: Table
    align: tuple[str | None, ...]  # "left" | "center" | "right" | None (not stated) per column


def split_tables(text: str) -> list[str | TableSegment]:
    """`text` as alternating runs of ordinary lines (joined back into one string each) and the pipe tables between
    them, in order; a text without tables is one string."""
    lines = text.splitlines()
    out: list[str | TableSegment] = []
    plain: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("|") and i + 1 < len(lines) and _RULE.match(lines[i + 1].strip()):
            align = tuple(_alignment(rule) for rule in cells(lines[i + 1]))
            header = cells(line)
            rows: list[list[str]] = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            if plain:
                out.append("\n".join(plain))
                plain = []
            out.append(TableSegment((header, rows), align))
            continue
        plain.append(line)
        i += 1
    if plain:
        out.append("\n".join(plain))
    return out


def _alignment(rule: str) -> str | None:
    left, right = rule.startswith(":"), rule.endswith(":")
    if left and right:
        return "center"
    return "right" if right else "left" if left else None


def rewrite_tables(text: str, render: Callable[[Table], list[str]]) -> str:
    """`text` with every pipe table (header line, rule line, rows) replaced by `render(table)`'s lines."""
    out: list[str] = []
    for segment in split_tables(text):
        out.extend(render(segment.table) if isinstance(segment, TableSegment) else [segment])
    return "\n".join(out)


def plain_cell(cell: str) -> str:
    """A cell without the inline markup a table cell of a chat cannot show (code ticks, bold stars)."""
    return _plain(cell)


def _plain(cell: str) -> str:
    return cell.replace("`", "").replace("**", "")


def aligned(table: Table, *, max_width: int = 48) -> list[str]:
    """Columns padded to the same width (long cells cut with …), header underlined: for a monospace block."""
    header, rows = table
    width = max([len(header), *(len(r) for r in rows)])
    grid = [[_plain(c) for c in r] + [""] * (width - len(r)) for r in [header, *rows]]
    grid = [[c if len(c) <= max_width else c[: max_width - 1] + "…" for c in r] for r in grid]
    sizes = [max(len(r[k]) for r in grid) for k in range(width)]
    lines = ["  ".join(c.ljust(sizes[k]) for k, c in enumerate(r)).rstrip() for r in grid]
    lines.insert(1, "  ".join("-" * s for s in sizes))
    return lines


def row_wise(table: Table) -> list[str]:
    """One `- **first cell** — column: value; column: value` line per row (header names kept with each value)."""
    header, rows = table
    out = []
    for row in rows:
        first, rest = (row[0] if row else ""), row[1:]
        pairs = [f"{header[k + 1]}: {value}" if k + 1 < len(header) and header[k + 1] else value
                 for k, value in enumerate(rest) if value and value not in ("—", "-")]  # fmt: skip
        label = f"**{first}**" if first else ""
        out.append(f"- {label} — {'; '.join(pairs)}" if pairs else f"- {label}")
    return out
