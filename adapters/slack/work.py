"""A question's work shown in its Slack thread while it runs (`pipeline.messages.WorkDisplay`).

    agents.sessions.setStatus  processing: Slack shows the native stop button (a press arrives as
                               `agent_session_stopped`; the delivery stops the run)
    chat.startStream           a task timeline (`task_display_mode: timeline`): the first task as a `task_update` chunk,
                               after a `blocks` chunk whose context block carries our progress marker
    chat.appendStream          the tasks that changed (and the answer text while the model writes it, when streaming is
                               on), at most once per `min_interval_s`
    chat.stopStream            the last tasks, `session_status: active`

Where streaming fails (Slack answers `ok:false` or 429 to chat.startStream: a plan or a workspace without it), one
status message is posted instead (with the marker) and updated in place with the steps as a checklist: never both,
never two. After a 5xx or a dropped connection chat.startStream may have worked: the thread is searched for our marked
message, which is then updated in place; only when it is certainly absent is a status message posted, and when the
search fails nothing more is shown. The final reply (through the outbox) replaces whichever message was shown.

The showing runs in a background task: `begin`, `step` and `update` only record and wake it, so the pipeline never
waits for Slack. Every Slack failure here is logged by its error code and ends the showing, never the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from enum import Enum
from typing import Any

from slack_sdk.models.blocks import ContextBlock, MarkdownTextObject, SectionBlock
from slack_sdk.models.messages.chunk import BlocksChunk, Chunk, MarkdownTextChunk, TaskUpdateChunk
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import PROGRESS_BLOCK
from adapters.slack.client import ClientFor, UserDirectory, certain_failure, creating_client, slack_error
from adapters.slack.mrkdwn import inert
from adapters.slack.stream import MAX_STREAM_CHARS, MIN_INTERVAL_S, stream_safe
from adapters.slack.timeline import COMPLETE, ERROR, IN_PROGRESS, Task, Timeline
from adapters.slack.wording import SlackWording, wording
from pipeline.messages import Inbound, Step, ThreadRef

log = logging.getLogger(__name__)

STATUS_INTERVAL_S = 1.5  # between chat.update calls of the status message (Tier 3)
FINISH_TIMEOUT_S = 10.0  # the last showing may take this long before the reply goes out anyway
LOOKUP_TIMEOUT_S = 5.0  # users.info, the session's status, or looking for the shown work, at most
SESSION_TITLE_CHARS = 200
_MARK = {COMPLETE: ":white_check_mark:", IN_PROGRESS: ":hourglass_flowing_sand:", ERROR: ":warning:"}


class Mode(Enum):
    WAITING = "waiting"  # nothing shown yet
    STREAM = "stream"  # a task timeline stream
    STATUS = "status"  # one status message updated in place
    BROKEN = "broken"  # a stream or status message exists; showing more failed (the reply still replaces it)
    OFF = "off"  # nothing is shown (not allowed here, or it is unknown whether a stream exists)


class SlackWork:
    """Implements `pipeline.messages.WorkDisplay` for one question in one Slack thread."""

    def __init__(
        self,
        client_for: ClientFor,
        ref: ThreadRef,
        inbound: Inbound,
        *,
        asker_id: str | None,
        users: UserDirectory,
        allowed: bool = True,
        min_interval_s: float = MIN_INTERVAL_S,
        status_interval_s: float = STATUS_INTERVAL_S,
        find_marked: Callable[[ThreadRef], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client_for = client_for
        self._ref = ref
        self._title = (inbound.text.strip().splitlines() or [""])[0][:SESSION_TITLE_CHARS]
        self._asker = asker_id
        self._users = users
        self._allowed = allowed
        self._interval = min_interval_s
        self._status_interval = status_interval_s
        self._find_marked = find_marked
        self._clock = clock
        self._mode = Mode.WAITING if allowed else Mode.OFF
        self._ts: str | None = None
        self._words: SlackWording = wording(None)
        self._timeline = Timeline(self._words)
        self._steps: list[Step] = []  # recorded by `step`, applied by the background task
        self._sent = ""  # answer text already streamed (inert form)
        self._latest = ""
        self._text_open = True  # until the model starts a new draft (appending cannot rewrite)
        self._session = False  # agents.sessions.setStatus(processing) succeeded
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._session_task: asyncio.Task[None] | None = None
        self._last_call = float("-inf")

    @property
    def mode(self) -> Mode:
        return self._mode

    # -- WorkDisplay ----------------------------------------------------------------------------------------------

    async def begin(self) -> None:
        if self._task is None and self._mode is Mode.WAITING:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def step(self, step: Step) -> None:
        self._steps.append(step)
        self._wake.set()

    async def update(self, text: str) -> None:
        if not self._text_open:
            return
        safe = stream_safe(text)[:MAX_STREAM_CHARS]
        if not safe.startswith(self._sent):  # a new draft: appending cannot rewrite; the final reply will
            self._text_open = False
            return
        self._latest = safe
        self._wake.set()

    async def finish(self) -> str | None:
        """End the showing (the last steps, the session back to active); the ts of the message the reply replaces."""
        await self._settle()
        if self._mode is Mode.STREAM:
            await self._stop_stream()
        elif self._session:
            await self._set_session("active")
        return self._ts if self._mode in (Mode.STREAM, Mode.STATUS, Mode.BROKEN) else None

    async def discard(self) -> None:
        """Take the shown work away (no reply will replace it)."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        await self._session_settled()
        if self._mode is Mode.STREAM:
            await self._stop_stream()
        elif self._session:
            await self._set_session("active")
        if self._ts is not None:
            try:
                client = await self._client_for(self._ref.workspace_id)
                await client.chat_delete(channel=self._ref.channel_id, ts=self._ts)
            except Exception as exc:
                log.warning("removing the shown work failed", extra={"error": slack_error(exc)})

    # -- the background task --------------------------------------------------------------------------------------

    async def _settle(self) -> None:
        """Let the background task show what is left, within FINISH_TIMEOUT_S."""
        self._closing = True
        self._wake.set()
        if self._task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), FINISH_TIMEOUT_S)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            log.warning("showing the work took too long; the reply goes out without it")
            if self._mode is Mode.WAITING:  # the stream may have been made as we stopped waiting for its answer
                await self._adopt_marked()
        except Exception as exc:  # the task logs its own failures; this is a bug guard
            log.warning("showing the work failed", extra={"error": type(exc).__name__})
        await self._session_settled()

    async def _adopt_marked(self) -> None:
        """After giving up on a start that was under way: our marked message in the thread, if Slack made it, for the
        reply to replace (nothing more is shown in it); none found or the look-up failing leaves nothing shown."""
        try:
            looking = self._find_marked(self._ref) if self._find_marked else None
            found = await asyncio.wait_for(looking, LOOKUP_TIMEOUT_S) if looking is not None else None
        except Exception as exc:
            log.warning("looking for the shown work failed", extra={"error": slack_error(exc)})
            found = None
        if found is not None and found.placeholder_id:
            self._mode, self._ts = Mode.BROKEN, found.placeholder_id
        else:
            self._mode = Mode.OFF

    async def _session_settled(self) -> None:
        """Let the session's "processing" land first, so that moving it to active afterwards is not overtaken."""
        if self._session_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._session_task), LOOKUP_TIMEOUT_S)

    async def _run(self) -> None:
        if self._asker:
            try:  # the person's language for our wording; a slow users.info never holds the showing up
                user = await asyncio.wait_for(self._users.get(self._ref.workspace_id, self._asker), LOOKUP_TIMEOUT_S)
                self._words = wording(user.locale)
                self._timeline = Timeline(self._words)
            except TimeoutError:
                log.info("showing the work in the default wording", extra={"reason": "users.info slow"})
        self._apply()
        # the stop button beside the stream, not before it: a slow session call never delays the timeline
        self._session_task = asyncio.get_running_loop().create_task(self._set_session("processing"))
        await self._start()
        while self._mode in (Mode.STREAM, Mode.STATUS):
            if not self._closing:
                await self._wake.wait()
            self._wake.clear()
            interval = self._interval if self._mode is Mode.STREAM else self._status_interval
            wait = self._last_call + interval - self._clock()
            if wait > 0 and not self._closing:
                await asyncio.sleep(wait)  # steps that come meanwhile go out together
            self._apply()
            if self._closing:
                self._timeline.close()
            await self._flush()
            if self._closing and not self._wake.is_set():
                return

    def _apply(self) -> None:
        steps, self._steps = self._steps, []
        for step in steps:
            self._timeline.apply(step)

    async def _start(self) -> None:
        """Show the work: a stream, or (where that fails) one status message; an earlier attempt's sign is reused."""
        if self._ref.placeholder_id:  # an earlier attempt left its work shown: update it in place, never a second
            self._mode, self._ts = Mode.STATUS, self._ref.placeholder_id
            await self._flush()
            return
        client = creating_client(await self._client_for(self._ref.workspace_id))
        marker = BlocksChunk(blocks=[_marker(self._words.working)])
        try:
            response = await client.chat_startStream(
                channel=self._ref.channel_id,
                thread_ts=self._ref.thread_id,
                recipient_team_id=self._ref.workspace_id,
                recipient_user_id=self._asker,
                task_display_mode="timeline",
                chunks=[marker, *self._task_chunks(self._timeline.changes())],
            )
        except Exception as exc:
            log.info("slack stream unavailable", extra={"error": slack_error(exc), "certain": certain_failure(exc)})
            await self._fall_back(client, certain=certain_failure(exc))
            return
        self._mode, self._ts = Mode.STREAM, str(response["ts"])
        self._last_call = self._clock()

    async def _fall_back(self, client: AsyncWebClient, *, certain: bool) -> None:
        """One status message instead of the stream: posted when no stream certainly exists, adopted when the thread
        holds our marked message, nothing when that cannot be known."""
        if not certain:
            try:
                found = await self._find_marked(self._ref) if self._find_marked else self._ref
            except Exception as exc:
                log.warning("looking for the shown work failed", extra={"error": slack_error(exc)})
                self._mode = Mode.OFF
                return
            if found.placeholder_id:
                self._mode, self._ts = Mode.STATUS, found.placeholder_id
                await self._flush()
                return
        try:
            response = await client.chat_postMessage(
                channel=self._ref.channel_id, thread_ts=self._ref.thread_id, text=self._words.working,
                blocks=self._status_blocks(), unfurl_links=False, unfurl_media=False,
            )  # fmt: skip
        except Exception as exc:
            log.warning("posting the status message failed", extra={"error": slack_error(exc)})
            self._mode = Mode.OFF  # it may exist: the reply looks for it (find_progress) before posting
            return
        self._timeline.changes()
        self._mode, self._ts = Mode.STATUS, str(response["ts"])
        self._last_call = self._clock()

    async def _flush(self) -> None:
        assert self._ts is not None
        try:
            client = await self._client_for(self._ref.workspace_id)
            if self._mode is Mode.STREAM:
                chunks = self._task_chunks(self._timeline.changes()) + self._text_chunks()
                if chunks:
                    await client.chat_appendStream(channel=self._ref.channel_id, ts=self._ts, chunks=chunks)
                    self._last_call = self._clock()
            elif self._timeline.changes():
                await client.chat_update(channel=self._ref.channel_id, ts=self._ts, text=self._words.working,
                                         blocks=self._status_blocks())  # fmt: skip
                self._last_call = self._clock()
        except Exception as exc:  # best effort: the reply still replaces the message
            log.warning("showing the work failed", extra={"error": slack_error(exc), "mode": self._mode.value})
            self._mode = Mode.BROKEN

    async def _stop_stream(self) -> None:
        assert self._ts is not None
        try:
            client = await self._client_for(self._ref.workspace_id)
            chunks = self._task_chunks(self._timeline.changes()) + self._text_chunks()
            await client.chat_stopStream(
                channel=self._ref.channel_id, ts=self._ts, chunks=chunks or None,
                session_status="active" if self._session else None,
            )  # fmt: skip
            self._session = False
        except Exception as exc:  # stopped already (the person pressed stop) or Slack failed: the reply updates it
            log.info("stopping the slack stream failed", extra={"error": slack_error(exc)})
        if self._session:
            await self._set_session("active")

    async def _set_session(self, status: str) -> None:
        """The agent session's status (processing shows the stop button); best effort: apps not declared as agents
        get an error and no stop button."""
        try:
            client = await self._client_for(self._ref.workspace_id)
            await client.agents_sessions_setStatus(
                channel_id=self._ref.channel_id, thread_ts=self._ref.thread_id, status=status,
                title=(self._title or None) if status == "processing" else None,
                initiator_user_id=self._asker if status == "processing" else None,
            )  # fmt: skip
        except Exception as exc:
            log.info("agent session status not set", extra={"error": slack_error(exc), "status": status})
            if status == "processing":
                return
        self._session = status == "processing"

    # -- rendering ------------------------------------------------------------------------------------------------

    @staticmethod
    def _task_chunks(tasks: list[Task]) -> list[Chunk]:
        return [TaskUpdateChunk(id=t.id, title=t.title, status=t.status, output=t.output) for t in tasks]

    def _text_chunks(self) -> list[Chunk]:
        if not self._text_open:
            return []
        delta = self._latest[len(self._sent) :]
        if not delta:
            return []
        self._sent = self._latest
        return [MarkdownTextChunk(text=delta)]

    def _status_blocks(self) -> list[dict[str, Any]]:
        """The status message: the marked heading, then one line per step so far."""
        lines = [f"{_MARK[t.status]} {inert(t.title)}" + (f" — {inert(t.output)}" if t.output else "")
                 for t in self._timeline.tasks]  # fmt: skip
        blocks = [_marker(self._words.working)]
        if lines:
            blocks.append(SectionBlock(text=MarkdownTextObject(text="\n".join(lines))).to_dict())
        return blocks


def _marker(text: str) -> dict[str, Any]:
    return ContextBlock(block_id=PROGRESS_BLOCK, elements=[MarkdownTextObject(text=text)]).to_dict()
