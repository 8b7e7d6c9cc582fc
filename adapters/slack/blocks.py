"""Neutral `Reply` → Block Kit messages (slack_sdk block models), split to stay inside Slack's limits.

Two styles. `CURRENT` uses today's blocks: a docs table as a `table` block (one per message, at most 100 rows of 20
cells; a larger or second table becomes bullets), the sources as a carousel of cards (or a compact context block),
feedback as the `feedback_buttons` of a `context_actions` block, and each clarification choice as a section of its
own with a small button beside it (full labels wrap on a phone; a 75-character button label would be cut).
`CLASSIC` is the 2024 rendering (tables as bullets, sources as one context block, all buttons in actions blocks): the
sink falls back to it where Slack refuses the newer blocks (`invalid_blocks`).

Limits (docs.slack.dev/reference/block-kit): 50 blocks per message, 3,000 characters per section text, about 12,000
characters of text per message, 10 elements per context block, 75 characters per button label, 2,000 per button
value, card title/subtitle 150 and body 200 characters, 10 cards per carousel, 5 elements per context_actions block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    CardBlock,
    CarouselBlock,
    ContextActionsBlock,
    ContextBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    MarkdownTextObject,
    PlainTextObject,
    RawTextObject,
    SectionBlock,
    TableBlock,
    TableBlockColumnSettings,
)

from adapters.slack.mrkdwn import inert, link, to_mrkdwn
from adapters.slack.wording import wording
from adapters.tables import Table, TableSegment, plain_cell, row_wise, split_tables
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
MAX_TABLE_ROWS = 100  # the header row included
MAX_TABLE_COLUMNS = 20
MAX_CARDS = 10
MAX_CARD_TITLE = 150
MAX_CARD_BODY = 200
FALLBACK_CHARS = 300
TABLE_FALLBACK_CHARS = 3000  # a message with a table block carries the table's rows in its text too
WRAP_FROM_CHARS = 30  # a column with longer cells wraps instead of being cut off

ACTION_PREFIX = "docbot:"  # every button's action_id starts with this; the value is the opaque stored-action id
OPTIONS_BLOCK = "docbot_options"
OPTION_PREFIX = "docbot_option:"  # CURRENT: one section per clarification choice, `docbot_option:<i>`
FEEDBACK_BLOCK = "docbot_feedback"
HELP_BLOCK = "docbot_help"  # CURRENT: "ask a human" under the feedback buttons
CHOICE_BLOCK = "docbot_choice"
SECTIONS_BLOCK = "docbot_sections"
SOURCES_BLOCK = "docbot_sources"
TABLE_BLOCK = "docbot_table"
LINK_PREFIX = "docbot_link:"  # not ACTION_PREFIX: a link press is never a stored action
PROGRESS_BLOCK = "docbot_progress"  # marks our progress message in a thread (placeholder, stream, status message)
FEEDBACK_ACTION = f"{ACTION_PREFIX}feedback"

_FEEDBACK_KINDS = (ActionKind.HELPFUL, ActionKind.NOT_HELPFUL, ActionKind.HUMAN)
_STYLES = {ActionKind.HELPFUL: "primary"}
_SAFE_LINK = re.compile(r"^https?://[^\s<>|]+$", re.IGNORECASE)

Blocks = list[dict[str, Any]]


class Style(Enum):
    CURRENT = "current"
    CLASSIC = "classic"


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """One chat.postMessage / chat.update worth of content: notification text and blocks."""

    text: str
    blocks: Blocks = field(default_factory=list)

    @property
    def chars(self) -> int:
        return _text_chars(self.blocks)


def render_reply(reply: Reply, style: Style = Style.CURRENT) -> list[SlackMessage]:
    """The reply as one message, or several when the text exceeds one message's limits.

    Sources, notes and buttons go on the last message, so every button sits under the text it belongs to.
    """
    urls = {c.number: c.url for c in reply.citations}
    tail = _tail_blocks(reply, style)
    tail_chars = _text_chars(tail)
    messages: list[list[dict[str, Any]]] = [[]]
    tables: list[Table | None] = [None]  # the table shown as a table block in each message, if any
    chars = 0
    for item in _body(reply.text, urls):
        block, size, table = _item_block(item, allow_table=style is Style.CURRENT and tables[-1] is None)
        if block is None and isinstance(item, TableSegment):  # over the table block's limits, or a second table
            for piece in split_text(to_mrkdwn("\n".join(row_wise(item.table)), urls), MAX_SECTION_CHARS):
                chars = _place(messages, tables, _section(piece), len(piece), chars)
            continue
        assert block is not None
        chars = _place(messages, tables, block, size, chars)
        if table is not None:
            tables[-1] = table
    if messages[-1] and (chars + tail_chars > MAX_MESSAGE_CHARS or len(messages[-1]) + len(tail) > MAX_BLOCKS):
        messages.append([])
        tables.append(None)
    messages[-1].extend(tail)
    pairs = zip(messages, tables, strict=True)
    return [SlackMessage(text=_fallback(reply, table), blocks=blocks) for blocks, table in pairs]


def _place(messages: list[Blocks], tables: list[Table | None], block: dict[str, Any], size: int, chars: int) -> int:
    if messages[-1] and (chars + size > MAX_MESSAGE_CHARS or len(messages[-1]) + 1 > MAX_BLOCKS):
        messages.append([])
        tables.append(None)
        chars = 0
    messages[-1].append(block)
    return chars + size


def _body(text: str, urls: dict[int, str]) -> Iterable[str | TableSegment]:
    """Section texts (mrkdwn, each within a section's limit) and tables, in reading order."""
    for segment in split_tables(text):
        if isinstance(segment, TableSegment):
            yield segment
        else:
            yield from split_text(to_mrkdwn(segment, urls), MAX_SECTION_CHARS)


def _item_block(item: str | TableSegment, *, allow_table: bool) -> tuple[dict[str, Any] | None, int, Table | None]:
    if not isinstance(item, TableSegment):
        return _section(item), len(item), None
    if not allow_table:
        return None, 0, None
    block = table_block(item)
    return (block, _text_chars([block]), item.table) if block is not None else (None, 0, None)


def table_block(segment: TableSegment) -> dict[str, Any] | None:
    """A docs table as a `table` block, or None when it is over the block's limits (then it is shown as bullets)."""
    header, rows = segment.table
    width = max([len(header), *(len(r) for r in rows)])
    if len(rows) + 1 > MAX_TABLE_ROWS or width > MAX_TABLE_COLUMNS or not rows:
        return None
    grid = [[plain_cell(c) for c in row] + [""] * (width - len(row)) for row in [header, *rows]]
    if sum(len(c) for row in grid for c in row) > MAX_MESSAGE_CHARS:
        return None
    settings: list[TableBlockColumnSettings] = []
    for k in range(width):
        align = segment.align[k] if k < len(segment.align) else None
        wrapped = max(len(row[k]) for row in grid) > WRAP_FROM_CHARS
        settings.append(TableBlockColumnSettings(align=align, is_wrapped=True if wrapped else None))
    return TableBlock(
        block_id=TABLE_BLOCK,
        rows=[[RawTextObject(text=cell or " ").to_dict() for cell in row] for row in grid],  # a cell is never empty
        column_settings=[s.to_dict() for s in settings],
    ).to_dict()


def render_placeholder(language: str | None) -> SlackMessage:
    text = wording(language).thinking
    return SlackMessage(text=text, blocks=[_section(text, verbatim=False)])


def render_text(text: str) -> SlackMessage:
    """A short message of our own wording (already trusted mrkdwn, e.g. a configured support mention)."""
    return SlackMessage(text=text, blocks=[_section(text, verbatim=False)])


def render_chosen(blocks: Sequence[dict[str, Any]], chosen_label: str, language: str | None,
                  block_id: str | None = None) -> Blocks:
    """The original blocks without the clicked buttons (or all buttons), plus a line showing the choice. A choice
    shown as one section per option takes all the option sections away."""
    every_option = block_id is None or block_id.startswith(OPTION_PREFIX)

    def pressed(b: dict[str, Any]) -> bool:
        ident = str(b.get("block_id") or "")
        if ident.startswith(OPTION_PREFIX):
            return every_option
        return b.get("type") in ("actions", "context_actions") and (block_id is None or ident == block_id)

    kept = [b for b in blocks if not pressed(b) and b.get("block_id") != CHOICE_BLOCK]
    label = ":white_check_mark: " + texts(language).you_chose.format(label=inert(chosen_label))
    kept.append(ContextBlock(block_id=CHOICE_BLOCK, elements=[MarkdownTextObject(text=label)]).to_dict())
    return kept


def block_with_button(blocks: Sequence[dict[str, Any]], action_id: str) -> str | None:
    """The block id of the block holding our button (in an actions block, beside a section, or a feedback button)
    whose value is `action_id`, if any."""
    for block in blocks:
        for element in _interactive(block):
            if not str(element.get("action_id") or "").startswith(ACTION_PREFIX):
                continue
            values = [element.get("value")]
            values += [(element.get(k) or {}).get("value") for k in ("positive_button", "negative_button")]
            if action_id in values:
                return str(block.get("block_id") or "")
    return None


def _interactive(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block.get("type") in ("actions", "context_actions"):
        return list(block.get("elements") or [])
    accessory = block.get("accessory")
    return [accessory] if block.get("type") == "section" and isinstance(accessory, dict) else []


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


def _tail_blocks(reply: Reply, style: Style) -> Blocks:
    blocks: list[Block] = []
    if reply.note:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=f"_{inert(reply.note)}_", verbatim=True)]))
    if reply.citations:
        cards = style is Style.CURRENT and reply.kind is ReplyKind.ANSWER and len(reply.citations) <= MAX_CARDS
        blocks.extend(_source_cards(reply) if cards else [_sources_block(reply.citations, reply.language)])
    options = _choices([a for a in reply.actions if a.kind not in _FEEDBACK_KINDS])
    if options and style is Style.CURRENT and reply.kind is ReplyKind.CLARIFICATION:
        choose = wording(reply.language).choose
        blocks.extend(_option_section(a, i, choose) for i, a in enumerate(options))
    elif options:
        blocks.append(ActionsBlock(block_id=OPTIONS_BLOCK, elements=[_button(a, i) for i, a in enumerate(options)]))
    links = [c for c in reply.citations if _SAFE_LINK.match(c.url)][:MAX_CHOICES]
    if reply.kind is ReplyKind.REFUSAL and links:  # the closest sections under a refusal: one link button each
        blocks.append(ActionsBlock(block_id=SECTIONS_BLOCK, elements=[_link_button(c) for c in links]))
    blocks.extend(_feedback_blocks([a for a in reply.actions if a.kind in _FEEDBACK_KINDS], style))
    return [b.to_dict() for b in blocks]


def _feedback_blocks(feedback: list[ReplyAction], style: Style) -> list[Block]:
    if not feedback:
        return []
    helpful = next((a for a in feedback if a.kind is ActionKind.HELPFUL), None)
    unhelpful = next((a for a in feedback if a.kind is ActionKind.NOT_HELPFUL), None)
    if style is Style.CLASSIC or helpful is None or unhelpful is None:
        return [ActionsBlock(block_id=FEEDBACK_BLOCK, elements=[_button(a, i) for i, a in enumerate(feedback)])]
    thumbs = FeedbackButtonsElement(
        action_id=FEEDBACK_ACTION,
        positive_button=FeedbackButtonObject(text=_label(helpful.label), value=helpful.id,
                                             accessibility_label=_label(helpful.label)),
        negative_button=FeedbackButtonObject(text=_label(unhelpful.label), value=unhelpful.id,
                                             accessibility_label=_label(unhelpful.label)),
    )  # fmt: skip
    blocks: list[Block] = [ContextActionsBlock(block_id=FEEDBACK_BLOCK, elements=[thumbs])]
    others = [a for a in feedback if a is not helpful and a is not unhelpful]
    if others:
        blocks.append(ActionsBlock(block_id=HELP_BLOCK, elements=[_button(a, i) for i, a in enumerate(others)]))
    return blocks


def _option_section(action: ReplyAction, index: int, choose: str) -> SectionBlock:
    """A clarification choice: its whole label as wrapping text, a short button beside it."""
    button = ButtonElement(
        text=PlainTextObject(text=choose, emoji=True),
        action_id=f"{ACTION_PREFIX}{action.kind.value}:{index}",
        value=action.id,
    )
    label = f"*{index + 1}.* {inert(action.label)}"[:MAX_SECTION_CHARS]
    return SectionBlock(block_id=f"{OPTION_PREFIX}{index}", text=MarkdownTextObject(text=label), accessory=button)


def _choices(options: list[ReplyAction]) -> list[ReplyAction]:
    """At most five choices; when cutting, keep "rephrase"/"retry" and drop the last topic choices."""
    if len(options) <= MAX_CHOICES:
        return options
    fixed = [a for a in options if a.kind is not ActionKind.SEARCH][:MAX_CHOICES]
    topics = [a for a in options if a.kind is ActionKind.SEARCH][: MAX_CHOICES - len(fixed)]
    return [a for a in options if a in topics or a in fixed]


def _sources_block(citations: Sequence[Citation], language: str) -> ContextBlock:
    """The compact form: one context line per source, `[n] <link|title> › crumb › crumb`."""
    elements = [MarkdownTextObject(text=f"*{texts(language).sources_heading}*")]
    for c in citations[: MAX_CONTEXT_ELEMENTS - 1]:
        crumbs = [inert(crumb) for crumb in c.crumbs if crumb and crumb != c.title]
        trail = " › ".join([link(c.url, c.title or c.url), *crumbs])
        trail += f" · {texts(language).source_updated.format(date=c.changed_on)}" if c.changed_on else ""
        elements.append(MarkdownTextObject(text=f"[{c.number}] {trail}"[:MAX_SECTION_CHARS], verbatim=True))
    return ContextBlock(block_id=SOURCES_BLOCK, elements=elements)


def _source_cards(reply: Reply) -> list[Block]:
    """One card per source (number and title, the section path, the cited passage, a button that opens it)."""
    words = wording(reply.language)
    cards: list[CardBlock] = []
    for c in reply.citations:
        path = " › ".join(crumb for crumb in c.crumbs if crumb and crumb != c.title)
        dated = texts(reply.language).source_updated.format(date=c.changed_on) if c.changed_on else ""
        path = " · ".join(part for part in (path, dated) if part)
        actions = [ButtonElement(text=PlainTextObject(text=words.open_source, emoji=True),
                                 action_id=f"{LINK_PREFIX}{c.number}", url=c.url)] if _SAFE_LINK.match(c.url) else None
        cards.append(CardBlock(
            title=MarkdownTextObject(text=fit(f"[{c.number}] {c.title or section_label(c)}", MAX_CARD_TITLE)),
            subtitle=MarkdownTextObject(text=fit(path, MAX_CARD_TITLE)) if path else None,
            body=MarkdownTextObject(text=fit(c.text, MAX_CARD_BODY)) if c.text.strip() else None,
            actions=actions,
        ))  # fmt: skip
    heading = ContextBlock(elements=[MarkdownTextObject(text=f"*{texts(reply.language).sources_heading}*")])
    return [heading, CarouselBlock(block_id=SOURCES_BLOCK, elements=cards)]


def fit(text: str, limit: int) -> str:
    """`text` on one line, made inert and cut (with …) so that the inert form has at most `limit` characters."""
    flat = " ".join(text.split())
    if len(inert(flat)) <= limit:
        return inert(flat)
    low, high = 0, len(flat)  # the longest prefix whose inert form, with "…", fits
    while low < high:
        middle = (low + high + 1) // 2
        if len(inert(flat[:middle].rstrip()) + "…") <= limit:
            low = middle
        else:
            high = middle - 1
    return inert(flat[:low].rstrip()) + "…"


def _label(text: str) -> str:
    return text if len(text) <= MAX_BUTTON_LABEL else text[: MAX_BUTTON_LABEL - 1] + "…"


def _button(action: ReplyAction, index: int) -> ButtonElement:
    return ButtonElement(
        text=PlainTextObject(text=_label(action.label), emoji=True),
        action_id=f"{ACTION_PREFIX}{action.kind.value}:{index}",
        value=action.id,
        style=_STYLES.get(action.kind),
    )


def _link_button(citation: Citation) -> ButtonElement:
    """A URL button opening a section (Slack still sends the press; the catch-all listener acknowledges it)."""
    return ButtonElement(
        text=PlainTextObject(text=_label(section_label(citation)), emoji=True),
        action_id=f"{LINK_PREFIX}{citation.number}",
        url=citation.url,
    )


def _section(text: str, *, verbatim: bool = True) -> dict[str, Any]:
    return SectionBlock(text=MarkdownTextObject(text=text, verbatim=verbatim or None)).to_dict()


def _fallback(reply: Reply, table: Table | None) -> str:
    """The notification text: the start of the answer without markup (tables as one line per row). A message that
    shows a table block carries all of that table's rows after it: Slack shows `text` in notifications and reads it to
    screen readers instead of the blocks."""
    segments = split_tables(reply.text)
    if table is not None:
        segments = [s for s in segments if not isinstance(s, TableSegment)]
    lines = "\n".join("\n".join(row_wise(s.table)) if isinstance(s, TableSegment) else s for s in segments)
    flat = " ".join(line.removeprefix("> ").removeprefix("- ") for line in lines.splitlines() if line.strip())
    lead = inert(flat.replace("**", ""))[:FALLBACK_CHARS] or texts(reply.language).sources_heading
    if table is None:
        return lead
    rows = inert("\n".join(row_wise(table)).replace("**", ""))
    return f"{lead}\n{rows}"[:TABLE_FALLBACK_CHARS]


def _text_chars(blocks: Sequence[dict[str, Any]]) -> int:
    total = 0
    for block in blocks:
        text = block.get("text")
        if isinstance(text, dict):
            total += len(str(text.get("text", "")))
        for element in block.get("elements", ()):
            inner = element.get("text")
            total += len(str(inner.get("text", ""))) if isinstance(inner, dict) else len(str(inner or ""))
        for row in block.get("rows", ()):
            total += sum(len(str(cell.get("text", ""))) for cell in row)
    return total
