"""Re-ingest the configured documentation sources (docs freshness). Unchanged documents cost nothing: ingestion is
incremental by content hash."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

IngestSource = Callable[[str], Awaitable[object]]  # e.g. `lambda source: ingestor.ingest([source])`


@dataclass(frozen=True, slots=True)
class ReingestReport:
    refreshed: tuple[str, ...] = ()
    failed: tuple[tuple[str, str], ...] = field(default=())  # (source, error type)


async def reingest_sources(ingest: IngestSource, sources: Sequence[str]) -> ReingestReport:
    """Ingest each source in turn; one unreachable source does not stop the others."""
    refreshed: list[str] = []
    failed: list[tuple[str, str]] = []
    for source in sources:
        try:
            await ingest(source)
        except Exception as exc:
            log.warning("re-ingest failed", extra={"source": source, "error": type(exc).__name__})
            failed.append((source, type(exc).__name__))
        else:
            refreshed.append(source)
    log.info("re-ingest done", extra={"refreshed": len(refreshed), "failed": len(failed)})
    return ReingestReport(tuple(refreshed), tuple(failed))
