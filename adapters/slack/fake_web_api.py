"""A recording fake of Slack's Web API on an ephemeral loopback port (aiohttp): the Slack demo (`bot.slack_demo`),
the ack benchmark and the tests run against it. Shipped (not under tests/) because the demo is a documented command
the image runs; it never talks to Slack and nothing in the bot's own wiring uses it.

It speaks the real wire format (`POST/GET /api/<method>`, form, query or JSON arguments, `{"ok": ...}` bodies,
429 with Retry-After), keeps channels' messages so threads can be read back, and records every call so tests can
check what the adapter sent. Failures are scripted per method with `fail_next`; `Failure(after=True)` does the
call's work and then answers the error, as Slack's `internal_error` and `fatal_error` may ("it's possible some aspect
of the operation succeeded"). Message metadata is kept and returned with `include_all_metadata`, and slash commands'
response_urls point here (`response_url()`, what was sent in `responses`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

TASK_STATUSES = frozenset({"pending", "in_progress", "complete", "error"})
SESSION_STATUSES = frozenset({"active", "processing", "suspended", "closed"})
BOT_USER = "UBOT0001"
BOT_ID = "BBOT0001"
TEAM = "T0001"


@dataclass
class Call:
    method: str
    args: dict[str, Any]
    token: str | None
    status: int  # HTTP status the fake answered with
    at: float = field(default_factory=time.monotonic)  # when the fake received it


@dataclass
class Failure:
    """A scripted failure: `status` with a JSON error, or `html` (a proxy's error page, not JSON), or `mode`
    "hang" (never answers) / "reset" (drops the connection); with `after`, Slack did the work first and then the
    answer failed (what a 5xx or Slack's internal_error leaves uncertain)."""

    status: int = 429
    error: str = "ratelimited"
    retry_after: int | None = 0
    times: int = 1
    html: bool = False
    mode: str = "answer"  # "answer" | "hang" | "reset"
    after: bool = False  # do the call's work first, then answer the failure (the outcome is unknown to the caller)


@dataclass
class Message:
    ts: str
    channel: str
    text: str
    user: str | None = None
    bot_id: str | None = None
    thread_ts: str | None = None
    blocks: list[dict[str, Any]] = field(default_factory=list)
    ephemeral_to: str | None = None
    streaming: bool = False  # between chat.startStream and chat.stopStream
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # a stream's task cards, by task id (latest state)
    metadata: dict[str, Any] | None = None

    def as_api(self, with_metadata: bool = False) -> dict[str, Any]:
        raw: dict[str, Any] = {"type": "message", "ts": self.ts, "text": self.text}
        if with_metadata and self.metadata:
            raw["metadata"] = self.metadata
        if self.user:
            raw["user"] = self.user
        if self.bot_id:
            raw["bot_id"] = self.bot_id
        if self.thread_ts:
            raw["thread_ts"] = self.thread_ts
        if self.blocks:
            raw["blocks"] = self.blocks
        return raw


class FakeSlackAPI:
    """Start with `await api.start()`; point the adapter at `api.base_url`."""

    def __init__(self, users: dict[str, dict[str, Any]] | None = None, page_size: int = 2) -> None:
        self.calls: list[Call] = []
        self.messages: dict[str, list[Message]] = defaultdict(list)  # channel → messages (incl. deleted=False)
        self.deleted: list[tuple[str, str]] = []
        self.users = users or {}
        self.page_size = page_size  # small, so that pagination is exercised
        self.socket_url: str | None = None
        self.failures: dict[str, list[Failure]] = defaultdict(list)
        self.sessions: dict[tuple[str, str], dict[str, Any]] = {}  # (channel, thread_ts) → agent session
        self.prompts: dict[tuple[str, str | None], dict[str, Any]] = {}  # (channel, thread_ts) → suggested prompts
        self.streaming_allowed = True  # False: chat.startStream answers ok:false (a plan or workspace without it)
        self._clock = itertools.count(1)
        self._released = asyncio.Event()
        self.chaos: Callable[[str], Failure | None] | None = None  # a fault for any call, chosen by the test
        self._base_ts = 1_790_000_000
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.responses: list[dict[str, Any]] = []  # what was posted to response_urls
        self.not_member: set[str] = set()  # channels the bot is not in: chat.postMessage answers not_in_channel
        self.usergroups: dict[str, list[str]] = {}  # user group id → its members (usergroups.users.list)
        self.channel_names: dict[str, str] = {}  # channel id → name (conversations.info; others: channel_not_found)
        self.views: list[tuple[str, dict[str, Any]]] = []  # modals opened: (trigger_id, view)
        self.expired_triggers: set[str] = set()  # presses older than 3 s: views.open answers expired_trigger_id

    # -- lifecycle --------------------------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._dispatch)
        app.router.add_post("/commands/{team}/{token}", self._respond)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def close(self) -> None:
        self._released.set()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def response_url(self, key: str = "1234") -> str:
        """A slash command's response_url (on Slack: https://hooks.slack.com/commands/...)."""
        return f"http://127.0.0.1:{self.port}/commands/{TEAM}/{key}"

    async def _respond(self, request: web.Request) -> web.Response:
        self.responses.append({"token": request.match_info["token"], **(await request.json())})
        return web.Response(text="ok")

    # -- scripting and inspection -----------------------------------------------------------------------------

    def fail_next(self, method: str, **kwargs: Any) -> None:
        self.failures[method].append(Failure(**kwargs))

    def next_ts(self) -> str:
        return f"{self._base_ts + next(self._clock)}.{next(self._clock):06d}"

    def seed(self, channel: str, text: str, user: str | None = None, thread_ts: str | None = None,
             bot_id: str | None = None) -> str:
        """A message that exists before the test starts (e.g. an earlier thread)."""
        ts = self.next_ts()
        self.messages[channel].append(Message(ts, channel, text, user=user, thread_ts=thread_ts, bot_id=bot_id))
        return ts

    def calls_to(self, method: str, ok_only: bool = True) -> list[Call]:
        return [c for c in self.calls if c.method == method and (c.status == 200 or not ok_only)]

    def bot_messages(self, channel: str | None = None, thread_ts: str | None = None) -> list[Message]:
        """Visible messages the bot posted (after updates, without deleted ones or ephemerals)."""
        found = []
        for chan, messages in self.messages.items():
            for m in messages:
                visible = m.bot_id == BOT_ID and m.ephemeral_to is None and channel in (None, chan)
                if visible and (thread_ts is None or m.thread_ts == thread_ts):
                    found.append(m)
        return found

    def press_stop(self, channel: str, thread_ts: str) -> list[str]:
        """A person presses the stop button of the agent session in this thread: Slack stops the app's streams there
        (returned, for the `agent_session_stopped` event's streaming_message_ts). The session's status is left as it
        was: the app is responsible for moving it away from processing."""
        stopped = []
        for message in self.messages[channel]:
            if message.streaming and message.thread_ts == thread_ts:
                message.streaming = False
                stopped.append(message.ts)
        return stopped

    def ephemerals(self) -> list[Message]:
        return [m for ms in self.messages.values() for m in ms if m.ephemeral_to is not None]

    # -- the wire ---------------------------------------------------------------------------------------------

    async def _dispatch(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args: dict[str, Any] = dict(request.query)
        if request.can_read_body:
            if request.content_type == "application/json":
                args.update(await request.json())
            else:
                args.update(dict(await request.post()))
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") if auth else args.pop("token", None)
        scripted = self.failures.get(method)
        failure: Failure | None = None
        if scripted:
            failure = scripted[0]
            failure.times -= 1
            if failure.times <= 0:
                scripted.pop(0)
        elif self.chaos is not None:
            failure = self.chaos(method)
        if failure is not None:
            self.calls.append(Call(method, args, token, failure.status))
            handler = getattr(self, "_m_" + method.replace(".", "_"), None)
            if failure.after and handler is not None and token:
                handler(args)  # done, but the caller is told it failed
            if failure.mode == "hang":
                await self._released.wait()  # until the fake closes
            if failure.mode == "reset":
                assert request.transport is not None
                request.transport.abort()
                raise ConnectionResetError("fake connection reset")
            headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
            if failure.html:
                page = "<html><body><h1>500 Internal Server Error</h1></body></html>"
                return web.Response(text=page, status=failure.status, content_type="text/html", headers=headers)
            return web.json_response({"ok": False, "error": failure.error}, status=failure.status, headers=headers)
        self.calls.append(Call(method, args, token, 200))
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"})
        if not token:
            return web.json_response({"ok": False, "error": "not_authed"})
        body = handler(args)
        return web.json_response(body)

    def _find(self, channel: str, ts: str) -> Message | None:
        return next((m for m in self.messages[channel] if m.ts == ts), None)

    @staticmethod
    def _blocks(args: dict[str, Any]) -> list[dict[str, Any]]:
        blocks = args.get("blocks") or []
        return json.loads(blocks) if isinstance(blocks, str) else list(blocks)

    @staticmethod
    def _apply_chunks(message: Message, args: dict[str, Any]) -> str | None:
        """A stream call's `markdown_text` and `chunks` applied to the message; an error code for a bad chunk."""
        message.text += str(args.get("markdown_text") or "")
        chunks = args.get("chunks") or []
        for chunk in json.loads(chunks) if isinstance(chunks, str) else chunks:
            kind = chunk.get("type")
            if kind == "markdown_text":
                message.text += str(chunk.get("text") or "")
            elif kind == "task_update":
                if not chunk.get("id") or not chunk.get("title") or chunk.get("status") not in TASK_STATUSES:
                    return "invalid_chunks"
                message.tasks[str(chunk["id"])] = {**message.tasks.get(str(chunk["id"]), {}), **chunk}
            elif kind == "blocks":
                message.blocks.extend(chunk.get("blocks") or [])
            elif kind != "plan_update":
                return "invalid_chunks"
        return None

    def _m_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": "https://fake.slack.test/", "team": "Fake", "user": "docbot", "team_id": TEAM,
                "user_id": BOT_USER, "bot_id": BOT_ID, "is_enterprise_install": False}

    @staticmethod
    def _metadata(args: dict[str, Any]) -> dict[str, Any] | None:
        metadata = args.get("metadata")
        return json.loads(metadata) if isinstance(metadata, str) else metadata

    def _m_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args["channel"])
        if channel in self.not_member:
            return {"ok": False, "error": "not_in_channel"}
        ts = self.next_ts()
        message = Message(ts, channel, str(args.get("text") or ""), user=BOT_USER, bot_id=BOT_ID,
                          thread_ts=args.get("thread_ts"), blocks=self._blocks(args), metadata=self._metadata(args))
        self.messages[channel].append(message)
        return {"ok": True, "channel": channel, "ts": ts, "message": message.as_api()}

    def _m_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(args["channel"]), str(args["ts"])
        message = self._find(channel, ts)
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        message.text = str(args.get("text") or message.text)
        if "blocks" in args:
            message.blocks = self._blocks(args)
        if "metadata" in args:
            message.metadata = self._metadata(args)
        return {"ok": True, "channel": channel, "ts": ts, "text": message.text}

    def _m_chat_startStream(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args["channel"])
        if not self.streaming_allowed:
            return {"ok": False, "error": "not_allowed_token_type"}
        if not args.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}
        if args.get("task_display_mode") not in (None, "timeline", "plan"):
            return {"ok": False, "error": "invalid_arguments"}
        ts = self.next_ts()
        message = Message(ts, channel, "", user=BOT_USER, bot_id=BOT_ID, thread_ts=str(args["thread_ts"]),
                          streaming=True)
        error = self._apply_chunks(message, args)
        if error:
            return {"ok": False, "error": error}
        self.messages[channel].append(message)
        return {"ok": True, "channel": channel, "ts": ts}

    def _m_chat_appendStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._find(str(args["channel"]), str(args["ts"]))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        if not message.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        error = self._apply_chunks(message, args)
        if error:
            return {"ok": False, "error": error}
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def _m_chat_stopStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._find(str(args["channel"]), str(args["ts"]))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        if not message.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        error = self._apply_chunks(message, args)
        if error:
            return {"ok": False, "error": error}
        message.streaming = False
        if "blocks" in args:
            message.blocks = message.blocks + self._blocks(args)
        status = args.get("session_status")
        if status is not None:
            if status not in SESSION_STATUSES:
                return {"ok": False, "error": "invalid_arguments"}
            session = self.sessions.get((message.channel, message.thread_ts or ""))
            if session is not None:
                session["status"] = status
        return {"ok": True, "channel": message.channel, "ts": message.ts, "message": message.as_api()}

    def _m_chat_delete(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(args["channel"]), str(args["ts"])
        message = self._find(channel, ts)
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        self.messages[channel].remove(message)
        self.deleted.append((channel, ts))
        return {"ok": True, "channel": channel, "ts": ts}

    def _m_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args["channel"])
        ts = self.next_ts()
        self.messages[channel].append(Message(ts, channel, str(args.get("text") or ""), user=BOT_USER,
                                              bot_id=BOT_ID, thread_ts=args.get("thread_ts"),
                                              ephemeral_to=str(args["user"])))
        return {"ok": True, "message_ts": ts}

    def _m_users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user_id = str(args["user"])
        user = self.users.get(user_id)
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "user": {"id": user_id, **user}}

    def _m_conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, root = str(args["channel"]), str(args["ts"])
        thread = [m for m in self.messages[channel]
                  if m.ephemeral_to is None and (m.ts == root or m.thread_ts == root)]
        thread.sort(key=lambda m: float(m.ts))
        if "oldest" in args:
            low, high = float(args["oldest"]), float(args.get("latest", "inf"))
            thread = [m for m in thread if low <= float(m.ts) <= high]
        start = int(args.get("cursor") or 0)
        limit = min(int(args.get("limit") or 100), self.page_size)
        page = thread[start : start + limit]
        more = start + limit < len(thread)
        with_metadata = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
        return {"ok": True, "messages": [m.as_api(with_metadata) for m in page], "has_more": more,
                "response_metadata": {"next_cursor": str(start + limit) if more else ""}}

    def _m_chat_getPermalink(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(args.get("channel") or ""), str(args.get("message_ts") or "")
        if self._find(channel, ts) is None:
            return {"ok": False, "error": "message_not_found"}
        return {"ok": True, "channel": channel,
                "permalink": f"https://fake.slack.com/archives/{channel}/p{ts.replace('.', '')}"}

    def _m_conversations_info(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args.get("channel") or "")
        if channel not in self.channel_names:
            return {"ok": False, "error": "channel_not_found"}
        return {"ok": True, "channel": {"id": channel, "name": self.channel_names[channel], "is_channel": True}}

    def _m_assistant_threads_setStatus(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _m_assistant_threads_setSuggestedPrompts(self, args: dict[str, Any]) -> dict[str, Any]:
        prompts = args.get("prompts")
        prompts = json.loads(prompts) if isinstance(prompts, str) else prompts
        if not isinstance(prompts, list) or not 0 < len(prompts) <= 4:  # "up to four suggested prompts"
            return {"ok": False, "error": "invalid_arguments"}
        if any(not p.get("title") or not p.get("message") for p in prompts):
            return {"ok": False, "error": "invalid_arguments"}
        self.prompts[(str(args["channel_id"]), args.get("thread_ts"))] = {"title": args.get("title"),
                                                                          "prompts": prompts}
        return {"ok": True}

    def _m_agents_sessions_setStatus(self, args: dict[str, Any]) -> dict[str, Any]:
        if args.get("status") not in SESSION_STATUSES:
            return {"ok": False, "error": "invalid_arguments"}
        key = (str(args.get("channel_id") or ""), str(args.get("thread_ts") or ""))
        created = {"title": args.get("title"), "initiator": args.get("initiator_user_id")}
        session = self.sessions.setdefault(key, created)
        session["status"] = args["status"]
        return {"ok": True, "status": args["status"], "title": session.get("title")}

    def _m_conversations_history(self, args: dict[str, Any]) -> dict[str, Any]:
        """The channel's top-level messages (thread replies are not in history), newest first."""
        channel = str(args["channel"])
        top = [m for m in self.messages[channel] if m.ephemeral_to is None and m.thread_ts in (None, m.ts)]
        top.sort(key=lambda m: float(m.ts), reverse=True)
        limit = int(args.get("limit") or 100)
        return {"ok": True, "messages": [m.as_api() for m in top[:limit]], "has_more": len(top) > limit}

    def _m_usergroups_users_list(self, args: dict[str, Any]) -> dict[str, Any]:
        group = str(args.get("usergroup") or "")
        if group not in self.usergroups:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": list(self.usergroups[group])}

    def _m_views_open(self, args: dict[str, Any]) -> dict[str, Any]:
        """Opens a modal for a press's trigger_id, once, within 3 s of the press (`expired_triggers`: those past)."""
        trigger = str(args.get("trigger_id") or "")
        view = args.get("view")
        view = json.loads(view) if isinstance(view, str) else view
        if not trigger or trigger in self.expired_triggers or any(t == trigger for t, _ in self.views):
            return {"ok": False, "error": "expired_trigger_id" if trigger else "invalid_arguments"}
        if not isinstance(view, dict) or view.get("type") != "modal" or not view.get("title"):
            return {"ok": False, "error": "invalid_arguments"}
        self.views.append((trigger, view))
        return {"ok": True, "view": {"id": f"V{len(self.views):08d}", **view}}

    def _m_apps_connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        if self.socket_url is None:
            return {"ok": False, "error": "socket_mode_not_configured"}
        return {"ok": True, "url": self.socket_url}


def _install_methods() -> None:
    """oauth.v2.access: exchanges any code for a fixed installation of the fake workspace."""

    def _m_oauth_v2_access(self: FakeSlackAPI, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("code"):
            return {"ok": False, "error": "invalid_code"}
        return {"ok": True, "access_token": "xoxb-installed-token", "token_type": "bot",
                "scope": "chat:write,app_mentions:read", "bot_user_id": BOT_USER, "app_id": "A0001",
                "team": {"id": TEAM, "name": "Fake"}, "enterprise": None, "is_enterprise_install": False,
                "authed_user": {"id": "UALICE"}}

    FakeSlackAPI._m_oauth_v2_access = _m_oauth_v2_access  # type: ignore[attr-defined]


_install_methods()
