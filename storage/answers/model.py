"""What the team-answer store takes and gives: drafts, stored answers, the documents they rely on, and typed
outcomes of a review step."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from pipeline.types import TEAM_ANSWER_DOC_PREFIX
from storage.answer_tables import AnswerStatus, ExpiryCause, ReviewKind

__all__ = [
    "AnswerDraft",
    "AnswerStatus",
    "DocMention",
    "ExpiryCause",
    "Outcome",
    "ReviewKind",
    "Reviewer",
    "TeamAnswer",
    "Transition",
    "answer_id_of",
]


@dataclass(frozen=True, slots=True)
class DocMention:
    """A document section the answer mentions (a link to it in the answer) or was given near (the bot cited it in
    the thread), with the text it had when the answer was drafted or approved: a later change of that text sends
    the answer back to review with the difference. `section` "" is the whole document."""

    doc_id: str
    collection: str
    section: str
    title: str
    url: str
    content_hash: str
    excerpt: str

    def to_json(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "collection": self.collection,
            "section": self.section,
            "title": self.title,
            "url": self.url,
            "content_hash": self.content_hash,
            "excerpt": self.excerpt,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DocMention:
        return cls(
            doc_id=str(data["doc_id"]),
            collection=str(data.get("collection", "")),
            section=str(data.get("section", "")),
            title=str(data.get("title", "")),
            url=str(data.get("url", "")),
            content_hash=str(data.get("content_hash", "")),
            excerpt=str(data.get("excerpt", "")),
        )


@dataclass(frozen=True, slots=True)
class AnswerDraft:
    """A candidate as captured from a resolved thread. Nothing about the asker beyond the question itself."""

    question: str
    answer: str
    platform: str
    workspace_id: str
    channel_id: str
    thread_key: str
    answer_message_id: str  # the expert's message (one candidate per message, however often it is captured)
    author_id: str
    author_name: str
    answered_at: datetime  # timezone-aware UTC
    collection: str
    channel_name: str = ""
    thread_url: str = ""
    mentions: tuple[DocMention, ...] = ()


@dataclass(frozen=True, slots=True)
class Reviewer:
    """Who decided: a maintainer on a platform (`platform:user id`) or the operator on the CLI."""

    id: str
    name: str


@dataclass(frozen=True, slots=True)
class TeamAnswer:
    id: str
    status: AnswerStatus
    revision: int
    question: str
    answer: str
    platform: str
    workspace_id: str
    channel_id: str
    channel_name: str
    thread_key: str
    thread_url: str
    answer_message_id: str
    author_id: str
    author_name: str
    answered_at: datetime
    collection: str
    created_at: datetime
    updated_at: datetime
    mentions: tuple[DocMention, ...] = ()
    captured_answer: str | None = None
    reviewer_id: str | None = None
    reviewer_name: str | None = None
    reviewed_at: datetime | None = None
    reason: str | None = None
    expired_by: ExpiryCause | None = None
    diff: str | None = None
    expires_at: datetime | None = None

    @property
    def doc_id(self) -> str:
        """The id of the document it becomes once approved (pipeline.types.is_team_answer knows the prefix)."""
        return f"{TEAM_ANSWER_DOC_PREFIX}{self.id}"

    @property
    def origin(self) -> str:
        """Its own source namespace in the document store: `answers/<id>`."""
        return f"answers/{self.id}"

    @property
    def awaiting_review(self) -> bool:
        return self.status in (AnswerStatus.DRAFT, AnswerStatus.EXPIRED)


def answer_id_of(doc_id: str) -> str | None:
    """The team answer a document id belongs to, or None for a document of the documentation."""
    return doc_id.removeprefix(TEAM_ANSWER_DOC_PREFIX) if doc_id.startswith(TEAM_ANSWER_DOC_PREFIX) else None


class Outcome(StrEnum):
    DONE = "done"
    UNCHANGED = "unchanged"  # it already was in the state asked for (a second Approve, a retried press)
    STALE = "stale"  # changed since the button was shown (another maintainer acted first): nothing done
    NOT_ALLOWED = "not_allowed"  # not from this state (editing a rejected answer, expiring a draft)
    UNKNOWN = "unknown"  # no such answer
    INDEX_FAILED = "index_failed"  # the index failed while taking it out: its status stays, try again (the sync too)


@dataclass(frozen=True, slots=True)
class Transition:
    outcome: Outcome
    answer: TeamAnswer | None = None
    previous: AnswerStatus | None = field(default=None)

    @property
    def done(self) -> bool:
        return self.outcome is Outcome.DONE
