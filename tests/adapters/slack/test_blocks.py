from __future__ import annotations

import json

import pytest

from adapters.slack.blocks import (
    FEEDBACK_BLOCK,
    MAX_BLOCKS,
    MAX_MESSAGE_CHARS,
    MAX_SECTION_CHARS,
    OPTIONS_BLOCK,
    render_chosen,
    render_reply,
    split_text,
)
from pipeline.messages import Citation, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind

pytestmark = pytest.mark.unit


def reply(text: str, *, actions: tuple[ReplyAction, ...] = (), citations: tuple[Citation, ...] = ()) -> Reply:
    return Reply(kind=ReplyKind.ANSWER, text=text, language="en", conversation_id="c", citations=citations,
                 actions=actions)


def sections(blocks: list[dict[str, object]]) -> list[str]:
    return [b["text"]["text"] for b in blocks if b["type"] == "section"]  # type: ignore[index]


@pytest.mark.parametrize("limit", [50, 3000])
def test_split_text_respects_limit_and_keeps_words(limit: int) -> None:
    text = "\n\n".join(" ".join(f"w{p}x{i}" for i in range(400)) for p in range(5)) + "\n\n" + "z" * (limit * 2 + 7)
    pieces = split_text(text, limit)
    assert all(0 < len(p) <= limit for p in pieces)
    assert "".join(pieces).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")


def test_many_paragraphs_are_spread_over_messages_within_limits() -> None:
    text = "\n\n".join(f"Paragraph {i} " + "x" * 2900 for i in range(60))  # 60 sections, ~175k characters
    messages = render_reply(reply(text, actions=(ReplyAction("a1", "Helpful", ActionKind.HELPFUL),)))
    assert len(messages) > 1
    for message in messages:
        assert len(message.blocks) <= MAX_BLOCKS
        assert all(len(s) <= MAX_SECTION_CHARS for s in sections(message.blocks))
        assert message.chars <= MAX_MESSAGE_CHARS
    assert sum(len(sections(m.blocks)) for m in messages) == 60
    assert messages[-1].blocks[-1]["block_id"] == FEEDBACK_BLOCK


def test_clarification_has_at_most_five_option_buttons_with_opaque_values() -> None:
    options = tuple(ReplyAction(f"id-{i}", f"Option {i}", ActionKind.SEARCH) for i in range(7))
    human = ReplyAction("id-h", "Ask a human", ActionKind.HUMAN)
    [message] = render_reply(reply("Which one?", actions=(*options, human)))
    blocks = {b.get("block_id"): b for b in message.blocks}
    values = [e["value"] for e in blocks[OPTIONS_BLOCK]["elements"]]
    assert values == [f"id-{i}" for i in range(5)]
    assert [e["value"] for e in blocks[FEEDBACK_BLOCK]["elements"]] == ["id-h"]
    action_ids = [e["action_id"] for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert len(set(action_ids)) == len(action_ids)


def test_cutting_choices_keeps_rephrase() -> None:
    options = tuple(ReplyAction(f"id-{i}", f"Topic {i}", ActionKind.SEARCH) for i in range(5))
    rephrase = ReplyAction("id-r", "Rephrase my question", ActionKind.REPHRASE)
    [message] = render_reply(reply("Which one?", actions=(*options, rephrase)))
    [block] = [b for b in message.blocks if b.get("block_id") == OPTIONS_BLOCK]
    assert [e["value"] for e in block["elements"]] == ["id-0", "id-1", "id-2", "id-3", "id-r"]


def test_long_button_label_is_shortened() -> None:
    [message] = render_reply(reply("?", actions=(ReplyAction("x", "L" * 200, ActionKind.SEARCH),)))
    [button] = message.blocks[-1]["elements"]
    assert len(button["text"]["text"]) <= 75


def test_sources_show_title_crumbs_and_link_escaped() -> None:
    cite = Citation(1, "Reset <PIN>", ("Remote", "Security & PINs"), "https://docs.example/pin#reset", "c", 0.8)
    [message] = render_reply(reply("Do it [1].", citations=(cite,)))
    context = json.dumps(message.blocks[-1], ensure_ascii=False)
    assert "[1] <https://docs.example/pin#reset|Reset &lt;PIN&gt;> › Remote › Security &amp; PINs" in context
    assert "<https://docs.example/pin#reset|[1]>" in sections(message.blocks)[0]


def test_fallback_text_is_inert() -> None:
    [message] = render_reply(reply("<!channel> look"))
    assert "<!channel>" not in message.text


def test_render_chosen_removes_only_clicked_buttons_and_shows_choice() -> None:
    options = (ReplyAction("o1", "Remote", ActionKind.SEARCH), ReplyAction("f1", "Helpful", ActionKind.HELPFUL))
    [message] = render_reply(reply("Which?", actions=options))
    updated = render_chosen(message.blocks, "Remote <1>", "en", OPTIONS_BLOCK)
    assert [b.get("block_id") for b in updated if b["type"] == "actions"] == [FEEDBACK_BLOCK]
    assert "Remote &lt;1&gt;" in json.dumps(updated[-1])
    again = render_chosen(updated, "Helpful", "en")
    assert not [b for b in again if b["type"] == "actions"]
    assert sum(1 for b in again if b.get("block_id") == "docbot_choice") == 1
