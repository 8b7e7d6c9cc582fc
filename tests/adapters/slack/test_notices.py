"""Notices the Slack side sends (issue 28, item 6): a rate-limit notice goes to the asker only; /ask in a channel the
bot is not a member of is answered privately through the command's response_url with how to invite it (it was
dropped silently); a refused /ask is told in the language of the question, not the asker's locale or English."""

from __future__ import annotations

import pytest

from bot.app import asker_language
from pipeline.envelope import Context
from pipeline.locales import texts
from pipeline.messages import Inbound, Reply, ReplyKind
from tests.adapters.slack.conftest import MakeHarness, mention_event
from tests.adapters.slack.test_commands_and_buttons import ask_form

pytestmark = pytest.mark.integration

GERMAN = "Wie verbinde ich die Fernbedienung mit dem Fernseher, wenn die Lampe am Gerät rot blinkt? "
ENGLISH = "How do I pair the remote with the TV when the light on the box keeps blinking red? "


async def detected_language(text: str) -> str | None:
    return await asker_language()(text[:1000], Context())


async def test_a_rate_limit_notice_goes_to_the_asker_only(make_harness: MakeHarness) -> None:
    h = await make_harness()

    def limited(inbound: Inbound) -> Reply:
        return Reply(ReplyKind.NOTICE, texts("en").rate_limited, "en", inbound.thread_key, reason="rate_limited")

    h.handler.script = limited
    ts = h.api.seed("C1", "<@UBOT0001> again?", user="UALICE")
    await h.post_json(mention_event(ts, "<@UBOT0001> again?"))
    await h.settle()
    await h.delivered()
    assert h.api.bot_messages() == []  # nothing public: no notice, no placeholder left
    [notice] = h.api.ephemerals()
    assert notice.ephemeral_to == "UALICE" and notice.text == texts("en").rate_limited


async def test_ask_where_the_bot_is_not_a_member_answers_privately_how_to_invite_it(
    make_harness: MakeHarness,
) -> None:
    h = await make_harness(language_of=detected_language)
    h.api.not_member.add("CNOT")
    form = {**ask_form(ENGLISH, channel="CNOT"), "response_url": h.api.response_url("abc")}
    status, _ = await h.post_form(form)
    assert status == 200  # stored and acknowledged: whether the bot can post there is known only when it tries
    await h.settle()
    await h.delivered()
    [note] = h.api.responses
    assert note["response_type"] == "ephemeral" and "/invite @docbot" in note["text"]
    assert note["text"] == texts("en").invite_needed.format(command="/invite", bot="docbot")
    assert h.handler.messages == [] and h.api.bot_messages() == []
    assert await h.delivery.inbox.counts() == {"done": 1}  # settled: not retried, no apology queued
    assert await h.delivery.outbox.counts() == {}


async def test_the_invitation_is_in_the_language_of_the_question(make_harness: MakeHarness) -> None:
    h = await make_harness(language_of=detected_language)
    h.api.not_member.add("CNOT")
    await h.post_form({**ask_form(GERMAN, channel="CNOT"), "response_url": h.api.response_url()})
    await h.settle()
    [note] = h.api.responses
    assert note["text"] == texts("de").invite_needed.format(command="/invite", bot="docbot")


async def test_a_response_url_on_another_host_is_not_followed(make_harness: MakeHarness) -> None:
    h = await make_harness(language_of=detected_language)
    h.api.not_member.add("CNOT")
    await h.post_form({**ask_form(ENGLISH, channel="CNOT"), "response_url": "http://169.254.169.254/latest"})
    await h.settle()
    assert h.api.responses == [] and await h.delivery.inbox.counts() == {"done": 1}


@pytest.mark.parametrize(("question", "language"), [(GERMAN, "de"), (ENGLISH, "en")])
async def test_a_too_long_ask_is_refused_in_the_language_of_the_question(
    make_harness: MakeHarness, question: str, language: str
) -> None:
    h = await make_harness(language_of=detected_language)
    text = question * 80  # ~6,000 characters
    status, body = await h.post_form(ask_form(text, user="UBOB"))  # UBOB's Slack locale is de-DE
    assert status == 200
    assert texts(language).question_too_long.format(limit=4000) in body
    assert h.api.calls == [] and await h.delivery.inbox.counts() == {}
