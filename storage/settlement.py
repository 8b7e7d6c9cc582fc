"""Settling an answer: everything one event leaves behind, written in one transaction.

The conversation service decides and writes nothing; it returns an `Answer` (the reply, the conversation's new
state, the thread's new messages, the run with its hops, the buttons with ids minted in memory). `write_answer`
puts it into a session: the inbox calls it inside the transaction that checks the event's claim is still held,
marks the event done and inserts the outbox row (`Inbox.complete`); a caller without an inbox (the terminal chat,
`docbot ask`, the evaluation) settles through `Settlement.settle`. Either the answer and everything it changed are
stored, or nothing is: a worker that dies before the commit leaves no trace, and the retry simply decides again.

Deferring the writes to the end is safe because the inbox hands out one event per conversation at a time across
all replicas (`Inbox.claim`, `_next_in_its_conversation`): nobody else changes this conversation between the
service reading it and this transaction writing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, insert, update
from sqlalchemy.ext.asyncio import AsyncSession

from pipeline.codec import to_json
from pipeline.envelope import Envelope
from pipeline.messages import ActionOutcome, Reply
from pipeline.types import ActionKind
from storage.conversations import ConversationRecord
from storage.db import Database, utc_now
from storage.errors import StorageError
from storage.tables import ActionRow, ConversationRow, ConversationState, HopRow, MessageRow, RunRow

CONVERSATIONS: Table = cast(Table, ConversationRow.__table__)
MESSAGES: Table = cast(Table, MessageRow.__table__)
RUNS: Table = cast(Table, RunRow.__table__)
HOPS: Table = cast(Table, HopRow.__table__)
ACTIONS: Table = cast(Table, ActionRow.__table__)


@dataclass(frozen=True, slots=True)
class ThreadState:
    """What a run leaves on its conversation: the envelope parked for a clarification (None clears it) and the
    conversation's language."""

    pending_envelope: dict[str, Any] | None
    language: str | None


@dataclass(frozen=True, slots=True)
class ConversationChange:
    """The conversation an answer belongs to: `new` ones are inserted (their id minted in memory), known ones
    updated. `state` None leaves the parked envelope and the language as they are (a notice)."""

    record: ConversationRecord
    new: bool = False
    history_fetched: bool = False
    state: ThreadState | None = None


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message of the thread: the person's, the bot's answer, or an earlier one read from the platform."""

    platform_message_id: str
    author_id: str
    author_name: str
    text: str
    ts: datetime
    from_bot: bool = False


@dataclass(frozen=True, slots=True)
class NewRun:
    """A pipeline run and its hops (the envelope's), with the reply it produced: what `docbot trace` shows and
    what a "publish" button posts again."""

    id: str
    message_id: str
    envelope: Envelope
    kind: str
    cached: bool
    started_at: datetime
    finished_at: datetime


@dataclass(frozen=True, slots=True)
class NewAction:
    """A button offered with the reply, behind an id minted in memory (the reply already carries it)."""

    id: str
    batch_id: str
    kind: ActionKind
    label: str
    value: str
    created_at: datetime
    expires_at: datetime | None


@dataclass(frozen=True, slots=True)
class Answer:
    """What the service decided for one event; `reply` None posts nothing (a follow-up the bot is not asked)."""

    reply: Reply | None
    conversation: ConversationChange | None = None
    messages: tuple[NewMessage, ...] = ()
    run: NewRun | None = None
    actions: tuple[NewAction, ...] = ()

    @property
    def writes(self) -> bool:
        return self.conversation is not None


@dataclass(frozen=True, slots=True)
class Pressed:
    """What a button press decided: the outcome the delivery shows, and the answer to settle with the event (None
    when the press leaves nothing to store: a refusal, a vote, a notice)."""

    outcome: ActionOutcome
    answer: Answer | None = None


class ConversationTaken(StorageError):
    """A conversation this answer meant to start was started by someone else first: only a caller outside the
    inbox (which hands out one event per thread at a time) can get here; the answer is dropped and decided again."""

    def __init__(self, thread_key: str) -> None:
        super().__init__(f"conversation of thread {thread_key!r} was started concurrently")
        self.thread_key = thread_key


async def write_answer(session: AsyncSession, db: Database, answer: Answer, now: datetime) -> None:
    """Write `answer` into the caller's transaction: the conversation, its messages, the run with its hops and the
    buttons. Statements only for what the answer holds (a notice on a known thread writes nothing)."""
    change = answer.conversation
    if change is None:
        return
    conversation = change.record
    values: dict[str, Any] = {"updated_at": now}
    if change.history_fetched:
        values["history_fetched"] = True
    if change.state is not None:
        waiting = change.state.pending_envelope is not None
        state = ConversationState.AWAITING_CLARIFICATION if waiting else ConversationState.IDLE
        values |= {"pending_envelope": change.state.pending_envelope, "state": state.value,
                   "language": change.state.language}  # fmt: skip
    if change.new:
        row = {"id": conversation.id, "thread_key": conversation.thread_key, "platform": conversation.platform,
               "workspace_id": conversation.workspace_id, "channel_id": conversation.channel_id,
               "thread_id": conversation.thread_id, "created_at": now, "history_fetched": False,
               "state": ConversationState.IDLE.value}  # fmt: skip
        started = (
            db.insert(CONVERSATIONS)
            .values(**(row | values))
            .on_conflict_do_nothing(index_elements=["thread_key"])
            .returning(CONVERSATIONS.c.id)
        )
        if (await session.execute(started)).scalar_one_or_none() is None:
            raise ConversationTaken(conversation.thread_key)
    elif len(values) > 1 or answer.messages:
        await session.execute(update(CONVERSATIONS).where(CONVERSATIONS.c.id == conversation.id).values(**values))
    if answer.messages:
        rows = [
            {"conversation_id": conversation.id, "platform_message_id": m.platform_message_id,
             "author_id": m.author_id, "author_name": m.author_name, "text": m.text, "ts": m.ts,
             "from_bot": m.from_bot}
            for m in answer.messages
        ]  # fmt: skip
        # a message stored already (the same platform id) is kept as it is
        statement = db.insert(MESSAGES).on_conflict_do_nothing(
            index_elements=["conversation_id", "platform_message_id"]
        )
        await session.execute(statement, rows)
    if answer.run is not None:
        await _write_run(session, conversation.id, answer.run, answer.reply)
    if answer.actions:
        await session.execute(
            insert(ACTIONS),
            [
                {"id": a.id, "conversation_id": conversation.id, "batch_id": a.batch_id, "kind": a.kind.value,
                 "label": a.label, "value": a.value, "created_at": a.created_at, "expires_at": a.expires_at}
                for a in answer.actions
            ],
        )  # fmt: skip


async def _write_run(session: AsyncSession, conversation_id: str, run: NewRun, reply: Reply | None) -> None:
    hops = run.envelope.hops
    await session.execute(
        insert(RUNS).values(
            id=run.id, conversation_id=conversation_id, message_id=run.message_id, started_at=run.started_at,
            finished_at=run.finished_at, status=run.kind, reply_kind=run.kind,
            total_ms=(run.finished_at - run.started_at).total_seconds() * 1000.0,
            prompt_tokens=sum(h.usage.prompt_tokens for h in hops),
            completion_tokens=sum(h.usage.completion_tokens for h in hops),
            llm_calls=sum(h.usage.calls for h in hops), cached=run.cached,
            errors=[{"role": e.role.value, "kind": e.kind, "message": e.message} for e in run.envelope.errors],
            reply=to_json(reply) if reply is not None else None,
        )
    )  # fmt: skip
    if hops:  # one executemany for every hop
        await session.execute(
            insert(HOPS),
            [
                {"run_id": run.id, "seq": seq, "role": hop.role.value, "decision": hop.decision,
                 "started_at": hop.started_at, "duration_ms": hop.duration_ms, "wait_ms": hop.wait_ms,
                 "strategy": hop.strategy.value, "prompt_tokens": hop.usage.prompt_tokens,
                 "completion_tokens": hop.usage.completion_tokens, "error": hop.error}
                for seq, hop in enumerate(hops)
            ],
        )  # fmt: skip


class Settlement:
    """Settles answers of callers that have no inbox event (the terminal chat, `docbot ask`, the evaluation)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def settle(self, answer: Answer) -> None:
        if not answer.writes:
            return
        async with self._db.session() as session:
            await write_answer(session, self._db, answer, utc_now())
