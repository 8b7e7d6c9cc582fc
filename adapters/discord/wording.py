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
ASK_ABOUT_COMMAND = "Ask docbot"  # the message context menu command (right-click a message → Apps)
ASK_ABOUT_EMPTY = "That message has no text to ask about."
PUBLISH = "Post in a thread"  # under an answer only its asker sees: post it in public
PUBLISHING = "Posting it in the thread…"
SOLVED_LABEL = "Solved"  # under answers in a forum post
SOLVED = "Marked as solved. Thanks!"
NO_SOLVED_TAG = "This forum has no “{tag}” tag to mark the post with; a moderator can add one."
ONLY_OWNER_SOLVES = "Only the person who posted this (or a moderator) can mark it solved."
# a submitted review editor docbot cannot take (said privately; nothing was saved)
EDIT_UNREADABLE = "This edit could not be read, so nothing was saved. Press Edit on the review message again."
EDIT_EMPTY = "The answer was empty, so nothing was saved. Press Edit on the review message again."


def texts_for(language: str | None) -> Texts:
    """The shared texts in `language`, English when unknown."""
    return texts(language or "en")
