"""Discord-only wording (English), plus access to the shared localized texts.

Everything a person reads comes from `pipeline.locales`; the few strings below exist only on Discord and are kept
here so they are reviewed in one place.
"""

from __future__ import annotations

from pipeline.locales import texts
from pipeline.locales.base import Texts

ONLY_ASKER = "Only the person who asked can use these buttons."
THREAD_NAME_FALLBACK = "Question from {user}"
CHOSEN_MARK = "✓ "
ASK_COMMAND_DESCRIPTION = "Ask the documentation a question"
ASK_OPTION_DESCRIPTION = "Your question"
ASK_RECEIVED = "Got your question. The answer follows in the thread."  # /ask's private acknowledgement


def texts_for(language: str | None) -> Texts:
    """The shared texts in `language`, English when unknown."""
    return texts(language or "en")
