"""One BM25 keyword level over a list of texts (bm25s), with the vocabulary kept for query-coverage estimates.

A level keeps its texts' token ids (`TokenTable`) next to the BM25 matrix, so an update re-tokenises only the
texts that changed and re-indexes from ids; `save`/`load` persist both (the matrix memory-mapped on load). The same
ids tell which texts have two of a query's terms side by side (`phrase_scores`).
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt
from bm25s.tokenization import Tokenized

from storage.json_pieces import dumps_dict
from storage.search.tokenize import tokenize

_TOKENS = "tokens.npy"
_OFFSETS = "offsets.npy"
_BM25 = "bm25"


def gather_rows(
    flat: npt.NDArray[Any], offsets: npt.NDArray[np.int64], keep: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[Any], npt.NDArray[np.int64]]:
    """Rows `keep` (ascending) of a ragged array (row i is `flat[offsets[i]:offsets[i + 1]]`), copied run by run of
    consecutive rows: an update keeps long runs, so this is a few block copies, not an index array per element."""
    lengths = (offsets[1:] - offsets[:-1])[keep]
    new_offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    if keep.size == 0 or int(new_offsets[-1]) == 0:
        return np.zeros(0, dtype=flat.dtype), new_offsets
    breaks = np.flatnonzero(np.diff(keep) != 1) + 1
    firsts = keep[np.concatenate(([0], breaks))]
    lasts = keep[np.concatenate((breaks - 1, [keep.size - 1]))]
    pieces = [flat[offsets[a] : offsets[b + 1]] for a, b in zip(firsts.tolist(), lasts.tolist(), strict=True)]
    return np.concatenate(pieces), new_offsets


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


PROCESS_BUILD_ROWS = 20_000  # from this many rows, BM25 matrices are built in a child process (see build_levels)


def _index(table: TokenTable) -> bm25s.BM25 | None:
    """A bm25s index of `table` with bm25s's defaults (Lucene BM25, k1 1.5, b 0.75), its score matrix computed by
    `lucene_matrix` from the token ids at once; queried, saved and loaded by bm25s as if it had built it."""
    if not len(table) or not table.ids.size:
        return None
    bm25 = bm25s.BM25()
    if bm25.method != "lucene" or bm25.idf_method != "lucene":  # a bm25s release with other defaults: its own loop
        bm25.index(Tokenized(ids=table.rows(), vocab=table.vocab), create_empty_token=False, show_progress=False)
        return bm25
    bm25.scores = lucene_matrix(table, k1=bm25.k1, b=bm25.b)
    bm25.vocab_dict = table.vocab
    bm25.unique_token_ids_set = set(table.vocab.values())
    bm25.nonoccurrence_array = None
    return bm25


def lucene_matrix(table: TokenTable, *, k1: float, b: float) -> dict[str, Any]:
    """The score matrix `bm25s.BM25.index` builds for Lucene BM25 (documents x vocabulary, CSC: `data`, `indices`,
    `indptr`, `num_docs`), from the flat token ids in a few numpy passes. bm25s counts terms document by document in
    Python (a 7M-token level at 100k chunks: seconds of one core holding the GIL); here one sort of (token, document)
    keys orders the pairs as the CSC matrix stores them and counts them.
    Same formula: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf / (k1 (1 - b + b |d| / avgdl) + tf), float32."""
    n_docs, n_vocab = len(table), len(table.vocab)
    offsets = np.asarray(table.offsets, dtype=np.int64)
    lengths = offsets[1:] - offsets[:-1]
    keys = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    keys += np.asarray(table.ids, dtype=np.int64) * n_docs  # token-major: sorted keys are the CSC order
    keys.sort()
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    tf = np.diff(np.append(starts, keys.size))  # occurrences of each (token, document) pair
    token_of, doc_of = np.divmod(keys[starts], n_docs)
    del keys, starts
    df = np.bincount(token_of, minlength=n_vocab)
    idf = np.zeros(n_vocab, dtype=np.float32)
    seen = df > 0
    idf[seen] = np.log(1 + (n_docs - df[seen] + 0.5) / (df[seen] + 0.5))
    tfc = tf / (k1 * ((1 - b) + b * lengths[doc_of] / lengths.mean()) + tf)
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return {
        "data": (idf[token_of] * tfc).astype(np.float32),
        "indices": doc_of.astype(np.int32),
        "indptr": indptr,
        "num_docs": n_docs,
    }


def _save_table(table: TokenTable, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / _TOKENS, np.asarray(table.ids))
    np.save(folder / _OFFSETS, np.asarray(table.offsets))
    (folder / "vocab.json").write_text(dumps_dict(table.vocab, ensure_ascii=False), encoding="utf-8")


def _load_table(folder: Path, *, mmap: bool) -> TokenTable:
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    mode: Any = "r" if mmap else None
    return TokenTable(vocab, np.load(folder / _TOKENS, mmap_mode=mode), np.load(folder / _OFFSETS, mmap_mode=mode))


def _index_saved_tables(root: Path) -> None:
    """In the child process: index every saved table under `root/<i>` into `root/<i>/bm25`."""
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        bm25 = _index(_load_table(folder, mmap=False))
        if bm25 is not None:
            bm25.save(str(folder / _BM25), show_progress=False)


def build_levels(tables: Sequence[TokenTable]) -> list[KeywordLevel]:
    """Keyword levels for `tables` (blocking: call it from a worker thread). Indexing is a Python loop per row in
    bm25s that holds the GIL; for large tables it runs in a child interpreter (`python -m storage.search.keyword`),
    so this process's event loop keeps answering while a 100k-chunk corpus is re-indexed. The tables go over and
    the matrices come back as files."""
    if sum(len(t) for t in tables) < PROCESS_BUILD_ROWS:
        return [KeywordLevel(table=t) for t in tables]
    with tempfile.TemporaryDirectory(prefix="docbot-bm25-") as tmp:
        root = Path(tmp)
        for i, table in enumerate(tables):
            _save_table(table, root / f"{i:02d}")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        subprocess.run(  # noqa: S603 - our own interpreter and module, a folder we created
            [sys.executable, "-m", "storage.search.keyword", str(root)], env=env, check=True, capture_output=True
        )
        built = []
        for i, table in enumerate(tables):
            saved = root / f"{i:02d}" / _BM25
            bm25 = bm25s.BM25.load(str(saved), show_progress=False) if saved.is_dir() else None
            built.append(KeywordLevel.from_index(table, bm25))
        return built


class KeywordLevel:
    """Built once (blocking; run it in a thread), then queried for a score per text."""

    def __init__(self, texts: Sequence[str] = (), *, table: TokenTable | None = None) -> None:
        self.table = table if table is not None else TokenTable.of(texts)
        self.size = len(self.table)
        self._bm25 = _index(self.table)
        self._df = self._document_frequencies()

    @classmethod
    def from_index(cls, table: TokenTable, bm25: bm25s.BM25 | None) -> KeywordLevel:
        level = cls.__new__(cls)
        level.table, level.size, level._bm25 = table, len(table), bm25
        if bm25 is not None:
            bm25.vocab_dict = table.vocab
        level._df = level._document_frequencies()
        return level

    def _document_frequencies(self) -> npt.NDArray[np.int64]:
        """Documents per token id, read off the BM25 matrix (CSC: one column per token)."""
        if self._bm25 is None:
            return np.zeros(len(self.table.vocab), dtype=np.int64)
        return np.diff(np.asarray(self._bm25.scores["indptr"])).astype(np.int64)

    def updated(self, keep: npt.NDArray[np.int64], added: Sequence[str]) -> KeywordLevel:
        """A new level of the rows `keep` followed by `added` (blocking: re-indexes from token ids)."""
        return KeywordLevel(table=self.table.splice(keep, added))

    def save(self, folder: Path) -> None:
        _save_table(self.table, folder)
        if self._bm25 is not None:
            self._bm25.save(str(folder / _BM25), show_progress=False)

    @classmethod
    def load(cls, folder: Path) -> KeywordLevel:
        """The level saved in `folder`: the BM25 matrix and the token ids memory-mapped, nothing re-tokenised."""
        level = cls.__new__(cls)
        level.table = _load_table(folder, mmap=True)
        vocab = level.table.vocab
        level.size = len(level.table)
        level._bm25 = None
        if (folder / _BM25).is_dir():
            level._bm25 = bm25s.BM25.load(str(folder / _BM25), mmap=True, show_progress=False)
            level._bm25.vocab_dict = vocab  # one dict for both (bm25s reads the same mapping from its own file)
        level._df = level._document_frequencies()
        return level

    def df(self, token: str) -> int:
        """How many texts of this level have `token`."""
        token_id = self.table.vocab.get(token)
        return int(self._df[token_id]) if token_id is not None and token_id < self._df.size else 0

    def idf(self, token: str) -> float:
        """Smoothed inverse document frequency; unseen tokens get the value of a one-document term."""
        df = self.df(token)
        return math.log(1 + (self.size - max(df, 1) + 0.5) / (max(df, 1) + 0.5))

    def coverage(self, tokens: Sequence[str]) -> float:
        """Share of the query's (idf-weighted) terms that occur in this corpus: ~1 for an in-vocabulary question,
        ~0 for one in another language or script."""
        if not tokens:
            return 0.0
        total = sum(self.idf(t) for t in tokens)
        found = sum(self.idf(t) for t in tokens if self.df(t) > 0)
        return found / total if total else 0.0

    def knows(self, token: str, rows: npt.NDArray[np.bool_]) -> bool:
        """Whether one of the texts `rows` marks has `token` (read off the token's column of the BM25 matrix)."""
        if self._bm25 is None or not self.df(token):
            return False
        token_id = self.table.vocab[token]
        matrix = self._bm25.scores
        start, end = int(matrix["indptr"][token_id]), int(matrix["indptr"][token_id + 1])
        return bool(rows[np.asarray(matrix["indices"][start:end])].any())

    def knows_joined(self, token: str, rows: npt.NDArray[np.bool_]) -> bool:
        """Whether one of the texts `rows` marks has `token` written as two adjacent tokens ("wifi" where the docs
        write "Wi-Fi", "soundbar" for "sound bar"); two known words that never stand together ("air" and "play"
        for "airplay") do not count."""
        return self.adjacent_split(token, rows) is not None

    def adjacent_split(self, token: str, rows: npt.NDArray[np.bool_] | None = None) -> tuple[str, str] | None:
        """The two adjacent tokens some text (of `rows`, or any) writes `token` as, or None."""
        if not len(self.table.ids):
            return None
        ids = self.table.ids
        for cut in range(2, len(token) - 1):
            left, right = self.table.vocab.get(token[:cut]), self.table.vocab.get(token[cut:])
            if left is None or right is None:
                continue
            at = np.flatnonzero((ids[:-1] == left) & (ids[1:] == right))
            if at.size and (rows is None or rows[np.searchsorted(self.table.offsets, at, side="right") - 1].any()):
                return token[:cut], token[cut:]
        return None

    @cached_property
    def known_tokens(self) -> list[str]:
        """Every token some text of this level has (made on first use, then kept: a level never changes)."""
        df = self._df
        return [t for t, i in self.table.vocab.items() if i < df.size and df[i] > 0]

    @cached_property
    def _sorted_tokens(self) -> list[str]:
        return sorted(self.known_tokens)

    def tokens_starting_with(self, prefix: str) -> list[str]:
        """The known tokens that begin with `prefix` (a binary search in the sorted vocabulary, not a scan)."""
        found = self._sorted_tokens
        start = bisect.bisect_left(found, prefix)
        end = bisect.bisect_left(found, prefix + "\U0010ffff", lo=start)
        return found[start:end]

    def scores(self, tokens: Sequence[str]) -> npt.NDArray[np.float32]:
        known = [t for t in tokens if self.df(t) > 0]
        if self._bm25 is None or not known:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)

    def phrase_scores(self, tokens: Sequence[str], rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """For each of the texts `rows` (ascending), the summed idf of the pairs of `tokens` adjacent in the query
        (in order) that the text also has adjacent: "picture in picture" and "sleep timer" name a thing that
        "picture" and "timer" scattered over a page do not. A pair is weighed by the idf of its rarer term (no more
        texts can have the pair); only the texts `rows` are read, so the cost follows the candidates, not the
        corpus."""
        out = np.zeros(rows.size, dtype=np.float32)
        if rows.size == 0:
            return out
        ids, offsets = gather_rows(self.table.ids, self.table.offsets, rows)
        vocab = self.table.vocab
        for left, right in dict.fromkeys(itertools.pairwise(tokens)):
            if not (self.df(left) and self.df(right)):
                continue
            at = np.flatnonzero((ids[:-1] == vocab[left]) & (ids[1:] == vocab[right]))
            row = np.searchsorted(offsets, at, side="right") - 1
            within = row == np.searchsorted(offsets, at + 1, side="right") - 1  # not a text's end and the next's start
            out[np.unique(row[within])] += max(self.idf(left), self.idf(right))
        return out


if __name__ == "__main__":  # the child of `build_levels`
    _index_saved_tables(Path(sys.argv[1]))
