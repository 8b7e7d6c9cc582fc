"""Drafting a candidate answer when a thread the bot took part in is resolved by a person from the team.

A resolution is one of: the asker puts ✅ on a message of the thread; the asker presses "Solved" (Discord forums:
the solved tag); a configured expert replies after the bot refused or someone rated its answer not helpful. The
candidate is the question the bot could not serve (its "gap") and the person's answer after it, with the thread's
link, the author and the date; nothing else about the asker is kept. Drafting is idempotent per answer message, so a
✅ and a "Solved" on one thread draft one candidate. The caller posts `ReviewDesk.review_reply` for a new one.

A thread is read in the platform's order, on the platform's clock alone: the bot stamped its stored replies with
its own clock, so each stands right after the message it answered. A ✅ or "Solved" closes the asker's own question;
an expert's reply, the last question the bot failed before it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from bot.answers.people import People, Person
from storage.answers.lifecycle import TeamAnswers
from storage.answers.model import AnswerDraft, TeamAnswer
from storage.answers.threads import ThreadMessage, read_thread
from storage.db import Database

log = logging.getLogger(__name__)

GAP_KINDS = ("refusal",)  # bot replies that leave a question unanswered (besides any rated not helpful)
MIN_ANSWER_WORDS = 3


class Trigger(StrEnum):
    CHECKMARK = "checkmark"  # the asker put ✅ on a message of the thread
    SOLVED = "solved"  # the asker pressed "Solved", or the Discord forum post got its solved tag
    EXPERT_REPLY = "expert_reply"  # a configured expert replied after a refusal or a 👎


class Skip(StrEnum):
    NOT_ENGAGED = "not_engaged"  # not a thread the bot took part in
    NO_GAP = "no_gap"  # the bot's replies stood: nothing refused or rated not helpful before the answer
    NOT_ASKER = "not_asker"  # ✅ or "Solved" by someone other than the asker
    NOT_EXPERT = "not_expert"  # a reply by someone not configured as an expert
    NO_ANSWER = "no_answer"  # no person's answer after the gap (or the ✅ is on the bot's or the asker's message)
    TOO_SHORT = "too_short"  # fewer than MIN_ANSWER_WORDS words: nothing to quote to the next person


@dataclass(frozen=True, slots=True)
class ThreadPlace:
    """Where a thread is, as a team answer's citation shows it: the channel's name ("" shows its id) and the
    platform's permalink to the thread ("" links the channel)."""

    channel_name: str = ""
    thread_url: str = ""


async def _nowhere() -> ThreadPlace:
    return ThreadPlace()


PlaceLookup = Callable[[], Awaitable[ThreadPlace]]


@dataclass(frozen=True, slots=True)
class Resolution:
    trigger: Trigger
    platform: str
    workspace_id: str
    channel_id: str
    thread_key: str
    by: Person  # who reacted, pressed or replied
    message_id: str | None = None  # the message ✅'d, or the expert's reply
    message: ThreadMessage | None = None  # that message as the platform gave it (the bot may not have stored it)
    place: PlaceLookup = _nowhere  # asked only once an answer is to be drafted: it may call the platform
    question: str | None = None  # the canonical question, when the caller has it


@dataclass(frozen=True, slots=True)
class Picked:
    question: ThreadMessage
    answer: ThreadMessage
    gap: ThreadMessage


@dataclass(frozen=True, slots=True)
class Captured:
    answer: TeamAnswer | None = None
    created: bool = False
    skipped: Skip | None = None


def _is_gap(message: ThreadMessage) -> bool:
    return message.from_bot and (message.reply_kind in GAP_KINDS or message.rated_down)


def _in_thread_order(messages: Sequence[ThreadMessage]) -> list[ThreadMessage]:
    """The thread in the platform's order, on the platform's clock alone. People's messages (and the bot's read back
    from the platform) carry the platform's time; the bot's stored replies carry its own clock, which may run ahead
    of the platform's or behind it, so each is placed by what it answered instead: right after that message (replies
    to one message in the order the bot wrote them). A reply whose message is not in the thread is left out."""
    stamped = sorted((m for m in messages if m.in_reply_to is None), key=lambda m: m.ts)
    replies = sorted((m for m in messages if m.in_reply_to is not None), key=lambda m: m.ts)
    ordered: list[ThreadMessage] = []
    for message in stamped:
        ordered += [message, *(r for r in replies if r.in_reply_to == message.message_id)]
    return ordered


def _asked_before(messages: Sequence[ThreadMessage], place: int) -> ThreadMessage | None:
    """The person's message the bot's reply at `place` answered: the last one before it."""
    return next((m for m in reversed(messages[:place]) if not m.from_bot), None)


def pick(thread: Sequence[ThreadMessage], resolution: Resolution, experts: People) -> Picked | Skip:
    """The gap, its question and the answer a resolution names (pure: the thread as read, no I/O)."""
    if not thread:
        return Skip.NOT_ENGAGED
    given = resolution.message
    if given is not None and all(m.message_id != given.message_id for m in thread):
        thread = [*thread, given]
    messages = _in_thread_order(thread)
    named = next((i for i, m in enumerate(messages) if m.message_id == resolution.message_id), None)
    target = messages[named] if named is not None else None
    failed: list[tuple[int, ThreadMessage]] = []  # the gaps up to the message named, each with its question
    for place, message in enumerate(messages[: None if named is None else named + 1]):
        asked = _asked_before(messages, place) if _is_gap(message) else None
        if asked is not None:
            failed.append((place, asked))
    if not failed:
        return Skip.NO_GAP
    by = resolution.by.user_id
    if resolution.trigger is not Trigger.EXPERT_REPLY:
        # the asker's ✅ or "Solved" is about their own question: where the bot also answered the thread's follow-ups,
        # its refusal of someone's answer, or of another person's question, is not the gap it closes
        failed = [(place, asked) for place, asked in failed if asked.author_id == by] or failed
    place, question = failed[-1]
    gap = messages[place]
    after = [m for m in messages[place + 1 :] if not m.from_bot and m.author_id != question.author_id]
    if resolution.trigger in (Trigger.CHECKMARK, Trigger.SOLVED) and by != question.author_id:
        return Skip.NOT_ASKER
    if resolution.trigger is Trigger.EXPERT_REPLY and not experts.includes(resolution.by):
        return Skip.NOT_EXPERT
    answer: ThreadMessage | None
    if resolution.trigger is Trigger.SOLVED:
        by_experts = [m for m in after if experts.includes(Person(resolution.platform, m.author_id))]
        answer = (by_experts or after)[-1] if after else None
    else:
        answer = target if target is not None and target in after else None
    if answer is None:
        return Skip.NO_ANSWER
    if len(answer.text.split()) < MIN_ANSWER_WORDS:
        return Skip.TOO_SHORT
    return Picked(question, answer, gap)


def channel_link(platform: str, workspace_id: str, channel_id: str, thread_id: str) -> str:
    """A link to the thread when the platform's permalink is not at hand: Discord's message URL; Slack's documented
    `app_redirect` (opens the channel; https://api.slack.com/docs/deep-linking); nothing for the console."""
    if platform == "discord":
        return f"https://discord.com/channels/{workspace_id}/{thread_id or channel_id}"
    if platform == "slack":
        return f"https://slack.com/app_redirect?team={workspace_id}&channel={channel_id}"
    return ""


class Capture:
    def __init__(
        self,
        db: Database,
        answers: TeamAnswers,
        experts: People,
        collection_of: Callable[[str, str, str], tuple[str, ...]],
    ) -> None:
        """`collection_of(platform, workspace, channel)`: the channel's collections (its policy); the candidate
        joins the first, and may rely only on documents the channel can see."""
        self._db = db
        self._answers = answers
        self._experts = experts
        self._collections = collection_of

    def is_expert(self, person: Person) -> bool:
        """Whether a reply by `person` may be drafted (`Trigger.EXPERT_REPLY`)."""
        return self._experts.includes(person)

    async def resolve(self, resolution: Resolution) -> Captured:
        thread = await read_thread(self._db, resolution.thread_key)
        picked = pick(thread, resolution, self._experts)
        if isinstance(picked, Skip):
            log.info("thread resolution not drafted", extra={"trigger": resolution.trigger.value,
                                                              "skip": picked.value})  # fmt: skip
            return Captured(skipped=picked)
        collections = self._collections(resolution.platform, resolution.workspace_id, resolution.channel_id)
        mentions = await self._answers.mentions.resolve(
            text=picked.answer.text, near_chunk_ids=picked.gap.cited_chunks, collections=collections
        )
        root = resolution.thread_key.rsplit(":", 1)[-1]
        place = await resolution.place()
        draft = AnswerDraft(
            question=" ".join((resolution.question or picked.question.text).split()),
            answer=picked.answer.text.strip(),
            platform=resolution.platform,
            workspace_id=resolution.workspace_id,
            channel_id=resolution.channel_id,
            channel_name=place.channel_name,
            thread_key=resolution.thread_key,
            thread_url=place.thread_url
            or channel_link(resolution.platform, resolution.workspace_id, resolution.channel_id, root),
            answer_message_id=picked.answer.message_id,
            author_id=picked.answer.author_id,
            author_name=picked.answer.author_name,
            answered_at=picked.answer.ts,
            collection=collections[0] if collections else "default",
            mentions=mentions,
        )
        answer, created = await self._answers.draft(draft)
        log.info("team answer drafted" if created else "team answer already drafted",
                 extra={"answer": answer.id, "trigger": resolution.trigger.value})  # fmt: skip
        return Captured(answer, created)
