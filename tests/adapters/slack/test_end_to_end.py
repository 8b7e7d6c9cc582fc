"""The scripted Slack conversation with the real application (`bot.app.build_app`) over the fixture manual, the real
adapter over signed HTTP, and the fake Web API. Run with `-s` to see the transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.slack_demo import DOCS_URL, choice_label, run_demo
from tests.adapters.slack.contract import assert_calls_valid

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _blocks(args: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = args.get("blocks", [])
    return list(json.loads(blocks) if isinstance(blocks, str) else blocks)


async def test_mention_follow_up_clarification_and_click(tmp_path: Path) -> None:
    lines: list[str] = []
    scenario = await run_demo(tmp_path, out=lines.append)
    print("\n".join(lines))
    api = scenario.api
    roots = sorted({m.thread_ts for m in api.bot_messages("C1") if m.thread_ts})
    first_root, vague_root = roots

    # a mention gets a threaded answer with sources; a follow-up without a mention in that thread is answered too
    answer, follow_up = api.bot_messages("C1", thread_ts=first_root)
    assert "Home and Back" in answer.text or "Home and Back" in str(answer.blocks)
    sources = [b for b in answer.blocks if b.get("block_id") == "docbot_sources"]
    assert f"{DOCS_URL}getting-started/remote.md#pairing-the-remote-with-the-hub" in str(sources)
    assert "remote.md#replacing-the-remote-batteries" in str(follow_up.blocks)  # "its" resolved to the remote

    # a vague question gets clarification buttons carrying opaque ids; the click resumes with an answer
    clarifying, resumed = api.bot_messages("C1", thread_ts=vague_root)
    assert not [b for b in clarifying.blocks if str(b.get("block_id")).startswith("docbot_option")]  # gone after click
    offered = [
        (choice_label(b["text"]["text"]), b["accessory"]) for c in api.calls_to("chat.postMessage")
        + api.calls_to("chat.update") for b in _blocks(c.args) if str(b.get("block_id")).startswith("docbot_option:")
    ]
    chosen = offered[0][0]
    assert len(offered) >= 3 and all(len(e["value"]) <= 40 and chosen not in e["value"] for _, e in offered)
    assert chosen in str(clarifying.blocks[-1])  # the choice is shown on the updated message
    assert "#" in str([b for b in resumed.blocks if b.get("block_id") == "docbot_sources"])  # it cites a section
    assert chosen.rsplit(" › ", 1)[-1] in str(resumed.blocks)  # the label is "Page › Section"; the section answers

    # every user message got exactly one answer; no placeholder was left behind
    assert len(api.bot_messages("C1")) == 4
    assert not [m for m in api.bot_messages("C1") if "Looking through the docs" in m.text]
    assert_calls_valid(api.calls)
