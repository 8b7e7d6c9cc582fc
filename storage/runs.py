"""Pipeline runs and their hops: what `docbot trace` shows and the metrics read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, insert, select, update

from pipeline.envelope import Envelope
from pipeline.messages import Reply
from storage.db import Database, utc_now
from storage.outbox import reply_from_json, reply_to_json
from storage.tables import ConversationRow, ConversationState, HopRow, RunRow, new_uuid

LAST = "last"


@dataclass(frozen=True, slots=True)
class HopRecord:
    seq: int
    role: str
    decision: str
    started_at: datetime
    duration_ms: float
    wait_ms: float
    strategy: str
    prompt_tokens: int
    completion_tokens: int
    error: str | None


@dataclass(frozen=True, slots=True)
class RunRecord:
    id: str
    conversation_id: str
    message_id: str
    started_at: datetime
    finished_at: datetime
    status: str
    reply_kind: str | None
    total_ms: float
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int
    cached: bool
    errors: tuple[dict[str, str], ...]
    hops: tuple[HopRecord, ...]


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """The run recorded for a message: its id and the reply it produced (None for runs stored before replies
    were kept with them)."""

    run_id: str
    reply: Reply | None


@dataclass(frozen=True, slots=True)
class Settled:
    """What a run leaves on its conversation, written in the run's own transaction: the envelope parked for a
    clarification (None clears it) and the conversation's language. A retry after a crash then finds either both the
    answer and the state it left, or neither (and the clarification it resumed from is still there)."""

    pending_envelope: dict[str, Any] | None
    language: str | None


@dataclass(frozen=True, slots=True)
class Trace:
    """The runs of one conversation, oldest first, each with its hops in order."""

    conversation_id: str
    runs: tuple[RunRecord, ...]


class RunStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def answer_for(self, conversation_id: str, message_id: str) -> StoredAnswer | None:
        """The run recorded for this message (it was answered), with its stored reply; None when there is none."""
        async with self._db.session() as session:
            found = (
                await session.execute(
                    select(RunRow.id, RunRow.reply)
                    .where(RunRow.conversation_id == conversation_id, RunRow.message_id == message_id)
                    .order_by(RunRow.finished_at.desc())
                    .limit(1)
                )
            ).first()
        if found is None:
            return None
        return StoredAnswer(found.id, reply_from_json(found.reply) if found.reply else None)

    async def answer_for_event(self, event_key: str) -> StoredAnswer | None:
        """The run recorded for an inbox event that is not a message (a button press), with its stored reply."""
        async with self._db.session() as session:
            found = (
                await session.execute(
                    select(RunRow.id, RunRow.reply)
                    .where(RunRow.event_key == event_key)
                    .order_by(RunRow.finished_at.desc())
                    .limit(1)
                )
            ).first()
        if found is None:
            return None
        return StoredAnswer(found.id, reply_from_json(found.reply) if found.reply else None)

    async def save_reply(
        self, conversation_id: str, message_id: str, reply: Reply, *, event_key: str, at: datetime
    ) -> str:
        """Record a reply made without the pipeline (a press's handoff or rephrase notice) as a run of no hops,
        keyed by the press's event like a resumed answer, so a retry of that press replays it. Returns the id."""
        run_id = new_uuid()
        run = RunRow(
            id=run_id, conversation_id=conversation_id, message_id=message_id, started_at=at, finished_at=at,
            status=reply.reason or reply.kind.value, reply_kind=reply.kind.value, total_ms=0.0, prompt_tokens=0,
            completion_tokens=0, llm_calls=0, cached=False, errors=[], reply=reply_to_json(reply), event_key=event_key,
        )  # fmt: skip
        async with self._db.session() as session:
            session.add(run)
        return run_id

    async def save_run(
        self,
        conversation_id: str,
        message_id: str,
        envelope: Envelope,
        status: str,
        reply_kind: str | None,
        cached: bool,
        started_at: datetime,
        finished_at: datetime,
        *,
        run_id: str | None = None,
        reply: Reply | None = None,
        event_key: str | None = None,
        settled: Settled | None = None,
    ) -> str:
        """Store a finished run with every hop of its envelope, and the reply it produced, in one transaction: the
        moment the message counts as answered is the moment its reply is stored. `event_key` names the button press
        a resumed run answers (`answer_for_event`); `settled` is written to the conversation in the same transaction.
        Returns the run id."""
        run_id = run_id or new_uuid()
        prompt = sum(hop.usage.prompt_tokens for hop in envelope.hops)
        completion = sum(hop.usage.completion_tokens for hop in envelope.hops)
        calls = sum(hop.usage.calls for hop in envelope.hops)
        run = RunRow(
            id=run_id,
            conversation_id=conversation_id,
            message_id=message_id,
            started_at=started_at,
            finished_at=finished_at,
            status=status,
            reply_kind=reply_kind,
            total_ms=(finished_at - started_at).total_seconds() * 1000.0,
            prompt_tokens=prompt,
            completion_tokens=completion,
            llm_calls=calls,
            cached=cached,
            errors=[{"role": e.role.value, "kind": e.kind, "message": e.message} for e in envelope.errors],
            reply=reply_to_json(reply) if reply is not None else None,
            event_key=event_key,
        )
        hops = [
            {
                "run_id": run_id,
                "seq": seq,
                "role": hop.role.value,
                "decision": hop.decision,
                "started_at": hop.started_at,
                "duration_ms": hop.duration_ms,
                "wait_ms": hop.wait_ms,
                "strategy": hop.strategy,
                "prompt_tokens": hop.usage.prompt_tokens,
                "completion_tokens": hop.usage.completion_tokens,
                "error": hop.error,
            }
            for seq, hop in enumerate(envelope.hops)
        ]
        async with self._db.session() as session:
            session.add(run)
            await session.flush()
            if hops:  # one executemany for every hop (as ORM objects each was its own INSERT, ~27 per question)
                # Core, one executemany: an ORM bulk insert splits the rows by which columns are None
                await session.execute(insert(cast(Table, HopRow.__table__)), hops)
            if settled is not None:
                waiting = settled.pending_envelope is not None
                state = ConversationState.AWAITING_CLARIFICATION if waiting else ConversationState.IDLE
                await session.execute(
                    update(ConversationRow)
                    .where(ConversationRow.id == conversation_id)
                    .values(
                        pending_envelope=settled.pending_envelope,
                        state=state.value,
                        language=settled.language,
                        updated_at=utc_now(),
                    )
                    .execution_options(synchronize_session=False)
                )
        return run_id

    async def trace(self, conversation_id: str = LAST, *, limit: int = 20) -> Trace | None:
        """The newest `limit` runs of a conversation (or of the conversation with the latest run, for "last")."""
        async with self._db.session() as session:
            if conversation_id == LAST:
                latest = await session.execute(
                    select(RunRow.conversation_id).order_by(RunRow.started_at.desc()).limit(1)
                )
                found = latest.scalar_one_or_none()
                if found is None:
                    return None
                conversation_id = found
            runs = (
                (
                    await session.execute(
                        select(RunRow)
                        .where(RunRow.conversation_id == conversation_id)
                        .order_by(RunRow.started_at.desc())
                        .limit(limit)
                    )
                )
                .scalars()
                .all()
            )
            if not runs:
                return None
            hops = (
                (
                    await session.execute(
                        select(HopRow)
                        .where(HopRow.run_id.in_([r.id for r in runs]))
                        .order_by(HopRow.run_id, HopRow.seq)
                    )
                )
                .scalars()
                .all()
            )
        by_run: dict[str, list[HopRecord]] = {}
        for hop in hops:
            by_run.setdefault(hop.run_id, []).append(
                HopRecord(
                    seq=hop.seq,
                    role=hop.role,
                    decision=hop.decision,
                    started_at=hop.started_at,
                    duration_ms=hop.duration_ms,
                    wait_ms=hop.wait_ms,
                    strategy=hop.strategy,
                    prompt_tokens=hop.prompt_tokens,
                    completion_tokens=hop.completion_tokens,
                    error=hop.error,
                )
            )
        records = tuple(
            RunRecord(
                id=r.id,
                conversation_id=r.conversation_id,
                message_id=r.message_id,
                started_at=r.started_at,
                finished_at=r.finished_at,
                status=r.status,
                reply_kind=r.reply_kind,
                total_ms=r.total_ms,
                prompt_tokens=r.prompt_tokens,
                completion_tokens=r.completion_tokens,
                llm_calls=r.llm_calls,
                cached=r.cached,
                errors=tuple(r.errors),
                hops=tuple(by_run.get(r.id, ())),
            )
            for r in reversed(runs)
        )
        return Trace(conversation_id=conversation_id, runs=records)
