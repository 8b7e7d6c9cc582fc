"""The review editor on Discord: a modal with the team answer's text, sent as the response to an Edit press (a modal
must be the press's first response, so it cannot wait for the inbox's worker); its submission is stored in the inbox
like any press and the worker saves and approves the text. The modal lives in this process only: one submitted after
a restart is not recognised, and the maintainer presses Edit again."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import discord

EDITOR_TITLE = "Edit the team answer"
EDITOR_LABEL = "The answer, as it will be quoted"
MAX_INPUT = 4000  # a text input's limit


@runtime_checkable
class EditorSubmitHandler(Protocol):
    """Implemented by the client: what a submitted editor does."""

    async def on_answer_edited(self, interaction: discord.Interaction[Any], action_id: str, text: str) -> None: ...


class AnswerEditor(discord.ui.Modal):
    def __init__(self, action_id: str, text: str) -> None:
        super().__init__(title=EDITOR_TITLE, custom_id=f"docbot:edit:{action_id}"[:100], timeout=None)
        self.action_id = action_id
        self.answer: discord.ui.TextInput[AnswerEditor] = discord.ui.TextInput(
            label=EDITOR_LABEL, style=discord.TextStyle.paragraph, default=text[:MAX_INPUT], max_length=MAX_INPUT,
            custom_id="answer",
        )  # fmt: skip
        self.add_item(self.answer)

    async def on_submit(self, interaction: discord.Interaction[Any], /) -> None:
        client = interaction.client
        if isinstance(client, EditorSubmitHandler):
            await client.on_answer_edited(interaction, self.action_id, self.answer.value)
