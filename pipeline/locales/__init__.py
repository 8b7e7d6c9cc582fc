"""All user-facing text, one module per language, plus the lexicons the offline roles read.

`texts(lang)` and `lexicon(lang)` fall back to English for languages without a module.
"""

from __future__ import annotations

import re

from pipeline.locales import de, en, es, fr, it, ja, ko, nl, pl, pt, ru, unsupported, zh
from pipeline.locales.base import Lexicon, Texts
from pipeline.text import has_cjk, tokens

_MODULES = (en, es, de, fr, ru, zh, pt, it, ja, ko, nl, pl)
_TEXTS: dict[str, Texts] = {m.__name__.rsplit(".", 1)[1]: m.TEXTS for m in _MODULES}
_LEXICONS: dict[str, Lexicon] = {m.__name__.rsplit(".", 1)[1]: m.LEXICON for m in _MODULES}
SUPPORTED: tuple[str, ...] = tuple(_TEXTS)
DEFAULT = "en"

__all__ = [
    "DEFAULT",
    "FUNCTION_WORDS",
    "SUPPORTED",
    "TROUBLESHOOTING",
    "UNSUPPORTED_LANGUAGE",
    "Lexicon",
    "Texts",
    "all_lexicons",
    "asks_yes_no",
    "content_words",
    "is_supported",
    "lexicon",
    "reports_failure",
    "texts",
    "unsupported_line",
    "with_unsupported_line",
]  # fmt: skip


def _base(lang: str | None) -> str:
    return (lang or DEFAULT).lower().split("-")[0].split("_")[0]


# One line above an answer to a question in a language without templates, in English, naming the languages above
# (`unsupported_line` adds the person's own language where we have it).
UNSUPPORTED_LANGUAGE = unsupported.in_english(m.NAME for m in _MODULES)


def is_supported(lang: str | None) -> bool:
    """Whether `lang` has its own templates (None means the default)."""
    return lang is None or _base(lang) in _TEXTS


def unsupported_line(lang: str | None) -> str:
    """The line saying `lang` has no templates: in English, then in `lang` itself when we have it."""
    own = unsupported.IN_THEIR_LANGUAGE.get(_base(lang))
    return f"{UNSUPPORTED_LANGUAGE}\n{own}" if own else UNSUPPORTED_LANGUAGE


def with_unsupported_line(text: str, lang: str | None) -> str:
    """`text` as said to a person writing in `lang`: unchanged for a language with templates, else opened by
    `unsupported_line` (once: an answer whose framing already opens with the English line gets the rest of it)."""
    if is_supported(lang):
        return text
    body = text.removeprefix(UNSUPPORTED_LANGUAGE).lstrip("\n") if text.startswith(UNSUPPORTED_LANGUAGE) else text
    return f"{unsupported_line(lang)}\n\n{body}" if body else unsupported_line(lang)


def texts(lang: str | None) -> Texts:
    return _TEXTS.get(_base(lang), _TEXTS[DEFAULT])


def lexicon(lang: str | None) -> Lexicon:
    return _LEXICONS.get(_base(lang), _LEXICONS[DEFAULT])


def all_lexicons() -> dict[str, Lexicon]:
    return dict(_LEXICONS)


# words of a message saying something failed, in every supported language ("still doesn't work", "no funciona")
FAILURE_WORDS = (
    "work", "broken", "fail", "error", "wrong", "funciona", "funktioniert", "marche", "работает", "不行", "funziona",
    "werkt", "działa", "動かない", "使えない", "できない", "작동", "안 돼", "안돼", "안 되",
)  # fmt: skip


def reports_failure(text: str) -> bool:
    """Whether `text` says something does not work (a complaint word in any supported language)."""
    folded = text.lower()
    return any(w in folded for w in FAILURE_WORDS)


_YES_NO = {lang: re.compile(lex.yes_no, re.IGNORECASE) for lang, lex in _LEXICONS.items() if lex.yes_no}


# the question words of languages whose questions do not open with them (Chinese, Japanese, Korean): anywhere counts
_UNSPACED_QUESTION_WORDS = tuple(dict.fromkeys(w for lex in _LEXICONS.values() for w in lex.question_words))


def asks_in_words_without_spaces(text: str) -> bool:
    """A question word of Chinese, Japanese or Korean anywhere in `text`, whatever the detected language
    ("这个是怎么包装的？", "重さは何キロですか？", "블루투스 헤드폰을 어떻게 연결하나요?")."""
    return has_cjk(text) and any(w in text for w in _UNSPACED_QUESTION_WORDS)


def asks_yes_no(text: str, lang: str | None = None) -> bool:
    """Whether `text` is a question answered by yes or no ("does it have Wi-Fi?"), by `lang`'s pattern, or any
    supported language's when `lang` has none (a short question's detected language is often wrong)."""
    own = _YES_NO.get(_base(lang))
    patterns = [own] if own is not None and is_supported(lang) and lang is not None else list(_YES_NO.values())
    return any(p.search(text) for p in patterns)


# every supported language's function words ("I", "Does", "der", "как"): never a name, never a topic
FUNCTION_WORDS: frozenset[str] = frozenset().union(*(lex.stopwords for lex in _LEXICONS.values()))
_ANY_SKIP = FUNCTION_WORDS.union(*(lex.deictics for lex in _LEXICONS.values()))


# runs of Han characters, of katakana (with its prolonged-sound mark) or of Hangul syllables, two or more long
CJK_CONTENT_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}|[\u30a0-\u30ff]{2,}|[\uac00-\ud7af]{2,}")


def content_words(text: str, lang: str | None = None) -> list[str]:
    """Words that can carry a topic: not function words, generic verbs or pointing words, in order.

    With `lang` None, a word that is a function word in any supported language is skipped (for mixed threads).

    Text in a script without spaces (Chinese) is cut at the lexicon's stop phrases; the remaining runs of two or
    more Han characters are its content words, and so are runs of katakana (Japanese loanwords: "テレビ",
    "スリープタイマー") and of Hangul (Korean words, particles attached); hiragana is Japanese grammar, not a topic.
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
            found.extend(CJK_CONTENT_RUN.findall(piece))
            found.extend(w for w in tokens(piece) if not has_cjk(w) and w not in skip and len(w) > 1)
        return found
    return [w for w in tokens(text) if w not in skip and len(w) > 1 and not w.isdigit()]
