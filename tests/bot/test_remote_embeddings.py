"""An OpenAI-compatible embeddings endpoint configured instead of the bundled model (the scripted server, on a real
loopback socket): ingest and questions use it; when it fails a question is still answered keyword-only (marked,
never cached) and an ingest fails the affected documents clearly and completes on the next run; an index made by
another embedder refuses to serve and `docbot doctor` says why."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from bench.fakes.openai_server import EmbeddingStep, ScriptedOpenAI, embedding_html_error, embedding_rate_limited
from bot.app import App, build_app, build_embedder
from bot.doctor import embedder_check
from bot.settings import Settings
from pipeline.messages import ReplyKind
from pipeline.types import StrategyUsed
from storage.doc_tables import ChunkRow, DocumentRow, EmbeddingRow
from storage.embedder import E5Embedder
from storage.errors import EmbeddingSpaceMismatch, EmbeddingUnavailable
from tests.bot.conftest import MANUAL, inbound
from tests.storage.test_ingest import count

pytestmark = pytest.mark.integration

DIM = 48
QUESTION = "How do I pair the remote?"


class E5LikeServer(ScriptedOpenAI):
    """The scripted endpoint with cosines crowded into a high band, as E5's are: bag-of-words plus one component
    every text shares. Search grading and the answerability threshold are fitted on E5's scores (a model with
    another score distribution would need its own fit: docs/llm.md), so this keeps the pipeline's decisions
    comparable while the vectors still come over the wire."""

    def embed(self, text: str, dim: int | None = None) -> np.ndarray[Any, np.dtype[np.float32]]:
        size = dim or self.embedding_dim
        words = super().embed(text, size - 1)
        vector = np.concatenate([0.5 * words, np.array([0.85], dtype=np.float32)]).astype(np.float32)
        return np.asarray(vector / np.linalg.norm(vector), dtype=np.float32)


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAI]:
    async with E5LikeServer(embedding_dim=DIM) as scripted:
        yield scripted


@pytest.fixture
async def make_remote_app(server: ScriptedOpenAI, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """`await make_remote_app(**settings)`: an app on `tmp_path/data` whose embedder is the scripted endpoint."""
    apps: list[App] = []

    def settings(**overrides: Any) -> Settings:
        options: dict[str, Any] = {
            "data_dir": tmp_path / "data",
            "embeddings_base_url": server.base_url,
            "embeddings_api_key": "sk-test-not-real",
            "embeddings_max_retries": 0,  # every scripted failure reaches docbot (the SDK's retries: test above)
            "embeddings_query_deadline_s": 2.0,
            "llm_breaker_failures": 50,  # the breaker is tested on its own; here every question asks the endpoint
        } | overrides
        return Settings(**options)

    async def build(*, check_embeddings: bool = True, **overrides: Any) -> App:
        (tmp_path / "data").mkdir(exist_ok=True)
        app = await build_app(settings(**overrides), check_embeddings=check_embeddings)
        apps.append(app)
        return app

    build.settings = settings  # type: ignore[attr-defined]
    yield build
    for built in apps:
        await built.close()


async def ingested(make_remote_app: Callable[..., Any], **overrides: Any) -> App:
    app: App = await make_remote_app(**overrides)
    report = await app.ingest([str(MANUAL)], base_url="https://docs.example.com/")
    assert report.added > 5 and not report.failed, report.summary()
    await app.retriever.wait_for_levels()  # the background title and unit levels must not take a scripted fault
    return app


async def test_the_default_is_the_bundled_model_without_network() -> None:
    settings = Settings()
    assert not settings.embeddings_enabled
    assert isinstance(await build_embedder(settings, []), E5Embedder)  # the socket guard fails any connection


async def test_the_bundled_model_uses_every_usable_core_for_the_cli_and_one_engine_while_serving(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3, 4, 5}, raising=False)
    cli = await build_embedder(Settings(_env_file=None), [])
    serving = await build_embedder(Settings(_env_file=None, slack_bot_token="xoxb-not-real"), [])
    discord = await build_embedder(Settings(_env_file=None, discord_bot_token="not-real"), [])
    chosen = await build_embedder(Settings(_env_file=None, slack_bot_token="xoxb-not-real", embedder_engines=3), [])
    assert isinstance(cli, E5Embedder) and cli.engines == 4  # six usable cores, at most four by default
    assert isinstance(serving, E5Embedder) and serving.engines == 1
    assert isinstance(discord, E5Embedder) and discord.engines == 1
    assert isinstance(chosen, E5Embedder) and chosen.engines == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    single = await build_embedder(Settings(_env_file=None), [])
    assert isinstance(single, E5Embedder) and single.engines == 1


def test_embeddings_settings_are_read_from_their_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCBOT_EMBEDDINGS_BASE_URL", "")  # an empty line in .env keeps the bundled model
    assert not Settings().embeddings_enabled
    monkeypatch.setenv("DOCBOT_EMBEDDINGS_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("DOCBOT_EMBEDDINGS_MODEL", "bge-m3")
    monkeypatch.setenv("DOCBOT_EMBEDDINGS_DIM", "1024")
    monkeypatch.setenv("DOCBOT_EMBEDDINGS_API_KEY", "sk-secret-not-real")
    settings = Settings()
    assert settings.embeddings_enabled and settings.embeddings_model == "bge-m3" and settings.embeddings_dim == 1024
    assert "sk-secret-not-real" not in repr(settings)


async def test_a_configured_endpoint_embeds_the_documents_and_the_questions(
    make_remote_app: Callable[..., Any], server: ScriptedOpenAI
) -> None:
    app = await ingested(make_remote_app)
    assert app.embedder.dim == DIM  # probed: no dimension configured
    async with app.db.session() as session:
        spaces = set((await session.execute(select(EmbeddingRow.model, EmbeddingRow.dim).distinct())).all())
    assert spaces == {("openai:text-embedding-3-small", DIM)}
    requests = len(server.embedding_requests)
    reply = await app.service.handle_message(inbound(QUESTION))
    assert reply is not None and reply.kind is ReplyKind.ANSWER and reply.citations and not reply.note
    assert len(server.embedding_requests) > requests  # the question's vector came from the endpoint
    assert any("remote" in c.url or "remote" in c.title.lower() for c in reply.citations)


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(embedding_html_error(500), id="html-500"),
        pytest.param(embedding_rate_limited(30.0), id="429-retry-after"),
        pytest.param(EmbeddingStep(reset=True), id="connection-reset"),
        pytest.param(EmbeddingStep(delay_s=30.0), id="hang"),
        pytest.param(EmbeddingStep(dim=DIM * 2), id="wrong-dimension"),
    ],
)
async def test_a_failing_endpoint_at_question_time_answers_keyword_only_and_never_caches(
    make_remote_app: Callable[..., Any], server: ScriptedOpenAI, failure: EmbeddingStep
) -> None:
    app = await ingested(make_remote_app, embeddings_query_deadline_s=0.5)
    server.queue_embeddings(*[failure] * 5)
    reply = await app.service.handle_message(inbound(QUESTION))
    assert reply is not None and reply.kind is ReplyKind.ANSWER and reply.citations
    assert reply.note  # the person is told the answer was made by keyword search only
    assert reply.summary is not None and "search: keyword search only" in reply.summary.fallback_notes
    trace = await app.runs.trace(reply.conversation_id)
    assert trace is not None and len(trace.runs) == 1  # answered once: nothing lost, nothing repeated
    assert any(hop.strategy == StrategyUsed.KEYWORD_ONLY for hop in trace.runs[0].hops)
    server.embedding_steps.clear()  # the endpoint is back
    again = await app.service.handle_message(inbound(QUESTION))
    assert again is not None and again.kind is ReplyKind.ANSWER
    assert not again.cached and not again.note  # the degraded answer was not replayed from the cache
    third = await app.service.handle_message(inbound(QUESTION))
    assert third is not None and third.cached  # the good one was


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(embedding_html_error(503), id="html-503"),
        pytest.param(EmbeddingStep(reset=True), id="connection-reset"),
        pytest.param(EmbeddingStep(dim=DIM + 3), id="wrong-dimension"),
        pytest.param(EmbeddingStep(delay_s=30.0), id="hang"),
    ],
)
async def test_a_failing_endpoint_at_ingest_fails_those_documents_clearly_and_the_next_ingest_completes(
    make_remote_app: Callable[..., Any], server: ScriptedOpenAI, failure: EmbeddingStep
) -> None:
    app: App = await make_remote_app(embeddings_deadline_s=0.5, embeddings_dim=DIM)
    server.queue_embeddings(failure)  # the first batch of passages fails, the others go through
    sources = [str(MANUAL / part) for part in ("audio", "network", "getting-started")]  # one group of documents each
    first = await app.ingest(sources)
    assert first.failed and all("embeddings endpoint" in f.reason for f in first.failed)
    assert first.added > 0  # the rest was stored
    stored = await count(app.db, DocumentRow)
    assert stored == first.added  # nothing of the failed documents was written
    assert await count(app.db, ChunkRow) == await count(app.db, EmbeddingRow) == await app.index.count()
    second = await app.ingest(sources)
    assert not second.failed
    assert second.added == len(first.failed) and second.unchanged == first.added and second.updated == 0
    assert await count(app.db, DocumentRow) == first.added + second.added
    assert await count(app.db, ChunkRow) == await count(app.db, EmbeddingRow) == await app.index.count()
    reply = await app.service.handle_message(inbound(QUESTION))
    assert reply is not None and reply.kind is ReplyKind.ANSWER and not reply.note


async def test_an_updated_document_whose_embedding_fails_keeps_its_previous_version(
    make_remote_app: Callable[..., Any], server: ScriptedOpenAI, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "remote.md"
    page.write_text("# Remote\n\n## Pairing\n\nHold HOME and BACK for five seconds to pair the remote.\n")
    app: App = await make_remote_app(embeddings_dim=DIM)
    assert (await app.ingest([str(docs)])).added == 1
    await app.retriever.wait_for_levels()  # the background title and unit levels must not take the scripted fault
    page.write_text("# Remote\n\n## Pairing\n\nHold HOME and MENU for three seconds to pair the remote.\n")
    server.queue_embeddings(embedding_html_error(500))
    failed = await app.ingest([str(docs)])
    assert len(failed.failed) == 1 and failed.updated == 0
    async with app.db.session() as session:
        texts = list(await session.scalars(select(ChunkRow.text)))
    assert any("HOME and BACK" in t for t in texts) and not any("MENU" in t for t in texts)
    retried = await app.ingest([str(docs)])
    assert retried.updated == 1 and not retried.failed
    async with app.db.session() as session:
        texts = list(await session.scalars(select(ChunkRow.text)))
    assert any("HOME and MENU" in t for t in texts) and not any("BACK" in t for t in texts)


async def test_another_embedder_at_start_is_a_clear_error_and_a_new_ingest_re_embeds(
    make_remote_app: Callable[..., Any], server: ScriptedOpenAI
) -> None:
    app = await ingested(make_remote_app)
    chunks = await count(app.db, ChunkRow)
    await app.close()
    with pytest.raises(EmbeddingSpaceMismatch) as caught:
        await make_remote_app(embeddings_model="another-model")
    message = str(caught.value)
    assert "openai:text-embedding-3-small" in message and "openai:another-model" in message and str(chunks) in message
    # the same model at another dimension is another space too
    with pytest.raises(EmbeddingSpaceMismatch):
        await make_remote_app(embeddings_dim=DIM * 2)
    check = await embedder_check(make_remote_app.settings(embeddings_model="another-model"))  # type: ignore[attr-defined]
    assert check.ok is False and "the index holds" in check.detail
    # `docbot ingest` starts anyway and re-embeds every document made by the other model
    switching: App = await make_remote_app(embeddings_model="another-model", check_embeddings=False)
    report = await switching.ingest([str(MANUAL)], base_url="https://docs.example.com/")
    assert report.added == 0 and report.updated > 5 and report.unchanged == 0 and report.embedded > 0
    await switching.close()
    served: App = await make_remote_app(embeddings_model="another-model")
    reply = await served.service.handle_message(inbound(QUESTION))
    assert reply is not None and reply.kind is ReplyKind.ANSWER and not reply.note


async def test_doctor_probes_the_endpoint_with_one_short_input(
    make_remote_app: Callable[..., Any], server: ScriptedOpenAI
) -> None:
    settings = make_remote_app.settings()  # type: ignore[attr-defined]
    check = await embedder_check(settings)
    assert check.ok is True and f"{DIM} dimensions" in check.detail
    assert len(server.embedding_requests) == 1 and len(server.embedding_requests[0]["input"]) == 1
    assert "sk-test-not-real" not in check.detail
    server.queue_embeddings(embedding_html_error(502))
    broken = await embedder_check(settings)
    assert broken.ok is False and "server error" in broken.detail
    wrong = await embedder_check(make_remote_app.settings(embeddings_dim=DIM + 1))  # type: ignore[attr-defined]
    assert wrong.ok is False and "DOCBOT_EMBEDDINGS_DIM" in wrong.detail


async def test_an_unreachable_endpoint_without_a_configured_dimension_stops_the_start_clearly(
    make_remote_app: Callable[..., Any], server: ScriptedOpenAI
) -> None:
    server.queue_embeddings(embedding_html_error(500))
    with pytest.raises(EmbeddingUnavailable) as caught:
        await make_remote_app()
    assert "DOCBOT_EMBEDDINGS_DIM" in str(caught.value)


async def test_a_question_in_another_language_while_the_endpoint_is_down_is_still_answered(
    make_remote_app: Callable[..., Any], server: ScriptedOpenAI
) -> None:
    """The offline answer picks sentences across languages by embeddings; with the endpoint down it goes without
    them (every candidate alike) instead of failing the answer."""
    app = await ingested(make_remote_app)
    server.queue_embeddings(*[embedding_html_error(500)] * 20)
    reply = await app.service.handle_message(inbound("Wie kann ich die Fernbedienung koppeln? pair remote"))
    assert reply is not None and reply.kind is not ReplyKind.NOTICE  # not the "something went wrong" notice
    trace = await app.runs.trace(reply.conversation_id)
    assert trace is not None and len(trace.runs) == 1


async def test_zeros_on_failure_passes_vectors_through_and_replaces_only_an_endpoint_failure() -> None:
    from storage.embedder import HashingEmbedder, ZerosOnFailure
    from storage.errors import EmbeddingFailure

    class Down(HashingEmbedder):
        async def embed_passages(self, texts: Any) -> Any:
            raise EmbeddingUnavailable(EmbeddingFailure.SERVER_ERROR, "test")

    healthy = ZerosOnFailure(HashingEmbedder(16))
    assert np.linalg.norm(await healthy.embed_passages(["pair the remote"])) > 0
    down = ZerosOnFailure(Down(16))
    assert (await down.embed_passages(["a", "b"])).shape == (2, 16)
    assert not (await down.embed_passages(["a"])).any()
    assert np.linalg.norm(await down.embed_queries(["pair the remote"])) > 0  # queries still work
