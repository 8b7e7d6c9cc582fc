"""Pipe tables quoted in answers are rewritten for chats without tables: Slack rows, Discord/terminal columns."""

from __future__ import annotations

import pytest

from adapters.console import render_reply
from adapters.discord.render import to_discord_markdown
from adapters.slack.mrkdwn import to_mrkdwn
from pipeline.messages import Reply, ReplyKind

pytestmark = pytest.mark.unit

ANSWER = (
    "Here is what the documentation says:\n\n**Configuration › Language model** [1]\n"
    "| variable | default | meaning |\n|---|---|---|\n"
    "| `DOCBOT_LLM_MODEL` | — | small model for lang |\n| `DOCBOT_HTTP_PORT` | `8080` | port \\| of the server |"
)


def test_slack_gets_one_line_per_row_naming_each_column() -> None:
    text = to_mrkdwn(ANSWER, {1: "https://docs/c.md#language-model"})
    assert "|---|" not in text
    assert "• *`DOCBOT_LLM_MODEL`* — meaning: small model for lang" in text  # an empty "—" cell is left out
    assert "• *`DOCBOT_HTTP_PORT`* — default: `8080`; meaning: port | of the server" in text
    assert "*Configuration › Language model* <https://docs/c.md#language-model|[1]>" in text


def test_discord_gets_an_aligned_code_block() -> None:
    text = to_discord_markdown(ANSWER)
    block = text.split("```")[1].strip("\n").splitlines()
    assert block[0].split() == ["variable", "default", "meaning"]
    assert set(block[1].replace(" ", "")) == {"-"}
    assert block[2].startswith("DOCBOT_LLM_MODEL ") and block[3].index("8080") == block[0].index("default")


def test_the_terminal_shows_aligned_columns() -> None:
    shown = render_reply(Reply(kind=ReplyKind.ANSWER, text=ANSWER, language="en", conversation_id="c"))
    assert "|---|" not in shown and "DOCBOT_HTTP_PORT" in shown and "port | of the server" in shown


LONG = "the setting that decides how many engines embed one batch of passages at once, per usable core"
WIDE = "| variable | meaning |\n|---|---|\n| `DOCBOT_EMBEDDER_ENGINES` | " + LONG + " |"


def test_a_wide_terminal_shows_whole_cells() -> None:
    """Issue 28, item 7: cells were cut at 48 characters even on a 200-column terminal."""
    shown = render_reply(Reply(kind=ReplyKind.ANSWER, text=WIDE, language="en", conversation_id="c"), width=200)
    assert LONG in shown and "…" not in shown


def test_a_narrow_terminal_cuts_only_as_much_as_it_must() -> None:
    shown = render_reply(Reply(kind=ReplyKind.ANSWER, text=WIDE, language="en", conversation_id="c"), width=80)
    rows = [line for line in shown.splitlines() if line.strip()]
    assert all(len(line) <= 80 for line in rows)
    assert "DOCBOT_EMBEDDER_ENGINES" in shown  # the narrow column is whole; the wide one is cut to fit
    assert max(len(line) for line in rows) >= 75 and "…" in shown
