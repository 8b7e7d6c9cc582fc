"""The review editor on Discord: a modal with the team answer's text, sent as the response to an Edit press (a modal
must be the press's first response, so it cannot wait for the inbox's worker); its submission is stored in the inbox
like any press and the worker saves and approves the text.

The modal keeps nothing in memory. Everything its submission needs rides in it: the custom_id names the stored
action (`docbot:edit:<action id>`, at most 100 characters) and the one text input (custom_id `answer`) holds the
text. The client reads a submission from the interaction itself (`read_submission`, from `on_interaction`), so it is
recognised by whichever process receives it: the one that opened the modal, another replica, or the same bot after a
restart. `AnswerEditor` is only what is sent: it never listens (`is_finished`), so discord.py does not keep it in
its view store and does not dispatch the submission to it as well.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import discord

from adapters.discord.buttons import ACTION_ID, CUSTOM_ID_LIMIT

if TYPE_CHECKING:  # discord.types.interactions fails to import at run time (a circular import in discord.types)
    from discord.types.interactions import ModalSubmitComponentInteractionData, ModalSubmitInteractionData

EDITOR_TITLE = "Edit the team answer"
EDITOR_LABEL = "The answer, as it will be quoted"
MAX_INPUT = 4000  # a text input's limit
DOCBOT_PREFIX = "docbot:"  # every custom_id docbot sends starts with it
EDITOR_PREFIX = "docbot:edit:"
ANSWER_INPUT = "answer"  # the text input's custom_id
_EDITOR_ID = re.compile(rf"{EDITOR_PREFIX}(?P<id>{ACTION_ID})")
TEXT_INPUT, ACTION_ROW, LABEL = 4, 1, 18  # component types (a text input sits in an action row or, newer, a label)


def editor_custom_id(action_id: str) -> str:
    """The modal's custom_id for the stored action `action_id`; ValueError when it does not fit (never cut short)."""
    custom_id = f"{EDITOR_PREFIX}{action_id}"
    if _EDITOR_ID.fullmatch(custom_id) is None or len(custom_id) > CUSTOM_ID_LIMIT:
        raise ValueError(f"stored-action id does not fit a modal custom_id: {action_id!r}")
    return custom_id


class AnswerEditor(discord.ui.Modal):
    """The editor as sent; its submission is read from the interaction (`read_submission`), never by this object."""

    def __init__(self, action_id: str, text: str) -> None:
        super().__init__(title=EDITOR_TITLE, custom_id=editor_custom_id(action_id), timeout=None)
        self.add_item(discord.ui.TextInput(
            label=EDITOR_LABEL, style=discord.TextStyle.paragraph, default=text[:MAX_INPUT], max_length=MAX_INPUT,
            custom_id=ANSWER_INPUT,
        ))  # fmt: skip

    def is_finished(self) -> bool:
        """Always: `InteractionResponse.send_modal` stores a modal in the view store (to dispatch its submission to
        `on_submit`) only while it is not finished. This one is never stored, so a submission is handled once, by the
        client's stateless path, and nothing piles up for modals that are cancelled."""
        return True


@dataclass(frozen=True, slots=True)
class EditedAnswer:
    """A readable editor submission: the stored action it edits and the text as typed."""

    action_id: str
    text: str


class Unreadable(StrEnum):
    """Why a submission with a docbot custom_id cannot be taken (the person is told; nothing is stored)."""

    FORM = "form"  # a docbot custom_id that is no editor this version knows
    NO_ANSWER = "no_answer"  # the answer input is missing
    EMPTY = "empty"  # the answer is blank


def read_submission(data: ModalSubmitInteractionData) -> EditedAnswer | Unreadable | None:
    """An editor submission (MODAL_SUBMIT's `data`): the edit, why a docbot one cannot be read, or None when the
    modal is not docbot's."""
    custom_id = str(data.get("custom_id") or "")
    if not custom_id.startswith(DOCBOT_PREFIX):
        return None
    match = _EDITOR_ID.fullmatch(custom_id)
    if match is None:
        return Unreadable.FORM
    text = _input_value(data.get("components") or [], ANSWER_INPUT)
    if text is None:
        return Unreadable.NO_ANSWER
    if not text.strip():
        return Unreadable.EMPTY
    return EditedAnswer(match["id"], text)


def _input_value(components: Sequence[ModalSubmitComponentInteractionData], custom_id: str) -> str | None:
    """The value of the text input `custom_id`, wherever it sits (an action row, a label); None when absent."""
    pending: list[Any] = list(components)
    while pending:
        component = pending.pop(0)
        if not isinstance(component, dict):
            continue
        kind = component.get("type")
        if kind == ACTION_ROW:
            pending[:0] = list(component.get("components") or [])
        elif kind == LABEL:
            pending.insert(0, component.get("component"))
        elif kind == TEXT_INPUT and component.get("custom_id") == custom_id:
            value = component.get("value")
            return value if isinstance(value, str) else None
    return None
