"""From discord.py objects to neutral terms: conversation ids, question text, thread history."""

from __future__ import annotations

import re

import discord

from adapters.discord.wording import wording
from pipeline.types import HistoryMessage

THREAD_NAME_LIMIT = 100


def conversation_ids(channel: object) -> tuple[str, str | None]:
    """(channel_id, thread_id) of the conversation a channel belongs to.

    A thread is its own conversation under its parent channel; a DM is one conversation; a text channel has
    none yet (None: the message starts one).
    """
    if isinstance(channel, discord.Thread):
        return str(channel.parent_id), str(channel.id)
    if isinstance(channel, discord.DMChannel | discord.GroupChannel):
        return str(channel.id), str(channel.id)
    channel_id = str(getattr(channel, "id", "0"))
    if isinstance(channel, discord.PartialMessageable) and channel.guild_id is None:
        return channel_id, channel_id
    return channel_id, None


def shown_text(message: discord.Message) -> str:
    """What a message says: its content, or, for a Components v2 card (docbot's answers), its first text display (the
    answer; the sources follow in a second one)."""
    if message.content:
        return message.content
    pending: list[object] = list(message.components)
    while pending:
        component = pending.pop(0)
        if isinstance(component, discord.TextDisplay):
            return component.content
        pending[:0] = list(getattr(component, "children", ()))
    return ""


def strip_bot_mention(text: str, bot_id: int, *, role_ids: tuple[int, ...] = ()) -> str:
    """The text without mentions of the bot (as a user, or as its managed role)."""
    text = re.sub(rf"<@!?{bot_id}>", "", text)
    for role_id in role_ids:
        text = text.replace(f"<@&{role_id}>", "")
    return text.strip()


def thread_name(question: str, user_name: str, locale: str | None = None) -> str:
    """The question's first line; without one, "Question from …" in `locale`'s language (English when None)."""
    first_line = next((line.strip() for line in question.splitlines() if line.strip()), "")
    name = first_line or wording(locale).thread_name_fallback.format(user=user_name)
    return name if len(name) <= THREAD_NAME_LIMIT else name[: THREAD_NAME_LIMIT - 1] + "…"


class DiscordThreadFetcher:
    """`pipeline.messages.ThreadFetcher`: the thread's messages before the current one, oldest first."""

    def __init__(self, channel: discord.abc.Messageable, *, before: int, bot_id: int, limit: int = 50) -> None:
        self._channel = channel
        self._before = before
        self._bot_id = bot_id
        self._limit = limit

    async def fetch_thread(self) -> list[HistoryMessage]:
        history: list[HistoryMessage] = []
        before = discord.Object(id=self._before)
        async for message in self._channel.history(limit=self._limit, before=before, oldest_first=True):
            text = strip_bot_mention(shown_text(message), self._bot_id)
            if not text:
                continue
            history.append(
                HistoryMessage(
                    ts=message.created_at,
                    author=message.author.display_name,
                    text=text,
                    from_bot=message.author.id == self._bot_id,
                )
            )
        return history
