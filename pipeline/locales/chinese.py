"""Chinese in its two scripts: which one a text is written in, and Simplified text said in Traditional characters.

People in Taiwan and Hong Kong write Traditional characters (這個電視有藍牙嗎？), in mainland China and Singapore
Simplified ones (这个电视有蓝牙吗？); the language detector says "zh" for both. OpenCC (the `opencc` package: the
project's own C++ converter with its dictionaries in the wheel, nothing fetched at run time) knows which characters
each script writes differently, phrase by phrase, so no character table of our own is kept here.
"""

from __future__ import annotations

import dataclasses
from difflib import SequenceMatcher
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from opencc import OpenCC

from pipeline.locales.base import Lexicon

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

TRADITIONAL_CHINESE = "zh-Hant"  # BCP 47: Chinese in Traditional script, whatever the region
SIMPLIFIED_CHINESE = "zh"  # the detector's code; Simplified, as the `zh` templates are written
# the regions whose locales ("zh-TW", "zh_HK") mean Traditional characters when no script is named
TRADITIONAL_REGIONS = frozenset({"tw", "hk", "mo"})

# Phrasing of the templates: `s2twp` converts the characters and the words Taiwan says differently (文档 → 文件,
# 消息 → 訊息, 搜索 → 搜尋) with Taiwan's standard character forms (為, not OpenCC's standard 爲). `s2t` would give
# mainland words in Traditional characters ("文檔", "爲"), which read as a machine's conversion in Taipei and Hong Kong.
TEMPLATES_CONFIG = "s2twp"

D = TypeVar("D", bound="DataclassInstance")


@cache
def _converter(config: str) -> OpenCC:
    """One OpenCC converter per configuration, built on first use (each loads its dictionaries, ~30 ms)."""
    return OpenCC(config)


def convert(text: str, config: str) -> str:
    return str(_converter(config).convert(text))


def _changed(text: str, converted: str) -> int:
    """How many characters of `text` the conversion wrote differently (a phrase may change length: compared by
    difflib's matching blocks, not position by position)."""
    if text == converted:
        return 0
    blocks = SequenceMatcher(None, text, converted, autojunk=False).get_opcodes()
    return sum(i2 - i1 for tag, i1, i2, _, _ in blocks if tag != "equal")


def script(text: str) -> str | None:
    """The script a Chinese `text` is written in, None when it does not tell.

    The characters only Traditional writes are those that Traditional → Simplified changes (這, 嗎, 電); the
    characters only Simplified writes are those that Simplified → Traditional changes (这, 吗, 电). Characters both
    scripts share (好, 的, 是, 中文) change in neither direction, so they never vote: "好" tells nothing. A few
    characters are Simplified but also written in Traditional texts (台 for 臺, 才, 里 in 公里), so a Traditional text
    may hold one or two the Simplified → Traditional direction changes; the script with more of its own characters
    wins, and a tie (or none of either) tells nothing.
    """
    traditional = _changed(text, convert(text, "t2s"))
    simplified = _changed(text, convert(text, "s2t"))
    if traditional == simplified:
        return None
    return TRADITIONAL_CHINESE if traditional > simplified else SIMPLIFIED_CHINESE


def _subtags(code: str) -> list[str]:
    return code.replace("_", "-").lower().split("-")


def is_chinese(code: str | None) -> bool:
    """Whether a language code or locale is Chinese, in either script ("zh", "zh-Hant", "zh_TW")."""
    return code is not None and _subtags(code)[0] == "zh"


def chinese_code(locale: str) -> str:
    """The code of a Chinese locale ("zh-TW", "zh_HK", "zh-Hant-HK", "zh-CN", "zh"): a script subtag decides (Hant,
    Hans), else the region (Taiwan, Hong Kong and Macau write Traditional characters), else Simplified."""
    rest = _subtags(locale)[1:]
    if "hant" in rest:
        return TRADITIONAL_CHINESE
    if "hans" in rest:
        return SIMPLIFIED_CHINESE
    return TRADITIONAL_CHINESE if TRADITIONAL_REGIONS & set(rest) else SIMPLIFIED_CHINESE


def in_its_script(language: str, text: str, *, earlier: str = "", known: str | None = None) -> str:
    """`language` as found, except that Chinese is said in its script: "zh-Hant" for a text in Traditional
    characters ("這個電視有藍牙嗎？"), "zh" for Simplified, whatever Chinese code the detector or a model gave. A text
    that does not tell ("好", "我的") takes the script of `earlier` (the person's earlier messages in the thread), else
    `known`'s (the thread's language so far, or the docs'), else Simplified."""
    if not is_chinese(language):
        return language
    said = script(text) or script(earlier)
    if said is not None:
        return said
    return chinese_code(known) if known is not None and is_chinese(known) else SIMPLIFIED_CHINESE


def _traditional_value(value: Any, config: str) -> Any:
    if isinstance(value, str):
        return convert(value, config)
    if isinstance(value, tuple):
        return tuple(_traditional_value(v, config) for v in value)
    if isinstance(value, dict):
        return {k: _traditional_value(v, config) for k, v in value.items()}  # keys are codes ("approve"), not words
    return value


def traditional(wording: D, config: str = TEMPLATES_CONFIG) -> D:
    """A frozen wording dataclass with every text in it (strings, tuples and dicts of them) in Traditional
    characters: one source of truth, the Simplified wording, and no second copy to keep in step by hand. Format
    fields ("{user}") and Slack emoji codes are ASCII, which OpenCC leaves as they are."""
    changes = {f.name: _traditional_value(getattr(wording, f.name), config) for f in dataclasses.fields(wording)}
    return dataclasses.replace(wording, **changes)


def in_both_scripts(words: tuple[str, ...]) -> tuple[str, ...]:
    """`words` (Simplified) followed by each one's Traditional forms, characters (`s2t`: 这个 → 這個) and Taiwan's
    wording (`s2twp`: 代码 → 程式碼), without repeats: a lexicon that matches text written in either script."""
    forms = (w for config in ("s2t", "s2twp") for w in (convert(word, config) for word in words))
    return tuple(dict.fromkeys((*words, *forms)))


def pattern_in_both_scripts(pattern: str) -> str:
    """A regex (written in Simplified) that also matches the same words in Traditional characters or Taiwan's
    wording: the alternatives side by side. OpenCC changes only Han characters, never the pattern's syntax."""
    if not pattern:
        return pattern
    return "|".join(f"(?:{p})" for p in dict.fromkeys((pattern, *(convert(pattern, c) for c in ("s2t", "s2twp")))))


def lexicon_in_both_scripts(lexicon: Lexicon) -> Lexicon:
    """A Chinese lexicon written in Simplified that reads Traditional text too: its words, phrases and patterns
    also in Traditional characters and Taiwan's wording ("那个" and "那個", "吗" and "嗎"), so a follow-up
    "那個怎麼關掉？" points back and "這個電視有藍牙嗎？" asks yes or no, as their Simplified twins do."""
    return dataclasses.replace(
        lexicon,
        stopwords=frozenset(in_both_scripts(tuple(sorted(lexicon.stopwords)))),
        deictics=in_both_scripts(lexicon.deictics),
        alternatives=in_both_scripts(lexicon.alternatives),
        stop_phrases=in_both_scripts(lexicon.stop_phrases),
        question_words=in_both_scripts(lexicon.question_words),
        object_dropped_after=in_both_scripts(lexicon.object_dropped_after),
        troubleshooting=" ".join(in_both_scripts(tuple(lexicon.troubleshooting.split()))),
        yes_no=pattern_in_both_scripts(lexicon.yes_no),
        presence=pattern_in_both_scripts(lexicon.presence),
        how_many=pattern_in_both_scripts(lexicon.how_many),
        how_to=pattern_in_both_scripts(lexicon.how_to),
        amount=pattern_in_both_scripts(lexicon.amount),
        other=pattern_in_both_scripts(lexicon.other),
        capability=tuple((kind, pattern_in_both_scripts(pattern)) for kind, pattern in lexicon.capability),
    )
