"""An embedder whose passage calls can be held up: the background title and unit levels then wait on it, so a test
can see whether closing stops them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from storage.embedder import HashingEmbedder


class HeldPassages(HashingEmbedder):
    """The hashing embedder's queries; a passage call waits for a release that never comes and records that it was
    cancelled (`cancelled`). `held` is set once a call waits."""

    def __init__(self) -> None:
        super().__init__()
        self.held = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.held.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("never released")
