"""Neutral `Reply` → Discord's Components v2 answer card (discord.py's `LayoutView`): one container per message with
the answer as text, the sources under a separator, and the buttons in action rows inside it.

A Components v2 message has no `content` or embeds: every word is in a text display, at most 4,000 characters per
message and 40 components (docs: discord.com/developers/docs/components/reference). A longer answer is split between
paragraphs over several cards; the sources and buttons go on the last. A message that was first sent without
Components v2 (a streamed answer) is edited with the classic rendering (`render.py`) instead: Discord keeps the flag
of a message as it was sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import discord

from adapters.discord.render import (
    MAX_BUTTONS,
    OutgoingMessage,
    action_items,
    no_mentions,
    sources_lines,
    split_text,
    support_role_mentions,
    to_discord_markdown,
)
from pipeline.locales import texts
from pipeline.messages import Reply, ReplyKind

CARD_TEXT_LIMIT = 4000  # display characters across all text displays of one message
ANSWER_CHARS = 3000  # per card: room for the sources on the last one
SOURCES_CHARS = 900
BUTTONS_PER_ROW = 5
ACCENT = discord.Colour(0x1D3557)  # docbot's colour (the Slack app's background colour)


def render_card(
    reply: Reply,
    *,
    asker_id: int,
    sources_heading: str,
    mention_role_id: int | None = None,
    extra: Sequence[discord.ui.Item[Any]] = (),
) -> list[OutgoingMessage]:
    """The reply as Components v2 cards (`OutgoingMessage.layout`), in order; `extra` buttons (Publish, Solved) go on
    the last card after the reply's own."""
    text = to_discord_markdown(reply.text)
    if reply.note:
        text = f"{text}\n\n-# {reply.note}"
    prefix = f"<@&{mention_role_id}> " if mention_role_id is not None else ""
    chunks = split_text(prefix + text, ANSWER_CHARS) or [prefix.strip() or "…"]
    sources = sources_lines(reply.citations, sources_heading, SOURCES_CHARS, texts(reply.language).source_updated)
    links = reply.citations if reply.kind is ReplyKind.REFUSAL else ()
    buttons = [*action_items(reply.actions, asker_id, links), *extra][:MAX_BUTTONS]
    mentions = support_role_mentions(mention_role_id) if mention_role_id is not None else no_mentions()
    cards: list[OutgoingMessage] = []
    for index, chunk in enumerate(chunks):
        last = index == len(chunks) - 1
        container: discord.ui.Container[discord.ui.LayoutView] = discord.ui.Container(
            discord.ui.TextDisplay(chunk), accent_colour=ACCENT
        )
        if last and sources:
            container.add_item(discord.ui.Separator())
            container.add_item(discord.ui.TextDisplay(sources))
        if last:
            for start in range(0, len(buttons), BUTTONS_PER_ROW):
                container.add_item(discord.ui.ActionRow(*buttons[start : start + BUTTONS_PER_ROW]))
        layout = discord.ui.LayoutView(timeout=None)
        layout.add_item(container)
        cards.append(OutgoingMessage(content="", layout=layout,
                                     allowed_mentions=mentions if index == 0 else no_mentions()))  # fmt: skip
    return cards
