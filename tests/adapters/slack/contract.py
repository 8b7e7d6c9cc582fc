"""Checks Web API calls against what Slack accepts.

Always: the method exists in slack_sdk's AsyncWebClient, the arguments its signature requires are present, and a
small table of required arguments taken from Slack's method docs (docs.slack.dev/reference/methods/...) is met.
When ../shared/data/slack/api-specs/web-api/slack_web_openapi_v2.json is present, also: the method is in that
(2021) spec and the spec's required arguments are present; methods newer than the spec are checked against
slack_sdk only.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_api import Call

# method → argument groups; each group needs at least one of its names (from Slack's method reference pages).
REQUIRED_ARGS: dict[str, tuple[tuple[str, ...], ...]] = {
    "auth.test": (),
    "apps.connections.open": (),
    "chat.postMessage": (("channel",), ("text", "blocks", "attachments")),
    "chat.update": (("channel",), ("ts",)),
    "chat.delete": (("channel",), ("ts",)),
    "chat.startStream": (("channel",), ("thread_ts",)),
    "chat.appendStream": (("channel",), ("ts",), ("markdown_text", "chunks")),
    "chat.stopStream": (("channel",), ("ts",)),
    "chat.postEphemeral": (("channel",), ("user",), ("text", "blocks", "attachments")),
    "conversations.replies": (("channel",), ("ts",)),
    "users.info": (("user",),),
    "assistant.threads.setStatus": (("channel_id",), ("thread_ts",), ("status",)),
    "assistant.threads.setSuggestedPrompts": (("channel_id",), ("thread_ts",), ("prompts",)),
    "oauth.v2.access": (("code",),),
}


def sdk_method(method: str) -> Any:
    return getattr(AsyncWebClient, method.replace(".", "_"), None)


def problems_with(call: Call, spec: dict[str, Any] | None = None) -> list[str]:
    found: list[str] = []
    args = {k for k, v in call.args.items() if v is not None}  # "" is meaningful (e.g. clearing a status)
    if call.token:  # tokens travel in the Authorization header
        args |= {"client_id", "client_secret"} if call.token.startswith("Basic ") else {"token", "app_token"}
    function = sdk_method(call.method)
    if function is None:
        found.append(f"{call.method}: not a slack_sdk AsyncWebClient method")
    else:
        for name, param in inspect.signature(function).parameters.items():
            required = param.default is inspect.Parameter.empty and param.kind is inspect.Parameter.KEYWORD_ONLY
            if required and name not in args:
                found.append(f"{call.method}: slack_sdk requires {name!r}")
    if call.method not in REQUIRED_ARGS:
        found.append(f"{call.method}: not in the table of known methods (add it with its required arguments)")
    for group in REQUIRED_ARGS.get(call.method, ()):
        if not args & set(group):
            found.append(f"{call.method}: needs one of {group}")
    if spec is not None:
        found.extend(_spec_problems(call.method, args, spec))
    return found


def _spec_problems(method: str, args: set[str], spec: dict[str, Any]) -> list[str]:
    path = spec.get("paths", {}).get(f"/{method}")
    if path is None:
        if method.startswith(("assistant.", "apps.connections", "chat.startStream", "chat.appendStream",
                              "chat.stopStream")):
            return []  # newer than the 2021 spec: checked against slack_sdk above
        return [f"{method}: not in the OpenAPI spec"]
    problems = []
    for operation in path.values():
        for param in operation.get("parameters", []):
            name = param.get("name")
            if param.get("required") and name != "token" and param.get("in") != "header" and name not in args:
                problems.append(f"{method}: the spec requires {name!r}")
    return problems


@cache
def load_spec(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def assert_calls_valid(calls: Iterable[Call], spec: dict[str, Any] | None = None) -> None:
    problems = [p for call in calls for p in problems_with(call, spec)]
    assert not problems, "Web API calls Slack would reject:\n" + "\n".join(problems)
