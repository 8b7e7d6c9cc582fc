"""Every step of a team answer's life, with its effect on the index: approve → published; reject, expire → withdrawn
(before the status changes, so a failure leaves it unindexed rather than quoted); edit of an approved answer →
published again. `sync` repairs whatever a crash between a step and its index change left behind.

Expiry: `expire_due` (older than the configured time) and `check_documents` (a section an answer relies on changed or
is gone: back to review with the diff), both run by the scheduler and the second also after every ingest that
changed something (`on_documents_changed`, chained to the ingestor's `on_change`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from storage.answers.mentions import MentionReader, describe_changes
from storage.answers.model import (
    AnswerDraft,
    AnswerStatus,
    ExpiryCause,
    Outcome,
    Reviewer,
    TeamAnswer,
    Transition,
)
from storage.answers.publish import AnswerPublisher, SyncReport
from storage.answers.store import AnswerStore
from storage.db import utc_now
from storage.errors import StorageError
from storage.vector_index import VectorIndexUnavailable

log = logging.getLogger(__name__)

_INDEX_ERRORS = (VectorIndexUnavailable, StorageError)


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """A review step's outcome and what happened to the index: True indexed as wanted, False not (the index or
    the embedder failed; the scheduled sync repairs it), None untouched."""

    transition: Transition
    indexed: bool | None = None

    @property
    def outcome(self) -> Outcome:
        return self.transition.outcome

    @property
    def answer(self) -> TeamAnswer | None:
        return self.transition.answer


class TeamAnswers:
    def __init__(
        self,
        store: AnswerStore,
        publisher: AnswerPublisher,
        mentions: MentionReader,
        *,
        ttl: timedelta | None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.store = store
        self._publisher = publisher
        self.mentions = mentions
        self._ttl = ttl
        self._now = clock
        self._checking = False
        self._again = False

    async def draft(self, draft: AnswerDraft) -> tuple[TeamAnswer, bool]:
        return await self.store.draft(draft)

    async def approve(
        self, answer_id: str, reviewer: Reviewer, *, collection: str | None = None, revision: int | None = None
    ) -> Step:
        """Approve against the documents as they are now; published at once."""
        current = await self.store.get(answer_id)
        if current is None:
            return Step(Transition(Outcome.UNKNOWN))
        mentions = await self.mentions.refresh(current.mentions)
        expires_at = self._now() + self._ttl if self._ttl is not None else None
        transition = await self.store.approve(
            answer_id, reviewer, expires_at=expires_at, mentions=mentions, collection=collection, revision=revision
        )
        if not transition.done or transition.answer is None:
            return Step(transition)
        return Step(transition, await self._publish(transition.answer))

    async def reject(
        self, answer_id: str, reviewer: Reviewer, reason: str = "", *, revision: int | None = None
    ) -> Step:
        """Reject (or withdraw an approved answer): out of the index first."""
        current = await self.store.get(answer_id)
        if current is None:
            return Step(Transition(Outcome.UNKNOWN))
        indexed = None
        if current.status is AnswerStatus.APPROVED:
            indexed = await self._withdraw(answer_id)
            if indexed is False:  # still in the index: the status stays, nothing is said that is not so
                return Step(Transition(Outcome.INDEX_FAILED, current, current.status), indexed)
        transition = await self.store.reject(answer_id, reviewer, reason, revision=revision)
        if indexed and not transition.done and transition.answer is not None and (
            transition.answer.status is AnswerStatus.APPROVED
        ):  # withdrawn for nothing (another step came first): back in
            await self._publish(transition.answer)
        return Step(transition, indexed)

    async def edit(
        self,
        answer_id: str,
        reviewer: Reviewer,
        *,
        answer: str | None = None,
        question: str | None = None,
        revision: int | None = None,
    ) -> Step:
        transition = await self.store.edit(answer_id, reviewer, answer=answer, question=question, revision=revision)
        if transition.done and transition.answer is not None and transition.answer.status is AnswerStatus.APPROVED:
            return Step(transition, await self._publish(transition.answer))
        return Step(transition)

    async def expire(self, answer: TeamAnswer, cause: ExpiryCause, reason: str, diff: str | None = None) -> Step:
        """Back to review: out of the index first (an answer that cannot be withdrawn now stays approved, and the
        next check tries again)."""
        withdrawn = await self._withdraw(answer.id)
        if withdrawn is False:
            return Step(Transition(Outcome.INDEX_FAILED, answer, answer.status), False)
        transition = await self.store.expire(answer.id, cause, reason, diff=diff)
        if transition.done:
            log.info("team answer expired", extra={"answer": answer.id, "cause": cause.value})
        elif transition.answer is not None and transition.answer.status is AnswerStatus.APPROVED:
            await self._publish(transition.answer)  # approved again meanwhile (a new revision): keep it in
        return Step(transition, withdrawn)

    async def expire_due(self, now: datetime | None = None) -> list[Step]:
        """Approved answers older than the configured time go back to review."""
        now = now or self._now()
        steps = []
        for answer in await self.store.due_for_expiry(now):
            approved = f"{answer.reviewed_at:%Y-%m-%d}" if answer.reviewed_at else "earlier"
            steps.append(await self.expire(answer, ExpiryCause.AGE, f"approved {approved}; its time is up"))
        return steps

    async def check_documents(self) -> list[Step]:
        """Approved answers whose sections changed or are gone go back to review with the diff; those whose
        documents changed elsewhere only keep their approval (their stored hashes move on)."""
        approved = [a for a in await self.store.approved() if a.mentions]
        if not approved:
            return []
        steps: list[Step] = []
        results = await self.mentions.changes([a.mentions for a in approved])
        for answer, (changed, now) in zip(approved, results, strict=True):
            if changed:
                gone = all(change.now is None for change in changed)
                cause = ExpiryCause.DOCUMENT_REMOVED if gone else ExpiryCause.DOCUMENT_CHANGED
                titles = ", ".join(dict.fromkeys(c.before.title or c.before.url for c in changed))
                reason = f"{'removed' if gone else 'changed'}: {titles}"
                steps.append(await self.expire(answer, cause, reason, describe_changes(changed)))
            elif now != answer.mentions:
                await self.store.update_mentions(answer.id, now, revision=answer.revision)
        return steps

    async def on_documents_changed(self) -> None:
        """The ingestor's change callback: never fails the ingest that called it (the scheduled check repeats).
        A change reported while a check runs (withdrawing an answer is an ingest too) makes that check run once
        more instead of starting a second one inside it."""
        if self._checking:
            self._again = True
            return
        self._checking = True
        try:
            self._again = True
            while self._again:
                self._again = False
                await self.check_documents()
        except Exception:
            log.warning("checking team answers against changed documents failed", exc_info=True)
        finally:
            self._checking = False

    async def sync(self) -> SyncReport:
        return await self._publisher.sync(await self.store.approved())

    async def _publish(self, answer: TeamAnswer) -> bool:
        try:
            report = await self._publisher.publish(answer)
        except _INDEX_ERRORS as exc:
            log.warning("publishing a team answer failed; the next sync retries",
                        extra={"answer": answer.id, "error": type(exc).__name__})  # fmt: skip
            return False
        return not report.failed

    async def _withdraw(self, answer_id: str) -> bool:
        try:
            await self._publisher.withdraw(answer_id)
        except _INDEX_ERRORS as exc:
            log.warning("withdrawing a team answer failed", extra={"answer": answer_id, "error": type(exc).__name__})
            return False
        return True
