"""The answerability decision through the app as `build_app` wires it (issue 15): a question whose document was
removed is refused instead of answered with nearby quotes, and in LLM mode the response model's typed
`insufficient` ends in the same refusal ("the docs don't say" with the closest sections), through the real SDK
against the scripted OpenAI-compatible server."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bench.emanual_data import session_embedder
from bench.fakes.openai_server import Request, ScriptedOpenAI, Step, json_reply, plausible_model, schema_name
from bot.app import App, build_app
from bot.settings import Settings
from pipeline.envelope import Context, Payload
from pipeline.locales import texts
from pipeline.result import PipelineResult, ResultKind
from pipeline.types import AnswerabilityReason
from tests.bot.conftest import MANUAL

pytestmark = pytest.mark.integration

BASE = "https://docs.example.com/"
GONE = "How do I delete my voice history?"  # answered only by privacy.md, "Deleting your voice history"


@pytest.fixture
async def manual(tmp_path: Path) -> AsyncIterator[tuple[Path, list[App]]]:
    """A private copy of the fixture manual (so a file can be removed from it) and the apps built on it."""
    folder = tmp_path / "manual"
    shutil.copytree(MANUAL, folder)
    apps: list[App] = []
    yield folder, apps
    for app in apps:
        await app.close()


async def started(folder: Path, apps: list[App], **settings: Any) -> App:
    # the bundled e5 (memoised on disk): the hashing stand-in finds too little for the question to reach the decision
    app = await build_app(Settings(_env_file=None, data_dir=folder.parent / "data", **settings),
                          embedder=session_embedder())  # fmt: skip
    apps.append(app)
    await app.ingest([str(folder)], base_url=BASE)
    await app.reload_search()
    return app


async def ask(app: App, question: str, number: int) -> PipelineResult:
    return await app.runner.run(
        conversation_id=f"c{number}", message_id=f"m{number}", payload=Payload(text=question),
        context=Context(docs_language=app.settings.docs_language),
    )  # fmt: skip


def is_docs_dont_say(result: PipelineResult, question: str) -> bool:
    return (
        (result.kind, result.reason) == (ResultKind.REFUSAL, "no_coverage")
        and result.text.startswith(texts("en").docs_dont_say.format(question=question))
        and texts("en").answer_lead_in not in result.text
        and not any(line.startswith(">") for line in result.text.splitlines())  # no quote shown as the answer
    )


async def test_a_question_whose_only_document_was_removed_is_refused_not_answered_with_nearby_quotes(
    manual: tuple[Path, list[App]],
) -> None:
    folder, apps = manual
    app = await started(folder, apps)
    before = await ask(app, GONE, 1)
    assert before.kind is ResultKind.ANSWER and before.sources[0].title == "Deleting your voice history"

    (folder / "privacy.md").unlink()
    report = await app.ingest([str(folder)], base_url=BASE)
    await app.reload_search()
    assert report.removed == 1
    after = await ask(app, GONE, 2)
    # the remaining sections mention "voice" (the equalizer preset) and "history" (a profile's watch history),
    # each in another section: together they covered the question's words, none of them answers it
    assert is_docs_dont_say(after, GONE), after.text
    assert all("privacy.md" not in s.url for s in after.sources) and after.sources  # the closest, as links
    verdict = after.envelope.payload.answerability
    assert verdict is not None and not verdict.answerable
    # a question the remaining docs do answer still gets its answer in the same app
    kept = await ask(app, "How do I create a profile for each person?", 3)
    assert kept.kind is ResultKind.ANSWER and kept.sources[0].title == "Creating a profile for each person"


async def test_a_question_about_words_no_document_uses_is_refused_and_a_misspelt_one_answered(
    manual: tuple[Path, list[App]],
) -> None:
    """The manual has a volume section and an output or two, but no "subwoofer" and no "optical": the question
    is about something it never mentions. Misspelt words of a question it does answer are not such words."""
    folder, apps = manual
    app = await started(folder, apps)
    question = "Does the TV support a subwoofer on the optical output?"
    result = await ask(app, question, 1)
    assert is_docs_dont_say(result, question), result.text
    verdict = result.envelope.payload.answerability
    assert verdict is not None and verdict.reason is AnswerabilityReason.UNKNOWN_TERMS
    assert verdict.signals.unknown_terms == 2

    misspelt = await ask(app, "How do I creat a profle for each persn?", 2)
    assert misspelt.kind is ResultKind.ANSWER and misspelt.sources[0].title == "Creating a profile for each person"
    assert misspelt.envelope.payload.answerability is not None
    assert misspelt.envelope.payload.answerability.signals.unknown_terms == 0


def says_insufficient(request: Request) -> Step:
    """A model that answers every role sensibly but says the documents do not answer the question."""
    if schema_name(request) == "answer":
        return json_reply({"answer": "The documents do not say.", "insufficient": True})
    return plausible_model(request)


@pytest.mark.parametrize("insufficient", [True, False], ids=["model-says-insufficient", "model-answers"])
async def test_llm_mode_the_models_insufficient_is_the_answerability_decision(
    manual: tuple[Path, list[App]], insufficient: bool
) -> None:
    folder, apps = manual
    question = "How do I pair the remote?"  # the offline reading finds it answered (the pairing section)
    async with ScriptedOpenAI(responder=says_insufficient if insufficient else plausible_model) as server:
        app = await started(folder, apps, openai_api_key="sk-test-not-real", openai_base_url=server.base_url)
        result = await ask(app, question, 1)
        answer_calls = sum(schema_name(r) == "answer" for r in server.requests)
    verdict = result.envelope.payload.answerability
    if not insufficient:
        assert result.kind is ResultKind.ANSWER and verdict is not None and verdict.answerable
        return
    assert is_docs_dont_say(result, question), result.text
    assert verdict is not None and not verdict.answerable
    assert verdict.reason is AnswerabilityReason.MODEL_INSUFFICIENT
    assert answer_calls == 2  # one research round, then the model's verdict decides
    assert "The documents do not say." not in result.text  # our wording, never the model's
    assert result.sources[0].title == "Pairing the remote with the hub"  # the closest section, as a link
