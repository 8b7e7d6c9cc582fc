"""The commands' texts in the person's client language: discord.py's `app_commands.Translator`, backed by
`adapters.discord.wording`.

A text to translate is marked with `described(field)`: a `locale_str` holding the English wording (what Discord shows
by default and what discord.py routes by) and the `DiscordWording` field it comes from. At `CommandTree.sync`,
discord.py asks the translator for every `discord.Locale` and sends the answers as the command's
`name_localizations` / `description_localizations`; Discord then shows each person the text in their client language.
Names people type (`/ask`, its `question` option) are not marked and stay as they are; English locales and languages
without wording get no entry (Discord shows the default, English).
"""

from __future__ import annotations

from discord import Locale, app_commands

from adapters.discord.wording import ENGLISH, language_of, wording

WORDING_FIELD = "wording"  # the locale_str extra naming the DiscordWording field


def described(field: str) -> app_commands.locale_str:
    """A command text from the wording: English by default, translated per locale at sync."""
    return app_commands.locale_str(getattr(ENGLISH, field), **{WORDING_FIELD: field})


class WordingTranslator(app_commands.Translator):
    async def translate(
        self, string: app_commands.locale_str, locale: Locale, context: app_commands.TranslationContextTypes
    ) -> str | None:
        field = string.extras.get(WORDING_FIELD)
        language = language_of(locale.value)
        if field is None or language == "en":
            return None
        return str(getattr(wording(language), field))
