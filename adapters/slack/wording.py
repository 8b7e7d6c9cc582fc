"""Slack-specific wording (placeholders, hand-over, button echoes), kept in one place for review.

Replies themselves are worded by the conversation service (`pipeline.locales`); these are only the few strings the
Slack adapter adds around them. English first; a language missing here falls back to English.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlackWording:
    thinking: str  # placeholder shown until the answer lands
    assistant_status: str  # assistant thread status ("is thinking...")
    asked: str  # "{user} asked: {question}" posted for /ask
    chosen: str  # "{label}" shown on a clarification after a click
    handover: str  # "{support}" is pinged for "ask a human"
    channel_not_allowed: str
    button_refused: str
    sources: str
    usage_ask: str  # /ask without a question
    failed: str  # something broke on our side
    suggested_prompts_title: str
    suggested_prompts: tuple[str, ...]


_WORDING: dict[str, SlackWording] = {
    "en": SlackWording(
        thinking=":hourglass_flowing_sand: Looking through the docs…",
        assistant_status="is thinking...",
        asked="{user} asked: {question}",
        chosen=":white_check_mark: {label}",
        handover="{support}, could you help here? {user} would like a human to take a look.",
        channel_not_allowed="Sorry, I'm not set up to answer in this channel.",
        button_refused="That button can't be used here any more.",
        sources="Sources",
        usage_ask="Ask me something after the command, e.g. `{command} how do I reset my password?`",
        failed="Sorry, something went wrong on my side while answering. Please try again in a moment.",
        suggested_prompts_title="Try asking",
        suggested_prompts=("What can you help me with?", "Where do I start with the docs?"),
    ),
    "de": SlackWording(
        thinking=":hourglass_flowing_sand: Ich suche in der Dokumentation…",
        assistant_status="denkt nach...",
        asked="{user} fragte: {question}",
        chosen=":white_check_mark: {label}",
        handover="{support}, könnt ihr hier helfen? {user} möchte mit einem Menschen sprechen.",
        channel_not_allowed="Entschuldigung, in diesem Kanal darf ich nicht antworten.",
        button_refused="Diese Schaltfläche kann hier nicht mehr verwendet werden.",
        sources="Quellen",
        usage_ask="Stell mir nach dem Befehl eine Frage, z. B. `{command} wie setze ich mein Passwort zurück?`",
        failed="Entschuldigung, beim Antworten ist bei mir etwas schiefgegangen. Bitte versuch es gleich noch einmal.",
        suggested_prompts_title="Frag zum Beispiel",
        suggested_prompts=("Wobei kannst du mir helfen?", "Wo fange ich in der Dokumentation an?"),
    ),
}


def wording(language: str | None) -> SlackWording:
    """The wording for `language` (an ISO code such as "en" or "de-AT"), English when unknown."""
    base = (language or "en").split("-")[0].lower()
    return _WORDING.get(base, _WORDING["en"])
