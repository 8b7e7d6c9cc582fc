"""Ingestion failures that stop an input as a whole (one bad file is only skipped, with a warning)."""

from __future__ import annotations

from storage.errors import StorageError


class IngestError(StorageError):
    """An ingest input cannot be used: a missing path, a folder without readable files, an unreachable URL."""

    def __init__(self, message: str, *, source: str, reason: str) -> None:
        super().__init__(message)
        self.source = source
        self.reason = reason
