"""Neutral `Reply` → Discord messages: markdown text split at 2,000 characters, a sources embed, buttons.

Every message carries `AllowedMentions.none()`: documentation and model output may contain `@everyone`, role or
user mentions, and none of them may ping anyone. The only ping the bot ever sends is the configured support role
after "ask a human", with an allowed-mentions object naming that role alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import discord

from adapters.discord.buttons import ACTION, EDIT, ActionButton, ButtonRef
from adapters.tables import aligned, rewrite_tables
from pipeline.closest import section_label
from pipeline.locales import texts
from pipeline.messages import Citation, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind

MESSAGE_LIMIT = 2000
EMBED_DESCRIPTION_LIMIT = 4096
BUTTON_LABEL_LIMIT = 80
MAX_BUTTONS = 25  # 5 rows of 5


def no_mentions() -> discord.AllowedMentions:
    return discord.AllowedMentions.none()


def support_role_mentions(role_id: int) -> discord.AllowedMentions:
    """Allows exactly one role to be pinged: no @everyone, no users, no other role."""
    return discord.AllowedMentions(everyone=False, users=False, roles=[discord.Object(id=role_id)], replied_user=False)


@dataclass(frozen=True)
class OutgoingMessage:
    """One Discord message to send: classic (`content`, `embed`, `view`) or a Components v2 card (`layout` alone)."""

    content: str
    embed: discord.Embed | None = None
    view: discord.ui.View | None = None
    allowed_mentions: discord.AllowedMentions = field(default_factory=no_mentions)
    layout: discord.ui.LayoutView | None = None

    @property
    def shown_view(self) -> discord.ui.View | discord.ui.LayoutView | None:
        return self.layout or self.view


def split_text(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Split on paragraph boundaries into pieces of at most `limit` characters.

    A paragraph longer than `limit` is split at line breaks, then at spaces, and only then mid-word.
    """
    pieces: list[str] = []
    current = ""
    for paragraph in (p.strip("\n") for p in re.split(r"\n\s*\n", text.strip())):
        if not paragraph:
            continue
        candidate = f"{current}\n\n{paragraph}" if current else paragraph
        if len(candidate) <= limit:
            current = candidate
            continue
        if current:
            pieces.append(current)
        if len(paragraph) <= limit:
            current = paragraph
        else:
            *whole, current = _split_long(paragraph, limit)
            pieces.extend(whole)
    if current:
        pieces.append(current)
    return pieces


def _split_long(paragraph: str, limit: int) -> list[str]:
    parts: list[str] = []
    rest = paragraph
    while len(rest) > limit:
        cut = rest.rfind("\n", 0, limit + 1)
        if cut <= 0:
            cut = rest.rfind(" ", 0, limit + 1)
        if cut <= 0:
            cut = limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    parts.append(rest)
    return parts


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def to_discord_markdown(text: str) -> str:
    """The neutral markup (paragraphs, `> ` quotes, `- ` bullets, `**bold**`, `[n]`) is Discord markdown already;
    headings-looking lines that Discord would render huge (`# `) are turned into bold, and pipe tables (which
    Discord does not render) into an aligned code block."""
    text = rewrite_tables(text, lambda table: ["```", *aligned(table), "```"])
    return re.sub(r"(?m)^#{1,3} (.+)$", r"**\1**", text)


def citation_label(citation: Citation) -> str:
    """`title › crumb › crumb` (crumbs repeating the title are left out)."""
    return " › ".join([citation.title, *(c for c in citation.crumbs if c and c != citation.title)])


def source_line(citation: Citation, updated: str = "{date}") -> str:
    """`**[n]** [title › crumbs](url)`, then `· ` and `updated` (a template of {date}) for a dated source."""
    label = discord.utils.escape_markdown(citation_label(citation)).replace("]", "\\]")
    number = f"**[{citation.number}]**"
    line = f"{number} [{label}]({citation.url})" if citation.url else f"{number} {label}"
    return f"{line} · {updated.format(date=citation.changed_on)}" if citation.changed_on else line


def sources_lines(citations: tuple[Citation, ...], heading: str, limit: int, updated: str = "{date}") -> str:
    """`**heading**` and one `source_line` per source, as many as fit in `limit`."""
    if not citations:
        return ""
    lines = [f"**{heading}**"]
    for citation in sorted(citations, key=lambda c: c.number):
        line = source_line(citation, updated)
        if sum(len(x) + 1 for x in lines) + len(line) > limit:
            break
        lines.append(line)
    return "\n".join(lines) if len(lines) > 1 else ""


def sources_embed(citations: tuple[Citation, ...], heading: str, updated: str = "{date}") -> discord.Embed | None:
    if not citations:
        return None
    lines: list[str] = []
    for citation in sorted(citations, key=lambda c: c.number):
        line = source_line(citation, updated)
        if sum(len(x) + 1 for x in lines) + len(line) > EMBED_DESCRIPTION_LIMIT:
            break
        lines.append(line)
    return discord.Embed(title=heading, description="\n".join(lines))


def button_style(kind: ActionKind) -> discord.ButtonStyle:
    if kind in (ActionKind.SEARCH, ActionKind.REPHRASE):
        return discord.ButtonStyle.primary
    return discord.ButtonStyle.secondary


def action_items(
    actions: tuple[ReplyAction, ...], asker_id: int, links: tuple[Citation, ...] = ()
) -> list[discord.ui.Item[Any]]:
    """Persistent buttons (their custom_id holds the stored-action id), one per action in order, then one link button
    per section in `links` (the closest sections under a refusal), which opens it."""
    links = tuple(c for c in links if c.url.startswith(("https://", "http://")))[: MAX_BUTTONS - len(actions)]
    items: list[discord.ui.Item[Any]] = []
    for action in actions[:MAX_BUTTONS]:
        tag = EDIT if action.kind is ActionKind.EDIT_ANSWER else ACTION  # Edit opens an editor when pressed
        ref = ButtonRef(action_id=action.id, asker_id=asker_id, ask_human=action.kind is ActionKind.HUMAN, tag=tag)
        label = shorten(action.label, BUTTON_LABEL_LIMIT)
        items.append(ActionButton(ref, label=label, style=button_style(action.kind)))
    for citation in links:
        label = shorten(section_label(citation), BUTTON_LABEL_LIMIT)
        items.append(discord.ui.Button(style=discord.ButtonStyle.link, label=label, url=citation.url))
    return items


def action_view(
    actions: tuple[ReplyAction, ...], asker_id: int, links: tuple[Citation, ...] = (),
    extra: tuple[discord.ui.Item[Any], ...] = (),
) -> discord.ui.View | None:
    """The buttons of `action_items` (and `extra`: Publish, Solved) as a persistent view (no timeout)."""
    items = [*action_items(actions, asker_id, links), *extra][:MAX_BUTTONS]
    if not items:
        return None
    view = discord.ui.View(timeout=None)
    for item in items:
        view.add_item(item)
    return view


def render_reply(
    reply: Reply, *, asker_id: int, sources_heading: str, mention_role_id: int | None = None,
    extra: tuple[discord.ui.Item[Any], ...] = (),
) -> list[OutgoingMessage]:
    """The messages for `reply`, in order. The sources embed and the buttons go on the last message.

    With `mention_role_id` the first message starts with that role's mention and may ping that role only.
    """
    text = to_discord_markdown(reply.text)
    if reply.note:
        text = f"{text}\n\n-# {reply.note}"
    prefix = f"<@&{mention_role_id}> " if mention_role_id is not None else ""
    chunks = split_text(prefix + text) or [prefix.strip() or "…"]
    messages = [OutgoingMessage(content=chunk) for chunk in chunks]
    if mention_role_id is not None:
        messages[0] = OutgoingMessage(content=chunks[0], allowed_mentions=support_role_mentions(mention_role_id))
    last = messages[-1]
    messages[-1] = OutgoingMessage(
        content=last.content,
        embed=sources_embed(reply.citations, sources_heading, texts(reply.language).source_updated),
        view=action_view(reply.actions, asker_id, reply.citations if reply.kind is ReplyKind.REFUSAL else (), extra),
        allowed_mentions=last.allowed_mentions,
    )
    return messages
