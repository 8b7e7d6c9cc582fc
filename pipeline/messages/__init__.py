"""Neutral messages shared by the adapters, the conversation service and the stores: `Inbound`, `Reply`,
`ThreadRef`, the intake / reply-sink / progress protocols, the delivery errors, the question checks
(`question.py`) and the words the pipeline and the platforms share (`vocabulary.py`).

It sits at the bottom and imports nothing but the standard library (`tests/test_import_direction.py`), so
`adapters/`, `bot/`, `storage/` and the rest of `pipeline/` all import it without importing each other. Adapters
turn platform events into `Inbound` and render `Reply` into Block Kit or Discord components; platform payload
shapes never cross this boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

from pipeline.messages.question import CheckedInput, InputProblem, check_question
from pipeline.messages.vocabulary import (
    ActionKind,
    HistoryMessage,
    ProgressCallback,
    Role,
    Step,
    StepStatus,
    StreamCallback,
)

__all__ = [
    "CHECKMARK",
    "PUBLISH_PREFIX",
    "SOLVED_MARK",
    "SOLVED_PREFIX",
    "ActionKind",
    "ActionOutcome",
    "CheckedInput",
    "Citation",
    "ConversationHandler",
    "DeliveryRejected",
    "HistoryMessage",
    "Inbound",
    "InboundKind",
    "InputProblem",
    "Intake",
    "MessageReader",
    "PostedMessage",
    "ProgressCallback",
    "ProgressSink",
    "Reply",
    "ReplyAction",
    "ReplyKind",
    "ReplySink",
    "ReplyStream",
    "ReviewEditor",
    "Role",
    "RunControl",
    "RunSummary",
    "Step",
    "StepStatus",
    "StopOutcome",
    "StreamCallback",
    "StreamingConversationHandler",
    "StreamingSink",
    "ThreadFetcher",
    "ThreadMarker",
    "ThreadRef",
    "WorkDisplay",
    "WorkDisplaySink",
    "check_question",
]


# Button actions the delivery carries out itself (not stored actions of the service); the rest of the id says on what.
PUBLISH_PREFIX = "publish:"  # post an answer only its asker saw (the reply stored with that question) in public
SOLVED_PREFIX = "solved:"  # mark the thread solved on the platform (a Discord forum's solved tag)


class DeliveryRejected(Exception):
    """Raised by a `ReplySink` when the platform refused a reply for good (channel gone, bot removed):
    the outbox stops retrying it. Any other exception counts as transient and is retried with backoff."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


LOCAL_PLATFORM = "console"  # the terminal chat and `docbot ask`: one person at their own machine, never rate-limited


class InboundKind(StrEnum):
    MESSAGE = "message"
    ACTION = "action"  # a button press; `action_id` holds the opaque stored-action id
    REACTION = "reaction"  # a mark put on `message_id`; `action_id` says which (`CHECKMARK`)
    EDIT = "edit"  # an editor opened by a button was submitted: `action_id` is the button, `text` what was written


CHECKMARK = "checkmark"  # a reaction's mark: ✅ (Slack white_check_mark / heavy_check_mark, Discord ✅ or ✔️)
SOLVED_MARK = "solved"  # a mark put on a whole thread: a Discord forum post got its solved tag (by its author's say)


@dataclass(frozen=True, slots=True)
class Inbound:
    platform: str  # "slack" | "discord" | "console"
    workspace_id: str  # Slack team id, Discord guild id ("dm" for DMs), "local" for the console
    channel_id: str
    thread_id: str | None  # Slack thread_ts / Discord thread id; None when this message starts a new thread
    message_id: str  # platform message id (Slack ts, Discord snowflake)
    user_id: str
    user_name: str
    text: str
    ts: datetime  # timezone-aware UTC
    kind: InboundKind = InboundKind.MESSAGE
    action_id: str | None = None
    mentioned: bool = True  # addressed to the bot (mention, /ask, DM); False for plain thread follow-ups
    # the channel the asker was looking at when they asked (Slack's agent view context), as the platform reported
    # it: the service may search that channel's collections instead (the channel's own policy decides)
    context_channel_id: str | None = None
    # the sender's groups as the platform reported them with the event (Discord role ids); Slack events carry none
    groups: tuple[str, ...] = ()

    @property
    def thread_key(self) -> str:
        """Stable key of the conversation this message belongs to."""
        root = self.thread_id or self.message_id
        return f"{self.platform}:{self.workspace_id}:{self.channel_id}:{root}"

    @property
    def dedup_key(self) -> str:
        """Platform-stable id of this event: the same user message or button press always maps to one key.
        A press is keyed by who pressed and when (the platform's action time): three people pressing "Helpful" are
        three votes, and a second press is a second event (refused with a notice), while a redelivery is not."""
        base = f"{self.platform}:{self.workspace_id}:{self.channel_id}:{self.message_id}"
        if self.kind in (InboundKind.ACTION, InboundKind.EDIT):
            return f"{base}:{self.kind.value}:{self.action_id}:{self.user_id}:{self.ts.timestamp():.6f}"
        if self.kind is InboundKind.REACTION:  # one person's mark on one message, however often it is delivered
            return f"{base}:reaction:{self.action_id}:{self.user_id}"
        return base


class ReplyKind(StrEnum):
    ANSWER = "answer"
    CLARIFICATION = "clarification"
    REFUSAL = "refusal"
    NOTICE = "notice"  # busy, rate-limited, failure, expired button: a short message, never silence


@dataclass(frozen=True, slots=True)
class Citation:
    number: int
    title: str
    crumbs: tuple[str, ...]
    url: str
    chunk_id: str
    confidence: float
    text: str = ""  # the cited passage (shortened), for the JSON output contract and tooltips
    changed_on: str = ""  # the source's last change, YYYY-MM-DD ("" unknown, or said by the title: a team answer)


@dataclass(frozen=True, slots=True)
class RunSummary:
    """Figures of the pipeline run behind a reply (the `metadata` / `validation` of the output contract)."""

    chunks_retrieved: int = 0
    search_quality: str | None = None
    quality_decision: str | None = None
    total_ms: float = 0.0
    role_ms: tuple[tuple[str, float], ...] = ()  # (role, ms) summed per role, in first-seen order
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: tuple[str, ...] = ()
    fallback_notes: tuple[str, ...] = ()  # PipelineResult.fallback_notes: e.g. "response: llm->offline"
    tokens_estimated: bool = False  # some LLM tokens are our estimate (calls cut before the server reported usage)


@dataclass(frozen=True, slots=True)
class ReplyAction:
    """A button. `id` is an opaque stored-action id; the button value carries nothing else."""

    id: str
    label: str
    kind: ActionKind


@dataclass(frozen=True, slots=True)
class Reply:
    """What the bot says in the thread.

    `text` uses a small neutral markup every adapter can render: paragraphs separated by blank lines,
    `> ` quoted lines, `- ` bullets, `**bold**`, and citation markers `[n]` that refer to `citations`.
    """

    kind: ReplyKind
    text: str
    language: str
    conversation_id: str
    citations: tuple[Citation, ...] = ()
    actions: tuple[ReplyAction, ...] = ()  # clarification options, then feedback / ask-a-human
    reason: str | None = None  # machine-readable reason for refusals and notices
    note: str | None = None  # e.g. "answered without the language model, which was unavailable"
    cached: bool = False
    run_id: str | None = None
    summary: RunSummary | None = None


@dataclass(frozen=True, slots=True)
class ActionOutcome:
    """Result of a button press: whether it was accepted, the label to show on the original message,
    and the reply that resuming produced (if any)."""

    accepted: bool
    chosen_label: str
    reply: Reply | None = None
    notice: str | None = None  # why a press was refused (already used, other thread, expired), or a thank-you
    marks_message: bool = True  # show the choice on the message and take its buttons away (not for feedback)


class ThreadFetcher(Protocol):
    """Reads a thread's earlier messages from the platform (used once per conversation)."""

    async def fetch_thread(self) -> list[HistoryMessage]: ...


class ConversationHandler(Protocol):
    """What a caller without an inbox event calls (the terminal chat): decide and store the answer at once.
    Implemented by `bot.service.ConversationService`; the delivery uses its `answer` / `press` instead, which store
    nothing, and settles the answer with the event.

    `handle_message` returns None when the message is not for the bot (a follow-up in a thread the bot is not
    engaged in, a follow-up where the channel's follow mode requires a mention). Otherwise it always returns a
    Reply, never raises for user mistakes.
    """

    async def handle_message(self, inbound: Inbound, fetcher: ThreadFetcher | None = None) -> Reply | None: ...

    async def handle_action(self, inbound: Inbound) -> ActionOutcome: ...


class StreamingConversationHandler(ConversationHandler, Protocol):
    """A handler that can show the answer while it is written (`ConversationService`): `stream` receives the
    answer text so far (only in LLM mode with streaming enabled); `progress` is told each pipeline step as it starts
    and ends."""

    async def handle_message(
        self,
        inbound: Inbound,
        fetcher: ThreadFetcher | None = None,
        stream: StreamCallback | None = None,
        progress: ProgressCallback | None = None,
    ) -> Reply | None: ...


@dataclass(frozen=True, slots=True)
class ThreadRef:
    """Where a reply goes, in neutral terms; stored with outbox rows so a restart can still deliver."""

    platform: str
    workspace_id: str
    channel_id: str
    thread_id: str  # Slack thread_ts / Discord thread (channel) id
    placeholder_id: str | None = None  # a progress message to update into the answer, if any
    extra: tuple[tuple[str, str], ...] = ()  # adapter-specific routing data (opaque to the core)


class Intake(Protocol):
    """The durable inbox as adapters see it (`bot.delivery.Delivery`): store the event before acknowledging it;
    False for a duplicate. Raising means not stored: the adapter must not acknowledge success."""

    async def accept(self, inbound: Inbound, ref: ThreadRef) -> bool: ...


class ReplySink(Protocol):
    """Posts replies on one platform; the outbox drives it. Returns the platform message id."""

    async def post(self, ref: ThreadRef, reply: Reply) -> str: ...


@dataclass(frozen=True, slots=True)
class DeliveryAttempt:
    """One try at posting one stored reply. `key` is the same for every try, on every replica (the outbox row);
    `attempt` counts from 1. `progress_unknown`: a progress sign may be in the thread that the ref does not name
    (its post failed in a way that may have landed, and it could not be looked up)."""

    key: str
    attempt: int
    progress_unknown: bool = False

    @property
    def after_unknown_outcome(self) -> bool:
        """An earlier try may have posted some of the reply (or a placeholder) before it failed: look first."""
        return self.attempt > 1 or self.progress_unknown


@runtime_checkable
class RetrySafeSink(Protocol):
    """A `ReplySink` that never posts one stored reply twice: on a retry it finds what an earlier try posted (a
    marker on each message) and updates or skips it instead of posting again."""

    async def post_once(self, ref: ThreadRef, reply: Reply, attempt: DeliveryAttempt) -> str: ...


PROGRESS_UNKNOWN = "progress_unknown"  # ThreadRef.extra key: see `DeliveryAttempt.progress_unknown`


class ReplyStream(Protocol):
    """One answer shown while it is written (Slack chat streaming, Discord edits); it throttles on its own.

    Streamed text is ephemeral progress: the final reply (through the outbox) replaces the streamed message, found
    by the id `finish` returns (put it in `ThreadRef.placeholder_id`).
    """

    async def update(self, text: str) -> None:
        """The answer text so far; never raises (a platform failure ends the showing, not the answer)."""
        ...

    async def finish(self) -> str | None:
        """End the stream; the id of the streamed message the final reply must replace, None if none was posted."""
        ...

    async def discard(self) -> None:
        """Remove the streamed message (no reply will replace it)."""
        ...


class WorkDisplay(ReplyStream, Protocol):
    """A question's work shown while it runs (Slack: a task timeline streamed into the thread, or one status message
    updated in place where streaming fails), then the answer text as it is written. Like a `ReplyStream` it is
    ephemeral progress: the final reply replaces the message `finish` names."""

    async def begin(self) -> None:
        """Show that work started (idempotent; never raises)."""
        ...

    async def step(self, step: Step) -> None:
        """A pipeline step started or ended; returns at once (the showing is queued) and never raises."""
        ...

    @property
    def maybe_shown(self) -> bool:
        """After `finish` named no message: whether one may still be in the thread (a post whose outcome is unknown),
        so the reply must look for it before posting (`PROGRESS_UNKNOWN`)."""
        ...


@runtime_checkable
class WorkDisplaySink(Protocol):
    """A sink that can show a question's steps while it runs (`WorkDisplay`)."""

    def open_work(self, ref: ThreadRef, inbound: Inbound) -> WorkDisplay: ...


class StopOutcome(StrEnum):
    STOPPED = "stopped"  # the run was cancelled; a "stopped" notice replaces its progress in the thread
    NOT_RUNNING = "not_running"  # nothing runs for that thread here (finished, queued, or on another replica)
    NOT_ALLOWED = "not_allowed"  # only the person who asked may stop it


@runtime_checkable
class RunControl(Protocol):
    """Stops a question while it runs (`bot.delivery.Delivery`), for a platform's stop control."""

    async def stop(self, thread_key: str, user_id: str) -> StopOutcome: ...


@dataclass(frozen=True, slots=True)
class PostedMessage:
    """One message as the platform has it (read back for a reaction on a message the bot never stored)."""

    message_id: str
    thread_id: str  # the thread it is in (its own id when it starts one)
    author_id: str
    author_name: str
    text: str
    ts: datetime
    from_bot: bool = False


@runtime_checkable
class MessageReader(Protocol):
    """A sink that can read one message back from the platform."""

    async def read_message(self, ref: ThreadRef, message_id: str) -> PostedMessage | None:
        """The message `message_id` in `ref`'s channel; None when it is not there. Raising is a transient failure."""
        ...


@runtime_checkable
class ChannelNamer(Protocol):
    """A sink that can tell a channel's name (a team answer is cited "in #help", not by the channel's id)."""

    async def channel_name(self, ref: ThreadRef) -> str | None:
        """The name of `ref`'s channel (of a thread's parent channel), without "#"; None when it cannot be told."""
        ...


@runtime_checkable
class Permalinker(Protocol):
    """A sink that can give a message's permalink (Slack's chat.getPermalink: a team answer links to its thread)."""

    async def permalink(self, ref: ThreadRef, message_id: str) -> str | None:
        """The link to `message_id` in `ref`'s channel; None when it cannot be had now."""
        ...


@runtime_checkable
class ReviewEditor(Protocol):
    """A sink that can open an editor for a button press (Slack: a modal through views.open); its submission comes
    back as an `Inbound` of kind `EDIT` carrying the same `action_id`."""

    async def open_editor(self, ref: ThreadRef, message_id: str, action_id: str, title: str, text: str) -> bool:
        """Open it for the person who pressed; False when the platform no longer allows it (the press is too old)."""
        ...


@runtime_checkable
class ThreadMarker(Protocol):
    """A sink that can mark a thread solved on the platform (a Discord forum post's solved tag)."""

    async def mark_solved(self, ref: ThreadRef) -> Reply:
        """Mark it; the note for the person who pressed (done, or why not). Raising is a transient failure."""
        ...


@runtime_checkable
class StreamingSink(Protocol):
    """A `ReplySink` that can also stream an answer into the thread before the reply is posted."""

    def open_stream(self, ref: ThreadRef) -> ReplyStream: ...


@runtime_checkable
class ProgressSink(Protocol):
    """What the worker that claimed an event may do on the platform besides posting replies. Only that worker calls
    these, never the acknowledgement path; progress signs are best effort and never decide whether an event is kept.
    """

    async def prepare(self, inbound: Inbound, ref: ThreadRef) -> tuple[Inbound, ThreadRef]:
        """Anything the platform needs before the event can be handled (post a /ask question, resolve the asker's
        name); returns the event and ref to use. Raising counts as a transient failure of the event."""
        ...

    async def show_progress(self, ref: ThreadRef, language: str | None) -> ThreadRef:
        """A sign that work started (status, placeholder, typing); the ref a reply should replace it through."""
        ...

    async def clear_progress(self, ref: ThreadRef) -> None:
        """Remove the sign when no reply follows."""
        ...

    async def find_progress(self, ref: ThreadRef) -> ThreadRef:
        """A sign an earlier or interrupted attempt left in the thread, for the reply to replace (ref unchanged
        when there is none)."""
        ...

    async def show_choice(
        self, ref: ThreadRef, message_id: str, action_id: str, chosen_label: str, language: str | None
    ) -> bool:
        """Show an accepted button choice on the message carrying `action_id`; False when it carries none."""
        ...
