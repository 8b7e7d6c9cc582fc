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
    # the task timeline shown while a question runs (and the one status message where streaming fails)
    working: str  # the line above the steps
    task_read: str
    task_understand: str
    task_search: str
    task_search_again: str
    task_write: str
    task_rewrite: str
    task_check: str
    task_check_again: str
    task_clarify: str
    found_language: str  # "{language}"
    found_sections: str  # "{count}"
    checked: dict[str, str]  # the quality role's decision → what it means for the person
    # the agent messaging experience
    greeting_title: str  # above the suggested prompts in the Messages tab
    greeting: str  # the first message in a new DM
    prompt_about: str  # a suggested prompt's message: "{topic}"
    only_asker_stops: str  # someone else pressed stop


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
        working="Working on your question…",
        task_read="Reading your question",
        task_understand="Understanding what you ask",
        task_search="Searching the docs",
        task_search_again="Searching again",
        task_write="Writing the answer",
        task_rewrite="Rewriting the answer",
        task_check="Checking the answer against the sources",
        task_check_again="Checking again",
        task_clarify="Preparing a question back",
        found_language="Language: {language}",
        found_sections="{count} sections found",
        checked={"approve": "Every point has a source", "research": "Not enough yet: searching again",
                 "regenerate": "Not quite right: rewriting", "clarify": "Needs a question back"},
        greeting_title="Ask me about the docs, for example:",
        greeting="Hi! I answer questions from your team's documentation, with the sections I used. Ask me anything "
        "here, each question gets its own thread.",
        prompt_about="What do the docs say about {topic}?",
        only_asker_stops="Only the person who asked can stop this answer.",
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
        working="Ich arbeite an deiner Frage…",
        task_read="Frage lesen",
        task_understand="Verstehen, was du fragst",
        task_search="In der Dokumentation suchen",
        task_search_again="Noch einmal suchen",
        task_write="Antwort schreiben",
        task_rewrite="Antwort neu schreiben",
        task_check="Antwort mit den Quellen abgleichen",
        task_check_again="Noch einmal prüfen",
        task_clarify="Eine Rückfrage vorbereiten",
        found_language="Sprache: {language}",
        found_sections="{count} Abschnitte gefunden",
        checked={"approve": "Jede Aussage hat eine Quelle", "research": "Noch nicht genug: suche weiter",
                 "regenerate": "Nicht ganz richtig: schreibe neu", "clarify": "Braucht eine Rückfrage"},
        greeting_title="Frag mich zur Dokumentation, zum Beispiel:",
        greeting="Hallo! Ich beantworte Fragen aus der Dokumentation deines Teams, mit den Abschnitten, die ich "
        "verwendet habe. Frag mich hier einfach, jede Frage bekommt ihren eigenen Thread.",
        prompt_about="Was steht in der Dokumentation zu {topic}?",
        only_asker_stops="Nur die Person, die gefragt hat, kann diese Antwort anhalten.",
    ),
}


def wording(language: str | None) -> SlackWording:
    """The wording for `language` (an ISO code such as "en" or "de-AT"), English when unknown."""
    base = (language or "en").split("-")[0].lower()
    return _WORDING.get(base, _WORDING["en"])
