"""A scripted Slack conversation against the fake Slack Web API, printed the way Slack would show it.

    .venv/bin/python -m bot.slack_demo                      # the bundled multilingual embedder (E5)
    .venv/bin/python -m bot.slack_demo --hashing-embedder   # quicker: a tiny hashing embedder instead of E5

It runs the real application (`bot.app.build_app`: service, pipeline, SQLite, search) over the fixture manual in
`tests/fixtures/manual`, the real Slack adapter over real HTTP with signed requests, and the recording fake of
Slack's Web API (`adapters/slack/fake_web_api.py`). It lives in `bot/`, the composition root, because it wires the
app, the adapter and a delivery on the app's database; the fixture manual is data the image copies.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import itertools
import json
import logging
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from adapters.slack.app import EVENTS_PATH, SlackAdapter
from adapters.slack.fake_web_api import BOT_USER, TEAM, FakeSlackAPI, Message
from bot.adapter_options import slack_options
from bot.answers.hooks import TeamAnswerHooks
from bot.answers.wiring import TeamAnswerParts
from bot.delivery import Delivery, DeliveryConfig
from bot.settings import Settings
from pipeline.messages import ConversationHandler
from storage.db import Database
from storage.outbox import Outbox

REPO = Path(__file__).resolve().parents[1]
MANUAL = REPO / "tests" / "fixtures" / "manual"
DOCS_URL = "https://docs.corvid.test/"
SECRET = "demo-signing-secret"  # noqa: S105 - the fake's, not a real one
PEOPLE = {"UALICE": "alice", "UBOB": "bob"}


def demo_settings(api: FakeSlackAPI, data_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": data_dir, "slack_bot_token": "xoxb-demo", "slack_signing_secret": SECRET,
        "slack_api_url": api.base_url, "slack_support_mention": "<!subteam^S0SUPPORT>",
        "docs_base_url": DOCS_URL, "user_rate_limit": "100/minute", **overrides,
    }  # fmt: skip
    return Settings(_env_file=None, **values)


class SlackScenario:
    """People talking to the adapter through signed HTTP requests; the fake Web API keeps what the bot posted."""

    def __init__(self, api: FakeSlackAPI, settings: Settings, handler: ConversationHandler, db: Database,
                 team: TeamAnswerParts | None = None, outbox: Outbox | None = None) -> None:  # fmt: skip
        """`team`: the app's team answers, so ✅, experts' replies and review buttons reach them as in `serve`."""
        self.api = api
        self.adapter = SlackAdapter(slack_options(settings))
        outbox = outbox or Outbox(db)
        sinks = {"slack": self.adapter.sink}
        self.delivery = Delivery(  # the production path: inbox → worker → outbox → the adapter's sink
            db, handler, sinks, "demo", fetcher_for=self.adapter.fetcher_for, config=DeliveryConfig(poll_s=0.05),
            outbox=outbox, hooks=TeamAnswerHooks(team, outbox, sinks) if team is not None else None,
        )  # fmt: skip
        self.adapter.intake = self.delivery
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._url = ""
        self._events = itertools.count(1)
        self.lines: list[str] = []

    async def start(self) -> None:
        web_app = web.Application()
        self.adapter.add_routes(web_app)
        self._runner = web.AppRunner(web_app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._url = f"http://127.0.0.1:{port}{EVENTS_PATH}"
        self._session = aiohttp.ClientSession()

    async def close(self) -> None:
        await self.adapter.close()
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def say(self, user: str, text: str, *, channel: str = "C1", thread_ts: str | None = None,
                  mention: bool = True) -> tuple[str, dict[str, Any]]:
        """A person writes in a channel or thread; with `mention`, Slack sends `app_mention` (and `message`)."""
        shown = f"<@{BOT_USER}> {text}" if mention else text
        ts = self.api.seed(channel, shown, user=user, thread_ts=thread_ts)
        self.lines.append(f"{PEOPLE.get(user, user)}: {shown.replace(f'<@{BOT_USER}>', '@docbot')}")
        event: dict[str, Any] = {"type": "message", "channel_type": "channel", "user": user, "text": shown,
                                 "ts": ts, "channel": channel, "event_ts": ts}  # fmt: skip
        if thread_ts:
            event["thread_ts"] = thread_ts
        await self.deliver(event)
        if mention:
            await self.deliver({**event, "type": "app_mention"})
        await self.settle()
        return ts, event

    async def settle(self) -> None:
        """Let the delivery worker answer everything stored so far."""
        await self.adapter.drain(120)
        while await self.delivery.process_once():
            pass

    async def deliver(self, event: dict[str, Any], *, event_id: str | None = None) -> int:
        body = json.dumps({"team_id": TEAM, "api_app_id": "A0001", "type": "event_callback",
                           "event_id": event_id or f"Ev{next(self._events):06d}", "event_time": int(time.time()),
                           "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
                           "event": event})  # fmt: skip
        return await self._post(body, "application/json")

    async def react(self, user: str, message_ts: str, *, channel: str = "C1", reaction: str = "white_check_mark",
                    event_id: str | None = None) -> int:  # fmt: skip
        """A person puts an emoji on a message (`reaction_added`, the Events API's shape); `event_id` repeats an
        earlier delivery. The HTTP status docbot answered."""
        self.lines.append(f"{PEOPLE.get(user, user)} reacted :{reaction}:")
        event = {"type": "reaction_added", "user": user, "reaction": reaction, "item_user": user,
                 "item": {"type": "message", "channel": channel, "ts": message_ts}, "event_ts": self.api.next_ts()}
        status = await self.deliver(event, event_id=event_id)  # fmt: skip
        await self.settle()
        return status

    async def submit_editor(self, user: str, view: dict[str, Any], text: str) -> int:
        """A person submits a modal the bot opened (`view_submission`) with `text` in its one input."""
        block = view["blocks"][0]
        state = {"values": {block["block_id"]: {block["element"]["action_id"]: {"type": "plain_text_input",
                                                                               "value": text}}}}
        payload = {"type": "view_submission", "team": {"id": TEAM}, "user": {"id": user, "username": user},
                   "api_app_id": "A0001", "trigger_id": f"t{time.time_ns()}",
                   "view": {**view, "id": f"V{time.time_ns()}", "state": state}}  # fmt: skip
        status = await self._post(urllib.parse.urlencode({"payload": json.dumps(payload)}),
                                  "application/x-www-form-urlencoded")  # fmt: skip
        await self.settle()
        return status

    async def press(self, user: str, message: Message, label: str) -> None:
        """A person presses the button labelled `label` (or beside the choice `label`) on one of the bot's messages."""
        for block_id, shown, action in pressables(message.blocks):
            if shown != label:
                continue
            self.lines.append(f"{PEOPLE.get(user, user)} pressed [{label}]")
            payload = {
                "type": "block_actions", "team": {"id": TEAM}, "user": {"id": user, "username": user},
                "api_app_id": "A0001", "trigger_id": f"t{time.time_ns()}",
                "container": {"type": "message", "message_ts": message.ts, "channel_id": message.channel,
                              "thread_ts": message.thread_ts},
                "channel": {"id": message.channel}, "message": message.as_api(),
                "actions": [{**action, "block_id": block_id, "action_ts": f"{time.time():.6f}"}],
            }  # fmt: skip
            form = urllib.parse.urlencode({"payload": json.dumps(payload)})
            await self._post(form, "application/x-www-form-urlencoded")
            await self.settle()
            return
        raise LookupError(f"no button {label!r} on message {message.ts}")

    def show_work(self, since: int) -> None:
        """The Web API calls that showed a question's work (from call `since` on), as a person would see them."""
        self.lines.extend("    " + line for line in work_transcript(self.api.calls[since:]))

    def thread(self, root_ts: str, channel: str = "C1") -> list[Message]:
        return self.api.bot_messages(channel, thread_ts=root_ts)

    def show(self, message: Message) -> None:
        self.lines.extend("    " + line for line in describe(message))

    async def _post(self, body: str, content_type: str) -> int:
        assert self._session is not None
        ts = str(int(time.time()))
        signature = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={signature}",
                   "Content-Type": content_type}  # fmt: skip
        async with self._session.post(self._url, data=body, headers=headers) as response:
            await response.read()
            return response.status


def pressables(blocks: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(block_id, what a person reads as the button, what Slack sends when it is pressed) for every button of ours:
    in actions blocks, beside a clarification choice (read as the choice), and both feedback buttons."""
    found: list[tuple[str, str, dict[str, Any]]] = []
    for block in blocks:
        block_id = str(block.get("block_id") or "")
        accessory = block.get("accessory")
        if block.get("type") == "section" and isinstance(accessory, dict) and "value" in accessory:
            found.append((block_id, choice_label(block["text"]["text"]), accessory))
        for element in block.get("elements", ()) if block.get("type") in ("actions", "context_actions") else ():
            if element.get("type") == "feedback_buttons":
                for key in ("positive_button", "negative_button"):
                    button = element[key]
                    sent = {"type": "feedback_buttons", "action_id": element["action_id"], **button}
                    found.append((block_id, button["text"]["text"], sent))
            elif "value" in element:
                found.append((block_id, element["text"]["text"], element))
    return found


_TASK_MARK = {"in_progress": "…", "complete": "✓", "error": "✗", "pending": "·"}


def work_transcript(calls: Sequence[Any]) -> list[str]:
    """What the calls that show a question's work did, one line each: the agent session (the stop button), the task
    timeline's tasks as they start and finish, and the answer replacing them."""
    lines: list[str] = []
    for call in calls:
        args = call.args
        if call.method == "agents.sessions.setStatus":
            what = "stop button shown" if args["status"] == "processing" else "stop button gone"
            lines.append(f"[agents.sessions.setStatus {args['status']}] {what}")
        elif call.method in ("chat.startStream", "chat.appendStream", "chat.stopStream"):
            tasks = [c for c in args.get("chunks") or [] if c.get("type") == "task_update"]
            shown = "; ".join(f"{_TASK_MARK[c['status']]} {c['title']}" + (f" ({c['output']})" if c.get("output")
                              else "") for c in tasks)  # fmt: skip
            extra = f" session {args['session_status']}" if args.get("session_status") else ""
            chunks = args.get("chunks") or []
            text = "".join(str(c.get("text") or "") for c in chunks if c.get("type") == "markdown_text")
            if text:
                shown = "; ".join(filter(None, [shown, f"the answer so far: “…{text[-40:]}”"]))
            lines.append(f"[{call.method}{extra}] {shown or '(no change)'}")
        elif call.method == "chat.update":
            lines.append(f"[chat.update] the answer replaces the timeline: {str(args.get('text', ''))[:60]}…")
            break
    return lines


def choice_label(section_text: str) -> str:
    """A clarification choice's label from its section (`*1.* label`)."""
    number, _, label = section_text.partition(" ")
    return label if number.startswith("*") and number.endswith(".*") else section_text


def describe(message: Message) -> list[str]:
    """A bot message as text: its sections, tables, sources, buttons and the shown choice."""
    lines = ["docbot:"]
    for block in message.blocks:
        kind = block.get("type")
        if kind == "section":
            lines.extend("  " + line for line in block["text"]["text"].splitlines() if line.strip())
            if isinstance(block.get("accessory"), dict):
                lines[-1] += f"  [{block['accessory']['text']['text']}]"
        elif kind == "table":
            lines.extend("  | " + " | ".join(c.get("text", "") for c in row) + " |" for row in block["rows"])
        elif kind == "context":
            lines.append("  · " + " ".join(e.get("text", "") for e in block.get("elements", ())))
        elif kind == "carousel":
            lines.extend(f"  ▭ {card['title']['text']} — {(card.get('subtitle') or {}).get('text', '')}"
                         for card in block.get("elements", ()))  # fmt: skip
        elif kind in ("actions", "context_actions"):
            links = [f"{e['text']['text']} ↗" for e in block.get("elements", ()) if e.get("url")]
            lines.append("  [" + "] [".join([*(shown for _, shown, _ in pressables([block])), *links]) + "]")
    return lines


def first_choice(message: Message) -> str:
    """The label of the first choice of a clarification (the best-matching section)."""
    for block_id, shown, _ in pressables(message.blocks):
        if block_id.startswith(("docbot_option", "docbot_options")):
            return shown
    raise LookupError(f"no choices on message {message.ts}")


async def run_demo(data_dir: Path, *, use_e5: bool = True, out: Callable[[str], None] = print) -> SlackScenario:
    """The scripted conversation; returns the scenario (transcript in `.lines`, Web API calls in `.api.calls`)."""
    from bot.app import build_app
    from storage.embedder import HashingEmbedder

    api = FakeSlackAPI(users={u: {"name": n, "profile": {"display_name": n.title()}} for u, n in PEOPLE.items()},
                       page_size=100)  # fmt: skip
    await api.start()
    app = await build_app(demo_settings(api, data_dir), embedder=None if use_e5 else HashingEmbedder())
    scenario = SlackScenario(api, app.settings, app.service, app.db)
    try:
        await app.ingest([str(MANUAL)], base_url=DOCS_URL)
        await scenario.start()
        before = len(api.calls)
        root, _ = await scenario.say("UALICE", "how do I pair the remote with the hub?")
        scenario.show_work(before)
        scenario.show(scenario.thread(root)[-1])
        await scenario.say("UALICE", "and how do I replace its batteries?", thread_ts=root, mention=False)
        scenario.show(scenario.thread(root)[-1])
        vague, _ = await scenario.say("UBOB", "it doesn't work")
        clarifying = scenario.thread(vague)[-1]
        scenario.show(clarifying)
        await scenario.press("UBOB", clarifying, first_choice(clarifying))
        for message in scenario.thread(vague):
            scenario.show(message)
        for line in scenario.lines:
            out(line)
    finally:
        await scenario.close()
        await app.close()
        await api.close()
    return scenario


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--hashing-embedder", action="store_true", help="a tiny hashing embedder instead of the bundled E5 (faster)"
    )
    args = parser.parse_args(argv)
    logging.disable(logging.INFO)  # the transcript is the output
    with tempfile.TemporaryDirectory(prefix="docbot-slack-demo-") as folder:
        asyncio.run(run_demo(Path(folder), use_e5=not args.hashing_embedder))


if __name__ == "__main__":
    main()
