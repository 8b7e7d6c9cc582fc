"""Slack's agent messaging experience through the real adapter (signed HTTP into the bolt app, the durable inbox, the
delivery worker) against the fake Web API on a real socket:

- app_home_opened (Messages tab): suggested prompts from the docs' top sections, a greeting in an empty DM, once;
- app_context_changed: the channel a person looks at travels with their DM questions (the service narrows on it);
- a question's work as a task timeline stream with an agent session (the stop button), the reply in its place;
  where streaming fails, one status message updated in place; never both, never two;
- agent_session_stopped: the asker stops the run and the thread says so; anyone else is told privately;
- the new methods failing with 5xx, `ok:false` and 429.

The event payloads are shaped like Slack's documented examples (the event reference pages named beside each; the
shared AsyncAPI spec predates these events). Every Web API call is checked against the spec and the NEWER_THAN_SPEC
table when the fake closes (conftest).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from adapters.slack.blocks import OPTION_PREFIX, PROGRESS_BLOCK
from adapters.slack.fake_web_api import TEAM, FakeSlackAPI, Message
from adapters.slack.wording import wording
from pipeline.messages import InboundKind
from tests.adapters.slack.conftest import Harness, MakeHarness, SteppingHandler, event_body, mention_event

pytestmark = pytest.mark.integration

MENTION = "<@UBOT0001> how do I pair the remote?"
TOPICS = ["Getting started", "Pairing the remote", "Troubleshooting", "Settings", "Accessibility"]


def home_opened(user: str = "UALICE", channel: str = "DALICE", tab: str = "messages",
                context: dict[str, Any] | None = None) -> dict[str, Any]:
    """docs.slack.dev/reference/events/app_home_opened (the `context` as in @slack/types' AppHomeOpenedEvent)."""
    event: dict[str, Any] = {"type": "app_home_opened", "user": user, "channel": channel,
                             "event_ts": "1515449522.000016", "tab": tab}  # fmt: skip
    if context is not None:
        event["context"] = context
    return event_body(event)


def context_changed(user: str = "UALICE", channel: str = "C1", team: str = TEAM) -> dict[str, Any]:
    """docs.slack.dev/reference/events/app_context_changed (`user`/`channel`: @slack/types' AppContextChangedEvent)."""
    return event_body({"type": "app_context_changed", "user": user, "channel": "DALICE",
                       "context": {"entities": [{"type": "slack#/types/channel_id", "value": channel,
                                                 "team_id": team}]},
                       "event_ts": "1783536983.783769"})  # fmt: skip


def session_stopped(channel: str, thread_ts: str, streams: list[str], user: str = "UALICE") -> dict[str, Any]:
    """docs.slack.dev/reference/events/agent_session_stopped."""
    return event_body({"channel": channel, "event_ts": "1783536983.783769", "streaming_message_ts": streams,
                       "thread_ts": thread_ts, "type": "agent_session_stopped", "user": user})  # fmt: skip


def dm(ts: str, text: str, user: str = "UALICE", channel: str = "DALICE") -> dict[str, Any]:
    return event_body({"type": "message", "user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts,
                       "channel_type": "im"})  # fmt: skip


async def topics(collections: Any, limit: int) -> list[str]:
    return TOPICS[:limit]


def methods(api: FakeSlackAPI, since: int = 0) -> list[str]:
    return [c.method for c in api.calls[since:] if c.method not in ("users.info",)]


async def asked(h: Harness, text: str = MENTION, channel: str = "C1", user: str = "UALICE") -> str:
    root = h.api.seed(channel, text, user=user)
    assert (await h.post_json(mention_event(root, text, channel=channel, user=user))).status == 200
    await h.settle()
    return root


def task_titles(message: Message) -> dict[str, tuple[str, str | None]]:
    return {t["title"]: (t["status"], t.get("output")) for t in message.tasks.values()}


# -- the Messages tab --------------------------------------------------------------------------------------------------


async def test_opening_the_messages_tab_suggests_the_docs_top_sections_and_greets_once(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness()
    h.adapter.topics = topics
    for _ in range(2):
        assert (await h.post_json(home_opened())).status == 200
        await h.settle()
    prompts = h.api.prompts[("DALICE", None)]  # the Messages tab: no thread_ts (it would fail silently)
    assert prompts["title"] == "Ask me about the docs, for example:"
    assert [p["title"] for p in prompts["prompts"]] == TOPICS[:4]  # up to four
    assert prompts["prompts"][1]["message"] == "What do the docs say about Pairing the remote?"
    [greeting] = h.api.bot_messages("DALICE")
    assert greeting.thread_ts is None and "each question gets its own thread" in greeting.text
    assert len(h.api.calls_to("assistant.threads.setSuggestedPrompts")) == 2  # each opening sets them again
    assert await h.delivery.inbox.counts() == {}  # nothing a person wrote: nothing stored


async def test_the_greeting_is_in_the_persons_language_and_defaults_without_docs(make_harness: MakeHarness) -> None:
    h = await make_harness()
    await h.post_json(home_opened(user="UBOB", channel="DBOB"))  # Bob's Slack locale is de-DE; no topics source
    await h.settle()
    prompts = h.api.prompts[("DBOB", None)]
    assert prompts["title"] == "Frag mich zur Dokumentation, zum Beispiel:"
    assert prompts["prompts"][0]["message"] == "Wobei kannst du mir helfen?"
    assert "Hallo!" in h.api.bot_messages("DBOB")[0].text


async def test_a_dm_with_history_gets_no_greeting_and_the_home_tab_nothing(make_harness: MakeHarness) -> None:
    h = await make_harness()
    h.api.seed("DALICE", "an earlier question", user="UALICE")
    await h.post_json(home_opened())
    await h.post_json(home_opened(user="UBOB", channel="DBOB", tab="home"))
    await h.settle()
    assert h.api.bot_messages() == []
    assert list(h.api.prompts) == [("DALICE", None)]


async def test_topics_that_would_ping_are_made_inert(make_harness: MakeHarness) -> None:
    h = await make_harness()

    async def loud(collections: Any, limit: int) -> list[str]:
        return ["<!channel> outage", "@here help"]

    h.adapter.topics = loud
    await h.post_json(home_opened())
    await h.settle()
    shown = json.dumps(h.api.prompts[("DALICE", None)], ensure_ascii=False)
    assert "<!channel>" not in shown and "@here" not in shown


@pytest.mark.parametrize(
    ("failure", "prompts_set"),
    [({"status": 500, "error": "internal_error", "times": 3}, False),  # 5xx, retried twice by slack_sdk, then given up
     ({"status": 200, "error": "invalid_arguments"}, False),  # Slack's HTTP-200 ok:false
     ({"status": 429, "error": "ratelimited", "retry_after": 0}, True)],  # waited out and retried
    ids=["5xx", "ok-false", "429"],
)
async def test_suggested_prompts_failing_never_blocks_the_greeting(
    make_harness: MakeHarness, failure: dict[str, Any], prompts_set: bool
) -> None:
    h = await make_harness()
    h.api.fail_next("assistant.threads.setSuggestedPrompts", **failure)
    assert (await h.post_json(home_opened())).status == 200
    await h.settle()
    assert (("DALICE", None) in h.api.prompts) is prompts_set
    assert len(h.api.bot_messages("DALICE")) == 1  # greeted all the same


@pytest.mark.parametrize("failure", [{"status": 500, "error": "internal_error", "times": 3},
                                     {"status": 200, "error": "channel_not_found"}], ids=["5xx", "ok-false"])
async def test_a_failed_history_read_greets_at_the_next_opening_instead(
    make_harness: MakeHarness, failure: dict[str, Any]
) -> None:
    h = await make_harness()
    h.api.fail_next("conversations.history", **failure)
    await h.post_json(home_opened())
    await h.settle()
    assert h.api.bot_messages("DALICE") == []
    await h.post_json(home_opened())
    await h.settle()
    assert len(h.api.bot_messages("DALICE")) == 1


# -- the viewed channel ------------------------------------------------------------------------------------------------


class Recording:
    def __init__(self) -> None:
        self.accepted: list[Any] = []

    async def accept(self, inbound: Any, ref: Any) -> bool:
        self.accepted.append(inbound)
        return True


async def test_the_viewed_channel_travels_with_dm_questions(make_harness: MakeHarness) -> None:
    h = await make_harness()
    h.adapter.intake = intake = Recording()
    await h.post_json(context_changed(channel="CPAYMENTS"))
    await h.post_json(dm(h.api.next_ts(), "how do refunds work?"))
    await h.post_json(context_changed(channel="CFOREIGN", team="T_OTHER"))  # another workspace: not taken
    await h.post_json(dm(h.api.next_ts(), "and chargebacks?"))
    await h.post_json(event_body({"type": "app_context_changed", "user": "UALICE", "channel": "DALICE",
                                  "context": {}, "event_ts": "1.0"}))  # fmt: skip  # nothing in view
    await h.post_json(dm(h.api.next_ts(), "and invoices?"))
    await h.post_json(home_opened(context={"entities": [{"type": "slack#/types/message_context", "team_id": TEAM,
                                                         "value": {"channel_id": "CBILLING", "message_ts": "1.2"}}]}))
    await h.post_json(dm(h.api.next_ts(), "and the billing run?"))
    await h.post_json(mention_event(h.api.seed("C1", MENTION), MENTION))  # not a DM: no context
    await h.settle()
    assert [i.context_channel_id for i in intake.accepted] == ["CPAYMENTS", None, None, "CBILLING", None]
    assert {i.kind for i in intake.accepted} == {InboundKind.MESSAGE}


async def test_the_assistant_view_context_is_taken_too(make_harness: MakeHarness) -> None:
    """An app still on assistant_view: assistant_thread_context_changed (docs.slack.dev/reference/events/
    assistant_thread_context_changed) tells the channel."""
    h = await make_harness()
    h.adapter.intake = intake = Recording()
    await h.post_json(event_body({"type": "assistant_thread_context_changed", "event_ts": "17298244.022142",
                                  "assistant_thread": {"user_id": "UALICE", "channel_id": "DALICE",
                                                       "thread_ts": "1729999327.187299",
                                                       "context": {"channel_id": "CPAYMENTS", "team_id": TEAM,
                                                                   "enterprise_id": None}}}))  # fmt: skip
    await h.post_json(event_body({"type": "message", "user": "UALICE", "text": "refunds?", "ts": h.api.next_ts(),
                                  "channel": "DALICE", "thread_ts": "1729999327.187299", "channel_type": "im"}))
    await h.settle()
    assert [i.context_channel_id for i in intake.accepted] == ["CPAYMENTS"]


# -- the work shown while a question runs ------------------------------------------------------------------------------


async def test_a_question_shows_its_steps_as_a_timeline_then_the_answer_in_their_place(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(steps=True)
    root = await asked(h)
    [message] = h.api.bot_messages("C1", thread_ts=root)  # one bot message: the stream, updated into the answer
    assert "pair" in message.text and any(b.get("block_id") == "docbot_feedback" for b in message.blocks)
    called = methods(h.api)  # the steps go out in one append or a few, as they come within the interval
    assert set(called[:2]) == {"agents.sessions.setStatus", "chat.startStream"}  # the stop button beside the stream
    assert called[-2:] == ["chat.stopStream", "chat.update"] and set(called[2:-2]) <= {"chat.appendStream"}
    [start] = h.api.calls_to("chat.startStream")
    assert (start.args["thread_ts"], start.args["task_display_mode"]) == (root, "timeline")
    assert (start.args["recipient_team_id"], start.args["recipient_user_id"]) == (TEAM, "UALICE")
    assert start.args["chunks"][0]["blocks"][0]["block_id"] == PROGRESS_BLOCK  # found again after a crash
    [update] = h.api.calls_to("chat.update")
    assert update.args["ts"] == h.api.calls_to("chat.stopStream")[0].args["ts"] == message.ts
    assert task_titles(message) == {
        "Reading your question": ("complete", "Language: en"),
        "Understanding what you ask": ("complete", None),
        "Searching the docs": ("complete", "3 sections found"),
        "Writing the answer": ("complete", None),
        "Checking the answer against the sources": ("complete", "Every point has a source"),
    }
    session = h.api.sessions[("C1", root)]
    assert (session["status"], session["initiator"], session["title"]) == ("active", "UALICE",
                                                                            "how do I pair the remote?")


async def test_a_spanish_speaker_sees_the_work_and_the_choices_in_spanish(make_harness: MakeHarness) -> None:
    """The timeline speaks the asker's Slack locale (Carla's is es-ES; the question's language is one of the steps,
    not known when the timeline starts); the buttons beside the choices speak the clarification's language."""
    h = await make_harness(steps=True)
    h.handler.script = lambda inbound: dataclasses.replace(h.handler.clarification(inbound), language="es")
    root = await asked(h, "<@UBOT0001> el mando no funciona", user="UCARLA")
    [message] = h.api.bot_messages("C1", thread_ts=root)  # the stream, updated into the clarification
    es, en = wording("es"), wording("en")
    shown = task_titles(message)
    assert list(shown) == [es.task_read, es.task_understand, es.task_search, es.task_write, es.task_check]
    assert shown[es.task_search] == ("complete", es.found_sections.format(count=3))
    assert shown[es.task_check] == ("complete", es.checked["approve"])
    assert set(shown).isdisjoint({en.task_read, en.task_understand, en.task_search, en.task_write, en.task_check})
    options = [b for b in message.blocks if str(b.get("block_id", "")).startswith(OPTION_PREFIX)]
    assert [o["text"]["text"] for o in options] == ["*1.* Remote", "*2.* TV"]
    assert {o["accessory"]["text"]["text"] for o in options} == {es.choose} != {en.choose}


async def test_where_streaming_is_refused_one_status_message_shows_the_steps(make_harness: MakeHarness) -> None:
    h = await make_harness(steps=True)
    h.api.streaming_allowed = False  # Slack answers chat.startStream with ok:false
    root = await asked(h)
    [message] = h.api.bot_messages("C1", thread_ts=root)
    assert "pair" in message.text and not message.tasks
    [status] = h.api.calls_to("chat.postMessage")
    assert status.args["blocks"][0]["block_id"] == PROGRESS_BLOCK
    updates = h.api.calls_to("chat.update")
    assert [u.args["ts"] for u in updates] == [message.ts] * len(updates)  # in place: the status, then the answer
    shown = [status.args, *(u.args for u in updates[:-1])]  # the status message as posted, then as updated
    steps = json.dumps(shown[-1]["blocks"], ensure_ascii=False)  # the last state before the answer replaced it
    assert ":white_check_mark: Searching the docs — 3 sections found" in steps
    assert h.api.sessions[("C1", root)]["status"] == "active"


@pytest.mark.parametrize(
    ("failure", "shown"),
    [({"status": 429, "error": "ratelimited", "retry_after": 0}, "stream"),  # nothing done: retried at once
     ({"status": 500, "error": "internal_error"}, "status"),  # uncertain: not there, so a status message
     ({"status": 500, "error": "internal_error", "after": True}, "adopted"),  # uncertain: there, used in place
     ({"status": 502, "html": True}, "status")],
    ids=["429", "5xx-nothing-made", "5xx-after-making-it", "5xx-html"],
)
async def test_start_stream_faults_never_leave_two_messages(
    make_harness: MakeHarness, failure: dict[str, Any], shown: str
) -> None:
    h = await make_harness(steps=True)
    h.api.fail_next("chat.startStream", **failure)
    root = await asked(h)
    [message] = h.api.bot_messages("C1", thread_ts=root)  # never both, never two
    assert "pair" in message.text
    assert len(h.api.calls_to("chat.startStream", ok_only=False)) == (2 if shown == "stream" else 1)
    posted = h.api.calls_to("chat.postMessage")
    assert len(posted) == (1 if shown == "status" else 0)
    if shown == "adopted":  # the stream Slack made before failing carries our marker: it is updated in place
        assert h.api.calls_to("conversations.replies") and h.api.calls_to("chat.update")[-1].args["ts"] == message.ts


@pytest.mark.parametrize(
    "failure",
    [{"status": 200, "error": "internal_error", "retry_after": None}, {"status": 500, "html": True}],
    ids=["internal_error", "5xx-html"],
)
async def test_a_status_message_posted_despite_its_error_is_what_the_answer_replaces(
    make_harness: MakeHarness, failure: dict[str, Any]
) -> None:
    """Streaming refused, and the status message's post answered with an error after Slack made it: the display
    shows nothing more, and the reply reads the thread first and takes that message over (never both)."""
    h = await make_harness(steps=True)
    h.api.streaming_allowed = False
    h.api.fail_next("chat.postMessage", after=True, **failure)
    root = await asked(h)
    [message] = h.api.bot_messages("C1", thread_ts=root)
    assert "pair" in message.text and not any(b.get("block_id") == PROGRESS_BLOCK for b in message.blocks)
    assert h.api.calls_to("conversations.replies") and h.api.calls_to("chat.update")[-1].args["ts"] == message.ts
    assert len(h.api.calls_to("chat.postMessage", ok_only=False)) == 1  # the status message's, nothing posted since


async def test_when_it_cannot_be_known_whether_a_stream_exists_nothing_more_is_shown(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(steps=True)
    h.api.fail_next("chat.startStream", mode="reset")
    h.api.fail_next("conversations.replies", status=500, html=True, times=3)
    root = await asked(h)
    [message] = h.api.bot_messages("C1", thread_ts=root)
    assert "pair" in message.text and h.api.calls_to("chat.postMessage")[0].args["text"] == message.text


@pytest.mark.parametrize("method", ["chat.appendStream", "chat.stopStream"])
@pytest.mark.parametrize("failure", [{"status": 500, "error": "internal_error", "times": 3},
                                     {"status": 200, "error": "message_not_in_streaming_state"}],
                         ids=["5xx", "ok-false"])  # fmt: skip
async def test_a_stream_failing_midway_is_still_replaced_by_the_answer(
    make_harness: MakeHarness, method: str, failure: dict[str, Any]
) -> None:
    h = await make_harness(steps=True)
    h.api.fail_next(method, **failure)
    root = await asked(h)
    [message] = h.api.bot_messages("C1", thread_ts=root)
    assert "pair" in message.text and message.ts == h.api.calls_to("chat.startStream")[0].args.get("ts", message.ts)
    assert h.api.calls_to("chat.update")[-1].args["ts"] == message.ts
    assert h.api.sessions[("C1", root)]["status"] == "active"  # moved away from processing all the same


@pytest.mark.parametrize("failure", [{"status": 200, "error": "not_allowed"}, {"status": 500, "error": "fatal_error",
                                                                              "times": 3}], ids=["ok-false", "5xx"])
async def test_an_app_without_agent_sessions_still_streams_its_work(
    make_harness: MakeHarness, failure: dict[str, Any]
) -> None:
    h = await make_harness(steps=True)
    h.api.fail_next("agents.sessions.setStatus", **failure)
    root = await asked(h)
    [message] = h.api.bot_messages("C1", thread_ts=root)
    assert message.tasks and "pair" in message.text
    assert ("C1", root) not in h.api.sessions and "session_status" not in h.api.calls_to("chat.stopStream")[0].args


async def test_a_dm_question_is_a_thread_root_with_its_work_in_that_thread(make_harness: MakeHarness) -> None:
    """The agent messaging experience: each message in the Messages tab is its own thread root."""
    h = await make_harness(steps=True)
    ts = h.api.seed("DALICE", "how do I pair the remote?", user="UALICE")
    await h.post_json(dm(ts, "how do I pair the remote?"))
    await h.settle()
    [inbound] = h.handler.messages
    assert (inbound.thread_id, inbound.thread_key) == (None, f"slack:{TEAM}:DALICE:{ts}")
    [message] = h.api.bot_messages("DALICE")
    assert message.thread_ts == ts and message.tasks and h.api.sessions[("DALICE", ts)]["status"] == "active"


# -- the stop button ---------------------------------------------------------------------------------------------------


async def running(h: Harness, text: str = MENTION) -> tuple[str, asyncio.Task[None], SteppingHandler]:
    """A question held mid-run (after its search), its work shown."""
    handler = h.handler
    assert isinstance(handler, SteppingHandler)
    handler.gate = asyncio.Event()
    root = h.api.seed("C1", text, user="UALICE")
    await h.post_json(mention_event(root, text))
    settling = asyncio.create_task(h.settle())
    await asyncio.wait_for(handler.reached.wait(), 10)
    await until(lambda: any(m.tasks for m in h.api.bot_messages("C1", thread_ts=root)))  # its work is shown
    return root, settling, handler


async def until(condition: Callable[[], bool | Awaitable[bool]], timeout_s: float = 10.0) -> None:
    async with asyncio.timeout(timeout_s):
        while True:
            done = condition()
            if done if isinstance(done, bool) else await done:
                return
            await asyncio.sleep(0.01)


async def test_the_asker_stops_the_run_and_the_thread_says_so(make_harness: MakeHarness) -> None:
    h = await make_harness(steps=True)
    root, settling, handler = await running(h)
    stopped = h.api.press_stop("C1", root)  # Slack stops the stream and tells the app
    assert (await h.post_json(session_stopped("C1", root, stopped))).status == 200
    await asyncio.wait_for(settling, 10)
    [message] = h.api.bot_messages("C1", thread_ts=root)
    assert message.ts == stopped[0] and message.text.startswith("Stopped, as you asked.")
    assert "pair" not in message.text  # the answer was never made
    assert h.api.sessions[("C1", root)]["status"] == "active"  # moved away from processing by docbot
    assert await h.delivery.inbox.counts() == {"done": 1}  # settled: not retried, not answered later
    handler.gate.set()  # type: ignore[union-attr]
    await h.settle()
    assert len(h.api.bot_messages("C1", thread_ts=root)) == 1


async def test_someone_else_cannot_stop_it_and_is_told_privately(make_harness: MakeHarness) -> None:
    h = await make_harness(steps=True)
    root, settling, handler = await running(h)
    await h.post_json(session_stopped("C1", root, [], user="UBOB"))
    await until(lambda: bool(h.api.ephemerals()))
    [note] = h.api.ephemerals()
    assert (note.ephemeral_to, note.text) == ("UBOB", "Nur die Person, die gefragt hat, kann diese Antwort anhalten.")
    handler.gate.set()  # type: ignore[union-attr]
    await asyncio.wait_for(settling, 10)
    [message] = h.api.bot_messages("C1", thread_ts=root)
    assert "pair" in message.text  # answered as usual


async def test_a_stop_for_nothing_running_changes_nothing(make_harness: MakeHarness) -> None:
    h = await make_harness(steps=True)
    root = await asked(h)
    before = len(h.api.calls)
    assert (await h.post_json(session_stopped("C1", root, []))).status == 200
    await h.settle()
    assert methods(h.api, before) == []


async def test_a_stop_with_the_session_api_down_still_says_so_in_the_thread(make_harness: MakeHarness) -> None:
    h = await make_harness(steps=True)
    root, settling, _ = await running(h)
    h.api.fail_next("agents.sessions.setStatus", status=500, error="internal_error", times=3)
    stopped = h.api.press_stop("C1", root)
    await h.post_json(session_stopped("C1", root, stopped))
    await asyncio.wait_for(settling, 10)
    [message] = h.api.bot_messages("C1", thread_ts=root)
    assert message.text.startswith("Stopped, as you asked.")
