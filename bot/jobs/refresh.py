"""Keep every replica's in-memory search in step with the database: re-ingest runs on one replica (leased), so the
others notice the corpus version move and bring their keyword levels and local vector index up to date (the
retriever reads only the documents whose content hash changed; see docs/operations.md, search snapshot)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class CorpusWatcher:
    """`check()` reloads when `version()` differs from the version this replica last loaded."""

    def __init__(self, version: Callable[[], Awaitable[int]], reload: Callable[[], Awaitable[object]]) -> None:
        self._version = version
        self._reload = reload
        self._loaded: int | None = None

    async def check(self) -> bool:
        """True when it reloaded. The first call only records the version the replica started with."""
        current = await self._version()
        if self._loaded is None:
            self._loaded = current
            return False
        if current == self._loaded:
            return False
        await self._reload()
        log.info("search reloaded for a new corpus version", extra={"from": self._loaded, "to": current})
        self._loaded = current
        return True
