"""slack-bolt's own test payloads (../shared/data/slack/bolt-python-test-payloads, 105 real request bodies) driven
through the real adapter: signed HTTP requests into the real bolt app, the durable inbox recorded.

The expected outcome of each payload follows from its kind (index.json) and the few fields the rule names — never
from what the adapter happens to do:

    question      a mention (of the bot the event's `authorizations` name), a DM, /ask → stored, `mentioned`
    follow-up     a person's reply in a thread     → stored, not `mentioned` (the service decides whether to answer)
    ignored       bots, edits, deletions, chatter outside threads, thread messages without text, a mention without
                  a channel → 200, nothing stored
    challenge     url_verification                 → 200 with the challenge echoed
    prompts       assistant_thread_started         → 200, suggested prompts set, nothing stored
    greeting      app_home_opened on the Messages tab → 200, nothing stored, suggested prompts set for the tab
                  (no thread_ts: the agent messaging experience) and a greeting posted in the empty DM
    button        a press of one of docbot's buttons → stored as an action with the button's opaque value
    acknowledged  everything docbot does not handle (other apps' buttons and commands, views, shortcuts, reactions,
                  membership, uninstalls, ...) → 200, nothing stored, nothing posted

Every Events API payload of a kind docbot stores is also validated against Slack's event wrapper JSON schema.
"""

from __future__ import annotations

import copy
import enum
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from adapters.slack.blocks import ACTION_PREFIX
from adapters.slack.fake_web_api import BOT_ID, BOT_USER, Call, Message
from pipeline.messages import Inbound, InboundKind, ThreadRef
from tests.adapters.slack.conftest import Harness, MakeHarness
from tests.conftest import shared_path

pytestmark = pytest.mark.integration

ASK = "/ask"  # Settings.slack_ask_command's default, which the harness keeps
# bolt's test_unmatched_suggestions builds partial bodies (only the keys its warning text reads) that Slack never
# sends: a block_actions without `actions`, a workflow-step view without `workflow_step` (bolt itself raises
# KeyError on that one before any docbot code runs). They are still driven: nothing may be stored or posted.
FRAGMENT_MARK = "filtered_body"
# The 2021 wrapper schema requires `authed_users`, which Slack replaced by `authorizations` in February 2021
# (https://docs.slack.dev/changelog/2020-09-15-events-api-truncate-authed-users); bolt's payloads follow the new shape.
DEPRECATED_WRAPPER_FIELDS = ("authed_users",)


class Outcome(enum.Enum):
    QUESTION = "question"
    FOLLOW_UP = "follow-up"
    IGNORED = "ignored"
    CHALLENGE = "challenge"
    PROMPTS = "prompts"
    GREETING = "greeting"
    BUTTON = "button"
    ACKNOWLEDGED = "acknowledged"


class RecordingIntake:
    """The inbox as the adapter sees it (`accept`), recording what was stored."""

    def __init__(self) -> None:
        self.accepted: list[tuple[Inbound, ThreadRef]] = []

    async def accept(self, inbound: Inbound, ref: ThreadRef) -> bool:
        self.accepted.append((inbound, ref))
        return True


@dataclass(frozen=True)
class Payload:
    file: str
    kind: str
    body: dict[str, Any]

    @property
    def fragment(self) -> bool:
        return FRAGMENT_MARK in self.file


def payloads() -> list[Payload]:
    root = shared_path("slack", "bolt-python-test-payloads")
    index = json.loads((root / "index.json").read_text(encoding="utf-8"))
    return [Payload(e["file"], e["kind"], json.loads((root / e["file"]).read_text(encoding="utf-8"))) for e in index]


def expected(payload: Payload) -> Outcome:
    body, kind = payload.body, payload.kind
    if payload.fragment:
        return Outcome.IGNORED
    if kind == "url_verification":
        return Outcome.CHALLENGE
    if kind == "event:assistant_thread_started":
        return Outcome.PROMPTS
    if kind == "event:app_home_opened" and body["event"].get("tab") == "messages":
        return Outcome.GREETING
    if kind.startswith("event:message") or kind == "event:app_mention":
        event = body["event"]
        if kind in ("event:message:bot", "event:message:bot_message", "event:message:message_changed",
                    "event:message:message_deleted") or event.get("bot_id") or not event.get("channel"):  # fmt: skip
            return Outcome.IGNORED
        mentioned = f"<@{bot_user(body)}" in event.get("text", "")
        if kind == "event:app_mention" or event.get("channel_type") == "im" or mentioned:
            return Outcome.QUESTION  # a bare mention too: stored, and the service answers "type a question after it"
        return Outcome.FOLLOW_UP if event.get("thread_ts") and event.get("text") else Outcome.IGNORED
    return Outcome.ACKNOWLEDGED  # including other apps' slash commands and buttons, as the payloads are


def bot_user(body: dict[str, Any]) -> str:
    """The bot's user id as the event states it: `authorizations[0]` is the installation the event is delivered for,
    and a bot installation's `user_id` is the bot user (docs.slack.dev/changelog/2020-09-15-events-api-truncate-
    authed-users). The adapter takes the bot from there too, since single-workspace mode no longer calls auth.test.
    So in test_events_org_apps__test_message__event_payload.json, whose authorization is the bot user W222, the
    text `<@W222>` mentions the bot (the fake API's BOT_USER is not the bot those payloads were delivered to)."""
    first = (body.get("authorizations") or [{}])[0]
    return str(first.get("user_id")) if first.get("is_bot") and first.get("user_id") else BOT_USER


async def drive(h: Harness, payload: Payload, body: dict[str, Any]) -> tuple[int, str]:
    if payload.kind == "slash_command":  # form-encoded on the wire; the data gives its fields as flat JSON
        return await h.post_form({key: str(value) for key, value in body.items()})
    if "event" in body or body.get("type") in ("event_callback", "url_verification"):
        response = await h.post_json(body)
        return response.status, await response.text()
    return await h.post_form({"payload": json.dumps(body)})


@dataclass
class Result:
    status: int
    text: str
    stored: list[tuple[Inbound, ThreadRef]]
    posted: list[str]  # Web API methods that write (chat.*, assistant.*)
    calls: list[Call]


async def run(make_harness: MakeHarness, payload: Payload, body: dict[str, Any] | None = None) -> Result:
    h = await make_harness()
    intake = RecordingIntake()
    h.adapter.intake = intake
    before = len(h.api.calls)
    status, text = await drive(h, payload, payload.body if body is None else body)
    await h.settle()
    calls = h.api.calls[before:]
    posted = [c.method for c in calls if c.method.startswith(("chat.", "assistant."))]
    return Result(status, text, intake.accepted, posted, calls)


def check(payload: Payload, outcome: Outcome, result: Result) -> None:
    where = f"{payload.file} ({payload.kind}, expected {outcome.value})"
    stored = [inbound for inbound, _ in result.stored]
    if payload.fragment:
        assert stored == [] and not [m for m in result.posted if m != "chat.postMessage"], where
        return
    assert result.status == 200, f"{where}: HTTP {result.status} {result.text[:80]}"
    if outcome in (Outcome.QUESTION, Outcome.FOLLOW_UP):
        [inbound] = stored
        event = payload.body["event"]
        assert inbound.kind is InboundKind.MESSAGE and inbound.mentioned is (outcome is Outcome.QUESTION), where
        assert (inbound.channel_id, inbound.message_id, inbound.user_id) == (
            event["channel"], event["ts"], event["user"]), where  # fmt: skip
        assert inbound.thread_id == event.get("thread_ts"), where
    elif outcome is Outcome.CHALLENGE:
        assert stored == [] and json.loads(result.text) == {"challenge": payload.body["challenge"]}, where
    elif outcome is Outcome.PROMPTS:
        assert stored == [] and result.posted == ["assistant.threads.setSuggestedPrompts"], where
    elif outcome is Outcome.GREETING:
        assert stored == [] and result.posted == ["assistant.threads.setSuggestedPrompts", "chat.postMessage"], where
        [prompts] = [c for c in result.calls if c.method == "assistant.threads.setSuggestedPrompts"]
        event = payload.body["event"]
        assert prompts.args["channel_id"] == event["channel"] and "thread_ts" not in prompts.args, where
    else:  # IGNORED, ACKNOWLEDGED
        assert stored == [] and result.posted == [], f"{where}: stored {stored}, posted {result.posted}"


async def test_every_bolt_payload_has_the_outcome_of_its_kind(make_harness: MakeHarness) -> None:
    tally: Counter[tuple[str, str]] = Counter()
    for payload in payloads():
        outcome = expected(payload)
        check(payload, outcome, await run(make_harness, payload))
        tally[(payload.kind, "fragment: nothing stored" if payload.fragment else outcome.value)] += 1
    print("\n" + "\n".join(f"{kind:45} {outcome:28} {n}" for (kind, outcome), n in sorted(tally.items())))
    outcomes = Counter(outcome for (_, outcome), n in tally.items() for _ in range(n))
    assert sum(tally.values()) == 105 and outcomes["question"] >= 8 and outcomes["follow-up"] >= 2, tally
    assert outcomes["challenge"] == 1 and outcomes["prompts"] == 1 and outcomes["ignored"] >= 15, tally


async def test_slash_commands_as_docbots_ask_are_stored_as_questions(make_harness: MakeHarness) -> None:
    commands = [p for p in payloads() if p.kind == "slash_command" and not p.body.get("ssl_check")]
    assert len(commands) >= 3
    for payload in commands:
        body = {**payload.body, "command": ASK}
        result = await run(make_harness, payload, body)
        assert result.status == 200, payload.file
        [(inbound, _)] = result.stored
        assert inbound.mentioned and inbound.text == str(body["text"]).strip(), payload.file
        assert (inbound.workspace_id, inbound.user_id) == (body["team_id"], body["user_id"]), payload.file


async def test_ssl_check_command_is_answered_without_storing(make_harness: MakeHarness) -> None:
    [payload] = [p for p in payloads() if p.kind == "slash_command" and p.body.get("ssl_check")]
    result = await run(make_harness, payload, {**payload.body, "command": ASK})
    assert result.status == 200 and result.stored == [] and result.posted == []


async def test_button_payloads_are_stored_when_the_button_is_docbots_and_dropped_when_not(
    make_harness: MakeHarness,
) -> None:
    presses = [p for p in payloads() if p.kind == "block_actions" and not p.fragment]
    assert len(presses) >= 5
    pressed_ours = 0
    for payload in presses:
        foreign = await run(make_harness, payload)  # another app's button (as in the data): acknowledged, dropped
        assert foreign.status == 200 and foreign.stored == [], payload.file
        if not (payload.body.get("container") or {}).get("message_ts"):
            continue  # a bare action (bolt's matcher test): no message, so no docbot button could have been on it
        pressed_ours += 1
        body = copy.deepcopy(payload.body)
        action = body["actions"][0]
        action["action_id"] = f"{ACTION_PREFIX}search:0"
        action.setdefault("value", "opaque-action-1")
        h = await make_harness()
        intake = RecordingIntake()
        h.adapter.intake = intake
        container = body.get("container") or {}
        channel = str(container.get("channel_id") or body["channel"]["id"])
        message_ts = str(container.get("message_ts"))
        h.api.messages[channel].append(Message(message_ts, channel, "Which one?", user=BOT_USER, bot_id=BOT_ID))
        status, _ = await h.post_form({"payload": json.dumps(body)})
        await h.settle()
        assert status == 200, payload.file
        [(inbound, _)] = intake.accepted
        assert inbound.kind is InboundKind.ACTION and inbound.action_id == action["value"], payload.file
        assert (inbound.channel_id, inbound.message_id, inbound.user_id) == (
            channel, message_ts, body["user"]["id"]), payload.file  # fmt: skip
    assert pressed_ours >= 4


def wrapper_schema() -> dict[str, Any]:
    path = shared_path("slack", "api-specs", "events-api", "slack_common_event_wrapper_schema.json")
    schema: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    schema["required"] = [f for f in schema["required"] if f not in DEPRECATED_WRAPPER_FIELDS]
    for name in DEPRECATED_WRAPPER_FIELDS:
        schema["properties"].pop(name, None)
    return schema


def test_events_docbot_stores_match_the_event_wrapper_schema() -> None:
    schema = wrapper_schema()
    validator = jsonschema.Draft7Validator(schema)
    stored_kinds = [p for p in payloads() if expected(p) in (Outcome.QUESTION, Outcome.FOLLOW_UP, Outcome.PROMPTS)]
    assert len(stored_kinds) >= 10
    problems = {p.file: [e.message for e in validator.iter_errors(p.body)] for p in stored_kinds}
    assert not any(problems.values()), {f: e for f, e in problems.items() if e}
    # and the schema does say what the adapter reads from the wrapper
    assert {"team_id", "event", "type", "event_id"} <= set(schema["required"])
    assert {"type", "event_ts"} <= set(schema["properties"]["event"]["required"])


def test_the_wrapper_schema_rejects_a_wrapper_without_its_event() -> None:
    validator = jsonschema.Draft7Validator(wrapper_schema())
    [payload] = [p for p in payloads() if p.file == "test_app__app_mention_event_body.json"]
    assert validator.is_valid(payload.body)
    broken = {k: v for k, v in payload.body.items() if k != "event"}
    assert not validator.is_valid(broken)
    assert not validator.is_valid({**payload.body, "event": {"type": "app_mention"}})  # no event_ts
