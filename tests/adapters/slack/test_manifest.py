"""The app manifests ask for exactly the scopes the adapter needs and subscribe to the events it listens to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adapters.slack.app import BOT_SCOPES, EVENTS_PATH

pytestmark = pytest.mark.unit

DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "slack"
EVENTS = {"app_mention", "message.channels", "message.groups", "message.im", "message.mpim",
          "assistant_thread_started", "assistant_thread_context_changed"}  # fmt: skip


def _list_under(text: str, key: str) -> set[str]:
    match = re.search(rf"^(\s*){key}:\n((?:\1\s+- .+\n)+)", text, re.MULTILINE)
    assert match, f"{key} not found"
    return {line.strip()[2:] for line in match.group(2).splitlines()}


@pytest.mark.parametrize("name", ["manifest.yml", "manifest-socket-mode.yml"])
def test_manifest_scopes_and_events(name: str) -> None:
    text = (DEPLOY / name).read_text(encoding="utf-8")
    assert _list_under(text, "bot") == set(BOT_SCOPES)
    assert _list_under(text, "bot_events") == EVENTS
    socket = "socket_mode_enabled: true" in text
    assert socket == (name == "manifest-socket-mode.yml")
    if not socket:
        assert text.count(f"https://docbot.example.com{EVENTS_PATH}") == 3  # events, interactivity, /ask
