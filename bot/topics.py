"""The docs' top sections, for the prompts suggested when someone opens docbot's Messages tab in Slack.

The top sections are the first level of the breadcrumb hierarchy at which the documents differ (a manual whose every
page starts with the manual's name is described by its chapters), ranked by how many sections (chunks) each holds, so
the biggest topics come first. One query per collection set, cached for `ttl_s`: a tab opened again costs nothing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence

from sqlalchemy import func, select

from storage.db import Database
from storage.doc_tables import ChunkRow, DocumentRow

MAX_DEPTH = 3  # look at most this deep for the level where the documents differ


class DocsTopics:
    """`await topics(collections, limit)`: up to `limit` top-section labels of the collections' documents."""

    def __init__(self, db: Database, *, ttl_s: float = 600.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._db = db
        self._ttl_s = ttl_s
        self._clock = clock
        self._cache: dict[tuple[str, ...], tuple[float, list[str]]] = {}

    async def __call__(self, collections: Sequence[str], limit: int) -> list[str]:
        key = tuple(sorted(collections))
        cached = self._cache.get(key)
        if cached is not None and self._clock() - cached[0] < self._ttl_s:
            return cached[1][:limit]
        labels = top_sections(await self._documents(key))
        self._cache[key] = (self._clock(), labels)
        return labels[:limit]

    async def _documents(self, collections: tuple[str, ...]) -> list[tuple[list[str], int]]:
        """(breadcrumb path with the title last, number of sections) per document."""
        query = (
            select(DocumentRow.title, DocumentRow.crumbs, func.count(ChunkRow.id))
            .join(ChunkRow, ChunkRow.doc_id == DocumentRow.id)
            .where(DocumentRow.collection.in_(collections))
            .group_by(DocumentRow.id, DocumentRow.title, DocumentRow.crumbs)
        )
        async with self._db.session() as session:
            rows = (await session.execute(query)).all()
        documents = []
        for title, crumbs, sections in rows:
            path = [str(c) for c in (crumbs or []) if str(c).strip()]
            if title and (not path or path[-1] != title):
                path.append(str(title))
            if path:
                documents.append((path, int(sections)))
        return documents


def top_sections(documents: Sequence[tuple[list[str], int]]) -> list[str]:
    """The labels of the first breadcrumb level at which the documents differ, biggest first (ties by name)."""
    for depth in range(MAX_DEPTH):
        weights: Counter[str] = Counter()
        for path, sections in documents:
            weights[path[min(depth, len(path) - 1)]] += sections
        if len(weights) > 1 or depth == MAX_DEPTH - 1:
            return [label for label, _ in sorted(weights.items(), key=lambda item: (-item[1], item[0]))]
    return []
