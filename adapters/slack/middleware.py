"""The adapter's global middleware, three small pieces in bolt's style, in this order: ignore what is not a person
talking (`IgnoreSelf`), refuse a /ask that cannot be asked (`AskGuard`), store the rest, then acknowledge
(`StoreThenAck`).

    person's message / press of our button / /ask  →  `Inbound` → intake.accept (the durable inbox) → 200
    the write fails                                   →  500 (not acknowledged: Slack delivers again)

No Slack Web API call happens on this path: the worker that claims the event shows progress and answers.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from adapters.slack.agent import ViewContexts
from adapters.slack.blocks import ACTION_PREFIX
from adapters.slack.events import ignorable
from adapters.slack.inbound import (
    Refusal,
    action_inbound,
    command_inbound,
    edit_inbound,
    message_inbound,
    reaction_inbound,
)
from adapters.slack.options import SlackOptions
from adapters.slack.wording import wording
from pipeline.locales import texts
from pipeline.messages import Inbound, Intake, ThreadRef
from pipeline.messages.question import InputProblem, check_question

log = logging.getLogger(__name__)

# the agent experience's events, for bolt listeners (adapters.slack.agent): nothing to store, nothing to answer
PASS_ON_EVENTS = frozenset({
    "app_home_opened", "app_context_changed", "agent_session_stopped",
    "assistant_thread_started", "assistant_thread_context_changed",
})  # fmt: skip


class IgnoreSelf(AsyncMiddleware):
    """What is not a person talking to us (our own posts, other bots, edits and deletions) is acknowledged and
    dropped."""

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        if ignorable(req.body, bot_user_of(req), req.context.bot_id):
            return _ok()
        return await next()


class AskGuard(AsyncMiddleware):
    """A /ask that cannot be asked (no question, a refused channel, an empty, unreadable or too long question) is
    refused privately, in the question's language, before anything is stored or posted in the channel."""

    def __init__(
        self, options: SlackOptions, language_of: Callable[[str], Awaitable[str | None]] | None = None
    ) -> None:
        """`language_of`: the language of a text (the lang role's detector), not the asker's client locale."""
        self._options = options
        self._language_of = language_of

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        body: dict[str, Any] = req.body
        if body.get("command") != self._options.ask_command:
            return await next()
        parsed = command_inbound(body, bot_user_of(req))
        if isinstance(parsed, Refusal):
            return _ephemeral(wording(None).usage_ask.format(command=self._options.ask_command))
        inbound = parsed[0]
        if not self._options.channel_allowed(inbound.workspace_id, inbound.channel_id):
            return _ephemeral(texts(await self._language(inbound.text)).channel_not_allowed)
        checked = check_question(inbound.text, max_chars=self._options.max_question_chars)
        if checked.problem is not None:
            said = checked.text if checked.problem is InputProblem.TOO_LONG else ""  # junk says nothing of a language
            t = texts(await self._language(said))
            return _ephemeral(getattr(t, checked.problem.value).format(limit=self._options.max_question_chars))
        return await next()

    async def _language(self, text: str) -> str | None:
        """The language of the question (None: the default, English); a detector failure never blocks the ack."""
        if self._language_of is None or not text.strip():
            return None
        try:
            return await self._language_of(text)
        except Exception:
            log.warning("language detection for a /ask notice failed", exc_info=log.isEnabledFor(logging.DEBUG))
            return None


class StoreThenAck(AsyncMiddleware):
    """A person's message, a press of our button or a /ask (past `AskGuard`) is stored in the inbox, and only then
    acknowledged; bolt has verified the signature. The agent experience's events and anything else go on to bolt's
    listeners."""

    def __init__(
        self, options: SlackOptions, intake: Callable[[], Intake | None], contexts: ViewContexts | None = None
    ) -> None:
        """`contexts`: where the people are looking (app_context_changed); a DM question carries its asker's."""
        self._options = options
        self._intake = intake
        self._contexts = contexts

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        body: dict[str, Any] = req.body
        event = body.get("event")
        if isinstance(event, dict):
            if event.get("type") in PASS_ON_EVENTS:
                return await next()
            if event.get("type") == "reaction_added":  # a ✅ may resolve a thread (team answers); others: nothing
                reaction = reaction_inbound(body, bot_user_of(req))
                return _ok() if reaction is None else await self._store(reaction, kind="reaction")
            parsed = message_inbound(body, bot_user_of(req))
            if parsed is None:
                return _ok()
            return await self._store(self._with_context(parsed, event), kind="message")
        if body.get("type") == "block_actions":
            action = (body.get("actions") or [{}])[0]
            if not str(action.get("action_id") or "").startswith(ACTION_PREFIX):
                return _ok()
            return await self._store(action_inbound(body), kind="action")
        if body.get("type") == "view_submission":
            edited = edit_inbound(body)
            if edited is not None:  # the review editor: an empty 200 closes the modal
                return await self._store(edited, kind="edit")
        if body.get("command") == self._options.ask_command:
            command = command_inbound(body, bot_user_of(req))
            return _ok() if isinstance(command, Refusal) else await self._store(command, kind="command")
        return await next()

    def _with_context(self, parsed: tuple[Inbound, ThreadRef], event: dict[str, Any]) -> tuple[Inbound, ThreadRef]:
        """A DM question carries the channel its asker was looking at (the service decides what it narrows)."""
        inbound, ref = parsed
        if self._contexts is None or event.get("channel_type") != "im":
            return parsed
        viewed = self._contexts.get(inbound.workspace_id, inbound.user_id)
        return (dataclasses.replace(inbound, context_channel_id=viewed), ref) if viewed else parsed

    async def _store(self, parsed: tuple[Inbound, ThreadRef], *, kind: str) -> BoltResponse:
        intake = self._intake()
        if intake is None:  # not wired yet: refuse, so Slack delivers again
            log.warning("slack event refused: no intake", extra={"kind": kind})
            return BoltResponse(status=503, body="")
        try:
            await intake.accept(*parsed)
        except Exception as exc:
            log.error("slack event not stored; not acknowledged", extra={"kind": kind, "error": type(exc).__name__})
            return BoltResponse(status=500, body="")
        return _ok()


def bot_user_of(req: AsyncBoltRequest) -> str | None:
    """The bot's user id: bolt's context, else as the Events API states it."""
    return req.context.bot_user_id or _bot_user_of(req.body)


def _bot_user_of(body: dict[str, Any]) -> str | None:
    """The bot's user id as the Events API states it (`authorizations[0].user_id` of the bot installation)."""
    authorizations = body.get("authorizations") or []
    first = authorizations[0] if authorizations and isinstance(authorizations[0], dict) else {}
    user = first.get("user_id") if first.get("is_bot", True) else None
    return str(user) if user else None


def _ok() -> BoltResponse:
    return BoltResponse(status=200, body="")


def _ephemeral(text: str) -> BoltResponse:
    """A command's answer only the person who typed it sees (slash command responses are ephemeral by default)."""
    return BoltResponse(
        status=200, body=json.dumps({"text": text}), headers={"content-type": "application/json;charset=utf-8"}
    )
