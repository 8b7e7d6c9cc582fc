from __future__ import annotations

import pytest

from adapters.slack.mrkdwn import escape, inert, link, to_mrkdwn

pytestmark = pytest.mark.unit


def test_escape_control_characters() -> None:
    assert escape("a & b < c > d") == "a &amp; b &lt; c &gt; d"


@pytest.mark.parametrize(
    "untrusted",
    ["<!here>", "<!channel>", "<!everyone>", "<@U12345>", "<!subteam^S123|@team>", "<https://evil.example|docs>"],
)
def test_control_sequences_from_docs_or_model_are_inert(untrusted: str) -> None:
    shown = to_mrkdwn(f"Note: {untrusted} please")
    assert "<" not in shown and ">" not in shown


@pytest.mark.parametrize("word", ["@here", "@channel", "@everyone", "@Here"])
def test_plain_broadcast_words_are_defanged(word: str) -> None:
    shown = inert(f"ping {word} now")
    assert word not in shown and word[1:] in shown


def test_neutral_markup_becomes_mrkdwn() -> None:
    text = "**Pairing** works [1].\n- hold the button\n> quoted from the manual\n\nSecond [2] and [9]."
    shown = to_mrkdwn(text, {1: "https://docs.example/a?x=1&y=2", 2: "javascript:alert(1)"})
    assert shown.splitlines() == [
        "*Pairing* works <https://docs.example/a?x=1&amp;y=2|[1]>.",
        "• hold the button",
        "> quoted from the manual",
        "",
        "Second [2] and [9].",  # unsafe URL and unknown citation stay plain
    ]


def test_link_label_cannot_break_out() -> None:
    assert link("https://docs.example/x", "a|b>c") == "<https://docs.example/x|a¦b&gt;c>"
    assert link("https://docs.example/x y", "t") == "t"
