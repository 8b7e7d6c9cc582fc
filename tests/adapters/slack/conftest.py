"""Fixtures for the Slack adapter: the fake Web API, a scripted conversation handler, signed HTTP requests."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from adapters.slack.app import SlackAdapter
from adapters.slack.fake_web_api import TEAM, FakeSlackAPI
from bot.adapter_options import slack_options
from bot.delivery import Delivery, DeliveryConfig
from bot.settings import Settings
from pipeline.envelope import ProgressCallback, StreamCallback
from pipeline.messages import (
    ActionOutcome,
    Citation,
    Inbound,
    Reply,
    ReplyAction,
    ReplyKind,
    Step,
    StepStatus,
    ThreadFetcher,
)
from pipeline.types import ActionKind, HistoryMessage, Role
from storage.db import Database
from storage.outbox import Outbox
from tests.adapters.slack.contract import assert_calls_valid, load_spec
from tests.conftest import SHARED_DATA

SECRET = "test-signing-secret-0123"
STREAM_INTERVAL_S = 0.05  # between two stream appends of one question (production: 1 s)
USERS = {
    "UALICE": {"name": "alice", "profile": {"display_name": "Alice"}, "locale": "en-US"},
    "UBOB": {"name": "bob", "profile": {"display_name": "Bob"}, "locale": "de-DE"},
    "UCARLA": {"name": "carla", "profile": {"display_name": "Carla"}, "locale": "es-ES"},
}


def answer(conversation_id: str, text: str = "Hold the **pair** button for 3 s [1].") -> Reply:
    return Reply(
        kind=ReplyKind.ANSWER, text=text, language="en", conversation_id=conversation_id,
        citations=(Citation(1, "Pairing", ("Remote", "Setup"), "https://docs.example/remote#pair", "c1", 0.9),),
        actions=(ReplyAction(f"fb-yes-{conversation_id}", "Helpful", ActionKind.HELPFUL),
                 ReplyAction(f"fb-no-{conversation_id}", "Not helpful", ActionKind.NOT_HELPFUL)),
    )  # fmt: skip


@dataclass
class FakeHandler:
    """Behaves like the conversation service at its boundary: answers mentions, takes follow-ups only in threads
    it answered, refuses disallowed channels, dedupes by `dedup_key`, and consumes stored actions once, only from
    their own thread. `script` can override the reply to a message."""

    settings: Settings
    delay_s: float = 0.0
    script: Callable[[Inbound], Reply | None] | None = None
    messages: list[Inbound] = field(default_factory=list)
    actions_pressed: list[Inbound] = field(default_factory=list)
    fetched: list[list[HistoryMessage]] = field(default_factory=list)
    engaged: set[str] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)
    stored_actions: dict[str, tuple[str, str]] = field(default_factory=dict)  # action id → (thread_key, label)
    resumes: list[str] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    async def handle_message(self, inbound: Inbound, fetcher: ThreadFetcher | None = None) -> Reply | None:
        return await self._handle(inbound, fetcher, None)

    async def _handle(
        self, inbound: Inbound, fetcher: ThreadFetcher | None, progress: ProgressCallback | None
    ) -> Reply | None:
        self.messages.append(inbound)
        if inbound.dedup_key in self.seen:
            return None
        self.seen.add(inbound.dedup_key)
        if not inbound.mentioned and inbound.thread_key not in self.engaged:
            return None
        if not self.settings.channel_policy("slack", inbound.workspace_id, inbound.channel_id).allowed:
            return Reply(kind=ReplyKind.NOTICE, text="Not in this channel, sorry.", language="en",
                         conversation_id="", reason="channel_not_allowed")
        if fetcher is not None:
            self.fetched.append(await fetcher.fetch_thread())
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if progress is not None:
            await self._steps(progress)
        self.engaged.add(inbound.thread_key)
        reply = self.script(inbound) if self.script else answer(inbound.thread_key)
        if reply is not None:
            for action in reply.actions:
                self.stored_actions[action.id] = (inbound.thread_key, action.label)
        return reply

    async def _steps(self, progress: ProgressCallback) -> None:
        return None

    def clarification(self, inbound: Inbound, options: tuple[str, ...] = ("Remote", "TV")) -> Reply:
        n = next(self._ids)
        return Reply(
            kind=ReplyKind.CLARIFICATION, text="Which device do you mean?", language="en",
            conversation_id=inbound.thread_key,
            actions=tuple(ReplyAction(f"act-{n}-{i}", label, ActionKind.SEARCH) for i, label in enumerate(options)),
        )  # fmt: skip

    async def handle_action(self, inbound: Inbound) -> ActionOutcome:
        self.actions_pressed.append(inbound)
        stored = self.stored_actions.get(inbound.action_id or "")
        if stored is None:
            return ActionOutcome(accepted=False, chosen_label="", notice="That choice was already used.")
        thread_key, label = stored
        if thread_key != inbound.thread_key:
            return ActionOutcome(accepted=False, chosen_label="", notice="That button belongs to another thread.")
        del self.stored_actions[inbound.action_id or ""]
        self.resumes.append(label)
        return ActionOutcome(accepted=True, chosen_label=label, reply=answer(thread_key, f"About the {label}: ok."))


@dataclass
class SteppingHandler(FakeHandler):
    """A `FakeHandler` that also reports a typical run's pipeline steps, as `ConversationService` does when the
    delivery passes `progress` (so the delivery shows the work: Slack's task timeline). `gate`, when given, holds the
    run after the search until it is set (to press stop meanwhile); `reached` is set when the run waits there."""

    gate: asyncio.Event | None = None
    reached: asyncio.Event = field(default_factory=asyncio.Event)
    sections: int = 3
    quality: str = "approve"

    async def handle_message(
        self,
        inbound: Inbound,
        fetcher: ThreadFetcher | None = None,
        stream: StreamCallback | None = None,
        progress: ProgressCallback | None = None,
    ) -> Reply | None:
        return await self._handle(inbound, fetcher, progress)

    async def _steps(self, progress: ProgressCallback) -> None:
        await progress(Step(Role.LANG, StepStatus.STARTED))
        await progress(Step(Role.LANG, StepStatus.DONE, language="en"))
        await progress(Step(Role.ESSENCE, StepStatus.STARTED))
        await progress(Step(Role.SEARCH, StepStatus.STARTED))
        await progress(Step(Role.SEARCH, StepStatus.DONE, sections=self.sections, decision="good"))
        await progress(Step(Role.RESPONSE, StepStatus.STARTED))
        if self.gate is not None:
            self.reached.set()
            await self.gate.wait()
        await progress(Step(Role.RESPONSE, StepStatus.DONE))
        await progress(Step(Role.QUALITY, StepStatus.STARTED))
        await progress(Step(Role.QUALITY, StepStatus.DONE, decision=self.quality))


def signed_headers(body: str, secret: str = SECRET, timestamp: int | None = None,
                   content_type: str = "application/json") -> dict[str, str]:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}", "Content-Type": content_type}


_event_ids = itertools.count(1)


def event_body(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "token": "legacy", "team_id": TEAM, "api_app_id": "A0001", "type": "event_callback",
        "event_id": f"Ev{next(_event_ids):08d}", "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": "UBOT0001", "is_bot": True}],
        "event": event,
    }  # fmt: skip


def mention_event(ts: str, text: str = "<@UBOT0001> how do I pair the remote?", user: str = "UALICE",
                  channel: str = "C1", thread_ts: str | None = None) -> dict[str, Any]:
    event = {"type": "app_mention", "user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event_body(event)


def message_event(ts: str, text: str, user: str = "UALICE", channel: str = "C1", thread_ts: str | None = None,
                  **extra: Any) -> dict[str, Any]:
    event = {"type": "message", "user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts,
             "channel_type": "channel", **extra}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event_body(event)


def pressables(blocks: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(block_id, what a press sends) for every button a person can press in `blocks`: buttons in actions blocks,
    a button beside a section, and each of a `feedback_buttons` element's two buttons (Slack sends the pressed one's
    value with the element's action_id, type `feedback_buttons`)."""
    found: list[tuple[str, dict[str, Any]]] = []
    for block in blocks:
        block_id = str(block.get("block_id") or "")
        if block.get("type") == "section" and isinstance(block.get("accessory"), dict):
            found.append((block_id, block["accessory"]))
        for element in block.get("elements", ()) if block.get("type") in ("actions", "context_actions") else ():
            if element.get("type") == "feedback_buttons":
                found += [(block_id, {"type": "feedback_buttons", "action_id": element["action_id"], **element[key]})
                          for key in ("positive_button", "negative_button")]  # fmt: skip
            else:
                found.append((block_id, element))
    return found


def button_of_kind(blocks: list[dict[str, Any]], kind: ActionKind) -> tuple[dict[str, Any], str]:
    """(what pressing it sends, block_id) of the button for `kind`: helpful / not helpful are the positive / negative
    feedback buttons (or, in the classic style, buttons whose action_id names the kind), the rest by action_id."""
    for block in blocks:
        for element in block.get("elements", ()) if block.get("type") in ("actions", "context_actions") else ():
            if element.get("type") == "feedback_buttons" and kind in (ActionKind.HELPFUL, ActionKind.NOT_HELPFUL):
                key = "positive_button" if kind is ActionKind.HELPFUL else "negative_button"
                sent = {"type": "feedback_buttons", "action_id": element["action_id"], **element[key]}
                return sent, str(block["block_id"])
            if str(element.get("action_id", "")).split(":")[1:2] == [kind.value]:
                return dict(element), str(block["block_id"])
    raise LookupError(kind)


def pressable(blocks: list[dict[str, Any]], block_prefix: str) -> list[dict[str, Any]]:
    """The pressable buttons of the blocks whose block_id starts with `block_prefix`."""
    return [button for block_id, button in pressables(blocks) if block_id.startswith(block_prefix)]


def action_body(message: dict[str, Any], channel: str, button: dict[str, Any], block_id: str,
                user: str = "UALICE") -> dict[str, Any]:
    return {
        "type": "block_actions", "team": {"id": TEAM, "domain": "fake"}, "user": {"id": user, "username": user},
        "api_app_id": "A0001", "trigger_id": f"trig-{time.time_ns()}",
        "container": {"type": "message", "message_ts": message["ts"], "channel_id": channel,
                      "is_ephemeral": False, "thread_ts": message.get("thread_ts")},
        "channel": {"id": channel}, "message": message,
        "actions": [{"action_id": button["action_id"], "block_id": block_id, "value": button["value"],
                     "text": button["text"], "type": button.get("type", "button"),
                     "action_ts": f"{time.time():.6f}"}],
    }  # fmt: skip


@dataclass
class Harness:
    api: FakeSlackAPI
    handler: FakeHandler
    adapter: SlackAdapter
    url: str
    session: aiohttp.ClientSession
    delivery: Delivery

    async def post_json(self, body: dict[str, Any], headers: dict[str, str] | None = None,
                        retry_num: int | None = None) -> aiohttp.ClientResponse:
        raw = json.dumps(body)
        sent = headers or signed_headers(raw)
        if retry_num is not None:
            sent = {**sent, "X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        async with self.session.post(self.url, data=raw, headers=sent) as response:
            await response.read()
            return response

    async def post_form(self, form: dict[str, str]) -> tuple[int, str]:
        raw = urllib.parse.urlencode(form)
        headers = signed_headers(raw, content_type="application/x-www-form-urlencoded")
        async with self.session.post(self.url, data=raw, headers=headers) as response:
            return response.status, await response.text()

    async def press(self, body: dict[str, Any]) -> int:
        status, _ = await self.post_form({"payload": json.dumps(body)})
        return status

    async def settle(self) -> None:
        """Let the delivery worker handle everything stored so far (the production path: inbox → worker → sink)."""
        await self.adapter.drain(10)
        while await self.delivery.process_once():
            pass
        await self.delivery.sweep()

    async def delivered(self, timeout_s: float = 30.0) -> None:
        """Sweep until no reply is pending (retries after transient failures included)."""
        async with asyncio.timeout(timeout_s):
            while (await self.delivery.outbox.counts()).get("pending"):
                await asyncio.sleep(0.05)
                await self.delivery.sweep()


MakeHarness = Callable[..., Awaitable[Harness]]


@dataclass
class Wired:
    delivery: Delivery
    db: Database

    async def settle(self, adapter: SlackAdapter) -> None:
        await adapter.drain(10)
        while await self.delivery.process_once():
            pass

    async def close(self) -> None:
        await self.db.dispose()


async def wire(adapter: SlackAdapter, handler: Any, folder: Path) -> Wired:
    """The production wiring for an adapter built by hand: a Delivery on SQLite as its intake."""
    db = Database(f"sqlite+aiosqlite:///{folder / 'wired.db'}")
    await db.migrate()
    delivery = Delivery(db, handler, {"slack": adapter.sink}, "w1", fetcher_for=adapter.fetcher_for,
                        config=DeliveryConfig(poll_s=0.02))  # fmt: skip
    adapter.intake = delivery
    return Wired(delivery, db)


@pytest.fixture
async def slack_api() -> AsyncIterator[FakeSlackAPI]:
    api = FakeSlackAPI(users=USERS)
    await api.start()
    yield api
    await api.close()
    assert_calls_valid(api.calls, openapi_spec())


def openapi_spec() -> dict[str, Any] | None:
    """Slack's 2021 OpenAPI spec when the shared data is present (checked in addition to the built-in table)."""
    path = SHARED_DATA / "slack" / "api-specs" / "web-api" / "slack_web_openapi_v2.json"
    return load_spec(path) if path.exists() else None


def make_settings(api: FakeSlackAPI, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": "xoxb-test-token", "slack_signing_secret": SECRET, "slack_api_url": api.base_url,
        "slack_app_token": "xapp-test-token", "slack_support_mention": "<!subteam^S0SUPPORT>", **overrides,
    }  # fmt: skip
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture
async def make_harness(slack_api: FakeSlackAPI, tmp_path: Path) -> AsyncIterator[MakeHarness]:
    runners: list[web.AppRunner] = []
    sessions: list[aiohttp.ClientSession] = []
    adapters: list[SlackAdapter] = []
    databases: list[Database] = []

    async def build(
        progress_delay_s: float = 0.3,
        handler_delay_s: float = 0.0,
        steps: bool = False,
        language_of: Callable[[str], Awaitable[str | None]] | None = None,
        **overrides: Any,
    ) -> Harness:
        """`steps`: the handler reports pipeline steps (`SteppingHandler`), so questions show their work."""
        settings = make_settings(slack_api, **overrides)
        handler = (SteppingHandler if steps else FakeHandler)(settings, delay_s=handler_delay_s)
        db = Database(f"sqlite+aiosqlite:///{tmp_path / f'slack{len(databases)}.db'}")
        await db.migrate()
        databases.append(db)
        adapter = SlackAdapter(slack_options(settings), stream_interval_s=STREAM_INTERVAL_S, language_of=language_of)
        delivery = Delivery(
            db, handler, {"slack": adapter.sink}, "w1", fetcher_for=adapter.fetcher_for,
            config=DeliveryConfig(poll_s=0.02, progress_delay_s=progress_delay_s),
            outbox=Outbox(db, base_backoff_s=0.05, max_backoff_s=0.2),  # retries in test time
        )  # fmt: skip
        adapter.intake = delivery
        web_app = web.Application()
        adapter.add_routes(web_app)
        runner = web.AppRunner(web_app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        session = aiohttp.ClientSession()
        runners.append(runner)
        sessions.append(session)
        adapters.append(adapter)
        return Harness(slack_api, handler, adapter, f"http://127.0.0.1:{port}/slack/events", session, delivery)

    yield build
    for adapter in adapters:
        await adapter.close()
    for session in sessions:
        await session.close()
    for runner in runners:
        await runner.cleanup()
    for db in databases:
        await db.dispose()
