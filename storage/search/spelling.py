"""A question's search terms as the docs spell them, so the keyword levels can match what people type.

People write "wifi", "tvplus" and "blue tooth" where the docs write "Wi-Fi", "TV PLUS" and "Bluetooth", and
misspell ("offere", "pluge"): such a term matches nothing, so keyword search ranks the section that answers as if
the word were not there. Only terms no text of the level uses are respelt, four ways, in this order:

- joined: two adjacent words of the question whose concatenation the docs use ("blue tooth" -> "bluetooth", "you
  tube" -> "youtube"), when one of them is unknown or a function word (two known words stay two);
- split: an unknown term the docs write as two adjacent terms ("wifi" -> "wi" "fi"; the pair must stand together
  somewhere: "airplay" is not "air" and "play");
- abbreviated: an unknown term of `MIN_ABBREVIATED` letters or more that begins terms the docs use ("coax" ->
  "coaxial", "config" -> "configur"), the most frequent of them;
- corrected: an unknown term of `MIN_CORRECTED` letters or more one edit from a term the docs use (two from eight
  letters: `pipeline.text.edits_allowed`, the vocabulary's own rule; rapidfuzz's optimal string alignment), the most
  frequent one.

Applied to questions in the docs' language only: the words of another language are not misspelt English.
"""

from __future__ import annotations

from rapidfuzz import process
from rapidfuzz.distance import OSA

from pipeline.text import edits_allowed, stem
from storage.search.keyword import KeywordLevel
from storage.search.tokenize import ENGLISH_STOPWORDS, tokenize, words_of
from storage.search.vocabulary import is_contraction

MIN_ABBREVIATED = 4  # "coax" for "coaxial", "spec" for "specification"; "tv" or "app" abbreviate too much
MIN_CORRECTED = 5  # shorter terms are one edit from too many others ("hulu", "vudu" are names, not typos)


def spelled_as_docs(text: str, level: KeywordLevel) -> list[str]:
    """The search terms of `text` (`tokenize`'s, in order), each unknown one respelt the way `level`'s texts write
    it where that is clear; terms it cannot place stay as they are."""
    words = words_of(text)
    terms: list[str] = []
    i = 0
    while i < len(words):
        if i + 1 < len(words) and _joins(words[i], words[i + 1], level):
            terms.append(stem(words[i] + words[i + 1]))
            i += 2
            continue
        for term in tokenize(words[i]):
            terms.extend(_respelt(term, level))
        i += 1
    return terms


def _joins(left: str, right: str, level: KeywordLevel) -> bool:
    if not (left.isalpha() and right.isalpha() and left.isascii() and right.isascii()):
        return False
    unknown = (w in ENGLISH_STOPWORDS or not level.df(stem(w)) for w in (left, right))
    return bool(level.df(stem(left + right))) and any(unknown)


def _respelt(term: str, level: KeywordLevel) -> list[str]:
    if not term.isascii() or not term.isalpha() or level.df(term) or is_contraction(term):
        return [term]
    pair = level.adjacent_split(term)
    if pair is not None:
        return list(pair)
    if len(term) >= MIN_ABBREVIATED:
        longer = [t for t in level.tokens_starting_with(term) if not is_contraction(t)]
        if longer:
            return [max(longer, key=level.df)]
    if len(term) < MIN_CORRECTED:
        return [term]
    near = [
        found
        for found in process.extract(
            term, level.known_tokens, scorer=OSA.distance, score_cutoff=edits_allowed(term), limit=None
        )
        if not is_contraction(found[0])
    ]
    if not near:
        return [term]
    best = min(distance for _, distance, _ in near)
    return [max((t for t, distance, _ in near if distance == best), key=level.df)]
