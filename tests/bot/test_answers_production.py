"""Issue 14, on the production path: the app built from settings over the fixture manual, questions through the
conversation service (and the terminal chat, Slack and Discord renderers), real stores, real search, real detector.

Refusals list only the sections reasonably close to the question; every notice is in the language of the message
it answers (two consecutive messages in different languages per notice kind); a language without templates gets
English with one line saying so; a vague message in a thread clarifies within its topic; choice labels carry
their page.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from discord import ui as discord_ui
from rich.console import Console

from adapters.console import ConsoleChat
from adapters.discord.render import render_reply as discord_render
from adapters.slack.blocks import ACTION_PREFIX, SECTIONS_BLOCK
from adapters.slack.blocks import render_reply as slack_render
from bot.app import App
from bot.delivery import Delivery, DeliveryConfig
from pipeline.locales import UNSUPPORTED_LANGUAGE, texts
from pipeline.locales.unsupported import IN_THEIR_LANGUAGE
from pipeline.messages import Inbound, Reply, ReplyKind, ThreadRef
from pipeline.types import ActionKind, Role
from storage.inbox import Inbox
from storage.outbox import Outbox
from tests.bot.conftest import inbound
from tests.integration.dbfixtures import Clock

pytestmark = pytest.mark.integration


async def ask(app: App, text: str, thread: Inbound | None = None) -> Reply:
    reply = await app.service.handle_message(inbound(text, thread=thread.message_id if thread else None))
    assert reply is not None
    return reply


def no_list(reply: Reply) -> bool:
    return not reply.citations and all(texts(code).closest_sections not in reply.text for code in ("en", "es"))


# -- 1. off-topic refusals: the close sections, with their page, as links; or the plain refusal --------------------


@pytest.mark.parametrize(
    ("question", "language"),
    [("What's the capital of France?", "en"), ("¿Cuál es la capital de Francia?", "es")],
)
async def test_an_off_topic_question_far_from_every_section_is_refused_plainly(
    app: App, question: str, language: str
) -> None:
    reply = await ask(app, question)
    assert reply.kind is ReplyKind.REFUSAL and reply.language == language
    assert reply.text in (texts(language).refusal["out_of_scope"], texts(language).no_coverage), reply.text
    assert no_list(reply), reply.text  # no unrelated "closest" sections


@pytest.mark.parametrize(
    ("question", "language"),
    [("who won the football world cup on the TV?", "en"), ("¿Quién ganó el mundial de fútbol en la TV?", "es")],
)
async def test_an_off_topic_question_near_a_section_lists_it_with_its_page_as_a_link(
    app: App, question: str, language: str
) -> None:
    reply = await ask(app, question)
    assert reply.kind is ReplyKind.REFUSAL and reply.language == language
    assert texts(language).closest_sections in reply.text, reply.text
    assert reply.citations and len(reply.citations) <= 3
    for citation in reply.citations:
        assert "tv" in " ".join((*citation.crumbs, citation.title)).casefold()  # near: it shares the question's topic
        page_and_section = " › ".join([*citation.crumbs[:-1][-1:], citation.title])
        assert f"- **{page_and_section}** [{citation.number}]" in reply.text  # "Error messages › No picture on the TV"
    url = reply.citations[0].url
    slack = slack_render(reply)[-1]
    assert f"<{url}|[1]>" in str(slack.blocks)  # Slack: the [1] marker links to the section
    (sections,) = [b for b in slack.blocks if b.get("block_id") == SECTIONS_BLOCK]
    assert [e["url"] for e in sections["elements"]] == [c.url for c in reply.citations]  # and a link button each
    assert not any(e["action_id"].startswith(ACTION_PREFIX) for e in sections["elements"])  # never a stored action
    discord = discord_render(reply, asker_id=1, sources_heading=texts(language).sources_heading)[-1]
    assert discord.embed is not None and f"]({url})" in (discord.embed.description or "")  # Discord: masked link
    assert discord.view is not None
    links = [b for b in discord.view.children if isinstance(b, discord_ui.Button) and b.url]
    assert [b.url for b in links] == [c.url for c in reply.citations]  # link buttons under the feedback buttons


# -- 2. notices in the language of the message they answer ---------------------------------------------------------


async def thread_ask(app: App, text: str, root: Inbound | None = None) -> tuple[Reply | None, Inbound]:
    """Ask `text` in the thread of `root` (a new thread when None); the message and the root."""
    message = inbound(text, thread=root.message_id if root else None)
    return await app.service.handle_message(message), root or message


async def test_the_too_long_notice_is_in_the_language_of_the_long_message(app: App) -> None:
    first, root = await thread_ask(app, "Wie tausche ich die Batterien der Fernbedienung aus?")
    assert first is not None and first.language == "de"
    long_english = "How do I pair the remote with the hub when the light keeps blinking? " * 80
    second, _ = await thread_ask(app, long_english, root)
    assert second is not None and (second.kind, second.reason) == (ReplyKind.NOTICE, "question_too_long")
    limit = app.settings.max_question_chars
    assert (second.language, second.text) == ("en", texts("en").question_too_long.format(limit=limit))


async def test_the_rate_limit_notice_follows_the_message_not_the_thread(make_app: Callable[..., Any]) -> None:
    app: App = await make_app(user_rate_limit="1/minute")
    first, root = await thread_ask(app, "How do I pair the remote with the hub?")
    assert first is not None and first.kind is ReplyKind.ANSWER and first.language == "en"
    second, _ = await thread_ask(app, "Wie tausche ich die Batterien der Fernbedienung aus?", root)
    assert second is not None and (second.kind, second.reason) == (ReplyKind.NOTICE, "rate_limited")
    assert (second.language, second.text) == ("de", texts("de").rate_limited)


@pytest.mark.parametrize("held", [Role.SEARCH, Role.LANG])
async def test_the_busy_notice_is_in_the_language_of_the_message_it_answers(
    make_app: Callable[..., Any], held: Role
) -> None:
    """Held at search, the lang role has run; held at lang, the service finds the language itself."""
    app: App = await make_app(role_limits={held.value: 1}, role_queue_limit=0)
    first, root = await thread_ask(app, "How do I replace the batteries of the remote control?")
    assert first is not None and first.kind is ReplyKind.ANSWER and first.language == "en"
    async with app.runner.limits()[held].slot():  # the role's only slot is taken and nobody may wait
        second, _ = await thread_ask(app, "Wie tausche ich die Batterien der Fernbedienung aus?", root)
    assert second is not None and second.kind is ReplyKind.NOTICE and second.reason == "busy"
    assert (second.language, second.text) == ("de", texts("de").busy)


async def test_the_timeout_notice_is_in_the_language_of_the_message_it_answers(make_app: Callable[..., Any]) -> None:
    app: App = await make_app()
    first, _ = await thread_ask(app, "How do I replace the batteries of the remote control?")
    assert first is not None and first.language == "en"
    slow: App = await make_app(question_deadline_s=1e-9)  # the deadline has passed before the first role starts
    second = await slow.service.handle_message(inbound("Comment remplacer les piles de la télécommande ?"))
    assert second is not None and second.kind is ReplyKind.NOTICE and second.reason == "timeout"
    assert (second.language, second.text) == ("fr", texts("fr").timeout)


class _AnswersFirstOnly:
    """The real service for the first message; every later one fails (the model server is down, say)."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.answered = 0

    async def handle_message(self, message: Inbound, fetcher: object = None) -> Reply | None:
        if self.answered:
            raise RuntimeError("down")
        self.answered += 1
        return await self.app.service.handle_message(message)

    async def handle_action(self, message: Inbound) -> Any:
        return await self.app.service.handle_action(message)


class _Sink:
    def __init__(self) -> None:
        self.posts: list[Reply] = []

    async def post(self, ref: ThreadRef, reply: Reply) -> str:
        self.posts.append(reply)
        return f"m{len(self.posts)}"


async def test_the_apology_is_in_the_language_of_the_message_that_could_not_be_answered(app: App) -> None:
    clock, sink = Clock(), _Sink()
    delivery = Delivery(  # as App.serve wires it: the apology's language comes from the service
        app.db,
        _AnswersFirstOnly(app),
        {"slack": sink},
        "w1",
        language_for=app.service.language_of,
        config=DeliveryConfig(lease_s=30, heartbeat_s=5, poll_s=0.02),
        inbox=Inbox(app.db, max_attempts=2, base_backoff_s=1, now=clock),
        outbox=Outbox(app.db, max_attempts=3, base_backoff_s=1, now=clock),
    )
    first = inbound("¿Cómo cambio las pilas del mando a distancia?")
    ref = ThreadRef(first.platform, first.workspace_id, first.channel_id, first.message_id)
    await delivery.accept(first, ref)
    await delivery.process_once()
    assert sink.posts[-1].language == "es"
    second = inbound("How do I pair the remote with the hub?", thread=first.message_id)
    await delivery.accept(second, ref)
    for _ in range(2):
        await delivery.process_once()
        clock.advance(10)
    apology = sink.posts[-1]
    assert apology.reason == "answer_failed" and (apology.language, apology.text) == ("en", texts("en").failure)
    assert apology.actions[0].label == texts("en").retry_label


async def test_a_language_without_templates_gets_english_with_a_line_saying_so_then_the_next_message_its_own(
    app: App,
) -> None:
    first, root = await thread_ask(app, "How do I pair the remote with the hub?")
    assert first is not None and first.language == "en" and UNSUPPORTED_LANGUAGE not in first.text
    arabic, _ = await thread_ask(app, "كيف أقوم بإقران جهاز التحكم عن بعد مع docbot؟", root)
    assert arabic is not None and arabic.language == "ar"
    lines = arabic.text.splitlines()
    assert lines[:2] == [UNSUPPORTED_LANGUAGE, IN_THEIR_LANGUAGE["ar"]]  # said once, in English and in Arabic
    assert arabic.text.count(UNSUPPORTED_LANGUAGE) == 1
    framing = {texts("en").answer_lead_in, texts("en").no_coverage, *texts("en").clarify.values()}
    openings = (texts("en").no_coverage, texts("en").docs_dont_say.split("{", 1)[0])  # refusals open with these
    assert any(line in framing or line.startswith(openings) for line in lines[2:]), arabic.text
    german, _ = await thread_ask(app, "Wie tausche ich die Batterien der Fernbedienung aus?", root)
    assert german is not None and german.language == "de" and UNSUPPORTED_LANGUAGE not in german.text
    assert german.text.startswith(texts("de").answer_lead_in)


async def test_a_notice_to_a_message_in_a_language_without_templates_says_so(make_app: Callable[..., Any]) -> None:
    app: App = await make_app(user_rate_limit="1/minute")
    first, root = await thread_ask(app, "Wie tausche ich die Batterien der Fernbedienung aus?")
    assert first is not None and first.language == "de"
    second, _ = await thread_ask(app, "كيف أقوم بإقران جهاز التحكم عن بعد؟", root)
    assert second is not None and (second.kind, second.reason) == (ReplyKind.NOTICE, "rate_limited")
    assert second.text.splitlines() == [
        UNSUPPORTED_LANGUAGE, IN_THEIR_LANGUAGE["ar"], "", texts("en").rate_limited
    ]  # fmt: skip


# -- 4. the observed conversation items, re-checked in the terminal chat -----------------------------------------


def chat(app: App) -> ConsoleChat:
    return ConsoleChat(app.service, console=Console(file=io.StringIO(), width=120))


async def test_it_doesnt_work_in_a_thread_offers_the_threads_sections(app: App) -> None:
    terminal = chat(app)
    first = await terminal.ask("How do I replace the remote batteries?")
    assert first is not None and first.kind is ReplyKind.ANSWER
    vague = await terminal.ask("it doesn't work")
    assert vague is not None and vague.kind is ReplyKind.CLARIFICATION
    topics = [a.label for a in vague.actions if a.kind is ActionKind.SEARCH]
    assert topics and all("remote" in label.casefold() for label in topics[:2]), topics


async def test_a_new_question_while_a_clarification_is_open_is_a_new_question(app: App) -> None:
    terminal = chat(app)
    asked = await terminal.ask("it doesn't work")
    assert asked is not None and asked.kind is ReplyKind.CLARIFICATION
    new = await terminal.ask("How do I replace the remote batteries?")
    assert new is not None and new.kind is ReplyKind.ANSWER
    assert "batter" in new.text.casefold() and "remote" in new.citations[0].url


async def test_clarification_choices_carry_their_page(app: App) -> None:
    terminal = chat(app)
    asked = await terminal.ask("it doesn't work")
    assert asked is not None and asked.kind is ReplyKind.CLARIFICATION
    topics = [a.label for a in asked.actions if a.kind is ActionKind.SEARCH]
    assert topics and all(" › " in label and len(label) <= 75 for label in topics), topics


async def test_a_regenerate_round_quotes_something_else(app: App) -> None:
    """The quality role asks once to regenerate (as it does for an untraceable answer): the offline response must
    not return the same answer."""
    quality = app.runner._agents[Role.QUALITY]  # the app's own quality agent, wrapped
    seen: list[str] = []

    class RegenerateOnce:
        role: ClassVar[Role] = Role.QUALITY

        async def run(self, payload: Any, context: Any) -> Any:
            result = await quality.run(payload, context)
            if not seen and payload.response:
                seen.append(payload.response)
                from pipeline.envelope import AgentResult
                from pipeline.types import QualityDecision

                return AgentResult(payload.evolve(quality_decision=QualityDecision.REGENERATE), "regenerate (test)")
            return result

    app.runner._agents[Role.QUALITY] = RegenerateOnce()
    reply = await ask(app, "How do I replace the remote batteries?")
    assert seen and reply.kind is ReplyKind.ANSWER
    assert reply.text != seen[0]
