"""The operational tables: conversations and their messages, pipeline runs and hops, button actions, feedback,
the inbox/outbox, the semantic cache, scheduler leases and usage counters.

Document tables live in `storage/doc_tables.py`. Every timestamp is a timezone-aware UTC `UTCDateTime`.
Schema changes go through Alembic (`alembic/versions/`); keep this module and the migrations in step.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from storage.base import Base, UTCDateTime
from storage.db import utc_now

KEY = 255  # length of ids and keys coming from platforms


def new_uuid() -> str:
    return str(uuid.uuid4())


def new_action_token() -> str:
    """An opaque, unguessable button id; the button value carries nothing else."""
    return secrets.token_urlsafe(12)


class ConversationState(StrEnum):
    IDLE = "idle"
    AWAITING_CLARIFICATION = "awaiting_clarification"


class InboxStatus(StrEnum):
    PENDING = "pending"
    CLAIMED = "claimed"
    DONE = "done"
    FAILED = "failed"


class OutboxStatus(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


class ConversationRow(Base):
    """One thread the bot takes part in."""

    __tablename__ = "conversations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_uuid)
    thread_key: Mapped[str] = mapped_column(String(KEY), unique=True)
    platform: Mapped[str] = mapped_column(String(32))
    workspace_id: Mapped[str] = mapped_column(String(KEY))
    channel_id: Mapped[str] = mapped_column(String(KEY))
    thread_id: Mapped[str] = mapped_column(String(KEY))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now, onupdate=utc_now)
    history_fetched: Mapped[bool] = mapped_column(Boolean, default=False)
    state: Mapped[str] = mapped_column(String(32), default=ConversationState.IDLE.value)
    pending_envelope: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    language: Mapped[str | None] = mapped_column(String(16), nullable=True)


class MessageRow(Base):
    """A message of a thread, from a person or the bot."""

    __tablename__ = "messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    platform_message_id: Mapped[str] = mapped_column(String(KEY))
    author_id: Mapped[str] = mapped_column(String(KEY))
    author_name: Mapped[str] = mapped_column(String(KEY))
    from_bot: Mapped[bool] = mapped_column(Boolean, default=False)
    text: Mapped[str] = mapped_column(Text)
    ts: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (
        UniqueConstraint("conversation_id", "platform_message_id", name="uq_messages_conversation_message"),
        Index("ix_messages_conversation_ts", "conversation_id", "ts"),
    )


class RunRow(Base):
    """One pipeline run (one question answered, clarified or refused)."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_uuid)
    conversation_id: Mapped[str] = mapped_column(String(36))
    message_id: Mapped[str] = mapped_column(String(KEY))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime())
    status: Mapped[str] = mapped_column(String(32))
    reply_kind: Mapped[str | None] = mapped_column(String(32), nullable=True)
    total_ms: Mapped[float] = mapped_column(Float)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    llm_calls: Mapped[int] = mapped_column(Integer, default=0)
    cached: Mapped[bool] = mapped_column(Boolean, default=False)
    errors: Mapped[list[dict[str, str]]] = mapped_column(JSON, default=list)
    # the reply the run produced, written in the transaction that settles the message (storage.settlement): what
    # "post it publicly" posts again later (None for runs recorded before 0004_run_reply)
    reply: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)

    __table_args__ = (Index("ix_runs_conversation_started", "conversation_id", "started_at"),)


class HopRow(Base):
    """One step of a run: which role ran, what it decided, how long it took and what it cost."""

    __tablename__ = "hops"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(32))
    decision: Mapped[str] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    duration_ms: Mapped[float] = mapped_column(Float)
    wait_ms: Mapped[float] = mapped_column(Float, default=0.0)
    strategy: Mapped[str] = mapped_column(String(32))
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (UniqueConstraint("run_id", "seq", name="uq_hops_run_seq"),)


class ActionRow(Base):
    """A button offered in a thread. `batch_id` groups the buttons created together for one message."""

    __tablename__ = "actions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_action_token)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"), index=True)
    batch_id: Mapped[str] = mapped_column(String(32), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    label: Mapped[str] = mapped_column(String(500))
    value: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    consumed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    consumed_by: Mapped[str | None] = mapped_column(String(KEY), nullable=True)
    # the inbox event (press) that consumed it: the same event consuming again, on a retry, gets the same outcome
    consumed_event: Mapped[str | None] = mapped_column(String(KEY), nullable=True)


class FeedbackRow(Base):
    """A helpful / not helpful vote; one per person and run."""

    __tablename__ = "feedback"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(String(36), index=True)
    run_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    user_id: Mapped[str] = mapped_column(String(KEY))
    helpful: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)

    __table_args__ = (UniqueConstraint("run_id", "user_id", name="uq_feedback_run_user"),)


class InboxRow(Base):
    """An inbound platform event, keyed by its platform-stable id so each is handled once across replicas."""

    __tablename__ = "inbox"

    dedup_key: Mapped[str] = mapped_column(String(KEY), primary_key=True)
    platform: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), default=InboxStatus.PENDING.value)
    claimed_by: Mapped[str | None] = mapped_column(String(KEY), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now, index=True)
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    # the conversation and the platform's time of the message: one event per conversation runs at a time, in order
    thread_key: Mapped[str | None] = mapped_column(String(KEY), nullable=True)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    __table_args__ = (
        Index("ix_inbox_status_lease", "status", "lease_until"),
        Index("ix_inbox_thread_status", "thread_key", "status"),
    )


class OutboxRow(Base):
    """A reply waiting to be (or already) delivered to a platform."""

    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    inbox_key: Mapped[str | None] = mapped_column(String(KEY), nullable=True, index=True)
    platform: Mapped[str] = mapped_column(String(32))
    target: Mapped[dict[str, Any]] = mapped_column(JSON)
    reply: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), default=OutboxStatus.PENDING.value)
    platform_message_id: Mapped[str | None] = mapped_column(String(KEY), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (Index("ix_outbox_status_next_attempt", "status", "next_attempt_at"),)


class SemanticCacheRow(Base):
    """A cached reply to a question, valid for one set of collections at one corpus version."""

    __tablename__ = "semantic_cache"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    collections_key: Mapped[str] = mapped_column(String(KEY))
    corpus_version: Mapped[int] = mapped_column(Integer)
    question: Mapped[str] = mapped_column(Text)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    reply: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    hits: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = (Index("ix_semantic_cache_key_version", "collections_key", "corpus_version"),)


class SchedulerLeaseRow(Base):
    """Who runs a scheduled job for its current due time (one runner per due time across replicas)."""

    __tablename__ = "scheduler_leases"

    job_id: Mapped[str] = mapped_column(String(KEY), primary_key=True)
    due_at: Mapped[datetime] = mapped_column(UTCDateTime())
    owner: Mapped[str | None] = mapped_column(String(KEY), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class UsageCounterRow(Base):
    """LLM tokens spent per scope (e.g. "global", "workspace:T123") and UTC day, for daily budgets."""

    __tablename__ = "usage_counters"

    scope: Mapped[str] = mapped_column(String(KEY), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    tokens: Mapped[int] = mapped_column(BigInteger, default=0)
