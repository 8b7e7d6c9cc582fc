"""`SlackAdapter`: slack-bolt's AsyncApp for /ask, mentions, thread follow-ups, DMs, assistant threads and buttons.

Every listener acknowledges at once and hands the work to a background task; the conversation service decides what
to answer, `SlackReplySink` posts it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.websockets import AsyncSocketModeHandler
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.errors import SlackApiError
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import ACTION_PREFIX
from adapters.slack.client import UserDirectory, retry_handlers, web_client
from adapters.slack.dedupe import RecentKeys
from adapters.slack.events import team_of, to_datetime
from adapters.slack.fetcher import SlackThreadFetcher
from adapters.slack.inbound import PLATFORM, action_inbound, message_inbound
from adapters.slack.middleware import IgnoreAndDedupe
from adapters.slack.mrkdwn import inert
from adapters.slack.sink import BOT_USER, SlackReplySink, ref_extra, slack_thread_ref
from adapters.slack.unhandled import acknowledge_the_rest
from adapters.slack.wording import wording
from bot.messages import ActionOutcome, ConversationHandler, Inbound, Reply, ReplyKind, ThreadFetcher, ThreadRef
from bot.settings import Settings
from pipeline.locales import texts
from pipeline.types import HistoryMessage

log = logging.getLogger(__name__)
T = TypeVar("T")

EVENTS_PATH = "/slack/events"
BOT_SCOPES = (
    "app_mentions:read",
    "assistant:write",
    "channels:history",
    "chat:write",
    "commands",
    "groups:history",
    "im:history",
    "mpim:history",
    "users:read",
)


class Intake(Protocol):
    """A durable inbox (`bot.delivery.Delivery`): stores the event; its worker answers through `adapter.sink`."""

    async def accept(self, inbound: Inbound, ref: ThreadRef) -> bool: ...


class WorkFailed(Exception):
    """The handler failed after a progress sign was shown; `ref` says where (so the apology replaces it)."""

    def __init__(self, ref: ThreadRef) -> None:
        super().__init__("conversation handler failed")
        self.ref = ref


class SlackAdapter:
    """Slack in HTTP mode (`add_routes`) or Socket Mode (`start_socket_mode`), single- or multi-workspace."""

    def __init__(
        self,
        settings: Settings,
        handler: ConversationHandler,
        *,
        installation_store: AsyncInstallationStore | None = None,
        oauth_state_store: AsyncOAuthStateStore | None = None,
        clock: Callable[[], float] | None = None,
        progress_delay_s: float = 1.0,
        intake: Intake | None = None,
    ) -> None:
        self._settings = settings
        self.intake = intake
        self._handler = handler
        self._progress_delay_s = progress_delay_s
        self._base_url = settings.slack_api_url
        multi = settings.slack_client_id is not None
        token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token and not multi else None
        self._client = web_client(token, self._base_url)
        self._installations = installation_store
        oauth_settings = None
        if multi:
            secret = settings.slack_client_secret.get_secret_value() if settings.slack_client_secret else ""
            oauth_settings = AsyncOAuthSettings(
                client_id=settings.slack_client_id,
                client_secret=secret,
                scopes=list(BOT_SCOPES),
                installation_store=installation_store,
                state_store=oauth_state_store,
            )
            self._installations = oauth_settings.installation_store
        signing = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
        self.bolt = AsyncApp(
            name="docbot",
            client=self._client,
            signing_secret=signing,
            process_before_response=False,
            installation_store=installation_store if not multi else None,
            oauth_settings=oauth_settings,
        )
        self._team_clients: dict[str, AsyncWebClient] = {}
        self.users = UserDirectory(self.client_for)
        self.sink = SlackReplySink(self.client_for, support_mention=settings.slack_support_mention)
        self._seen = RecentKeys(clock=clock or time.monotonic)
        self._tasks: set[asyncio.Task[None]] = set()
        self._socket: AsyncSocketModeHandler | None = None
        self.bolt.use(IgnoreAndDedupe(self._seen))
        self._register_listeners()

    # -- wiring -----------------------------------------------------------------------------------------------

    def add_routes(self, web_app: web.Application) -> None:
        """Mount POST /slack/events (and the OAuth install/redirect routes in multi-workspace mode)."""
        web_app.router.add_post(EVENTS_PATH, self._handle_post)
        flow = self.bolt.oauth_flow
        if flow is not None:
            web_app.router.add_get(flow.install_path, self._handle_install)
            web_app.router.add_get(flow.redirect_uri_path, self._handle_oauth_redirect)

    async def start_socket_mode(self) -> None:
        """Connect over Socket Mode with the app-level token (returns once connected)."""
        if self._settings.slack_app_token is None:
            raise ValueError("Socket Mode needs SLACK_APP_TOKEN (an app-level token, xapp-...)")
        self._socket = AsyncSocketModeHandler(
            self.bolt, app_token=self._settings.slack_app_token.get_secret_value(), web_client=self._client
        )
        await self._socket.connect_async()  # type: ignore[no-untyped-call]

    async def close(self, timeout_s: float = 10.0) -> None:
        """Disconnect Socket Mode and let in-flight answers finish (cancelled after `timeout_s`)."""
        if self._socket is not None:
            await self._socket.close_async()  # type: ignore[no-untyped-call]
            self._socket = None
        await self.drain(timeout_s)

    async def drain(self, timeout_s: float = 10.0) -> None:
        """Wait for the background work started so far."""
        pending = set(self._tasks)
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=timeout_s)
        for task in late:
            task.cancel()

    async def client_for(self, team_id: str) -> AsyncWebClient:
        """The Web API client for a workspace: the bot token's client, or the installation's in OAuth mode."""
        if self._installations is None or not team_id:
            return self._client
        if team_id in self._team_clients:
            return self._team_clients[team_id]
        bot = await self._installations.async_find_bot(enterprise_id=None, team_id=team_id)
        if bot is None:
            raise LookupError(f"no Slack installation for workspace {team_id}")
        client = AsyncWebClient(token=bot.bot_token, base_url=self._client.base_url, retry_handlers=retry_handlers())
        self._team_clients[team_id] = client
        return client

    # -- HTTP -------------------------------------------------------------------------------------------------

    async def _handle_post(self, request: web.Request) -> web.Response:
        return await to_aiohttp_response(await self.bolt.async_dispatch(await to_bolt_request(request)))

    async def _handle_install(self, request: web.Request) -> web.Response:
        assert self.bolt.oauth_flow is not None
        return await to_aiohttp_response(await self.bolt.oauth_flow.handle_installation(await to_bolt_request(request)))

    async def _handle_oauth_redirect(self, request: web.Request) -> web.Response:
        assert self.bolt.oauth_flow is not None
        return await to_aiohttp_response(await self.bolt.oauth_flow.handle_callback(await to_bolt_request(request)))

    # -- listeners (plain functions: bolt injects arguments by parameter name) --------------------------------

    def _register_listeners(self) -> None:
        async def on_event(body: dict[str, Any], context: AsyncBoltContext) -> None:
            self._on_event(body, context)

        async def on_ask(ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
            await self._on_ask(ack, body, context)

        async def on_action(ack: AsyncAck, body: dict[str, Any]) -> None:
            await ack()
            self._spawn(self._press(body))

        async def on_assistant_thread_started(body: dict[str, Any]) -> None:
            self._spawn(self._suggest_prompts(body))

        async def ignore() -> None:
            return None

        self.bolt.event("app_mention")(on_event)
        self.bolt.event("message")(on_event)
        self.bolt.event("assistant_thread_started")(on_assistant_thread_started)
        self.bolt.event("assistant_thread_context_changed")(ignore)
        self.bolt.command(self._settings.slack_ask_command)(on_ask)
        self.bolt.action(re.compile(rf"^{re.escape(ACTION_PREFIX)}"))(on_action)
        acknowledge_the_rest(self.bolt)  # last: everything else is acknowledged and dropped, not answered 404

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_event(self, body: dict[str, Any], context: AsyncBoltContext) -> None:
        parsed = message_inbound(body, context.bot_user_id)
        if parsed is not None:
            self._spawn(self._answer(*parsed))

    async def _on_ask(self, ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        question = str(body.get("text") or "").strip()
        team, channel = team_of(body), str(body.get("channel_id") or "")
        if not question:
            await ack(text=wording(None).usage_ask.format(command=self._settings.slack_ask_command))
            return
        if not self._settings.channel_policy(PLATFORM, team, channel).allowed:
            await ack(text=texts(None).channel_not_allowed)
            return
        await ack()
        self._spawn(self._ask(team, channel, str(body.get("user_id") or ""), question, context.bot_user_id))

    def fetcher_for(self, inbound: Inbound, ref: ThreadRef) -> ThreadFetcher | None:
        """Reads an existing thread's earlier messages; None when the message starts the thread.
        (Register it as the delivery's fetcher factory.)"""
        if inbound.thread_id is None or inbound.thread_id == inbound.message_id:
            return None
        return LazyThreadFetcher(self, inbound, ref)

    # -- background work --------------------------------------------------------------------------------------

    async def _ask(self, team: str, channel: str, user_id: str, question: str, bot_user: str | None) -> None:
        """/ask: post the question in the channel, then answer in that message's thread."""
        try:
            user = await self.users.get(team, user_id)
            client = await self.client_for(team)
            asked = texts(user.locale).user_asked.format(user=f"<@{user_id}>")
            text = f"{asked} {inert(question)}"
            posted = await client.chat_postMessage(channel=channel, text=text, unfurl_links=False)
        except (SlackApiError, LookupError) as exc:
            log.warning("could not post the /ask question", extra={"channel": channel, "error": _error(exc)})
            return
        ts = str(posted["ts"])
        inbound = Inbound(
            platform=PLATFORM, workspace_id=team, channel_id=channel, thread_id=None, message_id=ts,
            user_id=user_id, user_name=user.name, text=question, ts=to_datetime(ts), mentioned=True,
        )  # fmt: skip
        await self._answer(inbound, slack_thread_ref(team, channel, ts, user_id, bot_user_id=bot_user))

    async def _answer(self, inbound: Inbound, ref: ThreadRef) -> None:
        try:
            user = await self.users.get(ref.workspace_id, inbound.user_id)
            if not inbound.user_name:
                inbound = dataclasses.replace(inbound, user_name=user.name)
            allowed = self._settings.channel_policy(PLATFORM, ref.workspace_id, ref.channel_id).allowed
            if self.intake is not None:
                await self._hand_to_intake(inbound, ref, user.locale, show_progress=allowed and inbound.mentioned)
                return
            delay = 0.0 if inbound.mentioned else self._progress_delay_s
            reply, ref = await self._with_progress(
                self._handler.handle_message(inbound, self.fetcher_for(inbound, ref)),
                ref, user.locale, delay if allowed else None,
            )  # fmt: skip
            if reply is None:
                await self.sink.clear_progress(ref)
                return
            await self.sink.post(ref, reply)
        except Exception as exc:
            ref = exc.ref if isinstance(exc, WorkFailed) else ref
            log.exception("answering failed", extra={"channel": ref.channel_id, "error": _error(exc)})
            await self._apologise(ref)

    async def _hand_to_intake(self, inbound: Inbound, ref: ThreadRef, language: str | None, *,
                              show_progress: bool) -> None:  # fmt: skip
        """Durable mode: show progress now, store the event; the delivery worker answers through `self.sink`."""
        assert self.intake is not None
        if show_progress:
            try:
                ref = await self.sink.show_progress(ref, language)
            except SlackApiError as exc:
                log.warning("progress sign failed", extra={"error": _error(exc)})
        if not await self.intake.accept(inbound, ref):
            await self.sink.clear_progress(ref)

    async def _press(self, body: dict[str, Any]) -> None:
        """A button: the service checks and consumes the stored action; we echo the choice and post any reply."""
        inbound, ref = action_inbound(body)
        action = (body.get("actions") or [{}])[0]
        message = body.get("message") or {}
        try:
            if self.intake is not None:  # durable mode: show the choice at once, the worker posts what follows
                await self.sink.mark_choice(ref, inbound.message_id, inbound.text, block_id=action.get("block_id"),
                                            original_blocks=message.get("blocks"))  # fmt: skip
                await self.intake.accept(inbound, ref)
                return
            outcome, ref = await self._with_progress(
                self._handler.handle_action(inbound), ref, None, self._progress_delay_s
            )
            await self._show_outcome(outcome, ref, inbound.message_id, action, message)
        except Exception as exc:
            ref = exc.ref if isinstance(exc, WorkFailed) else ref
            log.exception("button handling failed", extra={"channel": ref.channel_id, "error": _error(exc)})
            await self._apologise(ref)

    async def _show_outcome(
        self, outcome: ActionOutcome, ref: ThreadRef, message_ts: str, action: dict[str, Any],
        message: dict[str, Any],
    ) -> None:  # fmt: skip
        language = outcome.reply.language if outcome.reply else None
        if not outcome.accepted:
            await self.sink.clear_progress(ref)
            await self.sink.notify(ref, inert(outcome.notice or texts(language).button_used))
            return
        await self.sink.mark_choice(
            ref, message_ts, outcome.chosen_label, block_id=action.get("block_id"),
            original_blocks=message.get("blocks"), language=language,
        )  # fmt: skip
        if outcome.reply is not None:
            await self.sink.post(ref, outcome.reply)
        else:
            await self.sink.clear_progress(ref)
        if outcome.notice and outcome.reply is None:
            await self.sink.notify(ref, inert(outcome.notice))

    async def _with_progress(
        self, work: Coroutine[Any, Any, T], ref: ThreadRef, language: str | None, delay_s: float | None
    ) -> tuple[T, ThreadRef]:
        """Run `work`; show progress right away (delay 0), after `delay_s` if still running, or never (None)."""
        task = asyncio.ensure_future(work)
        if delay_s is not None:
            if delay_s > 0:
                await asyncio.wait({task}, timeout=delay_s)
            if not task.done():
                try:
                    ref = await self.sink.show_progress(ref, language)
                except SlackApiError as exc:
                    log.warning("progress sign failed", extra={"error": _error(exc)})
        try:
            return await task, ref
        except Exception as exc:
            raise WorkFailed(ref) from exc

    async def _suggest_prompts(self, body: dict[str, Any]) -> None:
        thread = (body.get("event") or {}).get("assistant_thread") or {}
        team = team_of(body)
        try:
            user = await self.users.get(team, str(thread.get("user_id") or ""))
            words = wording(user.locale)
            client = await self.client_for(team)
            await client.assistant_threads_setSuggestedPrompts(
                channel_id=str(thread.get("channel_id")),
                thread_ts=str(thread.get("thread_ts")),
                title=words.suggested_prompts_title,
                prompts=[{"title": p, "message": p} for p in words.suggested_prompts],
            )
        except (SlackApiError, LookupError) as exc:
            log.warning("suggested prompts failed", extra={"error": _error(exc)})

    async def _apologise(self, ref: ThreadRef) -> None:
        try:
            await self.sink.post(ref, _failure_reply())
        except Exception as exc:
            log.error("could not even apologise", extra={"channel": ref.channel_id, "error": _error(exc)})


def _failure_reply() -> Reply:
    return Reply(kind=ReplyKind.NOTICE, text=texts(None).failure, language="en", conversation_id="", reason="failed")


class LazyThreadFetcher:
    """A `ThreadFetcher` that resolves the workspace's client only when the service actually reads the thread."""

    def __init__(self, adapter: SlackAdapter, inbound: Inbound, ref: ThreadRef) -> None:
        self._adapter = adapter
        self._inbound = inbound
        self._ref = ref

    async def fetch_thread(self) -> list[HistoryMessage]:
        assert self._inbound.thread_id is not None
        fetcher = SlackThreadFetcher(
            await self._adapter.client_for(self._ref.workspace_id), self._adapter.users,
            team_id=self._ref.workspace_id, channel_id=self._ref.channel_id, thread_ts=self._inbound.thread_id,
            before_ts=self._inbound.message_id, bot_user_id=ref_extra(self._ref, BOT_USER),
        )  # fmt: skip
        return await fetcher.fetch_thread()


def _error(exc: BaseException) -> str:
    if isinstance(exc, WorkFailed) and exc.__cause__ is not None:
        exc = exc.__cause__
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return type(exc).__name__
