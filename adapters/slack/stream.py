"""Streaming an answer into a Slack thread with the chat streaming methods while the model writes it.

    chat.startStream   the first text; the progress placeholder is then deleted (the stream takes its place)
    chat.appendStream  the new text, at most once per `min_interval_s` (Slack rate-limits these per workspace)
    chat.stopStream    the rest, when the pipeline is done

The streamed message is ephemeral progress: the final reply (sources, buttons) updates it with `chat.update`
through the outbox (`ThreadRef.placeholder_id`), so it is never left half-written. Streaming is best effort: a
Slack error ends the showing quietly and the answer still arrives as a normal reply.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from slack_sdk.errors import SlackApiError

from adapters.slack.client import ClientFor
from pipeline.messages import ThreadRef

log = logging.getLogger(__name__)

MIN_INTERVAL_S = 1.0  # between appends
MAX_STREAM_CHARS = 12_000  # Slack's markdown_text limit per call; longer answers show their start only
_WORD_JOINER = "\u2060"
_INERT = str.maketrans({"<": "‹", ">": "›", "@": "@" + _WORD_JOINER})


def stream_safe(text: str) -> str:
    """Model output made inert for `markdown_text`: no `<!here>`/`<@U1>` control sequences, no `@channel` words.
    Character by character, so the safe form of a prefix is a prefix of the safe form of the whole."""
    return text.translate(_INERT)


class SlackAnswerStream:
    """Implements `pipeline.messages.ReplyStream` for one Slack thread."""

    def __init__(
        self,
        client_for: ClientFor,
        ref: ThreadRef,
        *,
        asker_id: str | None,
        min_interval_s: float = MIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client_for = client_for
        self._ref = ref
        self._asker = asker_id
        self._interval = min_interval_s
        self._clock = clock
        self._ts: str | None = None
        self._sent = ""  # safe text already on Slack
        self._latest = ""  # safe text so far
        self._last_call = float("-inf")
        self._open = True  # until stopped, broken, or the text no longer extends what was sent

    @property
    def ts(self) -> str | None:
        return self._ts

    async def update(self, text: str) -> None:
        if not self._open:
            return
        safe = stream_safe(text)[:MAX_STREAM_CHARS]
        if not safe.startswith(self._sent):  # a new draft: appending cannot rewrite; the final reply will
            self._open = False
            return
        self._latest = safe
        if self._clock() - self._last_call >= self._interval:
            await self._flush()

    async def finish(self) -> str | None:
        if self._ts is None:
            self._open = False
            return None
        rest = self._latest[len(self._sent) :] if self._open else ""
        self._open = False
        await self._stop(rest)
        return self._ts

    async def discard(self) -> None:
        was_open, self._open = self._open, False
        if self._ts is None:
            return
        try:
            client = await self._client_for(self._ref.workspace_id)
            if was_open:
                await client.chat_stopStream(channel=self._ref.channel_id, ts=self._ts)
            await client.chat_delete(channel=self._ref.channel_id, ts=self._ts)
        except SlackApiError as exc:
            log.warning("removing the streamed answer failed", extra={"error": exc.response.get("error")})

    async def _flush(self) -> None:
        delta = self._latest[len(self._sent) :]
        if not delta.strip() and self._ts is None:
            return  # nothing visible to start with
        if not delta:
            return
        try:
            client = await self._client_for(self._ref.workspace_id)
            if self._ts is None:
                response = await client.chat_startStream(
                    channel=self._ref.channel_id,
                    thread_ts=self._ref.thread_id,
                    markdown_text=delta,
                    recipient_team_id=self._ref.workspace_id,
                    recipient_user_id=self._asker,
                )
                self._ts = str(response["ts"])
                await self._drop_placeholder()
            else:
                await client.chat_appendStream(channel=self._ref.channel_id, ts=self._ts, markdown_text=delta)
        except Exception as exc:  # best effort: the reply still comes through the outbox
            log.warning("streaming to slack failed", extra={"error": _error(exc), "started": self._ts is not None})
            self._open = False
            return
        self._sent = self._latest
        self._last_call = self._clock()

    async def _stop(self, rest: str) -> None:
        assert self._ts is not None
        try:
            client = await self._client_for(self._ref.workspace_id)
            await client.chat_stopStream(channel=self._ref.channel_id, ts=self._ts, markdown_text=rest or None)
        except Exception as exc:  # an unstopped stream is finalized by the reply's chat.update anyway
            log.warning("stopping the slack stream failed", extra={"error": _error(exc)})

    async def _drop_placeholder(self) -> None:
        """The stream replaces the "working on it" message, so the thread keeps one bot message per answer."""
        if not self._ref.placeholder_id:
            return
        try:
            client = await self._client_for(self._ref.workspace_id)
            await client.chat_delete(channel=self._ref.channel_id, ts=self._ref.placeholder_id)
        except SlackApiError as exc:
            log.info("placeholder already gone", extra={"error": exc.response.get("error")})


def _error(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return type(exc).__name__
