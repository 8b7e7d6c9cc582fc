"""All user-facing text, one module per language, plus the lexicons the offline roles read.

`texts(lang)` and `lexicon(lang)` fall back to English for languages without a module.
"""

from __future__ import annotations

import re

from pipeline.locales import de, en, es, fr, ru, zh
from pipeline.locales.base import Lexicon, Texts
from pipeline.text import has_cjk, tokens

_TEXTS: dict[str, Texts] = {m.__name__.rsplit(".", 1)[1]: m.TEXTS for m in (en, es, de, fr, ru, zh)}
_LEXICONS: dict[str, Lexicon] = {m.__name__.rsplit(".", 1)[1]: m.LEXICON for m in (en, es, de, fr, ru, zh)}
SUPPORTED: tuple[str, ...] = tuple(_TEXTS)
DEFAULT = "en"

__all__ = [
    "DEFAULT", "SUPPORTED", "UNSUPPORTED_LANGUAGE", "Lexicon", "Texts", "all_lexicons", "content_words",
    "is_supported", "lexicon", "texts",
]  # fmt: skip


def _base(lang: str | None) -> str:
    return (lang or DEFAULT).lower().split("-")[0].split("_")[0]


# One line above an answer to a question in a language without templates; English by design (we have no other).
UNSUPPORTED_LANGUAGE = (
    "I can't answer in your language yet, so this answer is in English "
    "(supported: English, Spanish, German, French, Russian, Chinese)."
)


def is_supported(lang: str | None) -> bool:
    """Whether `lang` has its own templates (None means the default)."""
    return lang is None or _base(lang) in _TEXTS


def texts(lang: str | None) -> Texts:
    return _TEXTS.get(_base(lang), _TEXTS[DEFAULT])


def lexicon(lang: str | None) -> Lexicon:
    return _LEXICONS.get(_base(lang), _LEXICONS[DEFAULT])


def all_lexicons() -> dict[str, Lexicon]:
    return dict(_LEXICONS)


def _any_language_skip() -> frozenset[str]:
    return frozenset().union(*(lex.stopwords | frozenset(lex.deictics) for lex in _LEXICONS.values()))


_ANY_SKIP = _any_language_skip()


def content_words(text: str, lang: str | None = None) -> list[str]:
    """Words that can carry a topic: not function words, generic verbs or pointing words, in order.

    With `lang` None, a word that is a function word in any supported language is skipped (for mixed threads).

    Text in a script without spaces (Chinese) is cut at the lexicon's stop phrases; the remaining runs of two or
    more characters are its content words.
    """
    lex = lexicon(lang)
    skip = _ANY_SKIP if lang is None else lex.stopwords | frozenset(lex.deictics)
    if has_cjk(text):
        cjk_lex = lexicon("zh")
        phrases = sorted((*cjk_lex.stop_phrases, *cjk_lex.deictics), key=len, reverse=True)
        pattern = "|".join(re.escape(p) for p in phrases)
        pieces = re.split(pattern, text) if pattern else [text]
        found: list[str] = []
        for piece in pieces:
            for run in re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}", piece):
                found.append(run)
            found.extend(w for w in tokens(piece) if not has_cjk(w) and w not in skip and len(w) > 1)
        return found
    return [w for w in tokens(text) if w not in skip and len(w) > 1 and not w.isdigit()]
