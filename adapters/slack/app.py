"""`SlackAdapter`: slack-bolt's AsyncApp for /ask, mentions, thread follow-ups, DMs, assistant threads and buttons.

One way in: the `StoreThenAck` middleware writes each event to the durable inbox (`intake`, a
`bot.delivery.Delivery`) and only then acknowledges; a failed write is not acknowledged, so Slack delivers again.
The delivery worker that claims the event answers through `SlackAdapter.sink`. The HTTP route checks the request's
signature on the raw bytes before anything parses the body.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.websockets import AsyncSocketModeHandler
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.agent import AgentSurface, Topics, ViewContexts
from adapters.slack.client import TIMEOUT_S, UserDirectory, retry_handlers, web_client
from adapters.slack.fetcher import SlackThreadFetcher
from adapters.slack.front_door import Refusal, RefusalLog, body_problem, signature_valid
from adapters.slack.groups import GroupDirectory
from adapters.slack.middleware import AskGuard, IgnoreSelf, StoreThenAck
from adapters.slack.options import SlackOptions
from adapters.slack.sink import BOT_USER, SlackReplySink, ref_extra
from adapters.slack.stream import MIN_INTERVAL_S
from adapters.slack.unhandled import acknowledge_the_rest
from pipeline.messages import Inbound, Intake, ThreadFetcher, ThreadRef
from pipeline.types import HistoryMessage

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
BOT_SCOPES = (
    "app_mentions:read",
    "assistant:write",
    "channels:history",
    "channels:read",
    "chat:write",
    "commands",
    "groups:history",
    "groups:read",
    "im:history",
    "mpim:history",
    "reactions:read",
    "usergroups:read",
    "users:read",
)
# The agent messaging experience's events (docs.slack.dev/ai/migrating-to-agent-messaging) plus messages and mentions;
# apps still on `assistant_view` also send assistant_thread_started/_context_changed, which are handled too.
BOT_EVENTS = (
    "app_mention",
    "message.channels",
    "message.groups",
    "message.im",
    "message.mpim",
    "reaction_added",
    "app_home_opened",
    "app_context_changed",
    "agent_session_stopped",
)


class SlackAdapter:
    """Slack in HTTP mode (`add_routes`) or Socket Mode (`start_socket_mode`), single- or multi-workspace."""

    def __init__(
        self,
        options: SlackOptions,
        intake: Intake | None = None,
        *,
        installation_store: AsyncInstallationStore | None = None,
        oauth_state_store: AsyncOAuthStateStore | None = None,
        stream_interval_s: float = MIN_INTERVAL_S,
        language_of: Callable[[str], Awaitable[str | None]] | None = None,
    ) -> None:
        """`intake` may also be assigned later (`adapter.intake = delivery`); until then events are refused (503).
        `stream_interval_s`: the least time between two stream appends (or status updates) of one question.
        `language_of` detects a text's language, for the notices the adapter itself sends (a refused /ask, the
        invitation a /ask in a channel without the bot gets)."""
        self._options = options
        self.intake = intake
        self._base_url = options.api_url
        multi = options.client_id is not None
        token = options.bot_token if not multi else None
        self._client = web_client(token, self._base_url)
        self._installations = installation_store
        oauth_settings = None
        if multi:
            oauth_settings = AsyncOAuthSettings(
                client_id=options.client_id,
                client_secret=options.client_secret,
                scopes=list(BOT_SCOPES),
                installation_store=installation_store,
                state_store=oauth_state_store,
            )
            self._installations = oauth_settings.installation_store
        signing = options.signing_secret
        self.bolt = AsyncApp(
            name="docbot",
            client=web_client(None, self._base_url) if token else self._client,
            # single workspace: the token is known, so no auth.test call on the first request's acknowledgement
            authorize=_static_authorize(token) if token else None,
            signing_secret=signing,
            process_before_response=True,  # the response (the ack) waits for the inbox write
            installation_store=installation_store if not multi else None,
            oauth_settings=oauth_settings,
        )
        self._verifier = SignatureVerifier(signing) if signing else None
        self._refusals = RefusalLog(log)
        self._team_clients: dict[str, AsyncWebClient] = {}
        self.users = UserDirectory(self.client_for)
        watched = options.watched_groups
        self.groups = GroupDirectory(self.client_for, watched) if watched else None
        self.sink = SlackReplySink(
            self.client_for, support_mention=options.support_mention, users=self.users,
            progress_allowed=lambda ref: options.channel_allowed(ref.workspace_id, ref.channel_id),
            stream_interval_s=stream_interval_s, language_of=language_of, groups=self.groups,
        )  # fmt: skip
        self._tasks: set[asyncio.Task[None]] = set()
        self._socket: AsyncSocketModeHandler | None = None
        self.contexts = ViewContexts()
        self.agent = AgentSurface(
            self.client_for, self.users, options.search_collections, lambda: self.intake, self.contexts,
        )  # fmt: skip
        self.bolt.use(IgnoreSelf())
        self.bolt.use(AskGuard(options, language_of))
        self.bolt.use(StoreThenAck(options, lambda: self.intake, self.contexts))
        self._register_listeners()

    @property
    def topics(self) -> Topics | None:
        """The docs' top sections for suggested prompts (`bot.topics.DocsTopics`); default prompts without."""
        return self.agent.topics

    @topics.setter
    def topics(self, topics: Topics | None) -> None:
        self.agent.topics = topics

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
        if self._options.app_token is None:
            raise ValueError("Socket Mode needs SLACK_APP_TOKEN (an app-level token, xapp-...)")
        self._socket = AsyncSocketModeHandler(
            self.bolt, app_token=self._options.app_token, web_client=self._client
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
        client = AsyncWebClient(
            token=bot.bot_token, base_url=self._client.base_url, timeout=TIMEOUT_S, retry_handlers=retry_handlers()
        )
        self._team_clients[team_id] = client
        return client

    # -- HTTP -------------------------------------------------------------------------------------------------

    async def _handle_post(self, request: web.Request) -> web.Response:
        """Check the signature on the raw bytes first, then the body's shape: an unsigned, forged or malformed
        request costs one short log line (fewer in a flood) and never reaches bolt or a traceback."""
        raw = await request.read()
        if self._verifier is None or not signature_valid(self._verifier, raw, request.headers):  # no secret: none pass
            self._refusals.refused(Refusal.BAD_SIGNATURE, bytes=len(raw))
            return web.Response(status=401, text="invalid signature")
        problem = body_problem(raw, request.content_type)
        if problem is None:
            try:
                bolt_request = await to_bolt_request(request)
            except ValueError:
                problem = Refusal.UNREADABLE_BODY
        if problem is not None:
            self._refusals.refused(problem, bytes=len(raw))
            return web.Response(status=400, text=problem.value)
        return await to_aiohttp_response(await self.bolt.async_dispatch(bolt_request))

    async def _handle_install(self, request: web.Request) -> web.Response:
        assert self.bolt.oauth_flow is not None
        return await to_aiohttp_response(await self.bolt.oauth_flow.handle_installation(await to_bolt_request(request)))

    async def _handle_oauth_redirect(self, request: web.Request) -> web.Response:
        assert self.bolt.oauth_flow is not None
        return await to_aiohttp_response(await self.bolt.oauth_flow.handle_callback(await to_bolt_request(request)))

    # -- listeners (plain functions: bolt injects arguments by parameter name) --------------------------------

    def _register_listeners(self) -> None:
        """Only what `StoreThenAck` passes on arrives here: the agent experience's events (`adapters.slack.agent`),
        acknowledged at once and handled in the background, best effort."""
        agent = self.agent

        async def on_home_opened(body: dict[str, Any]) -> None:
            self._spawn(agent.messages_tab_opened(body))

        async def on_context(body: dict[str, Any]) -> None:
            agent.context_changed(body)

        async def on_stopped(body: dict[str, Any]) -> None:
            self._spawn(agent.session_stopped(body))

        async def on_assistant_thread_started(body: dict[str, Any]) -> None:
            self._spawn(agent.assistant_thread_started(body))

        self.bolt.event("app_home_opened")(on_home_opened)
        self.bolt.event("app_context_changed")(on_context)
        self.bolt.event("agent_session_stopped")(on_stopped)
        self.bolt.event("assistant_thread_started")(on_assistant_thread_started)
        self.bolt.event("assistant_thread_context_changed")(on_context)
        acknowledge_the_rest(self.bolt)  # last: everything else is acknowledged and dropped, not answered 404

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def fetcher_for(self, inbound: Inbound, ref: ThreadRef) -> ThreadFetcher | None:
        """Reads an existing thread's earlier messages; None when the message starts the thread.
        (Register it as the delivery's fetcher factory.)"""
        if inbound.thread_id is None or inbound.thread_id == inbound.message_id:
            return None
        return LazyThreadFetcher(self, inbound, ref)

def _static_authorize(token: str) -> Callable[..., Awaitable[AuthorizeResult]]:
    """Bolt's authorization for one workspace without a Web API call (bolt's default calls auth.test lazily, on
    the first request's acknowledgement path); the bot's user id comes from each event's `authorizations`."""

    async def authorize(enterprise_id: str | None, team_id: str | None) -> AuthorizeResult:
        return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id, bot_token=token)

    return authorize


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
