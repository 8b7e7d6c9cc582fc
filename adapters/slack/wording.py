"""Slack-only wording (progress line, assistant panel, hand-over ping, /ask usage), kept in one place for review.

Everything shared with other platforms (refused channel, "asked:", chosen button, sources heading, failure) comes
from `pipeline.locales`; a language missing here falls back to English.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlackWording:
    thinking: str  # placeholder shown until the answer lands
    assistant_status: str  # assistant thread status ("is thinking...")
    handover: str  # "{support}" is pinged for "ask a human"
    usage_ask: str  # /ask without a question
    suggested_prompts_title: str
    suggested_prompts: tuple[str, ...]
    choose: str  # the small button beside each clarification choice
    open_source: str  # the button on a source card


_WORDING: dict[str, SlackWording] = {
    "en": SlackWording(
        thinking=":hourglass_flowing_sand: Looking through the docs…",
        assistant_status="is thinking...",
        handover="{support}, could you help here? {user} would like a human to take a look.",
        usage_ask="Ask me something after the command, e.g. `{command} how do I reset my password?`",
        suggested_prompts_title="Try asking",
        suggested_prompts=("What can you help me with?", "Where do I start with the docs?"),
        choose="Choose",
        open_source="Open",
    ),
    "de": SlackWording(
        thinking=":hourglass_flowing_sand: Ich suche in der Dokumentation…",
        assistant_status="denkt nach...",
        handover="{support}, könnt ihr hier helfen? {user} möchte mit einem Menschen sprechen.",
        usage_ask="Stell mir nach dem Befehl eine Frage, z. B. `{command} wie setze ich mein Passwort zurück?`",
        suggested_prompts_title="Frag zum Beispiel",
        suggested_prompts=("Wobei kannst du mir helfen?", "Wo fange ich in der Dokumentation an?"),
        choose="Auswählen",
        open_source="Öffnen",
    ),
}


def wording(language: str | None) -> SlackWording:
    """The wording for `language` (an ISO code such as "en" or "de-AT"), English when unknown."""
    base = (language or "en").split("-")[0].lower()
    return _WORDING.get(base, _WORDING["en"])
