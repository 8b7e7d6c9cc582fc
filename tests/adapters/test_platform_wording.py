"""The platform-only wording (adapters/slack/wording.py, adapters/discord/wording.py) in every language docbot speaks:
complete (no field left in English), with English's placeholders and Slack emoji codes, within Discord's limits, and
picked by the codes and locales Slack and Discord send."""

from __future__ import annotations

import dataclasses
import re
import string
from typing import Any

import pytest
from discord import Locale, app_commands

from adapters.discord import wording as discord_wording
from adapters.discord.translator import WordingTranslator, described
from adapters.slack import wording as slack_wording
from pipeline.locales import SUPPORTED
from tests.helpers.chinese import simplified_only

pytestmark = pytest.mark.unit

OTHERS = [code for code in SUPPORTED if code != "en"]
PLATFORMS = {"slack": slack_wording.wording, "discord": discord_wording.wording}
EMOJI = re.compile(r":[a-z0-9_+-]+:")


def texts_of(value: Any) -> list[str]:
    """Every text a wording field holds: itself, each prompt of a tuple, each decision's text of a dict."""
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    if isinstance(value, tuple):
        return list(value)
    return [value]


def placeholders(text: str) -> list[str]:
    return sorted(name for _, name, _, _ in string.Formatter().parse(text) if name is not None)


def test_every_language_docbot_speaks_has_slack_and_discord_wording() -> None:
    assert set(slack_wording.LANGUAGES) == set(SUPPORTED)
    assert set(discord_wording.LANGUAGES) == set(SUPPORTED)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("language", OTHERS)
def test_no_field_is_left_in_english_and_placeholders_match(platform: str, language: str) -> None:
    english, local = PLATFORMS[platform]("en"), PLATFORMS[platform](language)
    for field in dataclasses.fields(english):
        mine, reference = getattr(local, field.name), getattr(english, field.name)
        if isinstance(reference, dict):
            assert sorted(mine) == sorted(reference), field.name  # the same decisions
        assert len(texts_of(mine)) == len(texts_of(reference)), field.name
        for own, theirs in zip(texts_of(mine), texts_of(reference), strict=True):
            assert own != theirs, f"{field.name} is English: {own!r}"
            assert placeholders(own) == placeholders(theirs), field.name
            assert EMOJI.findall(own) == EMOJI.findall(theirs), field.name  # ":hourglass_flowing_sand:" kept


@pytest.mark.parametrize("language", SUPPORTED)
def test_the_discord_command_texts_fit_discords_limits(language: str) -> None:
    """Discord refuses a whole sync over one localization too long (menu names 1-32, descriptions 1-100)."""
    words = discord_wording.wording(language)
    assert 1 <= len(words.ask_about_command) <= 32
    assert 1 <= len(words.ask_command_description) <= 100 and 1 <= len(words.ask_option_description) <= 100


LOCALES = [
    ("pt-BR", "pt"), ("pt-PT", "pt"), ("zh-TW", "zh-Hant"), ("zh-CN", "zh"), ("zh_TW", "zh-Hant"), ("es-419", "es"),
    ("zh-HK", "zh-Hant"), ("zh-Hant", "zh-Hant"), ("zh-Hans", "zh"), ("zh-SG", "zh"),
    ("es-ES", "es"), ("es-LA", "es"), ("ja-JP", "ja"), ("ja", "ja"), ("ko-KR", "ko"), ("en-GB", "en"),
    ("en-US", "en"), ("de-AT", "de"),
]  # fmt: skip


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize(("locale", "language"), LOCALES)
def test_a_platform_locale_picks_its_languages_wording(platform: str, locale: str, language: str) -> None:
    pick = PLATFORMS[platform]
    assert pick(locale) is pick(language)
    assert (pick(locale) is pick("en")) == (language == "en")  # not English by falling back


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("locale", ["uk", "tr", "sv-SE", "", None])
def test_an_unknown_locale_gets_english(platform: str, locale: str | None) -> None:
    assert PLATFORMS[platform](locale) is PLATFORMS[platform]("en")


async def test_the_translator_answers_for_every_discord_locale_of_our_languages_and_no_other() -> None:
    translator = WordingTranslator()
    context = app_commands.TranslationContext(app_commands.TranslationContextLocation.other, None)
    text = described("ask_command_description")
    said = {locale.value: await translator.translate(text, locale, context) for locale in Locale}
    translated = {locale: words for locale, words in said.items() if words is not None}
    # every Discord client language docbot speaks, English (the default) and the others left to Discord
    assert set(translated) == {"de", "es-ES", "es-419", "fr", "ru", "zh-CN", "zh-TW", "pt-BR", "it", "ja", "ko", "nl",
                               "pl"}  # fmt: skip
    assert translated["ja"] == discord_wording.wording("ja").ask_command_description
    assert translated["zh-TW"] == discord_wording.wording("zh-Hant").ask_command_description != translated["zh-CN"]
    assert translated["es-419"] == translated["es-ES"] == discord_wording.wording("es").ask_command_description
    assert str(text) == discord_wording.ENGLISH.ask_command_description  # Discord's default, and what routes


async def test_names_people_type_are_not_translated() -> None:
    translator = WordingTranslator()
    context = app_commands.TranslationContext(app_commands.TranslationContextLocation.command_name, None)
    assert await translator.translate(app_commands.locale_str("ask"), Locale.japanese, context) is None


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("locale", ["zh-TW", "zh-HK", "zh-Hant"])
def test_traditional_chinese_locales_get_the_chinese_wording_in_traditional_characters(
    platform: str, locale: str
) -> None:
    """Taiwan's and Hong Kong's people read Traditional characters: their wording is the Simplified one converted,
    field for field, with no character only Simplified writes."""
    traditional, simplified = PLATFORMS[platform](locale), PLATFORMS[platform]("zh")
    for field in dataclasses.fields(simplified):
        mine, theirs = texts_of(getattr(traditional, field.name)), texts_of(getattr(simplified, field.name))
        assert len(mine) == len(theirs), field.name
        for own in mine:
            assert simplified_only(own) == [], f"{field.name} keeps Simplified characters: {own!r}"
    assert traditional != simplified


async def test_discord_shows_taiwans_people_the_commands_in_traditional_characters() -> None:
    """Discord has one locale for Traditional Chinese, zh-TW (`discord.Locale.taiwan_chinese`), beside zh-CN."""
    translator = WordingTranslator()
    context = app_commands.TranslationContext(app_commands.TranslationContextLocation.other, None)
    text = described("ask_about_command")
    taiwan = await translator.translate(text, Locale.taiwan_chinese, context)
    china = await translator.translate(text, Locale.chinese, context)
    assert (taiwan, china) == ("詢問 docbot", "询问 docbot")
