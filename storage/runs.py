"""Pipeline runs and their hops: what `docbot trace` shows and the metrics read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import Table, insert, select

from pipeline.envelope import Envelope
from storage.db import Database
from storage.tables import HopRow, RunRow, new_uuid

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
class Trace:
    """The runs of one conversation, oldest first, each with its hops in order."""

    conversation_id: str
    runs: tuple[RunRecord, ...]


class RunStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def answered(self, conversation_id: str, message_id: str) -> bool:
        """Whether a run for this message was recorded (a reply was produced for it)."""
        async with self._db.session() as session:
            found = await session.scalar(
                select(RunRow.id)
                .where(RunRow.conversation_id == conversation_id, RunRow.message_id == message_id)
                .limit(1)
            )
        return found is not None

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
    ) -> str:
        """Store a finished run with every hop of its envelope; returns the run id."""
        run_id = new_uuid()
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
