"""Storage failures: a shallow tree whose exceptions carry fields. URLs in them are always password-masked."""

from __future__ import annotations

from enum import StrEnum


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


class EmbeddingFailure(StrEnum):
    """Why an embeddings endpoint gave no usable vectors (typed: callers branch on it, never on the message)."""

    BREAKER_OPEN = "breaker open"  # skipped without a request: the endpoint failed repeatedly just now
    UNREACHABLE = "unreachable"  # connection refused or reset
    TIMEOUT = "timeout"  # an attempt or the whole call ran out of time
    RATE_LIMITED = "rate limited"  # 429 after the SDK's retries
    SERVER_ERROR = "server error"  # 5xx after the SDK's retries
    REJECTED = "rejected"  # 4xx: key, model name or request refused
    WRONG_DIMENSION = "wrong dimension"  # vectors of another size than the index's
    MALFORMED = "malformed"  # not the embeddings wire format


class EmbeddingUnavailable(StorageError):
    """The embeddings endpoint could not embed these texts. `failure` is typed; `detail` is operator-facing
    (status code, host, sizes; never the texts)."""

    def __init__(self, failure: EmbeddingFailure, detail: str) -> None:
        super().__init__(f"embeddings endpoint {failure.value}: {detail}")
        self.failure = failure
        self.detail = detail


class EmbeddingSpaceMismatch(StorageError):
    """The stored vectors were made by another embedder (model or dimension) than the configured one: searching
    them with this embedder's queries would compare different vector spaces."""

    def __init__(self, configured: tuple[str, int], stored: tuple[tuple[str, int, int], ...]) -> None:
        others = ", ".join(f"{count} vectors of {model!r} ({dim} dimensions)" for model, dim, count in stored)
        super().__init__(
            f"the index holds {others}, but the configured embedder is {configured[0]!r} ({configured[1]} dimensions). "
            "Set the embedder back (DOCBOT_EMBEDDINGS_* settings), or re-ingest every source with `docbot ingest` "
            "(documents embedded by another model are re-embedded) before serving."
        )
        self.configured = configured
        self.stored = stored
