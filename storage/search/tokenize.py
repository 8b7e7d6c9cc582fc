"""Tokenization for keyword search: English stemming for Latin words, character bigrams for CJK/Thai scripts.

Words of other scripts (Cyrillic, Greek, Arabic ...) are kept whole and lower-cased, so a query in another
language simply finds few of its terms in an English corpus; fusion reads that as low keyword coverage.
"""

from __future__ import annotations

import re

from pipeline.text import COMBINING_MARKS, SENTENCE_END, stem

# a word keeps its combining marks (Hindi "हिंदी" is one word, not "ह" and "द"; Thai runs stay whole for the bigrams)
_TOKEN = re.compile(rf"(?:\w|[{COMBINING_MARKS}])+")
# the sentence ends the answer side reads (pipeline.text), or a blank line
_SENTENCE_END = re.compile(rf"{SENTENCE_END.pattern}|\n{{2,}}")
# Han, Hiragana, Katakana, Hangul syllables, Thai: scripts written without spaces between words.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f]+")

_STOPWORDS_TEXT = """
a about above after again all also am an and any are as at be because been before being below between both but
by can could did do does doing down during each few for from further had has have having he her here hers him
his how i if in into is it its itself just me more most my no nor not now of off on once only or other our out
over own same she should so some such than that the their them then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you your yours
"""
ENGLISH_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

def words_of(text: str) -> list[str]:
    """The lower-cased words of `text` as `tokenize` cuts them, before stemming and without dropping any."""
    return _TOKEN.findall(text.lower())


def _cjk_grams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Search terms of `text` in order (stemmed English words, CJK bigrams, other words lower-cased)."""
    out: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        word = match.group()
        if _UNSPACED.search(word):
            for piece in re.split(f"({_UNSPACED.pattern})", word):
                if not piece:
                    continue
                if _UNSPACED.fullmatch(piece):
                    out.extend(_cjk_grams(piece))
                else:
                    out.append(stem(piece) if piece.isascii() else piece)
            continue
        if not keep_stopwords and word in ENGLISH_STOPWORDS:
            continue
        out.append(stem(word) if word.isascii() else word)
    return out


def stopword_share(text: str) -> float:
    """Share of the words of `text` that are English function words (about 0.3-0.5 for English questions)."""
    words = words_of(text)
    return sum(w in ENGLISH_STOPWORDS for w in words) / len(words) if words else 0.0


def sentences(text: str) -> list[str]:
    """The sentences of `text` (ends at . ! ? and their CJK forms, or a blank line), spaces normalised; headings
    (`#`) and fragments of two characters or fewer dropped."""
    parts = (" ".join(p.split()) for p in _SENTENCE_END.split(text))
    return [p for p in parts if len(p) > 2 and not p.startswith("#")]


CHUNK_OVERLAP_CHARS = 150  # what a chunk repeats of the previous one (storage.ingest.text.split_long)


def overlap_tail(piece: str, overlap: int = CHUNK_OVERLAP_CHARS) -> str:
    """The end of `piece` that `split_long` repeats at the start of the next piece (from a word start on); search
    takes it off again when it puts a section's pieces back together."""
    tail = piece[-overlap:]
    cut = tail.find(" ")
    return tail[cut + 1 :] if 0 <= cut < len(tail) - 1 else tail
