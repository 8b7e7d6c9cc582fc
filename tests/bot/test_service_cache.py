"""The semantic cache on the service's path: keyed by the asker's language, never fed degraded answers, and one
query embedding shared by the lookup, the search and the store."""

from __future__ import annotations

from typing import Any

import pytest

from bot.app import App
from pipeline.messages import ReplyKind
from storage.embedder import QueryMemo
from storage.vector_index import VectorIndexUnavailable
from tests.bot.conftest import inbound

pytestmark = pytest.mark.integration


async def test_a_german_question_does_not_get_the_cached_english_answer(app: App) -> None:
    first = await app.service.handle_message(inbound("What does error E-2041 mean?"))
    assert first is not None and first.kind is ReplyKind.ANSWER and first.language == "en"
    german = await app.service.handle_message(inbound("Was bedeutet der Fehler E-2041?"))
    assert german is not None and not german.cached and german.language == "de"
    again = await app.service.handle_message(inbound("Was bedeutet der Fehler E-2041?"))
    assert again is not None and again.cached and again.language == "de"


async def test_an_answer_made_by_a_fallback_is_not_cached(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    async def down(*_args: Any, **_kwargs: Any) -> Any:
        raise VectorIndexUnavailable("local", "query", "timeout")

    monkeypatch.setattr(app.index, "query", down)
    first = await app.service.handle_message(inbound("What does error E-2041 mean?"))
    assert first is not None and first.kind is ReplyKind.ANSWER and first.note  # keyword-only, and says so
    monkeypatch.undo()
    again = await app.service.handle_message(inbound("What does error E-2041 mean?"))
    assert again is not None and again.kind is ReplyKind.ANSWER and not again.cached and not again.note


async def test_one_query_embedding_per_answered_question(app: App) -> None:
    memo = app.embedder
    assert isinstance(memo, QueryMemo)
    before = memo.computed
    reply = await app.service.handle_message(inbound("How do I replace the batteries of the remote?"))
    assert reply is not None and reply.kind is ReplyKind.ANSWER
    assert memo.computed - before == 1


@pytest.mark.unit
def test_the_cache_partition_names_the_answerer(tmp_path: Any) -> None:
    from bot.app import answerer_of
    from bot.settings import Settings

    offline = Settings(data_dir=tmp_path)
    local = Settings(data_dir=tmp_path, openai_base_url="http://127.0.0.1:8080/v1", llm_model="smollm2")
    other = Settings(data_dir=tmp_path, openai_base_url="http://127.0.0.1:8080/v1", llm_model="qwen")
    assert answerer_of(offline) == "offline"
    assert answerer_of(local).startswith("llm:") and answerer_of(local) != answerer_of(other)
