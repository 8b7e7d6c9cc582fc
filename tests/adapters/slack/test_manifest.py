"""The app manifests are valid for Slack's manifest schema (a copy with its source in manifest_schema/), use the agent
messaging experience (`features.agent_view`), ask for exactly the scopes the adapter needs and subscribe to exactly the
events it handles."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from adapters.slack.app import BOT_EVENTS, BOT_SCOPES, EVENTS_PATH

pytestmark = pytest.mark.unit

DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "slack"
SCHEMA = Path(__file__).resolve().parent / "manifest_schema" / "manifest.schema.1.0.0.json"
MANIFESTS = ["manifest.yml", "manifest-socket-mode.yml"]


def manifest(name: str) -> dict[str, Any]:
    return dict(yaml.safe_load((DEPLOY / name).read_text(encoding="utf-8")))


def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


@pytest.mark.parametrize("name", MANIFESTS)
def test_the_manifest_is_valid_for_slacks_schema(name: str) -> None:
    problems = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator().iter_errors(manifest(name))]
    assert problems == []


@pytest.mark.parametrize("name", MANIFESTS)
def test_the_manifest_uses_the_agent_messaging_experience(name: str) -> None:
    features = manifest(name)["features"]
    assert "assistant_view" not in features  # new apps can no longer be created with it
    assert 0 < len(features["agent_view"]["agent_description"]) <= 300
    assert features["app_home"]["messages_tab_enabled"] is True
    assert features["app_home"]["messages_tab_read_only_enabled"] is False  # people write to docbot there


def test_the_schema_catches_what_slack_would_refuse() -> None:
    """The copy is the real constraint set, not a permissive stand-in: the shapes Slack refuses fail it."""
    check = validator()
    base = manifest("manifest.yml")
    too_long = copy.deepcopy(base)
    too_long["features"]["agent_view"]["agent_description"] = "x" * 301
    unknown_key = copy.deepcopy(base)
    unknown_key["features"]["agent_view"]["assistant_description"] = "the old key"
    too_many_prompts = copy.deepcopy(base)
    too_many_prompts["features"]["agent_view"]["suggested_prompts"] = [{"title": "t", "message": "m"}] * 5
    for broken in (too_long, unknown_key, too_many_prompts):
        assert list(check.iter_errors(broken)), broken["features"]["agent_view"]


@pytest.mark.parametrize("name", MANIFESTS)
def test_manifest_scopes_and_events(name: str) -> None:
    data = manifest(name)
    assert set(data["oauth_config"]["scopes"]["bot"]) == set(BOT_SCOPES)
    assert set(data["settings"]["event_subscriptions"]["bot_events"]) == set(BOT_EVENTS)
    socket = data["settings"]["socket_mode_enabled"]
    assert socket == (name == "manifest-socket-mode.yml")
    if not socket:
        url = f"https://docbot.example.com{EVENTS_PATH}"
        assert data["settings"]["event_subscriptions"]["request_url"] == url
        assert data["settings"]["interactivity"]["request_url"] == url
        assert [c["url"] for c in data["features"]["slash_commands"]] == [url]
