"""Neutral `Reply` → Block Kit messages (slack_sdk block models), split to stay inside Slack's limits.

Limits: 50 blocks per message, 3,000 characters per section text, about 12,000 characters of text per message,
10 elements per context block, 75 characters per button label, 2,000 per button value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from adapters.slack.mrkdwn import inert, link, to_mrkdwn
from adapters.slack.wording import wording
from pipeline.closest import section_label
from pipeline.locales import texts
from pipeline.messages import Citation, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind

MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000
MAX_MESSAGE_CHARS = 12_000
MAX_CHOICES = 5
MAX_CONTEXT_ELEMENTS = 10
MAX_BUTTON_LABEL = 75
FALLBACK_CHARS = 300

ACTION_PREFIX = "docbot:"  # every button's action_id starts with this; the value is the opaque stored-action id
OPTIONS_BLOCK = "docbot_options"
FEEDBACK_BLOCK = "docbot_feedback"
CHOICE_BLOCK = "docbot_choice"
SECTIONS_BLOCK = "docbot_sections"
LINK_PREFIX = "docbot_link:"  # not ACTION_PREFIX: a link press is never a stored action

_FEEDBACK_KINDS = (ActionKind.HELPFUL, ActionKind.NOT_HELPFUL, ActionKind.HUMAN)
_STYLES = {ActionKind.HELPFUL: "primary"}
_SAFE_LINK = re.compile(r"^https?://[^\s<>|]+$", re.IGNORECASE)

Blocks = list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """One chat.postMessage / chat.update worth of content: notification text and blocks."""

    text: str
    blocks: Blocks = field(default_factory=list)

    @property
    def chars(self) -> int:
        return _text_chars(self.blocks)


def render_reply(reply: Reply) -> list[SlackMessage]:
    """The reply as one message, or several when the text exceeds one message's limits.

    Sources, notes and buttons go on the last message, so every button sits under the text it belongs to.
    """
    urls = {c.number: c.url for c in reply.citations}
    sections = split_text(to_mrkdwn(reply.text, urls), MAX_SECTION_CHARS)
    tail = _tail_blocks(reply)
    tail_chars = _text_chars(tail)
    messages: list[list[Block]] = [[]]
    chars = 0
    for section in sections:
        block = SectionBlock(text=MarkdownTextObject(text=section, verbatim=True))
        if messages[-1] and (chars + len(section) > MAX_MESSAGE_CHARS or len(messages[-1]) + 1 > MAX_BLOCKS):
            messages.append([])
            chars = 0
        messages[-1].append(block)
        chars += len(section)
    if messages[-1] and (chars + tail_chars > MAX_MESSAGE_CHARS or len(messages[-1]) + len(tail) > MAX_BLOCKS):
        messages.append([])
    fallback = inert(_plain(reply.text))[:FALLBACK_CHARS] or texts(reply.language).sources_heading
    rendered = [[b.to_dict() for b in blocks] for blocks in messages]
    rendered[-1].extend(tail)
    return [SlackMessage(text=fallback, blocks=blocks) for blocks in rendered]


def render_placeholder(language: str | None) -> SlackMessage:
    text = wording(language).thinking
    return SlackMessage(text=text, blocks=[SectionBlock(text=MarkdownTextObject(text=text)).to_dict()])


def render_text(text: str) -> SlackMessage:
    """A short message of our own wording (already trusted mrkdwn, e.g. a configured support mention)."""
    return SlackMessage(text=text, blocks=[SectionBlock(text=MarkdownTextObject(text=text)).to_dict()])


def render_chosen(blocks: Sequence[dict[str, Any]], chosen_label: str, language: str | None,
                  block_id: str | None = None) -> Blocks:
    """The original blocks without the clicked buttons (or all buttons), plus a line showing the choice."""
    kept = [
        b
        for b in blocks
        if not (b.get("type") == "actions" and (block_id is None or b.get("block_id") == block_id))
        and b.get("block_id") != CHOICE_BLOCK
    ]
    label = ":white_check_mark: " + texts(language).you_chose.format(label=inert(chosen_label))
    kept.append(ContextBlock(block_id=CHOICE_BLOCK, elements=[MarkdownTextObject(text=label)]).to_dict())
    return kept


def split_text(text: str, limit: int) -> list[str]:
    """Split at paragraph, then line, then word boundaries so that every piece has at most `limit` characters."""
    pieces: list[str] = []
    for paragraph in (p for p in text.split("\n\n") if p.strip()):
        pieces.extend(_split_paragraph(paragraph, limit))
    return _pack(pieces, limit, "\n\n")


def _split_paragraph(paragraph: str, limit: int) -> list[str]:
    if len(paragraph) <= limit:
        return [paragraph]
    lines: list[str] = []
    for line in paragraph.split("\n"):
        if len(line) <= limit:
            lines.append(line)
            continue
        words: list[str] = []
        for word in line.split(" "):
            words.extend(word[i : i + limit] for i in range(0, max(len(word), 1), limit))
        lines.extend(_pack(words, limit, " "))
    return _pack(lines, limit, "\n")


def _pack(parts: Iterable[str], limit: int, joiner: str) -> list[str]:
    packed: list[str] = []
    current = ""
    for part in parts:
        candidate = f"{current}{joiner}{part}" if current else part
        if len(candidate) <= limit:
            current = candidate
        else:
            if current:
                packed.append(current)
            current = part
    if current:
        packed.append(current)
    return packed


def _tail_blocks(reply: Reply) -> Blocks:
    blocks: list[Block] = []
    if reply.note:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=f"_{inert(reply.note)}_", verbatim=True)]))
    if reply.citations:
        blocks.append(_sources_block(reply.citations, reply.language))
    options = _choices([a for a in reply.actions if a.kind not in _FEEDBACK_KINDS])
    feedback = [a for a in reply.actions if a.kind in _FEEDBACK_KINDS]
    if options:
        blocks.append(ActionsBlock(block_id=OPTIONS_BLOCK, elements=[_button(a, i) for i, a in enumerate(options)]))
    links = [c for c in reply.citations if _SAFE_LINK.match(c.url)][:MAX_CHOICES]
    if reply.kind is ReplyKind.REFUSAL and links:  # the closest sections under a refusal: one link button each
        blocks.append(ActionsBlock(block_id=SECTIONS_BLOCK, elements=[_link_button(c) for c in links]))
    if feedback:
        blocks.append(ActionsBlock(block_id=FEEDBACK_BLOCK, elements=[_button(a, i) for i, a in enumerate(feedback)]))
    return [b.to_dict() for b in blocks]


def _choices(options: list[ReplyAction]) -> list[ReplyAction]:
    """At most five choices; when cutting, keep "rephrase"/"retry" and drop the last topic choices."""
    if len(options) <= MAX_CHOICES:
        return options
    fixed = [a for a in options if a.kind is not ActionKind.SEARCH][:MAX_CHOICES]
    topics = [a for a in options if a.kind is ActionKind.SEARCH][: MAX_CHOICES - len(fixed)]
    return [a for a in options if a in topics or a in fixed]


def _sources_block(citations: Sequence[Citation], language: str) -> ContextBlock:
    elements = [MarkdownTextObject(text=f"*{texts(language).sources_heading}*")]
    for c in citations[: MAX_CONTEXT_ELEMENTS - 1]:
        crumbs = [inert(crumb) for crumb in c.crumbs if crumb and crumb != c.title]
        trail = " › ".join([link(c.url, c.title or c.url), *crumbs])
        trail += f" · {texts(language).source_updated.format(date=c.changed_on)}" if c.changed_on else ""
        elements.append(MarkdownTextObject(text=f"[{c.number}] {trail}"[:MAX_SECTION_CHARS], verbatim=True))
    return ContextBlock(elements=elements)


def _button(action: ReplyAction, index: int) -> ButtonElement:
    label = action.label if len(action.label) <= MAX_BUTTON_LABEL else action.label[: MAX_BUTTON_LABEL - 1] + "…"
    return ButtonElement(
        text=PlainTextObject(text=label, emoji=True),
        action_id=f"{ACTION_PREFIX}{action.kind.value}:{index}",
        value=action.id,
        style=_STYLES.get(action.kind),
    )


def _link_button(citation: Citation) -> ButtonElement:
    """A URL button opening a section (Slack still sends the press; the catch-all listener acknowledges it)."""
    label = section_label(citation)
    label = label if len(label) <= MAX_BUTTON_LABEL else label[: MAX_BUTTON_LABEL - 1] + "…"
    return ButtonElement(
        text=PlainTextObject(text=label, emoji=True), action_id=f"{LINK_PREFIX}{citation.number}", url=citation.url
    )


def _plain(text: str) -> str:
    first = " ".join(line.removeprefix("> ").removeprefix("- ") for line in text.splitlines() if line.strip())
    return first.replace("**", "")


def _text_chars(blocks: Sequence[dict[str, Any]]) -> int:
    total = 0
    for block in blocks:
        text = block.get("text")
        if isinstance(text, dict):
            total += len(str(text.get("text", "")))
        for element in block.get("elements", ()):
            inner = element.get("text")
            total += len(str(inner.get("text", ""))) if isinstance(inner, dict) else len(str(inner or ""))
    return total
