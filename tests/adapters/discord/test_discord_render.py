"""Rendering replies for Discord, the custom_id scheme and the in-memory dedupe (no sockets)."""

from __future__ import annotations

import pytest

from adapters.discord.dedupe import RecentIds
from adapters.discord.inbound import strip_bot_mention, thread_name
from adapters.discord.render import MESSAGE_LIMIT, citation_label, render_reply, sources_embed, split_text
from pipeline.messages import Citation, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind

pytestmark = pytest.mark.unit


def reply(text: str, **kw: object) -> Reply:
    return Reply(kind=ReplyKind.ANSWER, text=text, language="en", conversation_id="c", **kw)  # type: ignore[arg-type]


def test_short_text_stays_one_message() -> None:
    assert split_text("One.\n\nTwo.") == ["One.\n\nTwo."]


def test_split_keeps_paragraphs_whole_and_under_the_limit() -> None:
    paragraphs = [f"Paragraph {i} " + "x" * 600 for i in range(8)]
    parts = split_text("\n\n".join(paragraphs))
    assert all(len(part) <= MESSAGE_LIMIT for part in parts)
    assert [p for part in parts for p in part.split("\n\n")] == paragraphs
    assert len(parts) == 3  # three paragraphs of ~612 characters fit in 2,000


def test_a_paragraph_longer_than_the_limit_is_cut_at_lines_then_words() -> None:
    lines = "\n".join(f"- item {i} " + "word " * 20 for i in range(40))
    parts = split_text(lines)
    assert len(parts) > 1 and all(len(part) <= MESSAGE_LIMIT for part in parts)
    assert all(part.startswith("- item") for part in parts)
    words = split_text("word " * 1000)
    assert all(len(part) <= MESSAGE_LIMIT and not part.endswith(" wor") for part in words)
    assert "".join(words).replace(" ", "") == ("word" * 1000)
    unbroken = split_text("y" * 4500)
    assert [len(part) for part in unbroken] == [2000, 2000, 500]


def test_sources_embed_lists_title_crumbs_and_link() -> None:
    citations = (
        Citation(2, "Sleep timer", ("Display", "Sleep timer"), "https://docs.test/display#sleep", "b", 0.7),
        Citation(1, "Pairing", ("Remote",), "https://docs.test/remote#pair", "a", 0.9),
    )
    embed = sources_embed(citations, "Sources")
    assert embed is not None and embed.title == "Sources"
    assert embed.description == (
        "**[1]** [Pairing › Remote](https://docs.test/remote#pair)\n"
        "**[2]** [Sleep timer › Display](https://docs.test/display#sleep)"
    )
    assert sources_embed((), "Sources") is None
    assert citation_label(citations[0]) == "Sleep timer › Display"


def test_reply_renders_note_embed_and_buttons_on_the_last_message_only() -> None:
    actions = (
        ReplyAction("s1", "Voice remote", ActionKind.SEARCH),
        ReplyAction("h1", "Ask a human", ActionKind.HUMAN),
    )
    citation = Citation(1, "Pairing", (), "https://docs.test/p", "a", 0.9)
    long_text = "\n\n".join("z" * 1500 for _ in range(2))
    messages = render_reply(
        reply(long_text, note="Answered offline.", citations=(citation,), actions=actions),
        asker_id=7,
        sources_heading="Sources",
    )
    assert len(messages) == 2
    assert messages[0].view is None and messages[0].embed is None
    assert messages[1].content.endswith("-# Answered offline.")
    assert messages[1].embed is not None
    assert messages[1].view is not None
    assert [item.custom_id for item in messages[1].view.children] == ["docbot:a:s1:7", "docbot:h:h1:7"]  # type: ignore[attr-defined]
    assert all(m.allowed_mentions.everyone is False and m.allowed_mentions.roles is False for m in messages)


def test_support_role_mention_is_the_only_allowed_ping() -> None:
    messages = render_reply(reply("A person will help. @everyone"), asker_id=1, sources_heading="S", mention_role_id=99)
    first = messages[0]
    assert first.content.startswith("<@&99> ")
    assert first.allowed_mentions.everyone is False and first.allowed_mentions.users is False
    assert [r.id for r in first.allowed_mentions.roles] == [99]  # type: ignore[union-attr]


def test_thread_name_and_mention_stripping() -> None:
    assert strip_bot_mention("<@123> how? <@!123>", 123) == "how?"
    assert strip_bot_mention("<@456> hi", 123) == "<@456> hi"
    assert thread_name("\n  first line\nsecond", "alice") == "first line"
    assert thread_name("", "alice") == "Question from alice"
    assert len(thread_name("q" * 300, "alice")) == 100


def test_recent_ids_forget_after_the_ttl() -> None:
    now = [0.0]
    recent = RecentIds(ttl_s=10, clock=lambda: now[0])
    assert recent.first_time("m1") and not recent.first_time("m1")
    now[0] = 9.0
    assert not recent.first_time("m1")
    now[0] = 20.0
    assert recent.first_time("m1")


def test_recent_ids_stay_bounded() -> None:
    recent = RecentIds(ttl_s=1000, max_size=3, clock=lambda: 0.0)
    for key in "abcd":
        assert recent.first_time(key)
    assert recent.first_time("a")  # the oldest was evicted to keep the memory bounded
