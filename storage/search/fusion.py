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

# Cosine similarities of multilingual-e5-small cluster high; a band maps them onto [0, 1]. On the fixture manual
# (bench/retrieval.py) a passage answering an English question scores 0.83-0.92 and the best passage for an
# off-topic question 0.73-0.85; a question in another language than the docs scores about 0.04 lower on both sides,
# so its band is shifted down to keep fused scores (and the quality grade) comparable across languages.
DENSE_BAND = (0.75, 0.90)
CROSS_LANGUAGE_DENSE_BAND = (0.71, 0.86)

LEVELS = ("dense", "keywords", "crumbs", "summary")


@dataclass(frozen=True, slots=True)
class LevelWeights:
    dense: float
    keywords: float
    crumbs: float
    summary: float

    def as_dict(self) -> dict[str, float]:
        return {"dense": self.dense, "keywords": self.keywords, "crumbs": self.crumbs, "summary": self.summary}


def dense_to_unit(cosine: npt.NDArray[np.float32], *, cross_language: bool = False) -> npt.NDArray[np.float32]:
    floor, ceil = CROSS_LANGUAGE_DENSE_BAND if cross_language else DENSE_BAND
    unit: npt.NDArray[np.float32] = np.clip((cosine - floor) / (ceil - floor), 0.0, 1.0)
    return unit.astype(np.float32)


def is_cross_language(
    language: str | None, docs_language: str, *, stopword_share: float, coverage: float
) -> bool:
    """Whether the question is in another language than the docs: the detected language when the pipeline knows it,
    else a cheap guess (hardly any English function words and little of the corpus vocabulary)."""
    if language:
        return language.split("-")[0].lower() != docs_language.split("-")[0].lower()
    return docs_language.startswith("en") and stopword_share < 0.15 and coverage < 0.5


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
