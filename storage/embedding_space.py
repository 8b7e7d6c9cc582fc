"""Which embedder made the stored vectors: every embedding row records its model and dimension, and a process
whose embedder differs refuses to serve (`EmbeddingSpaceMismatch`) instead of comparing vectors of two spaces.

The full check reads every embedding row (~0.15 s at 100k chunks), so its result is remembered in a small file
next to the search snapshot, keyed by the corpus versions: vectors change only by an ingest, which moves them.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from sqlalchemy import func, select

from storage.doc_tables import CorpusVersionRow, EmbeddingRow, SessionFactory
from storage.errors import EmbeddingSpaceMismatch

log = logging.getLogger(__name__)

Space = tuple[str, int, int]  # model, dimension, vectors


async def stored_spaces(db: SessionFactory) -> tuple[Space, ...]:
    """Every (model, dimension) among the stored vectors, with how many vectors each has, most first."""
    async with db.session() as session:
        rows = await session.execute(
            select(EmbeddingRow.model, EmbeddingRow.dim, func.count()).group_by(EmbeddingRow.model, EmbeddingRow.dim)
        )
        spaces = [(str(model), int(dim), int(count)) for model, dim, count in rows.all()]
    return tuple(sorted(spaces, key=lambda s: -s[2]))


async def _versions(db: SessionFactory) -> list[list[object]]:
    async with db.session() as session:
        rows = await session.execute(
            select(CorpusVersionRow.collection, CorpusVersionRow.version).order_by(CorpusVersionRow.collection)
        )
        return [[collection, version] for collection, version in rows.all()]


async def check_space(db: SessionFactory, model: str, dim: int, *, remember_in: Path | None = None) -> None:
    """Raise `EmbeddingSpaceMismatch` when any stored vector was made by another model or has another dimension.
    With `remember_in`, a check already passed for the same corpus versions is not repeated."""
    versions = await _versions(db)
    memo = remember_in / "space.json" if remember_in is not None else None
    wanted = {"model": model, "dim": dim, "versions": versions}
    if memo is not None:
        try:
            if json.loads(memo.read_text(encoding="utf-8")) == wanted:
                return
        except (OSError, ValueError):
            pass
    others = tuple(s for s in await stored_spaces(db) if (s[0], s[1]) != (model, dim))
    if others:
        raise EmbeddingSpaceMismatch((model, dim), others)
    if memo is not None:
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            memo.write_text(json.dumps(wanted), encoding="utf-8")
        except OSError as exc:
            log.warning("embedding space check not remembered", extra={"error": type(exc).__name__})
