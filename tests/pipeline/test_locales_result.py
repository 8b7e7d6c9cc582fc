"""Locales are complete in every language; results keep only cited sources, renumbered."""

from __future__ import annotations

import dataclasses
import string

import pytest

from pipeline import text as textutil
from pipeline.locales import SUPPORTED, texts
from pipeline.locales.base import Texts
from pipeline.result import cited_sources
from pipeline.types import ClarificationReason, SourceReference

pytestmark = pytest.mark.unit

CLARIFY_REASONS = {r.value for r in ClarificationReason}  # every reason has its sentence in every language


def fields_of(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("language", SUPPORTED)
def test_every_language_has_every_text_with_the_same_placeholders(language: str) -> None:
    english, local = texts("en"), texts(language)
    for field in dataclasses.fields(Texts):
        mine, reference = getattr(local, field.name), getattr(english, field.name)
        if isinstance(reference, dict):
            assert set(mine) == set(reference), field.name
            assert all(v.strip() for v in mine.values()), field.name
        else:
            assert mine.strip(), field.name
            assert fields_of(mine) == fields_of(reference), field.name
    assert set(local.clarify) == CLARIFY_REASONS
    assert set(local.refusal) == {"out_of_scope", "capability"}


def test_languages_are_really_translated() -> None:
    busy = {texts(lang).busy for lang in SUPPORTED}
    assert len(busy) == len(SUPPORTED)


@pytest.mark.parametrize("code", ["tr", "vi", None, "EN-us", "zz"])
def test_unknown_languages_fall_back_to_english(code: str | None) -> None:
    assert texts(code) is texts("en")


def test_regional_codes_use_their_language() -> None:
    assert texts("es-MX") is texts("es") and texts("zh_CN") is texts("zh")


def ref(n: int, title: str) -> SourceReference:
    return SourceReference(n, f"c{n}", f"d{n}", title, (), f"https://d/{n}", "text", 0.5)


def test_only_cited_sources_are_kept_and_renumbered_in_order_of_citation() -> None:
    sources = (ref(1, "A"), ref(2, "B"), ref(3, "C"))
    body, kept = cited_sources("First [3]. Then [1]. Again [3]. Bogus [7].", sources)
    assert [(s.number, s.title) for s in kept] == [(1, "C"), (2, "A")]
    assert textutil.citations(body) == [1, 2, 1]
    assert "[7]" not in body


def test_text_helpers() -> None:
    assert textutil.strip_mentions("<@U12AB> hi <#C1|general> <!here> <@&99>").split() == ["hi"]
    assert textutil.clean("a\x00b\t\t c\u200b\n\n\nd ") == "a b c\nd"
    assert textutil.word_count("如何设置语音助手") == 4
    assert textutil.shorten("one two three four five", 12) == "one two…"
    assert textutil.features("pairing the remotes", {"the"}) == textutil.features("paired remote") == {"pair", "remot"}
    assert textutil.features("пульты пульта", language="ru") == {"пульт"}
    assert textutil.features("遥控器配对", language="zh") == {"遥控", "控器", "器配", "配对"}


def test_sentences_follow_markdown_structure() -> None:
    doc = (
        "# Remote\n\nHold the Link key for five seconds until the light\nblinks blue. Then release it.\n\n"
        "| key | action |\n|---|---|\n| Link | pairs the remote |\n\n"
        "1. Open the app.\n   Choose Add speaker.\n- a bullet\n  that wraps\n```\norbit reset --all\n```\n"
        "它是什么。怎么用？"
    )
    assert textutil.sentences(doc) == [
        "Remote",
        "Hold the Link key for five seconds until the light blinks blue.",
        "Then release it.",
        "Link: pairs the remote",
        "Open the app.",
        "Choose Add speaker.",
        "a bullet that wraps",
        "orbit reset --all",
        "它是什么。",
        "怎么用？",
    ]
    assert textutil.comparable("| Link | pairs the remote |") == textutil.comparable("Link: pairs — the REMOTE")


@pytest.mark.parametrize("language", [code for code in SUPPORTED if code != "en"])
def test_every_sentence_is_translated(language: str) -> None:
    same_word = {("fr", "sources_heading")}  # "Sources" is French too
    english, other = texts("en"), texts(language)
    untranslated = [
        f.name
        for f in dataclasses.fields(other)
        if isinstance(getattr(other, f.name), str)
        and getattr(other, f.name) == getattr(english, f.name)
        and (language, f.name) not in same_word
    ]
    assert untranslated == []
