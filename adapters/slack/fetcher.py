"""`ThreadFetcher` for Slack: a thread's earlier messages through conversations.replies, page by page."""

from __future__ import annotations

import logging
from typing import Any, cast

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.client import UserDirectory
from adapters.slack.events import PERSON_SUBTYPES, RepliesMessage, strip_mention, to_datetime
from pipeline.types import HistoryMessage

log = logging.getLogger(__name__)

BOT_AUTHOR = "docbot"
PAGE_SIZE = 200
MAX_PAGES = 10


class SlackThreadFetcher:
    """Messages of one thread older than `before_ts` (the message being answered), oldest first."""

    def __init__(
        self,
        client: AsyncWebClient,
        users: UserDirectory,
        *,
        team_id: str,
        channel_id: str,
        thread_ts: str,
        before_ts: str,
        bot_user_id: str | None,
    ) -> None:
        self._client = client
        self._users = users
        self._team = team_id
        self._channel = channel_id
        self._thread = thread_ts
        self._before = float(before_ts)
        self._bot_user = bot_user_id

    async def fetch_thread(self) -> list[HistoryMessage]:
        history: list[HistoryMessage] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            kwargs: dict[str, Any] = {"channel": self._channel, "ts": self._thread, "limit": PAGE_SIZE}
            if cursor:
                kwargs["cursor"] = cursor
            response = await self._client.conversations_replies(**kwargs)
            for raw in response.get("messages") or []:
                message = await self._to_history(cast(RepliesMessage, raw))
                if message is not None:
                    history.append(message)
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                break
        else:
            log.info("thread longer than fetched", extra={"channel": self._channel, "pages": MAX_PAGES})
        history.sort(key=lambda m: m.ts)
        return history

    async def _to_history(self, raw: RepliesMessage) -> HistoryMessage | None:
        if float(raw["ts"]) >= self._before or raw.get("subtype") not in PERSON_SUBTYPES | {"bot_message"}:
            return None
        text = strip_mention(raw.get("text", ""), self._bot_user)
        if not text:
            return None
        user = raw.get("user")
        from_bot = bool(raw.get("bot_id")) or (user is not None and user == self._bot_user)
        if from_bot:
            author = BOT_AUTHOR if user == self._bot_user or not user else user
        else:
            author = (await self._users.get(self._team, user)).name if user else "someone"
        return HistoryMessage(ts=to_datetime(raw["ts"]), author=author, text=text, from_bot=from_bot)
