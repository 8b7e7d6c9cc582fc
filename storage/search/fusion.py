"""Adaptive fusion of the search levels into one score in [0, 1].

Across languages (`python -m bench.crosslang`, 56 e-manual questions translated to ru/es/de/zh/fr, tuned on one
half and reported on the other): the keyword level finds little (hit@1 0.00-0.21), and the question/passage cosine
alone got hit@1 0.32-0.43 on the held-out half where the English originals got 0.86. Raising it toward the cosine
between the question and the section's title path (`with_titles`), then toward the best cosine between the question
and one of the chunk's sentences (`with_units`), lifts it; the figures are in docs/benchmarks.md.

A fixed blend of keyword and embedding scores loses one of two cases: a question in another language than the docs
(its words are absent from the corpus, so keyword scores are noise) or an exact term such as an error code (which the
embedding blurs). So the keyword level is weighted by how much of the query's vocabulary the corpus knows
(idf-weighted coverage; squared for a question in another language, whose few shared words are names and codes)
and by how sharply its best score stands out (dispersion).

Measured with `python -m bench.retrieval` (hit@1 / MRR): on the public e-manual QA (50 English questions, 259 sections)
this matches a fixed dense+BM25 blend (0.72 / 0.82; BM25 alone 0.64 / 0.75, dense alone 0.58 / 0.72), and on the fixture
manual's ru/es/de/zh questions it matches dense alone (0.82 / 0.90) where the fixed blend drops to 0.72 / 0.84. The
keyword level of the candidates also counts pairs of the question's terms that a chunk has side by side (`with_phrases`:
"sleep timer", "picture in picture"); on the e-manual's 665 questions that raised the gold section at rank 1 on both
halves (docs/benchmarks.md, stop 48). The crumbs/title and summary levels are computed, reported and used to gather
candidates, but weigh nothing by default: every weight tried (0.05-0.5) lowered e-manual hit@1 (to 0.64-0.68) and
changed nothing on the fixture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from storage.search.keyword import KeywordLevel

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


# The title level, for a question in another language than the docs: each section's crumbs/title path embedded on
# its own. A short question and a short title match across languages far better than a question and a long passage
# (see the module docstring for the figures). Monolingual questions do without it: their keywords already match the
# titles, and on the e-manual's 426 English questions it (as a plain mean) lowered hit@5 from 0.948 to 0.913. (As
# these raises, titles and units together lifted English on three sets; docs/benchmarks.md says why that waits.)
# Weight 2 (2/3 of the way up) was chosen on the tune half together with the unit level's.
TITLE_WEIGHT = 2.0
# More distinct title paths than this and the level is skipped: they are embedded in the background after the
# retriever loads (new ones on reload) and kept beside the search snapshot, at 4.9 titles/s measured on 2 cores at
# load average 23 (faster on an idle box).
MAX_TITLES = 1000
TITLE_BATCH = 16  # titles (and units) embedded per call: a question's own embedding waits for one batch at most
# The unit level, for a question in another language than the docs: every sentence of a chunk embedded on its own
# (`storage.search.units`), the chunk scored by its best one. Applied after the title level, with the same rule.
UNIT_WEIGHT = 2.0
# For a question in the docs' language the same level orders the sections (a question about one sentence or one
# table row of a long chunk lines up with it better than with the chunk) without raising the score the search is
# graded by. Weight chosen on the tune halves of the e-manual, shoppers' and docbot-newcomer questions among 0.5, 1
# and 2 (docs/benchmarks.md).
ORDER_UNIT_WEIGHT = 1.0
# More units than this and the level is skipped: the e-manual's 343 chunks give 2,090 units, embedded in the
# background (see docs/benchmarks.md for the time it takes).
MAX_UNITS = 5000


# For a question in another language than the docs, a chunk of few words (a title and a menu path: "Running the
# accessibility functions / Settings General Accessibility") embeds near every question and was ranked first for many;
# its cosine is lowered by up to `SHORT_TEXT_PENALTY`, in proportion to how far it falls short of `SHORT_TEXT_TOKENS`
# keyword tokens (title included). Both chosen on the tune halves (docs/benchmarks.md, stop 40).
SHORT_TEXT_TOKENS = 25
SHORT_TEXT_PENALTY = 0.03


# how much a pair of the question's terms found adjacent in a text adds to its keyword score, per unit of the idf of
# the pair's rarer term (on top of the terms' own BM25 scores): chosen on the tune half of the e-manual's questions
PHRASE_WEIGHT = 0.5


def with_phrases(
    level: KeywordLevel, tokens: Sequence[str], scores: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    """`scores` (`level`'s BM25 scores of `tokens`) with `PHRASE_WEIGHT` times the phrase scores of the texts `rows`
    added (`KeywordLevel.phrase_scores`): of the candidates, a text that names the question's "sleep timer" ranks
    above one with "sleep" and "timer" apart."""
    raised = scores.copy()
    raised[rows] += np.float32(PHRASE_WEIGHT) * level.phrase_scores(tokens, rows)
    return raised


def short_text_lowered(cosine: npt.NDArray[np.float32], tokens: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """`cosine` lowered for chunks of fewer than `SHORT_TEXT_TOKENS` tokens: by `SHORT_TEXT_PENALTY` for an empty
    one, by nothing from that many tokens on."""
    shortfall = np.clip(1.0 - tokens / SHORT_TEXT_TOKENS, 0.0, 1.0)
    lowered: npt.NDArray[np.float32] = (cosine - SHORT_TEXT_PENALTY * shortfall).astype(np.float32)
    return lowered


def title_path(crumbs: tuple[str, ...], title: str) -> str:
    parts = crumbs if title in crumbs else (*crumbs, title)
    return " > ".join(p for p in parts if p)


def raised_toward(
    cosine: npt.NDArray[np.float32], other: npt.NDArray[np.float32] | None, weight: float
) -> npt.NDArray[np.float32]:
    """`cosine` raised toward `other` where that is higher, by w / (1 + w) of the difference; never lowered."""
    if other is None or weight <= 0:
        return cosine
    raised: npt.NDArray[np.float32] = cosine + np.float32(weight / (1.0 + weight)) * np.maximum(0.0, other - cosine)
    return raised.astype(np.float32)


def with_titles(
    cosine: npt.NDArray[np.float32], title_cosine: npt.NDArray[np.float32] | None, weight: float | None = None
) -> npt.NDArray[np.float32]:
    """The dense level's cosine, raised toward its title path's cosine where that is higher (never lowered: a plain
    mean of the two lost 2 of 10 Spanish questions on the fixture manual)."""
    return raised_toward(cosine, title_cosine, TITLE_WEIGHT if weight is None else weight)


def with_units(
    cosine: npt.NDArray[np.float32], unit_cosine: npt.NDArray[np.float32] | None, weight: float | None = None
) -> npt.NDArray[np.float32]:
    """The dense level's cosine, raised toward the cosine of the chunk's best unit where that is higher."""
    return raised_toward(cosine, unit_cosine, UNIT_WEIGHT if weight is None else weight)


def dense_to_unit(cosine: npt.NDArray[np.float32], *, cross_language: bool = False) -> npt.NDArray[np.float32]:
    floor, ceil = CROSS_LANGUAGE_DENSE_BAND if cross_language else DENSE_BAND
    unit: npt.NDArray[np.float32] = np.clip((cosine - floor) / (ceil - floor), 0.0, 1.0)
    return unit.astype(np.float32)


def is_cross_language(language: str | None, docs_language: str, *, stopword_share: float, coverage: float) -> bool:
    """Whether the question is in another language than the docs: the detected language when the pipeline knows it,
    else a cheap guess (hardly any English function words and little of the corpus vocabulary).

    The user's language is not always the text's: in LLM mode the search runs on the model's English canonical
    question while the request still carries the user's language. So English docs and a text that reads as English
    (English function words and most of its vocabulary in the corpus) are monolingual whatever the language says.
    None of the 320 translated questions of bench/data reads as English by that rule; 83 of the 86 English ones do."""
    english_docs = docs_language.split("-")[0].lower() == "en"
    reads_english = stopword_share >= 0.15 and coverage >= 0.5
    if language:
        other = language.split("-")[0].lower() != docs_language.split("-")[0].lower()
        return other and not (english_docs and reads_english)
    return english_docs and stopword_share < 0.15 and coverage < 0.5


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


CRUMBS_WEIGHT = 0.0  # see the module docstring
SUMMARY_WEIGHT = 0.0


def adaptive_weights(
    coverage: float, keyword_dispersion: float, *, cross_language: bool = False, dense_available: bool = True
) -> LevelWeights:
    """Keyword levels count in proportion to coverage (coverage² across languages); an out-of-vocabulary query
    silences them. Without the dense level (index down) keywords carry the ranking alone."""
    trust = coverage * coverage if cross_language else coverage
    return LevelWeights(
        dense=1.0 if dense_available else 0.0,
        keywords=trust * (0.5 + keyword_dispersion),
        crumbs=CRUMBS_WEIGHT * trust,
        summary=SUMMARY_WEIGHT * trust,
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
