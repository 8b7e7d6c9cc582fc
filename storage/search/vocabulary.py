"""Which words of a question the documentation never uses: the answerability check's `Vocabulary`.

A word counts as used when some chunk's text, title path or document summary in the question's collections has
its search term (the keyword levels' stemmed tokens; another collection's words are not looked at, so what it
holds shows nowhere), or when it is one edit away from such a term, a transposition counting as one edit
(rapidfuzz's optimal string alignment distance, two edits for terms of eight letters or more): "serch" is
"search" and "subtitels" is "subtitles", misspelt; a word the docs write as two ("wifi" for "Wi-Fi", "soundbar" for
"sound bar") is used when those two stand next to each other somewhere. The terms are stems, so a misspelling the
stemmer cuts differently ("crete", "creat" for "create") can stay unknown: one such word never decides on its own.
Three-letter terms are only forgiven against English function words ("hpw" is "how"): one letter apart from
some three-letter term is true of almost any of them. Numbers, mixed tokens, words shorter than three letters and
the first halves of English contractions ("weren't" is "weren" and "t" to the tokenizer, "werent" typed without the
apostrophe) are not looked up.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import OSA

from pipeline.text import edits_allowed
from storage.search.keyword import KeywordLevel
from storage.search.tokenize import ENGLISH_STOPWORDS, tokenize

MIN_LETTERS = 3
_SHORT_WORDS = sorted(w for w in ENGLISH_STOPWORDS if len(w) == MIN_LETTERS)
CONTRACTED = frozenset({
    "aren", "isn", "wasn", "weren", "don", "doesn", "didn", "won", "wouldn", "couldn", "shouldn", "hasn", "haven",
    "hadn", "can", "ain", "mustn", "needn", "mightn", "shan",
})  # fmt: skip


Level = tuple[KeywordLevel, npt.NDArray[np.bool_]]  # a keyword level and the rows of it that count


def is_contraction(term: str) -> bool:
    """The tokenizer's first half of a contraction ("doesn" of "doesn't") or one typed without its apostrophe
    ("doesnt", "couldnt", "dont"; "whats", "thats", "hows", stemmed to a function word): a function word, never a
    word the docs lack."""
    return term in CONTRACTED or term.removesuffix("t") in CONTRACTED or term in ENGLISH_STOPWORDS


def unknown_terms(levels: Sequence[Level], text: str, seen: dict[str, bool] | None = None) -> tuple[str, ...]:
    """The search terms of `text` (in order, once each) that no counted row of any level has, exactly or misspelt
    (blocking: for each such term one scan of each level's vocabulary, a few milliseconds at 100k chunks). `seen`
    keeps each term's verdict for the same levels, so a term looked up again is not scanned again."""
    terms = [
        t for t in dict.fromkeys(tokenize(text)) if t.isalpha() and len(t) >= MIN_LETTERS and not is_contraction(t)
    ]
    verdicts = {} if seen is None else seen
    for term in terms:
        if term not in verdicts:
            verdicts[term] = _used(term, levels)
    return tuple(t for t in terms if not verdicts[t])


def _used(term: str, levels: Sequence[Level]) -> bool:
    return (
        any(level.knows(term, rows) or level.knows_joined(term, rows) for level, rows in levels)
        or _misspelt(term, levels)
    )


def _misspelt(term: str, levels: Sequence[Level]) -> bool:
    if len(term) == MIN_LETTERS:
        return process.extractOne(term, _SHORT_WORDS, scorer=OSA.distance, score_cutoff=1) is not None
    edits = edits_allowed(term)
    for level, rows in levels:
        near = process.extract(term, level.known_tokens, scorer=OSA.distance, score_cutoff=edits, limit=None)
        if any(level.knows(token, rows) for token, _, _ in near):
            return True
    return False
