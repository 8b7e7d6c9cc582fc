"""Replies rendered as Block Kit, checked with Slack's own limits (block_limits.py): five tables from docbot's docs as
table blocks, tables over the block's limits as bullets, five kinds of answer in both styles (today's blocks and the
classic fallback), and the pieces a person reads and presses (cards, feedback buttons, clarification choices)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.blocks import (
    ACTION_PREFIX,
    CHOICE_BLOCK,
    FEEDBACK_ACTION,
    FEEDBACK_BLOCK,
    HELP_BLOCK,
    MAX_BLOCKS,
    MAX_MESSAGE_CHARS,
    MAX_SECTION_CHARS,
    OPTION_PREFIX,
    OPTIONS_BLOCK,
    SECTIONS_BLOCK,
    SOURCES_BLOCK,
    Style,
    block_with_button,
    render_chosen,
    render_reply,
    split_text,
    table_block,
)
from adapters.slack.mrkdwn import inert
from adapters.tables import TableSegment, split_tables
from pipeline.messages import Citation, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind
from tests.adapters.slack.block_limits import problems

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[3] / "docs"
STYLES = [Style.CURRENT, Style.CLASSIC]


def reply(text: str, *, actions: tuple[ReplyAction, ...] = (), citations: tuple[Citation, ...] = (),
          kind: ReplyKind = ReplyKind.ANSWER, note: str | None = None) -> Reply:
    return Reply(kind=kind, text=text, language="en", conversation_id="c", citations=citations, actions=actions,
                 note=note)  # fmt: skip


def sections(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["text"]["text"] for b in blocks if b["type"] == "section"]


def docs_table(page: str, first_header: str) -> TableSegment:
    """A table from docbot's own documentation, found by its first column's header."""
    for segment in split_tables((DOCS / page).read_text(encoding="utf-8")):
        if isinstance(segment, TableSegment) and segment.table[0][0] == first_header:
            return segment
    raise AssertionError(f"no table starting with {first_header!r} in docs/{page}")


def as_markdown(segment: TableSegment) -> str:
    header, rows = segment.table
    rule = ["---:" if a == "right" else ":---:" if a == "center" else "---" for a in segment.align]
    lines = [header, rule, *rows]
    return "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in lines)


# Five tables of docbot's documentation: narrow, long, wide with an empty header cell, long cells, eleven columns.
DOC_TABLES = [("slack.md", "bot scope"), ("llm.md", "variable"), ("llm.md", ""), ("operations.md", "symptom"),
              ("benchmarks.md", "#")]  # fmt: skip


def cite(n: int, title: str = "Pairing", url: str | None = None) -> Citation:
    return Citation(n, title, ("Remote", "Setup"), url or f"https://docs.example/remote#s{n}", f"c{n}", 0.9,
                    text=f"Hold the pair button for three seconds until the light blinks ({n}).")  # fmt: skip


FEEDBACK = (ReplyAction("fb-yes", "Helpful", ActionKind.HELPFUL), ReplyAction("fb-no", "Not helpful",
            ActionKind.NOT_HELPFUL), ReplyAction("fb-human", "Ask a human", ActionKind.HUMAN))  # fmt: skip
TABLE_TEXT = as_markdown(docs_table("slack.md", "bot scope"))

# Five answers a person gets: an answer with a table and sources, one too long for a message, a clarification with
# long choices, a refusal with the closest sections, and an answer with two tables, a note and twelve sources.
ANSWERS = {
    "answer with a table": reply(f"Give the bot these scopes [1]:\n\n{TABLE_TEXT}\n\nThen reinstall it [2].",
                                 citations=(cite(1, "Scopes"), cite(2, "Install")), actions=FEEDBACK),
    "long answer": reply("\n\n".join(f"Step {i}: " + "press the button and wait. " * 110 for i in range(40)),
                         citations=(cite(1),), actions=FEEDBACK),
    "clarification": reply("Which device do you mean?", kind=ReplyKind.CLARIFICATION, actions=(
        *(ReplyAction(f"opt-{i}", f"The {name} that came with the TV, not the universal one sold separately "
                      f"in the accessory store ({i})", ActionKind.SEARCH) for i, name in enumerate(
            ["remote", "soundbar", "camera", "keyboard", "game pad", "stand"])),
        ReplyAction("opt-r", "Let me rephrase my question", ActionKind.REPHRASE))),
    "refusal with closest sections": reply("The docs do not cover that. Closest:\n- **Pairing** [1]\n- **Reset** [2]",
                                           kind=ReplyKind.REFUSAL, citations=(cite(1), cite(2, "Reset")),
                                           actions=FEEDBACK[:2]),
    "two tables, a note, twelve sources": reply(
        f"{TABLE_TEXT}\n\nand\n\n{as_markdown(docs_table('discord.md', 'permission'))}",
        citations=tuple(cite(n) for n in range(1, 13)), actions=FEEDBACK,
        note="Answered without the language model, which was unavailable."),
}  # fmt: skip


# -- 1. five docs tables -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("page", "first_header"), DOC_TABLES)
def test_a_docs_table_is_a_table_block_within_slacks_limits(page: str, first_header: str) -> None:
    segment = docs_table(page, first_header)
    [message] = render_reply(reply(f"From the docs [1]:\n\n{as_markdown(segment)}", citations=(cite(1),)))
    assert problems(message.text, message.blocks) == []
    [table] = [b for b in message.blocks if b["type"] == "table"]
    header, rows = segment.table
    assert len(table["rows"]) == len(rows) + 1
    assert [c["text"] for c in table["rows"][0]] == [h.replace("`", "").replace("**", "") or " " for h in header]
    assert table["rows"][-1][0]["text"] == rows[-1][0].replace("`", "").replace("**", "") or " "
    assert inert(rows[0][-1].replace("**", ""))[:40] in message.text  # the rows are in the text fallback too
    wrapped = [s.get("is_wrapped") for s in table["column_settings"]]
    assert wrapped == [True if max(len(r[k].replace("`", "").replace("**", "")) for r in [header, *rows]) > 30
                       else None for k in range(len(header))]  # fmt: skip


def test_right_aligned_columns_stay_right_aligned() -> None:
    segment = split_tables("| item | price |\n|---|---:|\n| tea | 3 |\n| cake | 12 |")[0]
    assert isinstance(segment, TableSegment)
    block = table_block(segment)
    assert block is not None and [s.get("align") for s in block["column_settings"]] == [None, "right"]


@pytest.mark.parametrize(("rows", "columns"), [(100, 3), (5, 21)])
def test_a_table_over_the_blocks_limits_becomes_bullets(rows: int, columns: int) -> None:
    header = [f"col {k}" for k in range(columns)]
    body = [[f"r{r}c{k}" for k in range(columns)] for r in range(rows)]
    text = "\n".join("| " + " | ".join(line) + " |" for line in [header, ["---"] * columns, *body])
    messages = render_reply(reply(text))
    assert not [b for m in messages for b in m.blocks if b["type"] == "table"]
    shown = "\n".join(s for m in messages for s in sections(m.blocks))
    assert f"• *r{rows - 1}c0* — col 1: r{rows - 1}c1" in shown
    for message in messages:
        assert problems(message.text, message.blocks) == []


# -- 2. five answers in both styles ------------------------------------------------------------------------------------


@pytest.mark.parametrize("style", STYLES, ids=lambda s: s.value)
@pytest.mark.parametrize("name", list(ANSWERS))
def test_five_answers_render_within_slacks_limits(name: str, style: Style) -> None:
    messages = render_reply(ANSWERS[name], style)
    for message in messages:
        assert problems(message.text, message.blocks) == [], name
    ids = [b.get("block_id") for m in messages for b in m.blocks]
    if ANSWERS[name].actions:  # every button sits under the text, on the last message
        assert not [i for m in messages[:-1] for i in (b.get("block_id") for b in m.blocks)
                    if i and i.startswith(("docbot_feedback", "docbot_option", "docbot_help"))]  # fmt: skip
    assert ids.count(SOURCES_BLOCK) <= 1


def test_the_answer_with_a_table_shows_one_table_block_cards_and_feedback_buttons() -> None:
    [message] = render_reply(ANSWERS["answer with a table"])
    kinds = [b["type"] for b in message.blocks]
    assert kinds == ["section", "table", "section", "context", "carousel", "context_actions", "actions"]
    cards = next(b for b in message.blocks if b["type"] == "carousel")["elements"]
    assert [c["title"]["text"] for c in cards] == ["[1] Scopes", "[2] Install"]
    assert cards[0]["subtitle"]["text"] == "Remote › Setup"
    assert cards[0]["actions"][0]["url"] == "https://docs.example/remote#s1"
    assert not cards[0]["actions"][0]["action_id"].startswith(ACTION_PREFIX)  # a link is never a stored action
    feedback = next(b for b in message.blocks if b["type"] == "context_actions")
    [thumbs] = feedback["elements"]
    assert (thumbs["positive_button"]["value"], thumbs["negative_button"]["value"]) == ("fb-yes", "fb-no")
    assert thumbs["action_id"] == FEEDBACK_ACTION and feedback["block_id"] == FEEDBACK_BLOCK
    help_block = next(b for b in message.blocks if b.get("block_id") == HELP_BLOCK)
    assert [e["value"] for e in help_block["elements"]] == ["fb-human"]


def test_the_classic_style_has_no_new_blocks() -> None:
    for answer in ANSWERS.values():
        kinds = {b["type"] for m in render_reply(answer, Style.CLASSIC) for b in m.blocks}
        assert kinds <= {"section", "context", "actions"}


def test_a_second_table_becomes_bullets_and_more_than_ten_sources_a_context_block() -> None:
    [message] = render_reply(ANSWERS["two tables, a note, twelve sources"])
    assert [b["type"] for b in message.blocks].count("table") == 1
    assert "• *View Channels* — why: see the channels it is asked in" in "\n".join(sections(message.blocks))
    sources = next(b for b in message.blocks if b.get("block_id") == SOURCES_BLOCK)
    assert sources["type"] == "context" and len(sources["elements"]) == 10


def test_clarification_choices_are_whole_sentences_with_a_small_button_each() -> None:
    [message] = render_reply(ANSWERS["clarification"])
    options = [b for b in message.blocks if str(b.get("block_id", "")).startswith(OPTION_PREFIX)]
    assert len(options) == 5  # five choices at most, "rephrase" kept
    assert [o["accessory"]["value"] for o in options] == ["opt-0", "opt-1", "opt-2", "opt-3", "opt-r"]
    assert all(len(o["text"]["text"]) > 75 for o in options[:4])  # the whole label, no "…"
    assert {o["accessory"]["text"]["text"] for o in options} == {"Choose"}


def test_classic_clarification_has_at_most_five_option_buttons_with_opaque_values() -> None:
    options = tuple(ReplyAction(f"id-{i}", f"Option {i}", ActionKind.SEARCH) for i in range(7))
    human = ReplyAction("id-h", "Ask a human", ActionKind.HUMAN)
    [message] = render_reply(reply("Which one?", actions=(*options, human)), Style.CLASSIC)
    blocks = {b.get("block_id"): b for b in message.blocks}
    assert [e["value"] for e in blocks[OPTIONS_BLOCK]["elements"]] == [f"id-{i}" for i in range(5)]
    assert [e["value"] for e in blocks[FEEDBACK_BLOCK]["elements"]] == ["id-h"]
    action_ids = [e["action_id"] for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert len(set(action_ids)) == len(action_ids)


def test_long_button_label_is_shortened_in_the_classic_style() -> None:
    [message] = render_reply(reply("?", actions=(ReplyAction("x", "L" * 200, ActionKind.SEARCH),)), Style.CLASSIC)
    [button] = message.blocks[-1]["elements"]
    assert len(button["text"]["text"]) <= 75


def test_compact_sources_show_title_crumbs_and_link_escaped() -> None:
    c = Citation(1, "Reset <PIN>", ("Remote", "Security & PINs"), "https://docs.example/pin#reset", "c", 0.8)
    [message] = render_reply(reply("Do it [1].", citations=(c,)), Style.CLASSIC)
    context = json.dumps(message.blocks[-1], ensure_ascii=False)
    assert "[1] <https://docs.example/pin#reset|Reset &lt;PIN&gt;> › Remote › Security &amp; PINs" in context
    assert "<https://docs.example/pin#reset|[1]>" in sections(message.blocks)[0]


def test_cards_are_inert_and_cut_to_their_limits() -> None:
    c = Citation(1, "<!channel> " + "T" * 300, ("A & B",) * 40, "javascript:alert(1)", "c", 0.8, text="@here " * 80)
    [message] = render_reply(reply("See [1].", citations=(c,)))
    assert problems(message.text, message.blocks) == []
    [card] = next(b for b in message.blocks if b["type"] == "carousel")["elements"]
    shown = json.dumps(card)
    assert "<!channel>" not in shown and "@here" not in shown.replace("@\\u2060here", "")
    assert "actions" not in card  # no button for a link that is not http(s)


def test_many_paragraphs_are_spread_over_messages_within_limits() -> None:
    text = "\n\n".join(f"Paragraph {i} " + "x" * 2900 for i in range(60))  # 60 sections, ~175k characters
    messages = render_reply(reply(text, actions=FEEDBACK[:2]))
    assert len(messages) > 1
    for message in messages:
        assert len(message.blocks) <= MAX_BLOCKS and message.chars <= MAX_MESSAGE_CHARS
        assert all(len(s) <= MAX_SECTION_CHARS for s in sections(message.blocks))
        assert problems(message.text, message.blocks) == []
    assert sum(len(sections(m.blocks)) for m in messages) == 60
    assert messages[-1].blocks[-1]["block_id"] == FEEDBACK_BLOCK


@pytest.mark.parametrize("limit", [50, 3000])
def test_split_text_respects_limit_and_keeps_words(limit: int) -> None:
    text = "\n\n".join(" ".join(f"w{p}x{i}" for i in range(400)) for p in range(5)) + "\n\n" + "z" * (limit * 2 + 7)
    pieces = split_text(text, limit)
    assert all(0 < len(p) <= limit for p in pieces)
    assert "".join(pieces).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")


def test_fallback_text_is_inert() -> None:
    [message] = render_reply(reply("<!channel> look"))
    assert "<!channel>" not in message.text


def test_refusal_links_the_closest_sections() -> None:
    [message] = render_reply(ANSWERS["refusal with closest sections"])
    links = next(b for b in message.blocks if b.get("block_id") == SECTIONS_BLOCK)
    assert [e["url"] for e in links["elements"]] == ["https://docs.example/remote#s1", "https://docs.example/remote#s2"]


# -- 3. the choice shown after a press ---------------------------------------------------------------------------------


def test_a_chosen_option_takes_every_option_section_away_and_keeps_feedback() -> None:
    answer = reply("Which?", kind=ReplyKind.CLARIFICATION, actions=(
        ReplyAction("o1", "Remote", ActionKind.SEARCH), ReplyAction("o2", "TV", ActionKind.SEARCH), *FEEDBACK[:2]))
    [message] = render_reply(answer)
    pressed = block_with_button(message.blocks, "o2")
    assert pressed == f"{OPTION_PREFIX}1"
    updated = render_chosen(message.blocks, "TV <1>", "en", pressed)
    assert not [b for b in updated if str(b.get("block_id", "")).startswith(OPTION_PREFIX)]
    assert [b["block_id"] for b in updated if b["type"] == "context_actions"] == [FEEDBACK_BLOCK]
    assert "TV &lt;1&gt;" in json.dumps(updated[-1]) and updated[-1]["block_id"] == CHOICE_BLOCK
    assert block_with_button(message.blocks, "fb-no") == FEEDBACK_BLOCK  # a feedback button is found by its value
    assert block_with_button(message.blocks, "nope") is None


def test_render_chosen_in_the_classic_style_removes_only_clicked_buttons() -> None:
    options = (ReplyAction("o1", "Remote", ActionKind.SEARCH), ReplyAction("f1", "Helpful", ActionKind.HELPFUL))
    [message] = render_reply(reply("Which?", actions=options), Style.CLASSIC)
    updated = render_chosen(message.blocks, "Remote <1>", "en", OPTIONS_BLOCK)
    assert [b.get("block_id") for b in updated if b["type"] == "actions"] == [FEEDBACK_BLOCK]
    again = render_chosen(updated, "Helpful", "en")
    assert not [b for b in again if b["type"] == "actions"]
    assert sum(1 for b in again if b.get("block_id") == CHOICE_BLOCK) == 1
