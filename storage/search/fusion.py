"""Adaptive fusion of the search levels into one score in [0, 1].

A fixed blend of keyword and embedding scores loses one of two cases: a question in another language than the docs
(its words are absent from the corpus, so keyword scores are noise) or an exact term such as an error code (which the
embedding blurs). So the keyword levels are weighted by how much of the query's vocabulary the corpus knows
(idf-weighted coverage) and, for the chunk-text level, by how sharply its best score stands out (dispersion).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# Cosine similarities of multilingual-e5-small cluster high; this band maps them onto [0, 1]
# (0.75 is about an unrelated passage, 0.90 a passage that answers the question; see bench/retrieval.py).
DENSE_FLOOR = 0.75
DENSE_CEIL = 0.90

LEVELS = ("dense", "keywords", "crumbs", "summary")


@dataclass(frozen=True, slots=True)
class LevelWeights:
    dense: float
    keywords: float
    crumbs: float
    summary: float

    def as_dict(self) -> dict[str, float]:
        return {"dense": self.dense, "keywords": self.keywords, "crumbs": self.crumbs, "summary": self.summary}


def dense_to_unit(cosine: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    unit: npt.NDArray[np.float32] = np.clip((cosine - DENSE_FLOOR) / (DENSE_CEIL - DENSE_FLOOR), 0.0, 1.0)
    return unit.astype(np.float32)


def dispersion(scores: npt.NDArray[np.float32], *, window: int = 10) -> float:
    """How far the best score stands above the next ones, in [0, 1] (1: a single clear match)."""
    if scores.size == 0:
        return 0.0
    k = min(window, scores.size)
    top = np.sort(np.partition(scores, scores.size - k)[-k:])[::-1]
    if top[0] <= 0:
        return 0.0
    rest = top[1:]
    return float((top[0] - (rest.mean() if rest.size else 0.0)) / top[0])


def adaptive_weights(coverage: float, keyword_dispersion: float, *, dense_available: bool = True) -> LevelWeights:
    """Keyword levels count in proportion to coverage² (an out-of-vocabulary query silences them)."""
    trust = coverage * coverage
    return LevelWeights(
        dense=1.0 if dense_available else 0.0,
        keywords=trust * (0.5 + keyword_dispersion),
        crumbs=0.35 * trust,
        summary=0.2 * trust,
    )


def fuse(levels: dict[str, npt.NDArray[np.float32]], weights: LevelWeights) -> npt.NDArray[np.float32]:
    """Weighted mean of per-level scores already mapped onto [0, 1]."""
    w = weights.as_dict()
    total = sum(w[name] for name in levels)
    if total <= 0:
        size = next(iter(levels.values())).size if levels else 0
        return np.zeros(size, dtype=np.float32)
    out = np.zeros_like(next(iter(levels.values())), dtype=np.float32)
    for name, values in levels.items():
        out += np.float32(w[name] / total) * values
    return out
