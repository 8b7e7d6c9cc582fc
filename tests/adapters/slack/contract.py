"""Checks Web API calls against what Slack accepts.

Slack's own OpenAPI spec (`../shared/data/slack/api-specs/web-api/slack_web_openapi_v2.json`, Swagger 2.0, 2021) is
the reference: the method must be a path of the spec, every argument sent must be a parameter the spec names for it,
and every parameter the spec requires must be sent (`token` travels in the Authorization header). Methods Slack added
after that spec are listed by name in `NEWER_THAN_SPEC`, each with its arguments, the reason and the reference page it
was taken from; they get the same three checks against that entry. Anything else is a failure, never a silent pass.

On top of the spec, two stricter rules from the method reference pages (`ONE_OF`: e.g. chat.postMessage needs `text`
or `blocks`, which the spec cannot express) and slack_sdk's own signature (keyword-only arguments it requires).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.fake_web_api import Call
from tests.conftest import SHARED_DATA

SPEC_PARTS = ("slack", "api-specs", "web-api", "slack_web_openapi_v2.json")
TOKEN_PARAMS = frozenset({"token"})

# Arguments the client library adds to every call, not the adapter: named, with the reason and the source.
CLIENT_WIDE_ARGS: dict[str, str] = {
    "team_id": "bolt builds a per-request AsyncWebClient(team_id=<the event's team>) and slack_sdk adds it to every "
    "call, so org-wide installations act on the right workspace "
    "(https://docs.slack.dev/tools/bolt-js/concepts/web-api, "
    "https://docs.slack.dev/tools/python-slack-sdk/reference/web/async_base_client.html)",
}


@dataclass(frozen=True)
class NewerMethod:
    """A Web API method absent from the 2021 spec, described from its reference page."""

    required: frozenset[str]
    optional: frozenset[str]
    reason: str
    source: str  # the reference page the arguments were taken from


_STREAMING = "chat streaming (Oct 2025) is newer than the 2021 spec"
_ASSISTANT = "AI assistant threads (2024) are newer than the 2021 spec"
NEWER_THAN_SPEC: dict[str, NewerMethod] = {
    "chat.startStream": NewerMethod(
        required=frozenset({"channel"}),
        optional=frozenset(
            {
                "thread_ts",
                "markdown_text",
                "chunks",
                "recipient_user_id",
                "recipient_team_id",
                "task_display_mode",
                "icon_emoji",
                "icon_url",
                "username",
            }
        ),
        reason=_STREAMING,
        source="https://docs.slack.dev/reference/methods/chat.startStream/",
    ),
    "chat.appendStream": NewerMethod(
        required=frozenset({"channel", "ts"}),
        optional=frozenset({"markdown_text", "chunks"}),
        reason=_STREAMING,
        source="https://docs.slack.dev/tools/node-slack-sdk/reference/web-api/interfaces/ChatAppendStreamArguments",
    ),
    "chat.stopStream": NewerMethod(
        required=frozenset({"channel", "ts"}),
        optional=frozenset({"markdown_text", "chunks", "blocks", "metadata", "session_status"}),
        reason=_STREAMING,
        source="https://docs.slack.dev/reference/methods/chat.stopStream/ (session_status: agent sessions, 2026)",
    ),
    "assistant.threads.setStatus": NewerMethod(
        required=frozenset({"channel_id", "thread_ts", "status"}),
        optional=frozenset({"loading_messages", "icon_emoji", "icon_url", "username"}),
        reason=_ASSISTANT,
        source="https://docs.slack.dev/reference/methods/assistant.threads.setStatus/",
    ),
    "assistant.threads.setSuggestedPrompts": NewerMethod(
        required=frozenset({"channel_id", "prompts"}),
        optional=frozenset({"thread_ts", "title"}),
        reason=_ASSISTANT,
        source="https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts/",
    ),
    "agents.sessions.setStatus": NewerMethod(
        required=frozenset({"status"}),
        optional=frozenset({"channel_id", "thread_ts", "title", "initiator_user_id", "icon_emoji", "icon_url",
                            "username"}),
        reason="agent sessions (the stop button, 2026) are newer than the 2021 spec",
        source="https://docs.slack.dev/reference/methods/agents.sessions.setStatus/",
    ),
    "apps.connections.open": NewerMethod(
        required=frozenset(),
        optional=frozenset(),
        reason="Socket Mode's method (app-level token in the Authorization header) is not in the 2021 spec",
        source="https://docs.slack.dev/reference/methods/apps.connections.open/",
    ),
}

# method → argument groups; each group needs at least one of its names (Slack's method reference pages), for rules
# the spec cannot say (it marks text/blocks/attachments each optional).
ONE_OF: dict[str, tuple[tuple[str, ...], ...]] = {
    "chat.postMessage": (("text", "blocks", "attachments"),),
    "chat.postEphemeral": (("text", "blocks", "attachments"),),
    "chat.update": (("text", "blocks", "attachments"),),
    "chat.appendStream": (("markdown_text", "chunks"),),
    "agents.sessions.setStatus": (("channel_id",),),  # optional for session channels only; docbot's are threads
    "chat.delete": (("channel",), ("ts",)),  # the spec marks both optional; Slack rejects a delete without them
    "conversations.replies": (("channel",), ("ts",)),  # likewise
    "users.info": (("user",),),  # likewise
}


def sdk_method(method: str) -> Any:
    return getattr(AsyncWebClient, method.replace(".", "_"), None)


def sent_args(call: Call) -> set[str]:
    """The argument names of a call; `None` values are never sent ("" is: it clears an assistant status)."""
    return {k for k, v in call.args.items() if v is not None}


def spec_parameters(spec: dict[str, Any], method: str) -> tuple[set[str], set[str]] | None:
    """(all parameter names, required ones) of a spec method, without the token; None if the spec lacks it."""
    path = spec.get("paths", {}).get(f"/{method}")
    if path is None:
        return None
    names: set[str] = set()
    required: set[str] = set()
    for operation in path.values():
        for param in operation.get("parameters", []):
            name = str(param.get("name"))
            if name in TOKEN_PARAMS or param.get("in") == "header":
                continue
            names.add(name)
            if param.get("required"):
                required.add(name)
    return names, required


def default_spec() -> dict[str, Any] | None:
    """The spec under the shared data, or None where it is absent (test_spec_web_api.py then skips, naming it)."""
    path = SHARED_DATA.joinpath(*SPEC_PARTS)
    return load_spec(path) if path.exists() else None


def problems_with(call: Call, spec: dict[str, Any] | None = None) -> list[str]:
    """What Slack would reject in `call`; without a spec given, the shared one (only the sdk and ONE_OF rules where
    the shared data is absent)."""
    spec = spec if spec is not None else default_spec()
    found: list[str] = []
    args = sent_args(call)
    basic_auth = bool(call.token and call.token.startswith("Basic "))
    if not call.token:
        found.append(f"{call.method}: no token in the Authorization header")
    described = spec_parameters(spec, call.method) if spec is not None else None
    if spec is not None and described is None:
        newer = NEWER_THAN_SPEC.get(call.method)
        if newer is None:
            return [*found, f"{call.method}: not in the OpenAPI spec and not listed in NEWER_THAN_SPEC"]
        described = (set(newer.required | newer.optional), set(newer.required))
    names, required = described or (args, set())
    if basic_auth:  # oauth.v2.access: client_id and client_secret travel as HTTP Basic auth
        args |= {"client_id", "client_secret"} & names
    for name in sorted(args - names - CLIENT_WIDE_ARGS.keys()):
        found.append(f"{call.method}: argument {name!r} is not a parameter of the method")
    for name in sorted(required - args):
        found.append(f"{call.method}: required argument {name!r} missing")
    for group in ONE_OF.get(call.method, ()):
        if not args & set(group):
            found.append(f"{call.method}: needs one of {group}")
    function = sdk_method(call.method)
    if function is None:
        found.append(f"{call.method}: not a slack_sdk AsyncWebClient method")
    else:
        for name, param in inspect.signature(function).parameters.items():
            needed = param.default is inspect.Parameter.empty and param.kind is inspect.Parameter.KEYWORD_ONLY
            in_header = name in ("token", "app_token") or (basic_auth and name in ("client_id", "client_secret"))
            if needed and name not in args and not (call.token and in_header):
                found.append(f"{call.method}: slack_sdk requires {name!r}")
    return found


@cache
def load_spec(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def assert_calls_valid(calls: Iterable[Call], spec: dict[str, Any] | None = None) -> None:
    problems = sorted({p for call in calls for p in problems_with(call, spec)})
    assert not problems, "Web API calls Slack would reject:\n" + "\n".join(problems)
