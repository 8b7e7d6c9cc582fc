"""The default vector index: a float32 matrix, restored at start from a snapshot file (memory-mapped, copy on
write) or loaded from the embeddings table, and updated in place when documents change."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from pipeline.types import Vector
from storage.doc_tables import ChunkRow, EmbeddingRow, SessionFactory
from storage.json_pieces import dumps_list
from storage.vector_index import VectorMatch, VectorRecord


class LocalVectorIndex:
    """Exact cosine search (vectors are L2-normalised) with the collection filter applied before top-k."""

    def __init__(self, dim: int = 384, *, initial_capacity: int = 1024) -> None:
        self._dim = dim
        self._matrix: npt.NDArray[np.float32] = np.zeros((initial_capacity, dim), dtype=np.float32)
        self._collection_codes: npt.NDArray[np.int32] = np.full(initial_capacity, -1, dtype=np.int32)
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._codes: dict[str, int] = {}
        self._lock = asyncio.Lock()

    @property
    def name(self) -> str:
        return "local"

    @property
    def dim(self) -> int:
        return self._dim

    async def load(self, db: SessionFactory) -> int:
        """Fill the index from the embeddings table; returns the number of vectors loaded."""
        async with db.session() as session:
            rows = await session.execute(
                select(EmbeddingRow.chunk_id, ChunkRow.collection, EmbeddingRow.vector)
                .join(ChunkRow, ChunkRow.id == EmbeddingRow.chunk_id)
                .where(EmbeddingRow.dim == self._dim)
            )
            loaded = rows.all()
        ids = [r[0] for r in loaded]
        collections = [r[1] for r in loaded]
        matrix = (
            np.frombuffer(b"".join(r[2] for r in loaded), dtype=np.float32).reshape(len(loaded), self._dim)
            if loaded
            else np.zeros((0, self._dim), dtype=np.float32)
        )
        async with self._lock:
            self._ids, self._rows = [], {}
            self._put(ids, collections, matrix)
        return len(ids)

    # ---- snapshots (see storage.search.retriever) --------------------------------------------------------------

    async def save(self, folder: Path) -> None:
        """Write the vectors into `folder` (in a worker thread; writers wait, searches do not)."""
        async with self._lock:
            await asyncio.to_thread(self._save, folder)

    def _save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        n = len(self._ids)
        names = {code: name for name, code in self._codes.items()}
        np.save(folder / "vectors.npy", np.ascontiguousarray(self._matrix[:n]))
        collections = [names[int(c)] for c in self._collection_codes[:n]]
        meta = f'{{"dim": {int(self._dim)}, "ids": {dumps_list(self._ids)}, "collections": {dumps_list(collections)}}}'
        (folder / "vector_ids.json").write_text(meta)

    def restore(self, folder: Path) -> bool:
        """Take the vectors saved in `folder` if this index is empty and the dimension matches (blocking: a memory
        map and a small JSON file). The matrix is mapped copy-on-write: replicas on one host share its pages."""
        meta_file, matrix_file = folder / "vector_ids.json", folder / "vectors.npy"
        if self._ids or not meta_file.is_file() or not matrix_file.is_file():
            return False
        meta = json.loads(meta_file.read_text())
        matrix = np.load(matrix_file, mmap_mode="c")
        if meta.get("dim") != self._dim or matrix.shape != (len(meta["ids"]), self._dim):
            return False
        self._matrix = matrix
        self._collection_codes = np.array([self._code(c) for c in meta["collections"]], dtype=np.int32)
        self._ids = list(meta["ids"])
        self._rows = {chunk_id: i for i, chunk_id in enumerate(self._ids)}
        return True

    async def replace(self, remove: Sequence[str], records: Sequence[VectorRecord]) -> None:
        """Drop `remove`, then put `records`, with no search seeing the state in between; room for the new rows is
        made in a worker thread (a copy of the whole matrix at 100k chunks would stall the loop)."""
        async with self._lock:
            await self._reserve(len(self._ids) + len(records))
            self._remove(remove)
            if records:
                vectors = np.vstack([r.vector for r in records]).astype(np.float32, copy=False)
                self._put([r.id for r in records], [r.collection for r in records], vectors)

    def keep_only(self, ids: set[str]) -> int:
        """Drop vectors whose chunk is not in `ids` (after a restore); returns how many went."""
        stale = [i for i in self._ids if i not in ids]
        self._remove(stale)
        return len(stale)

    def _code(self, collection: str) -> int:
        if collection not in self._codes:
            self._codes[collection] = len(self._codes)
        return self._codes[collection]

    def _grow(self, needed: int) -> None:
        capacity = self._matrix.shape[0]
        if needed <= capacity:
            return
        new_capacity = max(needed, capacity * 2)
        matrix = np.zeros((new_capacity, self._dim), dtype=np.float32)
        matrix[: len(self._ids)] = self._matrix[: len(self._ids)]
        codes = np.full(new_capacity, -1, dtype=np.int32)
        codes[: len(self._ids)] = self._collection_codes[: len(self._ids)]
        self._matrix, self._collection_codes = matrix, codes

    def _put(self, ids: Sequence[str], collections: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        fresh = [i for i in dict.fromkeys(ids) if i not in self._rows]
        self._grow(len(self._ids) + len(fresh))
        for chunk_id in fresh:
            self._rows[chunk_id] = len(self._ids)
            self._ids.append(chunk_id)
        rows = np.fromiter((self._rows[i] for i in ids), dtype=np.int64, count=len(ids))
        self._matrix[rows] = vectors
        self._collection_codes[rows] = [self._code(c) for c in collections]

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        if not records:
            return
        for record in records:
            if record.vector.shape != (self._dim,):
                raise ValueError(f"vector of {record.id} has shape {record.vector.shape}, index dim is {self._dim}")
        vectors = np.vstack([r.vector for r in records]).astype(np.float32, copy=False)
        async with self._lock:
            await self._reserve(len(self._ids) + len(records))
            self._put([r.id for r in records], [r.collection for r in records], vectors)

    async def _reserve(self, needed: int) -> None:
        """Grow the matrix in a worker thread (searches keep reading the old one until the swap)."""
        if needed > self._matrix.shape[0]:
            await asyncio.to_thread(self._grow, needed)

    async def delete(self, ids: Sequence[str], collection: str) -> None:
        async with self._lock:
            code = self._codes.get(collection)
            self._remove([i for i in ids if i in self._rows and self._collection_codes[self._rows[i]] == code])

    def _remove(self, ids: Sequence[str]) -> None:
        """Remove vectors by swapping the last row into each freed slot."""
        if ids and not self._matrix.flags.writeable:
            self._matrix = np.array(self._matrix)
        for chunk_id in ids:
            row = self._rows.get(chunk_id)
            if row is None:
                continue
            last = len(self._ids) - 1
            last_id = self._ids[last]
            self._matrix[row] = self._matrix[last]
            self._collection_codes[row] = self._collection_codes[last]
            self._ids[row] = last_id
            self._rows[last_id] = row
            self._ids.pop()
            del self._rows[chunk_id]
            self._collection_codes[last] = -1

    async def query(self, vector: Vector, *, top_k: int, collections: Sequence[str]) -> list[VectorMatch]:
        """In a worker thread: a product over the whole matrix takes milliseconds at 100k chunks."""
        return await asyncio.to_thread(self.query_sync, vector, top_k=top_k, collections=collections)

    def query_sync(self, vector: Vector, *, top_k: int, collections: Sequence[str]) -> list[VectorMatch]:
        """The search itself (a few ms at 100k vectors)."""
        n = len(self._ids)
        codes = [self._codes[c] for c in collections if c in self._codes]
        if n == 0 or not codes or top_k <= 0:
            return []
        scores = self._matrix[:n] @ np.asarray(vector, dtype=np.float32)
        if len(codes) < len(self._codes):
            present = self._collection_codes[:n]
            allowed = present == codes[0] if len(codes) == 1 else np.isin(present, codes)
            scores[~allowed] = -np.inf
            available = int(np.count_nonzero(allowed))
        else:
            available = n
        k = min(top_k, available)
        if k == 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        top = top[np.argsort(-scores[top], kind="stable")]
        return [VectorMatch(id=self._ids[i], score=float(scores[i])) for i in top if np.isfinite(scores[i])][:k]

    def scores_for(self, vector: Vector, ids: Sequence[str]) -> dict[str, float]:
        """Cosine scores of given chunks (for fusion candidates found by other levels)."""
        found = [self._rows.get(i) for i in ids]
        rows = [r for r in found if r is not None]
        if not rows:
            return {}
        values = self._matrix[rows] @ np.asarray(vector, dtype=np.float32)
        return {self._ids[r]: float(v) for r, v in zip(rows, values, strict=True)}

    async def count(self) -> int:
        return len(self._ids)
