"""The adapter's one global middleware: drop what is not a person talking, and drop repeat deliveries."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from adapters.slack.dedupe import RecentKeys
from adapters.slack.events import delivery_key, ignorable

log = logging.getLogger(__name__)


class IgnoreAndDedupe(AsyncMiddleware):
    """Acknowledges and stops bots' messages, edits/deletions and any delivery seen before (Slack retries,
    Socket Mode redelivery with a new envelope id, the `app_mention` + `message` pair for one message)."""

    def __init__(self, seen: RecentKeys) -> None:
        self._seen = seen

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        body = req.body
        if ignorable(body, req.context.bot_user_id, req.context.bot_id):
            return BoltResponse(status=200, body="")
        key = delivery_key(body)
        if key is not None and not self._seen.first_time(key):
            retry = req.headers.get("x-slack-retry-num", [None])[0]
            log.info("duplicate delivery dropped", extra={"kind": key.split(":", 1)[0], "retry_num": retry})
            return BoltResponse(status=200, body="")
        return await next()
