"""Platform events that feed team answers, taken by the delivery worker before the conversation service sees them.

    ✅ by the asker on a thread message (InboundKind.REACTION)  →  capture (CHECKMARK)
    "Solved" pressed (a Discord forum post's solved tag)        →  capture (SOLVED), then the delivery marks the post
    the solved tag applied to a forum post (SOLVED_MARK)        →  capture (SOLVED), as resolved by the post's author
    a configured expert's reply after a refusal or a 👎          →  capture (EXPERT_REPLY); not answered as a question
                                                                   unless it mentions the bot
    a press of Approve / Edit / Reject                          →  the review desk (only maintainers act)
    the Edit editor submitted (InboundKind.EDIT)                →  the edited text, approved

A new candidate's review message goes to `DOCBOT_ANSWERS_REVIEW_CHANNEL` through the outbox, in the same transaction
that completes the event, keyed by the answer and its revision: a retried event, a second ✅ or a "Solved" after the
✅ never post it twice, and a post that fails is retried by the outbox like any reply.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from bot.answers.capture import Captured, Resolution, ThreadPlace, Trigger
from bot.answers.people import Person
from bot.answers.review import ReviewOutcome, Verdict
from bot.answers.wiring import TeamAnswerParts
from pipeline.messages import (
    CHECKMARK,
    SOLVED_MARK,
    SOLVED_PREFIX,
    ActionOutcome,
    ChannelNamer,
    Inbound,
    InboundKind,
    MessageReader,
    Permalinker,
    PostedMessage,
    ReviewEditor,
    ThreadRef,
)
from storage.answers.model import Reviewer, ReviewKind, TeamAnswer
from storage.answers.threads import ThreadMessage
from storage.outbox import Outbox, OutgoingReply

log = logging.getLogger(__name__)

REVIEW_KEY_PREFIX = "team-answer-review:"
EDITOR_TITLE = "Edit the team answer"


@dataclass(frozen=True, slots=True)
class Hooked:
    """What the hooks did with an event: replies to store with its completion, and whether the service still
    handles it (`done`: no)."""

    replies: tuple[OutgoingReply, ...] = ()
    done: bool = False


def review_key(answer: TeamAnswer) -> str:
    return f"{REVIEW_KEY_PREFIX}{answer.id}:{answer.revision}"


class TeamAnswerHooks:
    """Routes the events above; `sinks` by platform (a `MessageReader` reads a ✅'d message the bot never stored; a
    `ReviewEditor` opens the Edit button's editor)."""

    def __init__(self, team: TeamAnswerParts, outbox: Outbox, sinks: Mapping[str, object]) -> None:
        self._team = team
        self._outbox = outbox
        self._sinks = dict(sinks)

    async def take(self, inbound: Inbound, ref: ThreadRef) -> Hooked:
        """Before the service: what this event means for team answers (`Hooked()` when nothing)."""
        if inbound.kind is InboundKind.REACTION:
            return await self._reaction(inbound, ref)
        if inbound.kind is InboundKind.MESSAGE:
            return await self._message(inbound, ref)
        if inbound.kind is InboundKind.ACTION and (inbound.action_id or "").startswith(SOLVED_PREFIX):
            captured = await self._resolve(Trigger.SOLVED, inbound, ref, inbound.thread_key)
            return Hooked(await self._review_posts(captured))  # the delivery marks the post solved as before
        return Hooked()

    async def press(self, inbound: Inbound, ref: ThreadRef) -> ActionOutcome | None:
        """A review button pressed (or its editor submitted); None when `inbound` is not one."""
        if inbound.kind not in (InboundKind.ACTION, InboundKind.EDIT) or not inbound.action_id:
            return None
        person = _person(inbound)
        if inbound.kind is InboundKind.EDIT:
            return await self._edited(inbound.action_id, person, inbound.text)
        outcome = await self._team.desk.press(inbound.action_id, person)
        if outcome is None:
            return None
        log.info("review button", extra={"verdict": outcome.verdict.value, "platform": inbound.platform})
        if outcome.verdict is Verdict.EDIT_REQUESTED and outcome.answer is not None:
            editor = self._sinks.get(inbound.platform)
            opened = isinstance(editor, ReviewEditor) and await editor.open_editor(
                ref, inbound.message_id, inbound.action_id, EDITOR_TITLE, outcome.answer.answer
            )
            if opened:
                return ActionOutcome(accepted=False, chosen_label="", marks_message=False)
            return ActionOutcome(accepted=False, chosen_label="", notice=_NO_EDITOR.format(id=outcome.answer.id))
        return outcome.as_action_outcome()

    def editor_text_for(self, platform: str) -> Callable[[str, str, tuple[str, ...]], Awaitable[str | None]]:
        """For an adapter that must open the editor while acknowledging the press (Discord's modal): the answer's
        text when `button` is the Edit button of the version shown and the presser may review it; else None."""

        async def editor_text(button: str, user_id: str, groups: tuple[str, ...]) -> str | None:
            press = await self._team.answers.store.review_press(button)
            if press is None or press.kind is not ReviewKind.EDIT:
                return None
            if not self._team.desk.may_review(Person(platform, user_id, "", frozenset(groups))):
                return None
            answer = await self._team.answers.store.get(press.answer_id)
            if answer is None or answer.revision != press.revision or not answer.awaiting_review:
                return None
            return answer.answer

        return editor_text

    async def _edited(self, action_id: str, person: Person, text: str) -> ActionOutcome | None:
        """The editor's text: saved as a new revision, then approved (the maintainer who edited it reviewed it)."""
        outcome = await self._team.desk.press(action_id, person, edit_text=text)
        if outcome is None:
            return None
        log.info("review edit", extra={"verdict": outcome.verdict.value, "platform": person.platform})
        answer = outcome.answer
        if outcome.verdict is not Verdict.EDITED or answer is None or not answer.awaiting_review:
            return outcome.as_action_outcome()
        reviewer = Reviewer(person.key, person.name or person.user_id)
        step = await self._team.answers.approve(answer.id, reviewer, revision=answer.revision)
        approved = ReviewOutcome(Verdict.APPROVED, step.answer, f"Edited and approved by @{reviewer.name}")
        if step.answer is None or not step.transition.done:
            return ActionOutcome(accepted=True, chosen_label=outcome.label, reply=outcome.reply,
                                 notice="Saved; approving it failed, press Approve on the new message.")  # fmt: skip
        return approved.as_action_outcome()

    # -- resolutions ------------------------------------------------------------------------------------------

    async def _reaction(self, inbound: Inbound, ref: ThreadRef) -> Hooked:
        if inbound.action_id == SOLVED_MARK:  # the post's tag, set in Discord itself or by the Solved button
            captured = await self._resolve(Trigger.SOLVED, inbound, ref, inbound.thread_key)
            return Hooked(await self._review_posts(captured), done=True)
        if inbound.action_id != CHECKMARK:
            return Hooked(done=True)
        message = await self._read(inbound, ref)
        if message is None:
            log.info("checkmark on a message that is not there", extra={"platform": inbound.platform})
            return Hooked(done=True)
        thread = message.thread_id or inbound.thread_id or inbound.message_id
        thread_key = f"{inbound.platform}:{inbound.workspace_id}:{inbound.channel_id}:{thread}"
        captured = await self._resolve(Trigger.CHECKMARK, inbound, ref, thread_key, message=_as_thread_message(message))
        return Hooked(await self._review_posts(captured), done=True)

    async def _message(self, inbound: Inbound, ref: ThreadRef) -> Hooked:
        person = _person(inbound)
        if not self._team.capture.is_expert(person):
            return Hooked()
        message = ThreadMessage(inbound.message_id, inbound.user_id, inbound.user_name or inbound.user_id,
                                inbound.text, inbound.ts)  # fmt: skip
        captured = await self._resolve(Trigger.EXPERT_REPLY, inbound, ref, inbound.thread_key, message=message)
        if captured.answer is None:  # no refusal or 👎 before it: a follow-up like any other
            return Hooked()
        # the expert answered the question the bot could not: not a question to the bot, unless it says so
        return Hooked(await self._review_posts(captured), done=not inbound.mentioned)

    async def _resolve(self, trigger: Trigger, inbound: Inbound, ref: ThreadRef, thread_key: str,
                       message: ThreadMessage | None = None) -> Captured:  # fmt: skip
        resolution = Resolution(
            trigger, inbound.platform, inbound.workspace_id, inbound.channel_id, thread_key, _person(inbound),
            message_id=message.message_id if message is not None else None, message=message,
            place=lambda: self._place(inbound.platform, ref, thread_key),
        )  # fmt: skip
        return await self._team.capture.resolve(resolution)

    async def _place(self, platform: str, ref: ThreadRef, thread_key: str) -> ThreadPlace:
        """The channel's name and the thread's permalink, where the platform can tell them now (Slack, Discord's
        name); "" for either makes the citation show the channel's id and link the channel."""
        sink = self._sinks.get(platform)
        name = await sink.channel_name(ref) if isinstance(sink, ChannelNamer) else None
        root = thread_key.rsplit(":", 1)[-1]
        link = await sink.permalink(ref, root) if isinstance(sink, Permalinker) else None
        return ThreadPlace(name or "", link or "")

    async def _read(self, inbound: Inbound, ref: ThreadRef) -> PostedMessage | None:
        reader = self._sinks.get(inbound.platform)
        if not isinstance(reader, MessageReader):
            return None
        return await reader.read_message(ref, inbound.message_id)  # raising: the event is retried

    async def _review_posts(self, captured: Captured) -> tuple[OutgoingReply, ...]:
        """The review message for a candidate awaiting review that has none yet, to the review channel."""
        answer = captured.answer
        target = self._team.review_target
        if answer is None or not answer.awaiting_review:
            return ()
        if target is None:
            log.info("team answer awaits review; no review channel set", extra={"answer": answer.id})
            return ()
        key = review_key(answer)
        if await self._outbox.exists(key):
            return ()
        return (OutgoingReply(target, await self._team.desk.review_reply(answer), key),)


def _as_thread_message(message: PostedMessage) -> ThreadMessage:
    return ThreadMessage(message.message_id, message.author_id, message.author_name, message.text, message.ts,
                         from_bot=message.from_bot)  # fmt: skip


def _person(inbound: Inbound) -> Person:
    return Person(inbound.platform, inbound.user_id, inbound.user_name, frozenset(inbound.groups))


_NO_EDITOR = ("The editor could not be opened (it has to open right after the press). Press Edit again, or use "
              "`docbot answers edit {id} --answer ...`.")  # fmt: skip
