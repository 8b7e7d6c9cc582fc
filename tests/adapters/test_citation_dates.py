"""Every citation says when its source last changed, in the reply's language, on every platform; a team answer's
citation names who gave it instead (its title), with no second date."""

from __future__ import annotations

import dataclasses
import json

import pytest

from adapters.console import render_reply as console_reply
from adapters.discord.layout import render_card
from adapters.discord.render import render_reply as discord_reply
from adapters.slack.blocks import render_reply as slack_reply
from pipeline.messages import Citation, Reply, ReplyKind

pytestmark = pytest.mark.unit

DOC = Citation(1, "Pairing", ("Remote",), "https://docs.test/remote#pair", "a", 0.9, changed_on="2025-03-02")
TEAM = Citation(2, "answered by @alice in #help on 2026-11-20", (), "https://team.slack.com/archives/C1/p1", "b", 0.8)
UNDATED = Citation(3, "Old reply", (), "https://docs.test/old", "c", 0.5)


def reply(language: str) -> Reply:
    return Reply(ReplyKind.ANSWER, "Hold Home [1]; or ask [2].", language, "c", citations=(DOC, TEAM, UNDATED))


def test_slack_shows_the_date_after_the_source_on_its_card_and_in_the_compact_list() -> None:
    [message] = slack_reply(reply("en"))
    (carousel,) = [b for b in message.blocks if b["type"] == "carousel"]
    cards = {card["title"]["text"]: card.get("subtitle", {}).get("text") for card in carousel["elements"]}
    assert cards == {"[1] Pairing": "Remote · updated 2025-03-02",
                     "[2] answered by @alice in #help on 2026-11-20": None, "[3] Old reply": None}  # fmt: skip
    [compact] = slack_reply(dataclasses.replace(reply("de"), kind=ReplyKind.REFUSAL))
    context = json.dumps(compact.blocks, ensure_ascii=False)
    assert "[1] <https://docs.test/remote#pair|Pairing> › Remote · aktualisiert am 2025-03-02" in context
    assert "[2] <https://team.slack.com/archives/C1/p1|answered by @alice in #help on 2026-11-20>\"" in context
    assert "[3] <https://docs.test/old|Old reply>\"" in context


def test_discord_shows_the_date_after_the_source() -> None:
    messages = discord_reply(reply("es"), asker_id=7, sources_heading="Fuentes")
    embed = messages[-1].embed
    assert embed is not None and embed.description is not None
    lines = embed.description.splitlines()
    assert lines[0] == "**[1]** [Pairing › Remote](https://docs.test/remote#pair) · actualizado el 2025-03-02"
    assert lines[1] == "**[2]** [answered by @alice in #help on 2026-11-20](https://team.slack.com/archives/C1/p1)"
    assert lines[2] == "**[3]** [Old reply](https://docs.test/old)"


def test_a_discord_answer_card_shows_the_date_after_the_source() -> None:
    [card] = render_card(reply("fr"), asker_id=7, sources_heading="Sources")
    assert card.layout is not None
    shown = json.dumps(card.layout.to_components(), ensure_ascii=False)
    assert "[Pairing › Remote](https://docs.test/remote#pair) · mis à jour le 2025-03-02" in shown
    assert shown.count("mis à jour") == 1  # the team answer and the undated source carry no date


def test_the_terminal_shows_the_date_after_the_source() -> None:
    text = console_reply(reply("en"))
    assert "Remote · updated 2025-03-02" in text
    assert "answered by @alice in #help on 2026-11-20  " in text and text.count("updated") == 1
