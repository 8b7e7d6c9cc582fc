"""Pipeline runs and their hops: what `docbot trace` shows and the metrics read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from pipeline.codec import from_json
from pipeline.messages import Reply
from pipeline.types import StrategyUsed
from storage.db import Database
from storage.tables import ConversationRow, HopRow, RunRow

LAST = "last"


@dataclass(frozen=True, slots=True)
class HopRecord:
    seq: int
    role: str
    decision: str
    started_at: datetime
    duration_ms: float
    wait_ms: float
    strategy: StrategyUsed
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

    async def reply_to(self, thread_key: str, message_id: str) -> Reply | None:
        """The reply stored with the newest run that answered the question `message_id` in the thread."""
        async with self._db.session() as session:
            found = (
                await session.execute(
                    select(RunRow.reply)
                    .join(ConversationRow, ConversationRow.id == RunRow.conversation_id)
                    .where(ConversationRow.thread_key == thread_key, RunRow.message_id == message_id)
                    .order_by(RunRow.finished_at.desc())
                    .limit(1)
                )
            ).scalar_one_or_none()
        return from_json(Reply, found) if found else None

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
                    strategy=StrategyUsed(hop.strategy),
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
