"""Storage failures: a shallow tree whose exceptions carry fields. URLs in them are always password-masked."""

from __future__ import annotations


class StorageError(Exception):
    """Base of every storage failure."""


class StorageUnavailable(StorageError):
    """The database cannot be opened or reached (bad path, unwritable folder, server down, invalid URL)."""

    def __init__(self, url_masked: str, reason: str) -> None:
        super().__init__(f"database {url_masked} is unavailable: {reason}")
        self.url_masked = url_masked
        self.reason = reason


class MigrationFailed(StorageError):
    """Bringing the schema up to date failed for a reason other than reaching the database."""

    def __init__(self, url_masked: str, reason: str) -> None:
        super().__init__(f"migrating database {url_masked} failed: {reason}")
        self.url_masked = url_masked
        self.reason = reason


class RecordNotFound(StorageError):
    """An operation named a row that does not exist."""

    def __init__(self, entity: str, key: str) -> None:
        super().__init__(f"{entity} {key!r} not found")
        self.entity = entity
        self.key = key
