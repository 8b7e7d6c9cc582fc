"""The review of team answers as the service will call it (`ReviewDesk`) and drafting from resolved threads
(`Capture`), on the app `build_app` wires, with threads made by the real service: the whole loop from a refused
question to the expert's answer cited in another thread."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

import pytest

from bot.answers.capture import Resolution, Skip, ThreadPlace, Trigger, pick
from bot.answers.people import People, Person
from bot.answers.review import Verdict
from bot.app import App
from pipeline.messages import Reply, ReplyKind
from pipeline.types import ActionKind
from storage.answers.model import AnswerDraft, AnswerStatus
from storage.answers.threads import ThreadMessage, read_thread
from tests.bot.conftest import inbound
from tests.bot.test_team_answers import KETTLE, KETTLE_ANSWER

pytestmark = pytest.mark.integration

CEC = "Does the hub work with HDMI-CEC on 2024 Samsung TVs?"
EXPERT_TEXT = ("Yes, the 2024 models do: turn on Anynet+ (HDMI-CEC) under Settings, General, External Device "
               "Manager first, then restart the hub.")  # fmt: skip
MAINTAINERS = ("slack:user:U-BOB", "discord:group:R-DOCS")
BOB = Person("slack", "U-BOB", "bob")
_people = count(1)


def app_settings(**extra: Any) -> dict[str, Any]:
    return {"answers_maintainers": MAINTAINERS, "answers_experts": ("slack:user:U-ALICE",), **extra}


async def ask(app: App, text: str, *, thread: str | None = None, user: str | None = None,
              message_id: str | None = None, at: datetime | None = None, mentioned: bool = True) -> Reply:  # fmt: skip
    """`at`: the platform's time of the message (the bot stamps its reply with its own clock)."""
    message = inbound(text, thread=thread, user=user or f"U{next(_people)}", message_id=message_id,
                      mentioned=mentioned)  # fmt: skip
    reply = await app.service.handle_message(replace(message, ts=at) if at is not None else message)
    assert reply is not None
    return reply


def expert_reply(thread_root: str, *, minutes: int = 5, text: str = EXPERT_TEXT, author: str = "U-ALICE",
                 message_id: str = "1800000000.000900") -> ThreadMessage:  # fmt: skip
    return ThreadMessage(message_id, author, "alice", text, datetime.now(UTC) + timedelta(minutes=minutes))


def resolution(trigger: Trigger, root: str, by: Person, message: ThreadMessage | None = None) -> Resolution:
    return Resolution(
        trigger=trigger, platform="slack", workspace_id="T1", channel_id="C1",
        thread_key=f"slack:T1:C1:{root}", by=by, message_id=message.message_id if message else None,
        message=message, place=in_help,
    )  # fmt: skip


async def in_help() -> ThreadPlace:
    return ThreadPlace(channel_name="help")


async def refused_thread(app: App, asker: str = "U-ASKER") -> str:
    root = f"{1750000000 + next(_people)}.000100"
    reply = await ask(app, CEC, user=asker, message_id=root)
    assert reply.kind is ReplyKind.REFUSAL, reply.text
    return root


async def test_the_loop_refused_expert_answers_checkmark_review_approve_cited_in_another_thread(
    make_app: Callable[..., Any],
) -> None:
    app: App = await make_app(**app_settings())
    root = await refused_thread(app)
    answer_message = expert_reply(root)

    captured = await app.team.capture.resolve(
        resolution(Trigger.CHECKMARK, root, Person("slack", "U-ASKER"), answer_message)
    )
    assert captured.created and captured.answer is not None
    candidate = captured.answer
    assert (candidate.question, candidate.answer, candidate.author_name) == (CEC, EXPERT_TEXT, "alice")
    assert candidate.answered_at == answer_message.ts and candidate.status is AnswerStatus.DRAFT
    assert candidate.thread_url == "https://slack.com/app_redirect?team=T1&channel=C1"
    assert candidate.mentions, "the sections the refusal offered are what the answer was given near"
    assert "Anynet+" not in (await ask(app, CEC)).text  # a draft is never quoted

    review = await app.team.desk.review_reply(candidate)
    assert [(a.label, a.kind) for a in review.actions] == [
        ("Approve", ActionKind.APPROVE_ANSWER), ("Edit", ActionKind.EDIT_ANSWER), ("Reject", ActionKind.REJECT_ANSWER)
    ]
    assert CEC in review.text and "> Yes, the 2024 models do" in review.text and "@alice" in review.text
    approve = review.actions[0].id

    refused = await app.team.desk.press(approve, Person("slack", "U-MALLORY", "mallory"))
    assert refused is not None and refused.verdict is Verdict.NOT_MAINTAINER
    assert not refused.as_action_outcome().accepted
    assert (await app.team.answers.store.get(candidate.id)).status is AnswerStatus.DRAFT  # type: ignore[union-attr]

    done = await app.team.desk.press(approve, BOB)
    assert done is not None and done.verdict is Verdict.APPROVED and done.label == "Approved by @bob"
    outcome = done.as_action_outcome()
    assert outcome.accepted and outcome.marks_message and outcome.chosen_label == "Approved by @bob"

    again = await ask(app, CEC)  # another thread, another person
    assert again.kind is ReplyKind.ANSWER and "Anynet+" in again.text
    assert "answered by @alice in #help on " + f"{answer_message.ts:%Y-%m-%d}" in [c.title for c in again.citations]


async def test_a_second_resolution_of_the_same_answer_drafts_nothing_new(make_app: Callable[..., Any]) -> None:
    app: App = await make_app(**app_settings())
    root = await refused_thread(app)
    message = expert_reply(root)
    first = await app.team.capture.resolve(resolution(Trigger.EXPERT_REPLY, root, Person("slack", "U-ALICE"), message))
    checkmark = await app.team.capture.resolve(resolution(Trigger.CHECKMARK, root, Person("slack", "U-ASKER"), message))
    solved = await app.team.capture.resolve(resolution(Trigger.SOLVED, root, Person("slack", "U-ASKER"), message))
    assert first.created and not checkmark.created and not solved.created
    assert first.answer is not None and {checkmark.answer.id, solved.answer.id} == {first.answer.id}  # type: ignore[union-attr]


async def test_resolutions_that_draft_nothing_say_why(make_app: Callable[..., Any]) -> None:
    app: App = await make_app(**app_settings())
    root = await refused_thread(app)
    message = expert_reply(root)
    by_other = await app.team.capture.resolve(resolution(Trigger.CHECKMARK, root, Person("slack", "U-X"), message))
    assert by_other.skipped is Skip.NOT_ASKER
    not_expert = await app.team.capture.resolve(resolution(Trigger.EXPERT_REPLY, root, Person("slack", "U-X"),
                                                           expert_reply(root, author="U-X")))  # fmt: skip
    assert not_expert.skipped is Skip.NOT_EXPERT
    too_short = expert_reply(root, text="yes", message_id="m-short")
    alice = Person("slack", "U-ALICE")
    short = await app.team.capture.resolve(resolution(Trigger.EXPERT_REPLY, root, alice, too_short))
    assert short.skipped is Skip.TOO_SHORT
    unknown = await app.team.capture.resolve(resolution(Trigger.SOLVED, "no-such-thread", Person("slack", "U-A")))
    assert unknown.skipped is Skip.NOT_ENGAGED

    answered_root = f"{1760000000 + next(_people)}.000100"
    assert (await ask(app, "How do I connect Bluetooth headphones?", user="U-ASKER2",
                      message_id=answered_root)).kind is ReplyKind.ANSWER  # fmt: skip
    fine = await app.team.capture.resolve(resolution(Trigger.CHECKMARK, answered_root, Person("slack", "U-ASKER2"),
                                                     expert_reply(answered_root)))  # fmt: skip
    assert fine.skipped is Skip.NO_GAP
    assert await app.team.answers.store.list() == []


async def test_an_answer_rated_not_helpful_is_a_gap_an_expert_can_fill(make_app: Callable[..., Any]) -> None:
    app: App = await make_app(**app_settings())
    root = f"{1770000000 + next(_people)}.000100"
    reply = await ask(app, "How do I connect Bluetooth headphones?", user="U-ASKER", message_id=root)
    assert reply.kind is ReplyKind.ANSWER
    message = expert_reply(root, text="For two pairs of headphones use the Multi-Output option under Settings.")
    before = await app.team.capture.resolve(resolution(Trigger.EXPERT_REPLY, root, Person("slack", "U-ALICE"),
                                                       message))  # fmt: skip
    assert before.skipped is Skip.NO_GAP
    (not_helpful,) = [a for a in reply.actions if a.kind is ActionKind.NOT_HELPFUL]
    press = inbound("", thread=root, user="U-ASKER", action_id=not_helpful.id)
    assert (await app.service.handle_action(press)).accepted
    after = await app.team.capture.resolve(resolution(Trigger.EXPERT_REPLY, root, Person("slack", "U-ALICE"),
                                                      message))  # fmt: skip
    assert after.created and after.answer is not None
    assert after.answer.question == "How do I connect Bluetooth headphones?"


@pytest.mark.parametrize("bot_ahead", [timedelta(seconds=30), timedelta(seconds=-30)], ids=["bot-ahead", "bot-behind"])
async def test_each_resolution_drafts_the_question_it_answers_whichever_clock_runs_ahead(
    make_app: Callable[..., Any], bot_ahead: timedelta
) -> None:
    """Ann and then Ben ask in one thread and the bot refuses both. Alice, an expert, answers Ben; Cat answers Ann,
    and the bot takes Cat's answer for a follow-up and refuses it too. The platform stamps the people's messages a
    second apart; the bot stamps its replies with its own clock, `bot_ahead` of the platform's."""
    app: App = await make_app(**app_settings())
    platform = datetime.now(UTC) - bot_ahead  # the platform's clock at the start, a skew from the bot's
    root, ben, alice, cat = (f"{1780000000 + next(_people)}.000100" for _ in range(4))
    assert (await ask(app, CEC, user="U-ANN", message_id=root, at=platform)).kind is ReplyKind.REFUSAL
    assert (await ask(app, KETTLE, thread=root, user="U-BEN", message_id=ben, mentioned=False,
                      at=platform + timedelta(seconds=1))).kind is ReplyKind.REFUSAL  # fmt: skip
    alices = ThreadMessage(alice, "U-ALICE", "alice", KETTLE_ANSWER, platform + timedelta(seconds=2))  # never stored
    assert (await ask(app, EXPERT_TEXT, thread=root, user="U-CAT", message_id=cat, mentioned=False,
                      at=platform + timedelta(seconds=3))).kind is ReplyKind.REFUSAL  # fmt: skip
    cats = ThreadMessage(cat, "U-CAT", "cat", EXPERT_TEXT, platform + timedelta(seconds=3))  # as the platform reads it

    # Ann's ✅ on Cat's answer; then Alice's reply, handled after Cat's (delivered again after a failed inbox write)
    ann = Person("slack", "U-ANN")
    checkmark, solved = resolution(Trigger.CHECKMARK, root, ann, cats), resolution(Trigger.SOLVED, root, ann)
    expert = resolution(Trigger.EXPERT_REPLY, root, Person("slack", "U-ALICE"), alices)
    drafted = [await app.team.capture.resolve(resolved) for resolved in (checkmark, expert)]
    assert [(d.answer.question, d.answer.answer, d.answer.answer_message_id) if d.answer else d.skipped
            for d in drafted] == [(CEC, EXPERT_TEXT, cat), (KETTLE, KETTLE_ANSWER, alice)]  # fmt: skip
    assert all(d.created for d in drafted)

    thread = await read_thread(app.db, f"slack:T1:C1:{root}")
    experts = People.parse(["slack:user:U-ALICE"])
    for resolved, asked, answered in ((checkmark, root, cat), (solved, root, cat), (expert, ben, alice)):
        picked = pick(thread, resolved, experts)
        assert not isinstance(picked, Skip)
        assert (picked.question.message_id, picked.answer.message_id) == (asked, answered)
        assert picked.gap.reply_kind == "refusal" and picked.gap.in_reply_to == asked  # the bot's reply to it


async def draft_one(app: App) -> Any:
    answer, _ = await app.team.answers.draft(AnswerDraft(
        question=CEC, answer=EXPERT_TEXT, platform="discord", workspace_id="G1", channel_id="C1",
        thread_key="discord:G1:C1:T1", answer_message_id="m1", author_id="A1", author_name="alice",
        answered_at=datetime(2026, 11, 20, tzinfo=UTC), collection="default",
    ))  # fmt: skip
    return answer


async def test_a_maintainer_role_may_approve_and_a_stale_button_does_nothing(make_app: Callable[..., Any]) -> None:
    app: App = await make_app(**app_settings())
    answer = await draft_one(app)
    review = await app.team.desk.review_reply(answer)
    approve, _, reject = (a.id for a in review.actions)
    docs_role = Person("discord", "D-CAROL", "carol", frozenset({"R-OTHER", "R-DOCS"}))
    assert (await app.team.desk.press(approve, Person("discord", "D-DAN", "dan", frozenset({"R-OTHER"})))
            ).verdict is Verdict.NOT_MAINTAINER  # type: ignore[union-attr]  # fmt: skip
    done = await app.team.desk.press(approve, docs_role)
    assert done is not None and done.verdict is Verdict.APPROVED
    stale = await app.team.desk.press(reject, BOB)  # shown before the approval: it must not undo it
    assert stale is not None and stale.verdict is Verdict.STALE and not stale.as_action_outcome().accepted
    assert (await app.team.answers.store.get(answer.id)).status is AnswerStatus.APPROVED  # type: ignore[union-attr]
    repeat = await app.team.desk.press(approve, BOB)
    assert repeat is not None and repeat.verdict is Verdict.ALREADY
    assert await app.team.desk.press("not-a-review-button", BOB) is None


async def test_edit_asks_for_the_text_then_posts_the_new_text_with_fresh_buttons(make_app: Callable[..., Any]) -> None:
    app: App = await make_app(**app_settings())
    answer = await draft_one(app)
    review = await app.team.desk.review_reply(answer)
    approve, edit, _ = (a.id for a in review.actions)
    asked = await app.team.desk.press(edit, BOB)
    assert asked is not None and asked.verdict is Verdict.EDIT_REQUESTED
    assert asked.answer is not None and asked.answer.answer == EXPERT_TEXT
    assert not asked.as_action_outcome().marks_message  # the buttons stay until the edit is submitted
    better = "Yes: Settings > General > Anynet+ (HDMI-CEC), then restart."
    edited = await app.team.desk.press(edit, BOB, edit_text=better)
    assert edited is not None and edited.verdict is Verdict.EDITED and edited.reply is not None
    assert "Settings > General > Anynet+" in edited.reply.text and len(edited.reply.actions) == 3
    assert edited.as_action_outcome().reply is edited.reply
    stale = await app.team.desk.press(approve, BOB)
    assert stale is not None and stale.verdict is Verdict.STALE
    fresh = await app.team.desk.press(edited.reply.actions[0].id, BOB)
    assert fresh is not None and fresh.verdict is Verdict.APPROVED
    assert fresh.answer is not None and fresh.answer.captured_answer == EXPERT_TEXT


def test_pick_prefers_the_experts_message_on_solved_and_ignores_messages_before_the_question() -> None:
    t0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    thread = [
        ThreadMessage("chat", "U-EVE", "eve", "Has anyone here got one of the 2024 TVs yet?", t0 - timedelta(hours=1)),
        ThreadMessage("q", "U-ASK", "asker", "Does the hub do HDMI-CEC with 2024 TVs?", t0),
        ThreadMessage("early", "U-EVE", "eve", "I think it does something like that maybe", t0 + timedelta(minutes=1)),
        ThreadMessage("bot:r1", "docbot", "docbot", "The documentation doesn't say.", t0 + timedelta(minutes=2),
                      from_bot=True, reply_kind="refusal", in_reply_to="q"),
        ThreadMessage("guess", "U-EVE", "eve", "try turning it off and on again", t0 + timedelta(minutes=3)),
        ThreadMessage("expert", "U-ALICE", "alice", "Yes: turn on Anynet+ first.", t0 + timedelta(minutes=4)),
        ThreadMessage("thanks", "U-EVE", "eve", "oh nice, thanks a lot alice", t0 + timedelta(minutes=5)),
    ]
    experts = People.parse(["slack:user:U-ALICE"])

    def solved(by: str, message_id: str | None = None) -> Resolution:
        return Resolution(Trigger.SOLVED if message_id is None else Trigger.CHECKMARK, "slack", "T1", "C1", "k",
                          Person("slack", by), message_id=message_id)  # fmt: skip

    picked = pick(thread, solved("U-ASK"), experts)
    assert not isinstance(picked, Skip) and picked.answer.message_id == "expert" and picked.question.message_id == "q"
    without_experts = pick(thread, solved("U-ASK"), People())
    assert not isinstance(without_experts, Skip) and without_experts.answer.message_id == "thanks"
    assert pick(thread, solved("U-ASK", "chat"), experts) is Skip.NO_GAP  # before the question: no gap yet
    # written before the refusal showed, but after the question it answers: the bot's clock (the refusal's time)
    # is never compared with the platform's
    early = pick(thread, solved("U-ASK", "early"), experts)
    assert not isinstance(early, Skip) and (early.question.message_id, early.answer.message_id) == ("q", "early")
    assert pick(thread, solved("U-ASK", "bot:r1"), experts) is Skip.NO_ANSWER  # a ✅ on the bot's own reply
    checked = pick(thread, solved("U-ASK", "guess"), experts)
    assert not isinstance(checked, Skip) and checked.answer.message_id == "guess"  # the asker's ✅ decides


def test_solved_closes_the_askers_question_when_the_bot_also_answered_a_reply() -> None:
    t0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    thread = [
        ThreadMessage("q", "U-ASK", "asker", "Does the hub do HDMI-CEC with 2024 TVs?", t0),
        ThreadMessage("bot:r1", "docbot", "docbot", "The documentation doesn't say.", t0 + timedelta(minutes=1),
                      from_bot=True, reply_kind="refusal", in_reply_to="q"),
        ThreadMessage("bob", "U-BOB", "bob", "Yes: turn on Anynet+ first, then restart.", t0 + timedelta(minutes=2)),
        # the bot took bob's reply for a follow-up and refused it too
        ThreadMessage("bot:r2", "docbot", "docbot", "The documentation doesn't say.", t0 + timedelta(minutes=3),
                      from_bot=True, reply_kind="refusal", in_reply_to="bob"),
    ]
    resolution = Resolution(Trigger.SOLVED, "discord", "G1", "F1", "k", Person("discord", "U-ASK"))
    picked = pick(thread, resolution, People())
    assert not isinstance(picked, Skip) and (picked.question.message_id, picked.answer.message_id) == ("q", "bob")
    by_bob = Resolution(Trigger.SOLVED, "discord", "G1", "F1", "k", Person("discord", "U-BOB"))
    assert pick(thread, by_bob, People()) is Skip.NO_ANSWER  # bob closing "his" question: nobody answered it


def test_the_people_settings_are_checked_when_read() -> None:
    from pydantic import ValidationError

    from bot.settings import Settings

    good = Settings(_env_file=None, answers_maintainers=("slack:user:U1", "discord:group:42", "slack:U2"),
                    answers_review_channel="slack:T1:C-review")  # fmt: skip
    people = People.parse(good.answers_maintainers)
    assert people.includes(Person("slack", "U2")) and people.includes(Person("discord", "7", groups=frozenset({"42"})))
    assert not people.includes(Person("discord", "U1")) and people.group_ids("discord") == {"42"}
    for bad in ({"answers_maintainers": ("U123",)}, {"answers_experts": ("slack:role:R1",)},
                {"answers_review_channel": "C-review"}):  # fmt: skip
        with pytest.raises(ValidationError):
            Settings(_env_file=None, **bad)


@pytest.mark.parametrize("typed", ["slack:user:U1, discord:group:42", '["slack:user:U1", "discord:group:42"]'])
def test_the_people_lists_are_read_from_the_environment_with_commas_or_as_json(
    typed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.settings import Settings

    monkeypatch.setenv("DOCBOT_ANSWERS_MAINTAINERS", typed)
    monkeypatch.setenv("DOCBOT_ANSWERS_EXPERTS", "")  # empty: unset, so the maintainers are the experts
    settings = Settings(_env_file=None)
    assert settings.answers_maintainers == ("slack:user:U1", "discord:group:42") and settings.answers_experts == ()


async def test_the_hourly_upkeep_expires_old_answers_and_repairs_the_index(make_app: Callable[..., Any]) -> None:
    from bot.delivery import Delivery
    from bot.jobs import standard_jobs
    from bot.jobs.answers import tend_team_answers
    from storage.answers.model import Reviewer

    app: App = await make_app(**app_settings(answers_ttl_days=30))
    answer = await draft_one(app)
    step = await app.team.answers.approve(answer.id, Reviewer("cli:op", "op"))
    assert step.answer is not None and step.answer.expires_at is not None
    forgotten = await app.team.answers.draft(AnswerDraft(
        question="Is the remote backlit?", answer="No, but its keys glow faintly after a press.", platform="slack",
        workspace_id="T1", channel_id="C1", thread_key="slack:T1:C1:9", answer_message_id="m9", author_id="A1",
        author_name="alice", answered_at=datetime(2026, 11, 20, tzinfo=UTC), collection="default",
    ))  # fmt: skip
    await app.team.answers.store.approve(forgotten[0].id, Reviewer("cli:op", "op"), expires_at=None)  # not indexed

    upkeep = await tend_team_answers(app.team.answers, step.answer.expires_at + timedelta(minutes=1))
    assert (upkeep.expired_by_age, upkeep.expired_by_documents, upkeep.published, upkeep.withdrawn) == (1, 0, 1, 0)
    assert (await app.team.answers.store.get(answer.id)).status is AnswerStatus.EXPIRED  # type: ignore[union-attr]
    assert "keys glow faintly" in (await ask(app, "Is the remote backlit?")).text
    jobs = standard_jobs(db=app.db, delivery=Delivery(app.db, app.service, {}, "w"), team=app.team)
    assert "team-answers" in {job.job_id for job in jobs}

