"""A recording fake of Discord's REST API (v10) on an ephemeral loopback port.

It answers the calls the Discord adapter makes with payloads shaped like Discord's, keeps the messages it was sent
(so a test can press a button on a message the bot really posted) and records every request for assertions.
Failures can be injected (`fail_next`) to exercise retries, e.g. a 429 with `retry_after`.

Interactions announced with `expect_interaction` keep Discord's clock (`clock`, replaceable by a test): one initial
response within 3 s of the event (later: 404 10062 "Unknown interaction"; a second one: 400 40060), and follow-ups
through the token only once it was answered, for 15 minutes (otherwise: 404 10015 "Unknown Webhook").
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes import discord_payloads as p

API_PREFIX = "/api/v10"
RESPONSE_WINDOW_S = 3.0  # an interaction's initial response must come within 3 s of the event
TOKEN_LIFETIME_S = 15 * 60.0  # its token then takes follow-ups for 15 minutes
DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE = 6, 7
UNKNOWN_INTERACTION = {"message": "Unknown interaction", "code": 10062}
UNKNOWN_WEBHOOK = {"message": "Unknown Webhook", "code": 10015}


@dataclass(frozen=True)
class RecordedCall:
    method: str
    path: str  # without the /api/v10 prefix
    query: dict[str, str]
    body: Any
    status: int
    code: int | None = None  # Discord's error code in a refusal (e.g. 40060, 10062)


@dataclass
class _Failure:
    method: str
    path: re.Pattern[str]
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    after: bool = False  # do the request's work, then answer the failure (a 5xx whose message was created)


@dataclass
class _Interaction:
    """What Discord keeps of an interaction it sent: when, and the message a component or a modal sits on."""

    received_at: float
    message_id: str | None
    response_type: int | None = None  # the initial response's type, once one was taken


@dataclass
class FakeDiscordREST:
    """Start with `await fake.start()`; `fake.api_url` is the base to give the client; `await fake.close()`."""

    bot_user: dict[str, Any]
    app_id: str
    message_content_intent: bool = True
    calls: list[RecordedCall] = field(default_factory=list)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> message payload
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> channel payload
    command_id: str = field(default_factory=p.snowflake)
    command_ids: dict[str, str] = field(default_factory=dict)  # name → id, for commands other than /ask
    commands: dict[str, dict[str, Any]] = field(default_factory=dict)  # name → the command as last synced
    interaction_channels: dict[str, str] = field(default_factory=dict)  # interaction token -> channel id
    originals: dict[str, dict[str, Any]] = field(default_factory=dict)  # interaction token -> its first response
    answered: set[str] = field(default_factory=set)  # interaction ids that got their (one) response
    interactions: dict[str, _Interaction] = field(default_factory=dict)  # token -> an interaction announced to it
    clock: Callable[[], float] = time.monotonic  # Discord's clock for the 3 s and 15 min windows
    _failures: list[_Failure] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    port: int = 0

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{API_PREFIX}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", API_PREFIX + "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def fail_next(
        self,
        method: str,
        path_regex: str,
        *,
        status: int = 429,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        after: bool = False,
    ) -> None:
        """Make the next matching request fail once (`after`: once it has done its work). A 429 gets Discord's body
        and a `Via` header by default (discord.py treats a 429 without `Via` as a Cloudflare ban and does not
        retry)."""
        if status == 429 and body is None:
            body = {"message": "You are being rate limited.", "retry_after": 0.05, "global": False}
        if status == 429 and headers is None:
            headers = {"Via": "1.1 google", "Retry-After": "1"}
        self._failures.append(_Failure(method, re.compile(path_regex), status, body or {}, headers or {}, after))

    def find(self, method: str, path_regex: str) -> list[RecordedCall]:
        """Successful and failed calls matching `method` and the full-path regex."""
        pattern = re.compile(path_regex)
        return [c for c in self.calls if c.method == method and pattern.fullmatch(c.path)]

    def channel_messages(self, channel_id: str) -> list[dict[str, Any]]:
        return [m for m in self.messages.values() if m["channel_id"] == channel_id]

    # --- request handling -------------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        raw = await request.read()
        body: Any = json.loads(raw) if raw and request.content_type == "application/json" else None
        query = dict(request.query)
        for failure in self._failures:
            if failure.method == request.method and failure.path.fullmatch(path):
                self._failures.remove(failure)
                if failure.after:
                    self._route(request.method, path, body)
                self.calls.append(RecordedCall(request.method, path, query, body, failure.status,
                                               failure.body.get("code")))  # fmt: skip
                return _json_response(failure.body, failure.status, failure.headers)
        status, payload = self._route(request.method, path, body)
        code = payload.get("code") if status >= 400 and isinstance(payload, dict) else None
        self.calls.append(RecordedCall(request.method, path, query, body, status, code))
        if payload is None:
            return web.Response(status=status)
        return _json_response(payload, status)

    def _route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        parts = path.strip("/").split("/")
        match method, parts:
            case "GET", ["users", "@me"]:
                return 200, self.bot_user
            case "GET", ["oauth2", "applications", "@me"]:
                return 200, p.application(self.app_id, self.bot_user, message_content=self.message_content_intent)
            case "PUT", ["applications", _, "commands"]:
                return 200, [self._command(c) for c in body]
            case "POST", ["channels", channel_id, "typing"]:
                return 204, None
            case "GET", ["channels", channel_id]:
                channel = self.channels.get(channel_id)
                return (200, channel) if channel else (404, {"message": "Unknown Channel", "code": 10003})
            case "PATCH", ["channels", channel_id]:
                channel = self.channels.get(channel_id)
                if channel is None:
                    return 404, {"message": "Unknown Channel", "code": 10003}
                channel.update({k: v for k, v in (body or {}).items() if k in ("applied_tags", "name", "archived")})
                return 200, channel
            case "POST", ["channels", channel_id, "messages", message_id, "threads"]:
                if message_id in self.channels:
                    return 400, {"message": "A thread has already been created for this message", "code": 160004}
                return 201, self._thread(channel_id, body, thread_id=message_id)
            case "POST", ["channels", channel_id, "threads"]:
                return 201, self._thread(channel_id, body, thread_id=p.snowflake())
            case "GET", ["channels", channel_id, "messages", message_id]:
                found = self.messages.get(message_id)
                return (200, found) if found else (404, {"message": "Unknown Message", "code": 10008})
            case "GET", ["channels", channel_id, "messages"]:
                history = sorted(self.channel_messages(channel_id), key=lambda m: int(m["id"]), reverse=True)
                return 200, history
            case "POST", ["channels", channel_id, "messages"]:
                return 200, self._store_message(channel_id, body)
            case "PATCH", ["channels", channel_id, "messages", message_id]:
                return self._edit_message(message_id, body)
            case "DELETE", ["channels", channel_id, "messages", message_id]:
                if self.messages.pop(message_id, None) is None:
                    return 404, {"message": "Unknown Message", "code": 10008}
                return 204, None
            case "POST", ["interactions", interaction_id, token, "callback"]:
                if interaction_id in self.answered:  # Discord takes one response per interaction
                    return 400, {"message": "Interaction has already been acknowledged.", "code": 40060}
                seen = self.interactions.get(token)
                if seen is not None and self.clock() - seen.received_at > RESPONSE_WINDOW_S:
                    return 404, UNKNOWN_INTERACTION  # too late: the token died, the person saw "interaction failed"
                self.answered.add(interaction_id)
                if seen is not None:
                    seen.response_type = body["type"]
                return 200, self._callback(interaction_id, body)
            case "POST" | "PATCH", ["webhooks", _app, token, *_] if not self._token_usable(token):
                return 404, UNKNOWN_WEBHOOK  # no initial response (or past 15 minutes): no follow-ups
            case "POST", ["webhooks", _app, token]:
                return 200, self._store_message(self.interaction_channels.get(token, "0"), body)
            case "PATCH", ["webhooks", _app, token, "messages", "@original"] if self._updates_its_message(token):
                return self._edit_source(token, body)
            case "PATCH", ["webhooks", _app, token, "messages", message_id]:
                if message_id == "@original":  # the deferred response, as the person who asked sees it
                    channel_id = self.interaction_channels.get(token, "0")
                    original = self.originals.setdefault(token, {**p.message(channel_id, self.bot_user, ""),
                                                                 "flags": p.FLAG_EPHEMERAL})  # fmt: skip
                    original.update({k: v for k, v in (body or {}).items() if k in ("content", "components")})
                    original["flags"] = p.FLAG_EPHEMERAL | int((body or {}).get("flags") or 0)
                    return 200, original
                return self._edit_message(message_id, body)
        return 404, {"message": f"fake has no route for {method} {path}", "code": 0}

    def expect_interaction(self, interaction: dict[str, Any]) -> None:
        """Discord sends this interaction now: its 3 s start, and follow-ups to it land in its channel (Discord
        knows it from the interaction token). The same interaction announced again keeps its first time."""
        channel = interaction.get("channel_id") or (interaction.get("channel") or {}).get("id")
        self.interaction_channels[interaction["token"]] = str(channel)
        message_id = (interaction.get("message") or {}).get("id")  # a component's or a modal's message
        seen = _Interaction(self.clock(), str(message_id) if message_id else None)
        self.interactions.setdefault(interaction["token"], seen)

    def _token_usable(self, token: str) -> bool:
        """Whether an interaction token takes follow-ups: answered, within 15 minutes (a token no interaction was
        announced for is taken as valid: tests that post through the sink directly)."""
        seen = self.interactions.get(token)
        if seen is None:
            return True
        return seen.response_type is not None and self.clock() - seen.received_at <= TOKEN_LIFETIME_S

    def _updates_its_message(self, token: str) -> bool:
        """After DEFERRED_UPDATE_MESSAGE or UPDATE_MESSAGE, `@original` is the message the component sits on."""
        seen = self.interactions.get(token)
        return seen is not None and seen.message_id is not None and seen.response_type in (
            DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE)  # fmt: skip

    def _edit_source(self, token: str, body: dict[str, Any]) -> tuple[int, Any]:
        message_id = self.interactions[token].message_id
        if message_id in self.messages:
            return self._edit_message(str(message_id), body)
        for original in self.originals.values():  # an ephemeral message: someone's first response
            if original["id"] == message_id:
                original.update({k: v for k, v in (body or {}).items() if k in ("content", "components")})
                return 200, original
        return 404, {"message": "Unknown Message", "code": 10008}

    def _command(self, command: dict[str, Any]) -> dict[str, Any]:
        """The command as Discord answers a bulk overwrite: its own id (`command_id` for /ask), `description` always
        present ("" for context menu commands), `type` 1 unless given."""
        name = str(command.get("name"))
        command_id = self.command_id if name == "ask" else self.command_ids.setdefault(name, p.snowflake())
        self.commands[name] = command
        return {
            "id": command_id,
            "application_id": self.app_id,
            "version": p.snowflake(),
            "default_member_permissions": None,
            "type": 1,
            "nsfw": False,
            "description": "",
            **command,
        }

    def _thread(self, parent_id: str, body: dict[str, Any], *, thread_id: str) -> dict[str, Any]:
        parent = self.channels.get(parent_id, {})
        thread = p.thread_channel(
            thread_id, parent_id, parent.get("guild_id", "0"), self.bot_user["id"], name=body.get("name", "thread")
        )
        self.channels[thread_id] = thread
        return thread

    def _store_message(self, channel_id: str, body: dict[str, Any]) -> dict[str, Any]:
        nonce = body.get("nonce")
        if nonce is not None and body.get("enforce_nonce"):  # Discord returns the message made with this nonce
            for existing in self.channel_messages(channel_id):
                if existing.get("nonce") == nonce:
                    return existing
        channel = self.channels.get(channel_id, {})
        message = p.message(
            channel_id,
            self.bot_user,
            body.get("content") or "",
            guild_id=channel.get("guild_id"),
            components=body.get("components"),
            embeds=body.get("embeds"),
        )
        message.pop("member", None)
        if nonce is not None:
            message["nonce"] = nonce
        message["flags"] = int(body.get("flags") or 0)  # Components v2 (1 << 15) stays with the message, as on Discord
        if not message["flags"] & p.FLAG_EPHEMERAL:  # ephemeral messages are seen by one person only, not the channel
            self.messages[message["id"]] = message
        return message

    def _edit_message(self, message_id: str, body: dict[str, Any]) -> tuple[int, Any]:
        message = self.messages.get(message_id)
        if message is None:
            return 404, {"message": "Unknown Message", "code": 10008}
        message.update({k: v for k, v in body.items() if k in ("content", "embeds", "components", "flags")})
        message["edited_timestamp"] = p.iso_now()
        return 200, message

    def _callback(self, interaction_id: str, body: dict[str, Any]) -> dict[str, Any]:
        kind = body["type"]
        if kind == 7:  # UPDATE_MESSAGE on an ephemeral message (only its person sees it): the stored first response
            for original in self.originals.values():
                if any(c.get("custom_id") in _custom_ids(body["data"]) for c in p.buttons_of(original)):
                    original.update({k: v for k, v in body["data"].items() if k in ("content", "components")})
        if kind == 7:  # UPDATE_MESSAGE: apply the edit to the message the button sits on
            for message in self.messages.values():
                if any(c.get("custom_id") in _custom_ids(body["data"]) for c in p.buttons_of(message)):
                    message.update({k: v for k, v in body["data"].items() if k in ("content", "components")})
        return {"interaction": {"id": interaction_id, "type": 2}, "resource": {"type": kind}}


def _json_response(payload: Any, status: int, headers: dict[str, str] | None = None) -> web.Response:
    """Discord answers `Content-Type: application/json` exactly (discord.py compares the header verbatim)."""
    body = json.dumps(payload).encode()
    return web.Response(body=body, status=status, headers={**(headers or {}), "Content-Type": "application/json"})


def _custom_ids(data: dict[str, Any]) -> set[str]:
    return {c.get("custom_id", "") for c in p.buttons_of(data)}
