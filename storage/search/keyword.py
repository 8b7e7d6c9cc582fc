"""One BM25 keyword level over a list of texts (bm25s), with the vocabulary kept for query-coverage estimates.

A level keeps its texts' token ids (`TokenTable`) next to the BM25 matrix, so an update re-tokenises only the
texts that changed and re-indexes from ids; `save`/`load` persist both (the matrix memory-mapped on load).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt
from bm25s.tokenization import Tokenized

from storage.search.tokenize import tokenize

_TOKENS = "tokens.npy"
_OFFSETS = "offsets.npy"
_BM25 = "bm25"


def gather_rows(
    flat: npt.NDArray[Any], offsets: npt.NDArray[np.int64], keep: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[Any], npt.NDArray[np.int64]]:
    """Rows `keep` of a ragged array (row i is `flat[offsets[i]:offsets[i + 1]]`), without a Python loop."""
    lengths = (offsets[1:] - offsets[:-1])[keep]
    new_offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    total = int(new_offsets[-1])
    if total == 0:
        return np.zeros(0, dtype=flat.dtype), new_offsets
    shift = np.repeat(offsets[:-1][keep] - new_offsets[:-1], lengths)
    return np.asarray(flat)[np.arange(total, dtype=np.int64) + shift], new_offsets


@dataclass(frozen=True, slots=True)
class TokenTable:
    """Token ids of a list of texts: text i is `ids[offsets[i]:offsets[i + 1]]`; `vocab` maps token -> id and only
    grows (ids of vanished tokens simply occur nowhere)."""

    vocab: dict[str, int]
    ids: npt.NDArray[np.int32]
    offsets: npt.NDArray[np.int64]

    @classmethod
    def of(cls, texts: Sequence[str], vocab: dict[str, int] | None = None) -> TokenTable:
        """Tokenise `texts`; new tokens extend a copy of `vocab`."""
        vocab = dict(vocab or {})
        flat: list[int] = []
        offsets = [0]
        for text in texts:
            for token in tokenize(text):
                flat.append(vocab.setdefault(token, len(vocab)))
            offsets.append(len(flat))
        return cls(vocab, np.asarray(flat, dtype=np.int32), np.asarray(offsets, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def splice(self, keep: npt.NDArray[np.int64], added: Sequence[str]) -> TokenTable:
        """The rows `keep` (in that order) followed by `added` texts, tokenised now."""
        fresh = TokenTable.of(added, self.vocab)
        kept, kept_offsets = gather_rows(self.ids, self.offsets, keep)
        ids = np.concatenate((kept, fresh.ids)).astype(np.int32, copy=False)
        offsets = np.concatenate((kept_offsets[:-1], kept_offsets[-1] + fresh.offsets)).astype(np.int64)
        return TokenTable(fresh.vocab, ids, offsets)

    def rows(self) -> list[list[int]]:
        return [self.ids[self.offsets[i] : self.offsets[i + 1]].tolist() for i in range(len(self))]


class KeywordLevel:
    """Built once (blocking; run it in a thread), then queried for a score per text."""

    def __init__(self, texts: Sequence[str] = (), *, table: TokenTable | None = None) -> None:
        self.table = table if table is not None else TokenTable.of(texts)
        self.size = len(self.table)
        self._bm25: bm25s.BM25 | None = None
        if self.size and self.table.ids.size:
            self._bm25 = bm25s.BM25()
            corpus = Tokenized(ids=self.table.rows(), vocab=self.table.vocab)
            self._bm25.index(corpus, create_empty_token=False, show_progress=False)
        self._df = self._document_frequencies()

    def _document_frequencies(self) -> npt.NDArray[np.int64]:
        """Documents per token id, read off the BM25 matrix (CSC: one column per token)."""
        if self._bm25 is None:
            return np.zeros(len(self.table.vocab), dtype=np.int64)
        return np.diff(np.asarray(self._bm25.scores["indptr"])).astype(np.int64)

    def updated(self, keep: npt.NDArray[np.int64], added: Sequence[str]) -> KeywordLevel:
        """A new level of the rows `keep` followed by `added` (blocking: re-indexes from token ids)."""
        return KeywordLevel(table=self.table.splice(keep, added))

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / _TOKENS, self.table.ids)
        np.save(folder / _OFFSETS, self.table.offsets)
        (folder / "vocab.json").write_text(json.dumps(self.table.vocab, ensure_ascii=False), encoding="utf-8")
        if self._bm25 is not None:
            self._bm25.save(str(folder / _BM25), show_progress=False)

    @classmethod
    def load(cls, folder: Path) -> KeywordLevel:
        """The level saved in `folder`: the BM25 matrix and the token ids memory-mapped, nothing re-tokenised."""
        level = cls.__new__(cls)
        vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        level.table = TokenTable(
            vocab, np.load(folder / _TOKENS, mmap_mode="r"), np.load(folder / _OFFSETS, mmap_mode="r")
        )
        level.size = len(level.table)
        level._bm25 = None
        if (folder / _BM25).is_dir():
            level._bm25 = bm25s.BM25.load(str(folder / _BM25), mmap=True, show_progress=False)
            level._bm25.vocab_dict = vocab  # one dict for both (bm25s reads the same mapping from its own file)
        level._df = level._document_frequencies()
        return level

    def _df_of(self, token: str) -> int:
        token_id = self.table.vocab.get(token)
        return int(self._df[token_id]) if token_id is not None and token_id < self._df.size else 0

    def idf(self, token: str) -> float:
        """Smoothed inverse document frequency; unseen tokens get the value of a one-document term."""
        df = self._df_of(token)
        return math.log(1 + (self.size - max(df, 1) + 0.5) / (max(df, 1) + 0.5))

    def coverage(self, tokens: Sequence[str]) -> float:
        """Share of the query's (idf-weighted) terms that occur in this corpus: ~1 for an in-vocabulary question,
        ~0 for one in another language or script."""
        if not tokens:
            return 0.0
        total = sum(self.idf(t) for t in tokens)
        found = sum(self.idf(t) for t in tokens if self._df_of(t) > 0)
        return found / total if total else 0.0

    def scores(self, tokens: Sequence[str]) -> npt.NDArray[np.float32]:
        known = [t for t in tokens if self._df_of(t) > 0]
        if self._bm25 is None or not known:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)
