"""Tables of team answers: what people from the team answered in threads, drafted as candidates, reviewed by a
maintainer, and (once approved) ingested as a source like a document; plus the review buttons that act on them.

Kept apart from `storage/tables.py` (operational) and `storage/doc_tables.py` (documents); one Alembic history
covers all three (`alembic/versions/0007_team_answers.py`).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from storage.base import Base, UTCDateTime
from storage.db import utc_now

KEY = 255  # ids and names coming from platforms (as in storage/tables.py)


class AnswerStatus(StrEnum):
    DRAFT = "draft"  # awaiting review: never indexed, never quoted
    APPROVED = "approved"  # indexed in its collection, cited like a document
    REJECTED = "rejected"  # a maintainer said no: never indexed
    EXPIRED = "expired"  # was approved; too old or a document it relies on changed: back to review, not indexed


class ExpiryCause(StrEnum):
    AGE = "age"  # older than `answers_ttl_days`
    DOCUMENT_CHANGED = "document_changed"  # a section it mentions or was answered near changed (the diff is kept)
    DOCUMENT_REMOVED = "document_removed"  # such a document is gone


class ReviewKind(StrEnum):
    APPROVE = "approve"
    EDIT = "edit"
    REJECT = "reject"


class TeamAnswerRow(Base):
    """One candidate answer, from the thread it was given in to the maintainer's decision."""

    __tablename__ = "team_answers"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    status: Mapped[str] = mapped_column(String(16), default=AnswerStatus.DRAFT.value, index=True)
    # bumped by every change: a review button acts only on the revision it was shown with
    revision: Mapped[int] = mapped_column(Integer, default=1)
    question: Mapped[str] = mapped_column(Text)  # the canonical question
    answer: Mapped[str] = mapped_column(Text)  # the expert's answer (as edited by a maintainer)
    captured_answer: Mapped[str | None] = mapped_column(Text, nullable=True)  # the text as said, when edited since
    platform: Mapped[str] = mapped_column(String(32))
    workspace_id: Mapped[str] = mapped_column(String(KEY))
    channel_id: Mapped[str] = mapped_column(String(KEY))
    channel_name: Mapped[str] = mapped_column(String(KEY), default="")
    thread_key: Mapped[str] = mapped_column(String(KEY), index=True)
    thread_url: Mapped[str] = mapped_column(String(2000), default="")
    answer_message_id: Mapped[str] = mapped_column(String(KEY))  # the expert's message: one candidate per message
    author_id: Mapped[str] = mapped_column(String(KEY))
    author_name: Mapped[str] = mapped_column(String(KEY))
    answered_at: Mapped[datetime] = mapped_column(UTCDateTime())
    collection: Mapped[str] = mapped_column(String(100))  # where it is indexed once approved (channel ACLs apply)
    # documents it mentions or was answered near, each with the text it was checked against (storage/answers/model)
    mentions: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    reviewer_id: Mapped[str | None] = mapped_column(String(KEY), nullable=True)
    reviewer_name: Mapped[str | None] = mapped_column(String(KEY), nullable=True)
    reviewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)  # the reviewer's reason, or why it expired
    expired_by: Mapped[str | None] = mapped_column(String(32), nullable=True)  # ExpiryCause
    diff: Mapped[str | None] = mapped_column(Text, nullable=True)  # the change that sent it back to review
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    __table_args__ = (
        UniqueConstraint(
            "platform", "workspace_id", "channel_id", "answer_message_id", name="uq_team_answers_message"
        ),
        Index("ix_team_answers_status_expires", "status", "expires_at"),
    )


class TeamAnswerActionRow(Base):
    """A review button (Approve / Edit / Reject) behind an opaque id, for one revision of one candidate."""

    __tablename__ = "team_answer_actions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    answer_id: Mapped[str] = mapped_column(ForeignKey("team_answers.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # ReviewKind
    revision: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)


ANSWER_TABLES: tuple[Any, ...] = (TeamAnswerRow.__table__, TeamAnswerActionRow.__table__)
