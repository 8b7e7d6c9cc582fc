"""Grading a search as excellent / good / poor from the fused top score and its margin over the runner-up.

The thresholds are fitted, not guessed: `bench/retrieval.py --calibrate` runs labelled questions (answerable ones
with a known gold section, and off-topic ones the docs cannot answer) through the retriever and picks, by a grid
search, the `poor` cut that best separates answerable from off-topic (balanced accuracy) and the `excellent` cut
at which the top hit is the gold section for at least 90% of the questions above it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.types import SearchQuality


@dataclass(frozen=True, slots=True)
class QualityThresholds:
    good_score: float  # below: poor
    excellent_score: float  # at or above (with the margin): excellent
    excellent_margin: float


# Fitted by `python -m bench.retrieval --calibrate` (see the module docstring); values and data in bench/data/.
FITTED = QualityThresholds(good_score=0.45, excellent_score=0.75, excellent_margin=0.05)


def grade(top_score: float, margin: float, thresholds: QualityThresholds = FITTED) -> SearchQuality:
    if top_score < thresholds.good_score:
        return SearchQuality.POOR
    if top_score >= thresholds.excellent_score and margin >= thresholds.excellent_margin:
        return SearchQuality.EXCELLENT
    return SearchQuality.GOOD
