"""The vector-index boundary: the local in-memory index (default) and Pinecone implement it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pipeline.types import Vector


@dataclass(frozen=True, slots=True)
class VectorRecord:
    id: str  # chunk id
    vector: Vector
    doc_id: str
    section: str
    title: str
    crumbs: tuple[str, ...]
    url: str
    collection: str = "default"


@dataclass(frozen=True, slots=True)
class VectorMatch:
    id: str  # chunk id
    score: float  # cosine similarity


class VectorIndex(Protocol):
    """Collections are enforced inside the query (a filter or namespace), never after it."""

    @property
    def name(self) -> str: ...

    async def upsert(self, records: Sequence[VectorRecord]) -> None: ...

    async def delete(self, ids: Sequence[str], collection: str) -> None: ...

    async def query(self, vector: Vector, *, top_k: int, collections: Sequence[str]) -> list[VectorMatch]: ...

    async def count(self) -> int: ...


class VectorIndexUnavailable(Exception):
    """The vector index could not answer within its deadline (timeout, rate limit, server error, auth).

    Search catches this and answers from the keyword side with a note; nothing else should be lost.
    `reason` is one of `timeout`, `rate_limited`, `server_error`, `auth`, `connection`, `rejected`, `not_found`.
    """

    def __init__(self, index: str, operation: str, reason: str, *, attempts: int = 0, detail: str = "") -> None:
        self.index = index
        self.operation = operation
        self.reason = reason
        self.attempts = attempts
        self.detail = detail
        text = f"vector index {index!r} unavailable for {operation}: {reason} after {attempts} attempt(s)"
        super().__init__(f"{text}: {detail}" if detail else text)
