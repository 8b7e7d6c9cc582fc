"""Streaming an answer into a Discord thread by progressive edits while the model writes it.

The first text is sent as a message; later text edits it, at most once per `min_interval_s` (Discord allows
about five edits per five seconds per channel, so 1.5 s leaves room for the final edit and other replies). The
final reply (embed with sources, buttons) is one more edit of the same message, made by the outbox through
`ThreadRef.placeholder_id`. Streaming is best effort: a Discord error ends the showing, never the answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import discord

from adapters.discord.render import MESSAGE_LIMIT, no_mentions
from pipeline.messages import ThreadRef

log = logging.getLogger(__name__)

MIN_INTERVAL_S = 1.5  # between edits
WRITING_MARK = " …"  # shows the message is still being written


def shown_text(text: str) -> str:
    """The text so far with the writing mark, cut to Discord's message limit."""
    text = text.strip()
    room = MESSAGE_LIMIT - len(WRITING_MARK)
    return (text if len(text) <= room else text[: room - 1] + "…") + WRITING_MARK


class DiscordAnswerStream:
    """Implements `pipeline.messages.ReplyStream` for one Discord thread (or DM, or channel)."""

    def __init__(
        self,
        client: discord.Client,
        ref: ThreadRef,
        *,
        min_interval_s: float = MIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._channel = client.get_partial_messageable(int(ref.thread_id))
        self._interval = min_interval_s
        self._clock = clock
        self._message_id: int | None = None
        self._shown = ""
        self._last_call = float("-inf")
        self._open = True

    async def update(self, text: str) -> None:
        if not self._open or not text.strip():
            return
        if self._clock() - self._last_call < self._interval:
            return  # the next update (or the final reply) shows it
        content = shown_text(text)
        if content == self._shown:
            return
        try:
            if self._message_id is None:
                sent = await self._channel.send(content=content, allowed_mentions=no_mentions())
                self._message_id = sent.id
            else:
                message = self._channel.get_partial_message(self._message_id)
                await message.edit(content=content, allowed_mentions=no_mentions())
        except discord.HTTPException as exc:
            log.warning("streaming to discord failed", extra={"status": exc.status, "code": exc.code})
            self._open = False
            return
        self._shown = content
        self._last_call = self._clock()

    async def finish(self) -> str | None:
        self._open = False
        return str(self._message_id) if self._message_id is not None else None

    async def discard(self) -> None:
        self._open = False
        if self._message_id is None:
            return
        try:
            await self._channel.get_partial_message(self._message_id).delete()
        except discord.HTTPException as exc:
            log.warning("removing the streamed answer failed", extra={"status": exc.status, "code": exc.code})
