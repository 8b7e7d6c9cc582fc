"""One BM25 keyword level over a list of texts (bm25s), with the vocabulary kept for query-coverage estimates."""

from __future__ import annotations

import math
from collections.abc import Sequence

import bm25s
import numpy as np
import numpy.typing as npt

from storage.search.tokenize import tokenize


class KeywordLevel:
    """Built once (blocking; run it in a thread), then queried for a score per text."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.size = len(texts)
        tokenized = [tokenize(t) or [""] for t in texts]
        self._bm25: bm25s.BM25 | None = None
        self._df: dict[str, int] = {}
        for tokens in tokenized:
            for token in set(tokens):
                if token:
                    self._df[token] = self._df.get(token, 0) + 1
        if texts:
            self._bm25 = bm25s.BM25()
            self._bm25.index(tokenized, show_progress=False)

    def idf(self, token: str) -> float:
        """Smoothed inverse document frequency; unseen tokens get the value of a one-document term."""
        df = self._df.get(token, 0)
        return math.log(1 + (self.size - max(df, 1) + 0.5) / (max(df, 1) + 0.5))

    def coverage(self, tokens: Sequence[str]) -> float:
        """Share of the query's (idf-weighted) terms that occur in this corpus: ~1 for an in-vocabulary question,
        ~0 for one in another language or script."""
        if not tokens:
            return 0.0
        total = sum(self.idf(t) for t in tokens)
        found = sum(self.idf(t) for t in tokens if t in self._df)
        return found / total if total else 0.0

    def scores(self, tokens: Sequence[str]) -> npt.NDArray[np.float32]:
        known = [t for t in tokens if t in self._df]
        if self._bm25 is None or not known:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)
