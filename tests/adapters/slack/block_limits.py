"""Slack's own block limits, checked on rendered messages: what `chat.postMessage` would refuse as `invalid_blocks`,
`msg_too_long` or `invalid_attachments` (only_one_table_allowed).

Two layers. slack_sdk's block models carry Slack's field limits as validators (section text 3,000, button text 75,
value 2,000, action_id and block_id 255, context 10 elements, context_actions 5, carousel 10 cards, card title and
subtitle 150, body 200, ...): each block is parsed into its model and serialised again, which runs every validator of
every nested object, and must come back unchanged (an unknown key is dropped by the model, so a difference is a field
Slack does not know). The message-level rules, and those the models leave out, are written below with the page they
come from.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

# docs.slack.dev/reference/block-kit/blocks: "You can include up to 50 blocks in each message".
MAX_BLOCKS_PER_MESSAGE = 50
# docs.slack.dev/reference/methods/chat.postMessage: text is truncated over 40,000 characters; keep under 4,000.
MAX_TEXT = 4000
# docs.slack.dev/reference/block-kit/blocks/table-block: at most 100 rows of at most 20 cells, 20 column settings;
# one table per message (Slack answers `invalid_attachments` / only_one_table_allowed, per Slack's Block Kit skill,
# github.com/slackapi/slack-skills-plugin skills/block-kit/SKILL.md).
MAX_TABLE_ROWS = 100
MAX_TABLE_CELLS = 20
MAX_TABLES_PER_MESSAGE = 1
# docs.slack.dev/reference/block-kit/blocks/card-block: title and subtitle 150 characters, body 200.
MAX_CARD_TITLE = 150
MAX_CARD_BODY = 200
# docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element: text 75, value 2,000.
MAX_FEEDBACK_TEXT = 75
MAX_FEEDBACK_VALUE = 2000


def problems(text: str, blocks: list[dict[str, Any]]) -> list[str]:
    """Everything Slack would refuse in one message (`text` and `blocks` as sent); empty when it is fine."""
    found: list[str] = []
    if not text.strip():
        found.append("no text: Slack needs `text` as the notification and accessibility fallback")
    if len(text) > MAX_TEXT:
        found.append(f"text has {len(text)} characters (over {MAX_TEXT})")
    if len(blocks) > MAX_BLOCKS_PER_MESSAGE:
        found.append(f"{len(blocks)} blocks (over {MAX_BLOCKS_PER_MESSAGE})")
    tables = sum(1 for b in blocks if b.get("type") == "table")
    if tables > MAX_TABLES_PER_MESSAGE:
        found.append(f"{tables} table blocks (Slack allows one per message)")
    ids = Counter(b["block_id"] for b in blocks if b.get("block_id"))
    found += [f"block_id {i!r} used {n} times" for i, n in ids.items() if n > 1]
    for index, block in enumerate(blocks):
        found += [f"blocks[{index}] ({block.get('type')}): {p}" for p in _block_problems(block)]
    return found


def _block_problems(block: dict[str, Any]) -> list[str]:
    found: list[str] = []
    try:
        model = Block.parse(block)
        if model is None:
            return ["not a block type slack_sdk knows"]
        again = model.to_dict()  # runs the validators of the block and of every nested object
    except (SlackObjectFormationError, TypeError, KeyError) as exc:
        return [f"slack_sdk refuses it: {exc}"]
    if again != block:
        found.append(f"does not survive slack_sdk's model unchanged: {sorted(_diff(block, again))}")
    kind = block.get("type")
    if kind == "table":
        rows = block.get("rows") or []
        if not rows or len(rows) > MAX_TABLE_ROWS:
            found.append(f"{len(rows)} rows (1 to {MAX_TABLE_ROWS})")
        for r, row in enumerate(rows):
            if not 0 < len(row) <= MAX_TABLE_CELLS:
                found.append(f"row {r} has {len(row)} cells (1 to {MAX_TABLE_CELLS})")
            found += [f"row {r} cell {c} is empty" for c, cell in enumerate(row) if not str(cell.get("text", ""))]
        if len(block.get("column_settings") or []) > MAX_TABLE_CELLS:
            found.append("more than 20 column settings")
    if kind == "carousel":
        for card in block.get("elements") or []:
            found += [f"card: {p}" for p in _card_problems(card)]
    if kind == "context_actions":
        for element in block.get("elements") or []:
            for key in ("positive_button", "negative_button"):
                button = element.get(key) or {}
                if len(str((button.get("text") or {}).get("text", ""))) > MAX_FEEDBACK_TEXT:
                    found.append(f"{key} text over {MAX_FEEDBACK_TEXT}")
                if not 0 < len(str(button.get("value", ""))) <= MAX_FEEDBACK_VALUE:
                    found.append(f"{key} value empty or over {MAX_FEEDBACK_VALUE}")
    return found


def _card_problems(card: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for key, limit in (("title", MAX_CARD_TITLE), ("subtitle", MAX_CARD_TITLE), ("body", MAX_CARD_BODY)):
        text = str((card.get(key) or {}).get("text", ""))
        if len(text) > limit:
            found.append(f"{key} has {len(text)} characters (over {limit})")
    if not any(card.get(k) for k in ("hero_image", "title", "actions", "body")):
        found.append("needs one of hero_image, title, actions, body")
    return found


def _diff(a: Any, b: Any, path: str = "") -> set[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return {p for k in a.keys() | b.keys() for p in _diff(a.get(k), b.get(k), f"{path}.{k}")}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return {p for i, (x, y) in enumerate(zip(a, b, strict=True)) for p in _diff(x, y, f"{path}[{i}]")}
    return set() if a == b else {path or "."}
