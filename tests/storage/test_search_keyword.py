"""The keyword level's BM25 matrix, built from token ids with numpy, is the matrix bm25s's own indexer builds, and it
queries, saves and loads through bm25s unchanged."""

from __future__ import annotations

from pathlib import Path

import bm25s
import numpy as np
import pytest
from bm25s.tokenization import Tokenized

from storage.search.keyword import KeywordLevel, TokenTable, lucene_matrix
from storage.search.tokenize import tokenize


def _random_table(seed: int, docs: int, vocab: int) -> TokenTable:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 40, size=docs)  # empty rows too
    ids = (rng.zipf(1.3, size=int(lengths.sum())) - 1) % vocab  # repeated tokens within a row; unused vocab ids
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    return TokenTable({f"t{i}": i for i in range(vocab)}, ids.astype(np.int32), offsets.astype(np.int64))


def _bm25s_own(table: TokenTable) -> bm25s.BM25:
    own = bm25s.BM25()
    own.index(Tokenized(ids=table.rows(), vocab=table.vocab), create_empty_token=False, show_progress=False)
    return own


@pytest.mark.parametrize(("seed", "docs", "vocab"), [(1, 50, 30), (2, 400, 900), (3, 1, 5), (4, 2_000, 5_000)])
def test_the_matrix_is_the_one_bm25s_builds_itself(seed: int, docs: int, vocab: int) -> None:
    table = _random_table(seed, docs, vocab)
    own = _bm25s_own(table).scores
    ours = lucene_matrix(table, k1=1.5, b=0.75)
    assert ours["num_docs"] == own["num_docs"] == docs
    np.testing.assert_array_equal(ours["indptr"], own["indptr"])
    np.testing.assert_array_equal(ours["indices"], own["indices"])
    np.testing.assert_allclose(ours["data"], own["data"], rtol=1e-6)
    assert ours["data"].dtype == np.float32


def test_a_level_scores_queries_as_bm25s_does_and_after_a_save_and_load(tmp_path: Path) -> None:
    table = _random_table(5, 300, 200)
    level = KeywordLevel(table=table)
    own = _bm25s_own(table)
    for query in (["t0"], ["t1", "t7", "t7"], ["t150", "t3", "t42"]):
        expected = np.asarray(own.get_scores(query), dtype=np.float32)
        np.testing.assert_allclose(level.scores(query), expected, rtol=1e-5)
    level.save(tmp_path / "level")
    loaded = KeywordLevel.load(tmp_path / "level")
    np.testing.assert_allclose(loaded.scores(["t1", "t7"]), level.scores(["t1", "t7"]), rtol=0)
    assert loaded.idf("t1") == pytest.approx(level.idf("t1"))


def test_a_splice_scores_as_a_level_built_from_scratch() -> None:
    texts = ["the remote turns on the tv", "pair the remote with bluetooth", "reset the picture mode", "voice guide"]
    level = KeywordLevel(texts)
    spliced = level.updated(np.array([0, 2], dtype=np.int64), ["pair a new remote over bluetooth"])
    fresh = KeywordLevel([texts[0], texts[2], "pair a new remote over bluetooth"])
    for query in map(tokenize, ("remote", "pair bluetooth", "picture")):
        assert fresh.scores(query).any()
        np.testing.assert_allclose(spliced.scores(query), fresh.scores(query), rtol=1e-6)
    assert spliced.scores(tokenize("bluetooth")).argmax() == 2


def test_words_with_combining_marks_are_searched_whole() -> None:
    # Devanagari vowel signs are combining marks, not `\w`: cut at them, "हिंदी" (Hindi) and "हिंद" (India) were
    # both "ह" + "द", and a question about one scored the other the same
    level = KeywordLevel(["हिंदी में सेटिंग बदलें", "हिंद महासागर का नक्शा"])
    scores = level.scores(tokenize("हिंदी"))
    assert scores[0] > 0 and scores[1] == 0
    assert tokenize("कैसे करें") == ["कैसे", "करें"]


def test_a_pair_of_query_terms_counts_where_a_text_has_them_side_by_side() -> None:
    """"sleep timer" is named by the text that says "Sleep Timer", not by one with "sleep" and "timer" apart, nor
    by two texts one of which ends with "sleep" and the next begins with "timer"."""
    texts = [
        "Set the Sleep Timer to turn the TV off.",  # the pair, adjacent
        "Sleep mode dims the screen. The timer counts down.",  # both words, apart
        "Put the remote to sleep",  # ends with the first word ...
        "Timer settings are under General.",  # ... the next text begins with the second
        "The timer and the sleep timer share a menu.",  # the pair once, in another order too
    ]
    level = KeywordLevel(texts)
    every = np.arange(len(texts))
    phrases = level.phrase_scores(tokenize("how do I use the sleep timer?"), every)
    assert phrases[0] > 0 and phrases[4] == phrases[0]
    assert phrases[1] == phrases[2] == phrases[3] == 0
    assert level.phrase_scores(tokenize("timer"), every).sum() == 0  # one term: no pair
    assert level.phrase_scores(tokenize("mode sleep"), every).sum() == 0  # the pair in the other order
    # only the texts asked about are read, and scored in their order
    some = level.phrase_scores(tokenize("sleep timer"), np.array([1, 4]))
    assert some[0] == 0 and some[1] == phrases[4]


def test_a_pair_of_rarer_terms_weighs_more() -> None:
    level = KeywordLevel(["picture mode", "picture mode", "picture mode", "sound mode", "picture size"])
    every = np.arange(5)
    common = level.phrase_scores(tokenize("picture mode"), every)
    rare = level.phrase_scores(tokenize("picture size"), every)
    assert rare[4] > common[0] > 0
