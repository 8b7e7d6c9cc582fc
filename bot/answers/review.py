"""The review of team answers on the platforms: the neutral review message (the candidate, where it came from, what it
relies on, the diff when a document change sent it back) with Approve / Edit / Reject buttons, and what a press does.

Only configured maintainers act; a press by anyone else changes nothing and is told so. A button acts on the revision
it was shown with: after another maintainer's step it does nothing (the message then shows who did what). Edit without
a text asks the adapter to open an editor with the current text (`EDIT_REQUESTED`); the edited text comes back through
`press(..., edit_text=...)`. Written in English, the maintainers' and operators' language (like the digest and logs).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from bot.answers.people import People, Person
from pipeline.messages import ActionOutcome, Citation, Reply, ReplyAction, ReplyKind
from pipeline.types import ActionKind
from storage.answers.lifecycle import Step, TeamAnswers
from storage.answers.model import AnswerStatus, ExpiryCause, Outcome, Reviewer, ReviewKind, TeamAnswer

log = logging.getLogger(__name__)

REVIEW_REASON = "team_answer_review"
MAX_QUOTED_CHARS = 2500
MAX_DIFF_CHARS = 1500
_KINDS = {
    ReviewKind.APPROVE: (ActionKind.APPROVE_ANSWER, "Approve"),
    ReviewKind.EDIT: (ActionKind.EDIT_ANSWER, "Edit"),
    ReviewKind.REJECT: (ActionKind.REJECT_ANSWER, "Reject"),
}


class Verdict(StrEnum):
    APPROVED = "approved"
    REJECTED = "rejected"
    EDITED = "edited"
    EDIT_REQUESTED = "edit_requested"  # the adapter opens an editor with `ReviewOutcome.answer.answer`
    NOT_MAINTAINER = "not_maintainer"
    ALREADY = "already"  # it already is so (a second press, a retried event)
    STALE = "stale"  # changed since this message was posted: nothing done
    NOT_ALLOWED = "not_allowed"
    UNKNOWN = "unknown"  # the answer is gone
    INDEX_FAILED = "index_failed"  # could not be withdrawn from the index now: nothing done, try again


@dataclass(frozen=True, slots=True)
class ReviewOutcome:
    verdict: Verdict
    answer: TeamAnswer | None = None
    label: str = ""  # what the review message shows once acted on ("Approved by @bob")
    notice: str | None = None  # said to the person who pressed (why nothing happened, or what did)
    reply: Reply | None = None  # a new review message (after an edit: the new text with fresh buttons)

    def as_action_outcome(self) -> ActionOutcome:
        """The neutral outcome the service returns for the press: the message shows `label` and loses its buttons
        when something was decided."""
        decided = self.verdict in (Verdict.APPROVED, Verdict.REJECTED, Verdict.EDITED)
        return ActionOutcome(
            accepted=decided, chosen_label=self.label, reply=self.reply, notice=self.notice, marks_message=decided
        )


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _quoted(text: str) -> list[str]:
    return [f"> {line}" if line.strip() else ">" for line in _shorten(text.strip(), MAX_QUOTED_CHARS).splitlines()]


def review_text(answer: TeamAnswer) -> tuple[str, tuple[Citation, ...]]:
    """The review message's text (neutral markup) and its citations: [1] the thread, then the sections it relies on."""
    where = f"#{answer.channel_name or answer.channel_id}"
    heading = {
        AnswerStatus.DRAFT: "**A team answer to review**",
        AnswerStatus.EXPIRED: "**A team answer back for review**",
        AnswerStatus.APPROVED: "**An approved team answer**",
        AnswerStatus.REJECTED: "**A rejected team answer**",
    }[answer.status]
    lines = [
        f"{heading}: answered by @{answer.author_name} in {where} on {answer.answered_at:%Y-%m-%d} [1]",
        "",
        f"**Question:** {' '.join(answer.question.split())}",
        "",
        *_quoted(answer.answer),
    ]
    citations = [Citation(1, f"the thread in {where}", (), answer.thread_url, "", 1.0)] if answer.thread_url else []
    if not answer.thread_url:
        lines[0] = lines[0].removesuffix(" [1]")
    if answer.mentions:
        lines += ["", "**Relies on:**"]
        for mention in answer.mentions:
            number = len(citations) + 1
            citations.append(Citation(number, mention.title or mention.url, (), mention.url, "", 1.0))
            lines.append(f"- {mention.title or mention.url} [{number}]")
    if answer.status is AnswerStatus.EXPIRED:
        why = {
            ExpiryCause.AGE: "It is older than the time approved answers are kept",
            ExpiryCause.DOCUMENT_CHANGED: "A section it relies on changed",
            ExpiryCause.DOCUMENT_REMOVED: "A page it relies on was removed",
        }.get(answer.expired_by or ExpiryCause.AGE, "It expired")
        lines += ["", f"**{why}** ({answer.reason or 'no details'})."]
        if answer.diff:
            lines += ["", "```", _shorten(answer.diff.rstrip(), MAX_DIFF_CHARS), "```"]
    lines += ["", f"Answer id: {answer.id}"]
    return "\n".join(lines), tuple(citations)


class ReviewDesk:
    """Builds review messages and handles their buttons; the service calls it, the adapters render its replies."""

    def __init__(self, answers: TeamAnswers, maintainers: People) -> None:
        self._answers = answers
        self._maintainers = maintainers

    def may_review(self, person: Person) -> bool:
        return self._maintainers.includes(person)

    async def review_reply(self, answer: TeamAnswer) -> Reply:
        """The review message for the answer as it is now, with buttons for this revision (posted by the service to
        the review channel through the outbox)."""
        text, citations = review_text(answer)
        buttons = await self._answers.store.review_buttons(answer)
        actions = tuple(ReplyAction(b.id, _KINDS[b.kind][1], _KINDS[b.kind][0]) for b in buttons)
        return Reply(ReplyKind.NOTICE, text, "en", "", citations=citations, actions=actions, reason=REVIEW_REASON)

    async def press(self, action_id: str, person: Person, *, edit_text: str | None = None,
                    reason: str = "") -> ReviewOutcome | None:  # fmt: skip
        """What pressing a review button does; None when `action_id` is not a review button (the service goes on
        with its own actions). `edit_text` is the edited answer (the Edit button's editor submitted); `reason` a
        rejection's reason when the platform asked for one."""
        press = await self._answers.store.review_press(action_id)
        if press is None:
            return None
        if not self.may_review(person):
            log.info("review press by a non-maintainer refused", extra={"platform": person.platform})
            return ReviewOutcome(Verdict.NOT_MAINTAINER, notice="Only the configured maintainers can review team "
                                 "answers (DOCBOT_ANSWERS_MAINTAINERS).")  # fmt: skip
        reviewer = Reviewer(person.key, person.name or person.user_id)
        if press.kind is ReviewKind.APPROVE:
            step = await self._answers.approve(press.answer_id, reviewer, revision=press.revision)
            return await self._outcome(step, Verdict.APPROVED, f"Approved by @{reviewer.name}")
        if press.kind is ReviewKind.REJECT:
            step = await self._answers.reject(press.answer_id, reviewer, reason, revision=press.revision)
            return await self._outcome(step, Verdict.REJECTED, f"Rejected by @{reviewer.name}")
        if edit_text is None or not edit_text.strip():
            current = await self._answers.store.get(press.answer_id)
            if current is None:
                return ReviewOutcome(Verdict.UNKNOWN, notice="This answer no longer exists.")
            if current.revision != press.revision:
                return ReviewOutcome(Verdict.STALE, current, notice=_STALE)
            return ReviewOutcome(Verdict.EDIT_REQUESTED, current)
        step = await self._answers.edit(press.answer_id, reviewer, answer=edit_text.strip(), revision=press.revision)
        outcome = await self._outcome(step, Verdict.EDITED, f"Edited by @{reviewer.name}")
        if outcome.verdict is Verdict.EDITED and outcome.answer is not None and outcome.answer.awaiting_review:
            # the old buttons act on the old revision: the new text comes with its own
            return ReviewOutcome(outcome.verdict, outcome.answer, outcome.label, reply=await self.review_reply(
                outcome.answer))  # fmt: skip
        return outcome

    async def _outcome(self, step: Step, verdict: Verdict, label: str) -> ReviewOutcome:
        answer = step.answer
        if step.outcome is Outcome.DONE:
            notice = None
            if step.indexed is False:
                notice = "Saved; the search index could not be updated just now, it will be within minutes."
            return ReviewOutcome(verdict, answer, label, notice=notice)
        if step.outcome is Outcome.UNCHANGED:
            state = answer.status.value if answer else "done"
            return ReviewOutcome(Verdict.ALREADY, answer, notice=f"Already {state}.")
        if step.outcome is Outcome.STALE:
            return ReviewOutcome(Verdict.STALE, answer, notice=_STALE)
        if step.outcome is Outcome.NOT_ALLOWED:
            state = answer.status.value if answer else "gone"
            return ReviewOutcome(Verdict.NOT_ALLOWED, answer, notice=f"Not possible: the answer is {state}.")
        if step.outcome is Outcome.INDEX_FAILED:
            return ReviewOutcome(Verdict.INDEX_FAILED, answer, notice="The search index is unavailable just now; "
                                 "nothing was changed. Please try again in a few minutes.")  # fmt: skip
        return ReviewOutcome(Verdict.UNKNOWN, notice="This answer no longer exists.")


_STALE = "Someone changed this answer since this message was posted; nothing was done. See the newer message."
