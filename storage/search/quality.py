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


# Fitted by `python -m bench.retrieval --calibrate` on the fixture manual (tests/fixtures/manual) with
# multilingual-e5-small and the fusion of storage/search/fusion.py: 80 answerable questions (bench/data/fixture_qa_en,
# exact_en, crosslang_{ru,es,de,zh}) against 20 off-topic ones (bench/data/offtopic: 12 English, 8 in ru/es/de/zh).
# Poor cut: 72/80 answerable above, 18/20 off-topic below (balanced accuracy 0.90; the two misses are near-domain
# questions such as "reset my bank account password"). Top-1 precision at or above the excellent cut: >= 0.90.
# Check on the public e-manual QA (50 answerable English questions, another corpus): 0 poor, 22 good, 28 excellent.
# Refit when the embedder, the fusion weights or the kind of corpus change.
FITTED = QualityThresholds(good_score=0.599, excellent_score=0.638, excellent_margin=0.05)


def grade(top_score: float, margin: float, thresholds: QualityThresholds = FITTED) -> SearchQuality:
    if top_score < thresholds.good_score:
        return SearchQuality.POOR
    if top_score >= thresholds.excellent_score and margin >= thresholds.excellent_margin:
        return SearchQuality.EXCELLENT
    return SearchQuality.GOOD
