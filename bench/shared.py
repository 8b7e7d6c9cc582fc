"""What several benchmarks share: where the shared data sets live and the embedders (the quality sections' one keeps
its vectors on disk). Kept apart from `bench/__main__.py` so that the sections importing them form no import circle
with it."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.types import Embedder

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DEFAULT_DATA = Path(os.environ.get("DOCBOT_SHARED_DATA", REPO.parent / "shared" / "data"))  # as tests/conftest.py
EMBEDDING_CACHE = BENCH / ".cache" / "embeddings"  # gitignored


def make_embedder(kind: str) -> Embedder:
    from storage.embedder import E5Embedder, HashingEmbedder

    if kind == "hashing":
        return HashingEmbedder()
    return E5Embedder()


def cached_embedder(kind: str) -> Embedder:
    """The embedder with its vectors kept under bench/.cache/, for the quality sections (never the timed ones)."""
    from bench.retrieval import DiskCachedEmbedder

    if kind == "hashing":  # fast and only for smoke tests: nothing worth keeping
        return make_embedder(kind)
    return DiskCachedEmbedder(make_embedder(kind), EMBEDDING_CACHE)
