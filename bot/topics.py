"""The docs' top sections, for the prompts suggested when someone opens docbot's Messages tab in Slack.

The top sections are the first level of the breadcrumb hierarchy at which the documents differ (a manual whose every
page starts with the manual's name is described by its chapters), ranked by how many sections (chunks) each holds, so
the biggest topics come first. One query per collection set, cached for `ttl_s`: a tab opened again costs nothing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence

from storage.db import Database
from storage.health import documents_with_sections

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
        labels = top_sections(await documents_with_sections(self._db, key))
        self._cache[key] = (self._clock(), labels)
        return labels[:limit]


def top_sections(documents: Sequence[tuple[list[str], int]]) -> list[str]:
    """The labels of the first breadcrumb level at which the documents differ, biggest first (ties by name)."""
    for depth in range(MAX_DEPTH):
        weights: Counter[str] = Counter()
        for path, sections in documents:
            weights[path[min(depth, len(path) - 1)]] += sections
        if len(weights) > 1 or depth == MAX_DEPTH - 1:
            return [label for label, _ in sorted(weights.items(), key=lambda item: (-item[1], item[0]))]
    return []
