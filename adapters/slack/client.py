"""Web API clients with Slack's retry handlers, and a small cache of user names and locales."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

ClientFor = Callable[[str], Awaitable[AsyncWebClient]]  # team id → a client holding that workspace's bot token


def retry_handlers(max_rate_limit_retries: int = 3) -> list[AsyncRetryHandler]:
    """429s are retried after Retry-After; 500/503 and dropped connections once or twice with backoff."""
    return [
        AsyncRateLimitErrorRetryHandler(max_retry_count=max_rate_limit_retries),
        AsyncServerErrorRetryHandler(max_retry_count=2),
        AsyncConnectionErrorRetryHandler(max_retry_count=2),
    ]


TIMEOUT_S = 10  # per Web API request (slack_sdk's default is 30 s); the caller's deadline decides what follows


def web_client(token: str | None, base_url: str) -> AsyncWebClient:
    return AsyncWebClient(
        token=token, base_url=_with_slash(base_url), timeout=TIMEOUT_S, retry_handlers=retry_handlers()
    )


def creating_client(client: AsyncWebClient) -> AsyncWebClient:
    """The same workspace's client without retries after a 5xx or a dropped connection, for calls that create
    something (a stream, a status message, a reply or placeholder post): Slack may have created it before failing, and
    a retry would make a second one. A 429 is still retried (Slack did nothing then). The caller looks for what may
    have been created instead."""
    return AsyncWebClient(
        token=client.token, base_url=client.base_url, timeout=client.timeout,
        team_id=client.default_params.get("team_id"),
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=3)],
    )  # fmt: skip


# ok:false errors Slack documents as "it's possible some aspect of the operation succeeded before the error was raised"
MAY_HAVE_SUCCEEDED = frozenset({"internal_error", "fatal_error"})


def certain_failure(exc: BaseException) -> bool:
    """Whether a failed Web API call certainly did nothing: Slack answered it with `ok:false` (HTTP 200, other than
    `MAY_HAVE_SUCCEEDED`) or a 429. After a 5xx, a timeout or a dropped connection the call may have taken effect."""
    if not isinstance(exc, SlackApiError) or slack_error(exc) in MAY_HAVE_SUCCEEDED:
        return False
    return getattr(exc.response, "status_code", 0) in (200, 429)


def slack_error(exc: BaseException) -> str:
    """A short, safe name for a failed Web API call: Slack's error code, `http_<status>` when the body was not
    Slack's JSON (a proxy's HTML error page), or the exception's type. Never the token or the message text."""
    if isinstance(exc, SlackApiError):
        data = getattr(exc.response, "data", None)
        if isinstance(data, dict) and data.get("error"):
            return str(data["error"])
        return f"http_{getattr(exc.response, 'status_code', 0)}"
    return type(exc).__name__


def _with_slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


@dataclass(frozen=True, slots=True)
class SlackUser:
    id: str
    name: str
    locale: str | None = None


class UserDirectory:
    """users.info, once per user: the display name for history lines and the locale for our placeholders."""

    def __init__(self, client_for: ClientFor, max_users: int = 10_000) -> None:
        self._client_for = client_for
        self._max = max_users
        self._users: dict[tuple[str, str], SlackUser] = {}

    async def get(self, team_id: str, user_id: str) -> SlackUser:
        key = (team_id, user_id)
        if key in self._users:
            return self._users[key]
        user = SlackUser(id=user_id, name=user_id)
        try:
            client = await self._client_for(team_id)
            response = await client.users_info(user=user_id, include_locale=True)
            raw = response.get("user") or {}
            profile = raw.get("profile") or {}
            name = profile.get("display_name") or profile.get("real_name") or raw.get("real_name") or raw.get("name")
            user = SlackUser(id=user_id, name=str(name or user_id), locale=raw.get("locale"))
        except Exception as exc:  # a name is a nicety: any failure falls back to the user id
            log.warning("users.info failed", extra={"error": slack_error(exc), "team": team_id})
            return user
        if len(self._users) >= self._max:
            self._users.clear()
        self._users[key] = user
        return user


class ChannelDirectory:
    """conversations.info, once per channel: the name a team answer's citation shows ("in #help"). A failure is
    not kept, so the next answer captured there asks again."""

    def __init__(self, client_for: ClientFor, max_channels: int = 10_000) -> None:
        self._client_for = client_for
        self._max = max_channels
        self._names: dict[tuple[str, str], str] = {}

    async def name(self, team_id: str, channel_id: str) -> str | None:
        key = (team_id, channel_id)
        if key in self._names:
            return self._names[key]
        try:
            client = await self._client_for(team_id)
            response = await client.conversations_info(channel=channel_id)
        except Exception as exc:  # a name is a nicety: the citation falls back to the channel's id
            log.warning("conversations.info failed", extra={"error": slack_error(exc), "team": team_id})
            return None
        name = str((response.get("channel") or {}).get("name") or "")
        if not name:  # a DM has no name
            return None
        if len(self._names) >= self._max:
            self._names.clear()
        self._names[key] = name
        return name
