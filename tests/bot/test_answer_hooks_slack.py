"""Team answers on Slack end to end (`bot.answers.hooks`): the app as `build_app` wires it over the fixture manual,
the real Slack adapter over signed HTTP, the delivery's inbox and outbox, and the recording fake Web API.

A question is refused, a configured expert answers in the thread, the asker puts ✅ on it, the candidate is posted
for review in the review channel, a non-maintainer's press changes nothing, a maintainer approves it, and the same
question in another thread gets the expert's answer cited with author and date. Rejected and unapproved candidates
are never quoted; a failed review post is delivered later, once; a duplicated reaction is handled once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.events import to_datetime
from adapters.slack.fake_web_api import BOT_ID, TEAM, FakeSlackAPI, Message
from bot.app import App
from bot.slack_demo import SECRET, SlackScenario
from storage.answers.model import AnswerStatus
from storage.answers.threads import read_thread
from storage.outbox import Outbox
from tests.adapters.slack.contract import assert_calls_valid
from tests.bot.test_team_answers import CEC, CEC_ANSWER, KETTLE

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REVIEW = "CREVIEW"
PEOPLE = {"UALICE": "alice", "UBOB": "bob", "UERIN": "erin", "UMAX": "max", "UCARL": "carl", "UDORA": "dora",
          "UFRED": "fred", "UGWEN": "gwen"}
KETTLE_ANSWER = "Only through the Home Assistant bridge: add the kettle there and pick the routine KETTLE-OFF-5521."


@pytest.fixture
async def world(make_app: Callable[..., Any], tmp_path: Path) -> AsyncIterator[tuple[App, SlackScenario]]:
    api = FakeSlackAPI(users={u: {"name": n, "profile": {"display_name": n.title()}} for u, n in PEOPLE.items()},
                       page_size=100)  # fmt: skip
    api.usergroups.update({"SEXPERTS": ["UFRED"], "SLEADS": ["UGWEN"]})
    api.channel_names["C1"] = "help"
    # the fake's ts count on from a fixed moment (2026-09-21), not on the bot's clock that stamps its replies: capture
    # must never compare the two
    await api.start()
    app: App = await make_app(
        slack_bot_token="xoxb-test", slack_signing_secret=SECRET, slack_api_url=api.base_url,
        docs_base_url="https://docs.example.com/", user_rate_limit="100/minute",
        answers_experts=("slack:UERIN", "slack:group:SEXPERTS"),
        answers_maintainers=("slack:UMAX", "slack:group:SLEADS"),
        answers_review_channel=f"slack:{TEAM}:{REVIEW}",
    )  # fmt: skip
    outbox = Outbox(app.db, base_backoff_s=0.05, max_backoff_s=0.2)  # retries in test time
    scenario = SlackScenario(api, app.settings, app.service, app.db, team=app.team, outbox=outbox)
    await scenario.start()
    yield app, scenario
    await scenario.close()
    await api.close()


def review_messages(api: FakeSlackAPI) -> list[Message]:
    return [m for m in api.messages[REVIEW] if m.bot_id == BOT_ID and not m.thread_ts]


def seen(message: Message) -> str:
    return f"{message.text}\n{json.dumps(message.blocks)}"


async def refused(scenario: SlackScenario, app: App, user: str, question: str) -> str:
    """`user` asks in a new thread; the bot's reply is a refusal. The thread's root ts."""
    root, _ = await scenario.say(user, question)
    thread = await read_thread(app.db, f"slack:{TEAM}:C1:{root}")
    assert [m.reply_kind for m in thread if m.from_bot] == ["refusal"], thread
    return root


async def until(condition: Callable[[], Any], scenario: SlackScenario, *, timeout_s: float = 30.0) -> None:
    """Sweep the outbox (as the worker does) until `condition()` holds."""
    async with asyncio.timeout(timeout_s):
        while not condition():
            await scenario.delivery.sweep()
            await asyncio.sleep(0.05)


async def test_an_experts_answer_is_reviewed_approved_and_cited_in_another_thread(
    world: tuple[App, SlackScenario],
) -> None:
    app, scenario = world
    api = scenario.api
    root = await refused(scenario, app, "UALICE", CEC)

    # the expert answers in the thread: not taken as a question (no reply), drafted, posted for review once
    expert_ts, _ = await scenario.say("UERIN", CEC_ANSWER, thread_ts=root, mention=False)
    assert len(scenario.thread(root)) == 1
    await scenario.react("UALICE", expert_ts)  # the asker's ✅ on it: the same candidate, not a second one
    (review,) = review_messages(api)
    assert "Anynet+" in seen(review) and "@Erin" in seen(review)
    (candidate,) = await app.team.answers.store.awaiting_review()
    assert candidate.answer_message_id == expert_ts and candidate.question == CEC
    assert candidate.thread_url == f"https://fake.slack.com/archives/C1/p{root.replace('.', '')}"  # chat.getPermalink

    # unapproved: never quoted
    assert "Anynet+" not in seen(await asked(scenario, "UCARL", CEC))

    # a press by someone who is not a maintainer changes nothing (and says so in the review's thread)
    await scenario.press("UBOB", review, "Approve")
    assert (await app.team.answers.store.get(candidate.id)).status is AnswerStatus.DRAFT  # type: ignore[union-attr]
    assert any("maintainers" in m.text for m in api.messages[REVIEW] if m.thread_ts == review.ts or m.ephemeral_to)
    assert "Anynet+" not in seen(await asked(scenario, "UCARL", CEC))

    # the maintainer approves: the review message shows it, and the next asker gets the expert's answer, cited
    await scenario.press("UMAX", review, "Approve")
    assert (await app.team.answers.store.get(candidate.id)).status is AnswerStatus.APPROVED  # type: ignore[union-attr]
    assert "Approved by @" in seen(next(m for m in api.messages[REVIEW] if m.ts == review.ts))
    answer = await asked(scenario, "UDORA", CEC)
    day = f"{to_datetime(expert_ts):%Y-%m-%d}"
    assert "Anynet+" in seen(answer) and f"answered by @Erin in #help on {day}" in seen(answer), seen(answer)
    assert len(review_messages(api)) == 1
    assert_calls_valid(api.calls)


async def asked(scenario: SlackScenario, user: str, question: str) -> Message:
    root, _ = await scenario.say(user, question)
    return scenario.thread(root)[-1]


async def test_a_checkmark_drafts_a_non_experts_answer_once_and_a_rejected_one_is_never_quoted(
    world: tuple[App, SlackScenario],
) -> None:
    app, scenario = world
    api = scenario.api
    root = await refused(scenario, app, "UALICE", KETTLE)
    # bob is no expert: his reply is answered as a follow-up like any other and drafts nothing by itself
    bob_ts, _ = await scenario.say("UBOB", KETTLE_ANSWER, thread_ts=root, mention=False)
    assert review_messages(api) == []

    # the same reaction delivered twice (Slack's retry of one event): stored once, read back once, one candidate
    assert await scenario.react("UALICE", bob_ts, event_id="EvCHECK") == 200
    assert await scenario.react("UALICE", bob_ts, event_id="EvCHECK") == 200
    read_back = [c for c in api.calls_to("conversations.replies") if c.args.get("ts") == bob_ts]
    assert len(read_back) == 1
    (review,) = review_messages(api)
    (candidate,) = await app.team.answers.store.awaiting_review()
    assert candidate.answer_message_id == bob_ts and candidate.author_name == "Bob"

    # a ✅ by someone other than the asker drafts nothing; neither does another emoji
    await scenario.react("UCARL", bob_ts)
    await scenario.react("UALICE", bob_ts, reaction="tada")
    assert len(review_messages(api)) == 1
    # the thread's name and link are asked of Slack only for the answer drafted, not for the ✅ that drafted nothing
    assert len(api.calls_to("chat.getPermalink")) == len(api.calls_to("conversations.info")) == 1

    await scenario.press("UMAX", review, "Reject")
    assert (await app.team.answers.store.get(candidate.id)).status is AnswerStatus.REJECTED  # type: ignore[union-attr]
    assert "KETTLE-OFF-5521" not in seen(await asked(scenario, "UDORA", KETTLE))


@pytest.mark.parametrize("failure", [{"status": 503, "error": "service_unavailable"},
                                     {"status": 200, "error": "internal_error"}])  # fmt: skip
async def test_a_failed_review_post_is_delivered_later_exactly_once(
    world: tuple[App, SlackScenario], failure: dict[str, Any]
) -> None:
    app, scenario = world
    api = scenario.api
    root = await refused(scenario, app, "UALICE", CEC)
    api.fail_next("chat.postMessage", **failure)  # the review post is the event's only post
    await scenario.say("UERIN", CEC_ANSWER, thread_ts=root, mention=False)
    failed = [c for c in api.calls_to("chat.postMessage", ok_only=False) if c.args.get("channel") == REVIEW]
    assert failed and review_messages(api) == []
    await until(lambda: len(review_messages(api)) == 1, scenario)
    for _ in range(3):  # more sweeps post nothing more
        await scenario.delivery.sweep()
    assert len(review_messages(api)) == 1
    assert (await scenario.delivery.outbox.undelivered()).get("pending", 0) == 0


async def test_edit_opens_an_editor_whose_text_is_approved(world: tuple[App, SlackScenario]) -> None:
    app, scenario = world
    api = scenario.api
    root = await refused(scenario, app, "UALICE", CEC)
    await scenario.say("UERIN", CEC_ANSWER, thread_ts=root, mention=False)
    (review,) = review_messages(api)
    await scenario.press("UMAX", review, "Edit")
    (_, view), = api.views
    assert view["blocks"][0]["element"]["initial_value"] == CEC_ANSWER
    edited = CEC_ANSWER.replace("restart the hub", "restart the hub and the TV (model year 2024 only)")
    assert await scenario.submit_editor("UMAX", view, edited) == 200
    (candidate,) = await app.team.answers.store.list(statuses=[AnswerStatus.APPROVED])
    assert candidate.answer == edited
    assert "model year 2024 only" in seen(await asked(scenario, "UDORA", CEC))


async def test_experts_and_maintainers_given_as_user_groups(world: tuple[App, SlackScenario]) -> None:
    app, scenario = world
    api = scenario.api
    root = await refused(scenario, app, "UALICE", CEC)
    await scenario.say("UFRED", CEC_ANSWER, thread_ts=root, mention=False)  # fred is in the experts' group
    assert len(scenario.thread(root)) == 1
    (review,) = review_messages(api)
    await scenario.press("UGWEN", review, "Approve")  # gwen is in the maintainers' group
    (approved,) = await app.team.answers.store.list(statuses=[AnswerStatus.APPROVED])
    assert approved.author_name == "Fred"
    assert {c.args.get("usergroup") for c in api.calls_to("usergroups.users.list")} <= {"SEXPERTS", "SLEADS"}


async def test_a_user_group_lookup_that_fails_is_asked_again_at_the_next_event(
    world: tuple[App, SlackScenario],
) -> None:
    app, scenario = world
    api = scenario.api
    root = await refused(scenario, app, "UALICE", CEC)
    api.fail_next("usergroups.users.list", status=500, error="internal_error", times=3)  # past the client's retries
    # fred is not known as an expert while Slack cannot say: his reply is a follow-up like any other, answered
    fred_ts, _ = await scenario.say("UFRED", CEC_ANSWER, thread_ts=root, mention=False)
    assert len(scenario.thread(root)) == 2 and review_messages(api) == []
    # nothing is lost: the asker's ✅ on it drafts it, and the group is read again (not kept while it failed)
    await scenario.react("UALICE", fred_ts)
    assert len(review_messages(api)) == 1
    lookups = [c.status for c in api.calls_to("usergroups.users.list", ok_only=False)
               if c.args.get("usergroup") == "SEXPERTS"]  # fmt: skip
    assert lookups[:3] == [500, 500, 500] and lookups[3:] == [200]


@pytest.mark.parametrize("failure", [{"status": 500, "error": "internal_error", "times": 3},  # past the retries
                                     {"status": 200, "error": "fatal_error"}])  # fmt: skip
async def test_a_channel_name_or_link_that_cannot_be_read_falls_back_and_is_asked_again(
    world: tuple[App, SlackScenario], failure: dict[str, Any]
) -> None:
    app, scenario = world
    api = scenario.api
    # conversations.info fails: the candidate is still drafted once, its citation falls back to the channel's id,
    # and the name is asked again at the next capture (a failure is not kept)
    api.fail_next("conversations.info", **failure)
    api.fail_next("chat.getPermalink", **failure)
    root = await refused(scenario, app, "UALICE", CEC)
    await scenario.say("UERIN", CEC_ANSWER, thread_ts=root, mention=False)
    (review,) = review_messages(api)
    (candidate,) = await app.team.answers.store.awaiting_review()
    assert candidate.channel_name == "" and candidate.thread_url.startswith("https://slack.com/app_redirect?")
    await scenario.press("UMAX", review, "Approve")
    day = f"{to_datetime(root):%Y-%m-%d}"
    assert f"in #C1 on {day}" in seen(await asked(scenario, "UDORA", CEC))

    other = await refused(scenario, app, "UCARL", KETTLE)
    await scenario.say("UERIN", KETTLE_ANSWER, thread_ts=other, mention=False)
    (kettle,) = await app.team.answers.store.awaiting_review()
    assert kettle.channel_name == "help" and kettle.thread_url.startswith("https://fake.slack.com/archives/C1/")
    assert [c.status for c in api.calls_to("conversations.info", ok_only=False)][-1] == 200
