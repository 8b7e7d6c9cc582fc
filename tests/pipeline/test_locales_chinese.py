"""Chinese in its two scripts (pipeline/locales/chinese.py): which one a text is written in, the Traditional
templates made from the Simplified ones, and the lexicon that reads both."""

from __future__ import annotations

import dataclasses
import string

import pytest

from pipeline.locales import (
    SUPPORTED,
    asks_in_words_without_spaces,
    asks_yes_no,
    base_language,
    content_words,
    is_supported,
    language_name,
    lexicon,
    texts,
    unsupported_line,
)
from pipeline.locales.base import Texts
from pipeline.locales.chinese import TRADITIONAL_CHINESE, script
from tests.helpers.chinese import simplified_only

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("這個電視有藍牙嗎？", "zh-Hant"),
        ("如何重設遙控器？", "zh-Hant"),
        ("這個電視有藍牙嗎？ Bluetooth 5.0", "zh-Hant"),  # Latin words do not vote
        ("台灣買的電視", "zh-Hant"),  # 台 (Simplified for 臺, and written in Taiwan): outvoted by 灣, 買, 電, 視
        ("这个电视有蓝牙吗？", "zh"),
        ("如何重置遥控器？", "zh"),
        ("后面", "zh"),
        ("後面", "zh-Hant"),
        # nothing tells: characters both scripts write, a tie, no Han characters
        ("好", None),
        ("我的中文", None),
        ("這个", None),
        ("Hello", None),
        ("", None),
    ],
)
def test_the_script_is_told_by_the_characters_only_one_script_writes(text: str, expected: str | None) -> None:
    assert script(text) == expected


@pytest.mark.parametrize(
    ("locale", "code"),
    [("zh-TW", "zh-Hant"), ("zh_TW", "zh-Hant"), ("zh-HK", "zh-Hant"), ("zh-MO", "zh-Hant"), ("zh-Hant", "zh-Hant"),
     ("zh-Hant-HK", "zh-Hant"), ("ZH-tw", "zh-Hant"), ("zh-CN", "zh"), ("zh_CN", "zh"), ("zh-SG", "zh"),
     ("zh-Hans", "zh"), ("zh-Hans-TW", "zh"), ("zh", "zh"), ("pt-BR", "pt")],
)  # fmt: skip
def test_a_chinese_locale_keeps_its_script(locale: str, code: str) -> None:
    """Discord's "zh-TW", Slack's "zh-TW" / "zh-HK" mean Traditional characters; a script subtag decides first."""
    assert base_language(locale) == code


def test_traditional_chinese_has_templates_of_its_own() -> None:
    assert TRADITIONAL_CHINESE in SUPPORTED and is_supported("zh-TW") and is_supported("zh-HK")
    assert texts("zh-TW") is texts("zh-Hant") is not texts("zh")
    assert unsupported_line("zh-Hant").startswith("I can't answer") and "Traditional Chinese" in unsupported_line("ar")


def test_the_traditional_templates_are_the_simplified_ones_in_traditional_characters() -> None:
    """Every text: the same placeholders, no character only Simplified writes, Taiwan's words (文件, not 文檔)."""
    traditional, simplified = texts("zh-Hant"), texts("zh")
    for field in dataclasses.fields(Texts):
        mine, source = getattr(traditional, field.name), getattr(simplified, field.name)
        pairs = [(mine[k], source[k]) for k in source] if isinstance(source, dict) else [(mine, source)]
        for own, theirs in pairs:
            assert simplified_only(own) == [], f"{field.name}: {own!r}"
            assert fields_of(own) == fields_of(theirs), field.name
    assert traditional.answer_lead_in == "文件中的相關說明如下："  # 文件: Taiwan's word for 文档 (s2twp)
    assert traditional.busy == "我正在處理其他問題，請一分鐘後再試。"


def fields_of(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize(("language", "name"), [("zh-Hant", "Traditional Chinese"), ("zh-TW", "Traditional Chinese"),
                                                ("zh", "Simplified Chinese")])  # fmt: skip
def test_the_models_instructions_name_the_script(language: str, name: str) -> None:
    assert language_name(language) == name


@pytest.mark.parametrize(
    ("question", "yes_no"),
    [("這個電視有藍牙嗎？", True), ("有沒有Wi-Fi？", True), ("支不支援AirPlay？", True), ("會不會自動關機？", True),
     ("如何重設遙控器？", False), ("遙控器有幾個按鈕？", False)],
)  # fmt: skip
def test_yes_no_questions_in_traditional_characters(question: str, yes_no: bool) -> None:
    assert asks_yes_no(question, "zh-Hant") is yes_no
    assert asks_yes_no(question, "zh") is yes_no  # a short question's script may be missed: zh reads both


def test_traditional_question_words_and_pointing_words_are_read() -> None:
    assert asks_in_words_without_spaces("這個是怎麼包裝的？") and asks_in_words_without_spaces("為什麼沒有聲音？")
    assert content_words("那個怎麼關掉？", "zh-Hant") == ["關掉"]  # the topic word, not "那個怎麼關掉"
    assert "這個" in lexicon("zh-Hant").deictics and "这个" in lexicon("zh-Hant").deictics
