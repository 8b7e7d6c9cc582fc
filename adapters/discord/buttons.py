"""Persistent buttons: a `DynamicItem` whose custom_id holds everything a press needs, so presses keep working
after a restart (the class is registered in `setup_hook`; no view has to be remembered).

custom_id: `docbot:<tag>:<action id>:<asker id>` (at most 100 characters)
- tag `a`: an ordinary action; tag `h`: "ask a human" (the adapter then mentions the support role); tag `p`:
  "Publish" a private answer (the action id is `<question interaction id>-<message id it was about>`); tag `s`:
  "Solved" in a forum post (the action id is the post's thread id, the asker its author); tag `e`: a team answer's
  "Edit" review button (a stored action id like `a`; its press opens the editor, a modal),
- action id: the opaque stored-action id from the service (letters, digits, `_`, `-`),
- asker id: the Discord user who asked, for the "only the asker may click" policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol, Self, runtime_checkable

import discord

CUSTOM_ID_LIMIT = 100  # Discord's limit for a component's or a modal's custom_id
ACTION_ID = r"[A-Za-z0-9_-]+"  # a stored-action id as a custom_id carries it (the review editor's too)
TEMPLATE = rf"docbot:(?P<tag>[ahpse]):(?P<id>{ACTION_ID}):(?P<asker>[0-9]+)"
ACTION, HUMAN, PUBLISH, SOLVED, EDIT = "a", "h", "p", "s", "e"
_ACTION_ID = re.compile(ACTION_ID)


@dataclass(frozen=True, slots=True)
class ButtonRef:
    """What a button's custom_id carries."""

    action_id: str
    asker_id: int
    ask_human: bool = False
    tag: str = ACTION  # ACTION, HUMAN, PUBLISH, SOLVED or EDIT (HUMAN when `ask_human`)

    @property
    def kind(self) -> str:
        return HUMAN if self.ask_human else self.tag

    @property
    def custom_id(self) -> str:
        value = f"docbot:{self.kind}:{self.action_id}:{self.asker_id}"
        if not _ACTION_ID.fullmatch(self.action_id) or len(value) > CUSTOM_ID_LIMIT:
            raise ValueError(f"stored-action id does not fit a Discord custom_id: {self.action_id!r}")
        return value

    @classmethod
    def parse(cls, custom_id: str) -> ButtonRef | None:
        match = re.fullmatch(TEMPLATE, custom_id)
        if match is None:
            return None
        return cls._of(match)

    @classmethod
    def _of(cls, match: re.Match[str]) -> ButtonRef:
        tag = match["tag"]
        return cls(action_id=match["id"], asker_id=int(match["asker"]), ask_human=tag == HUMAN,
                   tag=ACTION if tag == HUMAN else tag)  # fmt: skip


@runtime_checkable
class ButtonPressHandler(Protocol):
    """Implemented by the client: what happens when a docbot button is pressed."""

    async def on_docbot_button(self, interaction: discord.Interaction[Any], ref: ButtonRef) -> None: ...


class ActionButton(discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=TEMPLATE):
    def __init__(
        self, ref: ButtonRef, *, label: str = "…", style: discord.ButtonStyle = discord.ButtonStyle.secondary
    ) -> None:
        super().__init__(discord.ui.Button(label=label, style=style, custom_id=ref.custom_id))
        self.ref = ref

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        ref = ButtonRef._of(match)
        label = getattr(item, "label", None) or "…"
        return cls(ref, label=label)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        client = interaction.client
        if isinstance(client, ButtonPressHandler):
            await client.on_docbot_button(interaction, self.ref)
