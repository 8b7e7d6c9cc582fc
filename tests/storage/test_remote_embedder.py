"""`OpenAIEmbedder` against a scripted OpenAI-compatible server on a real loopback socket: the wire format (base64
by default, order by `index`), batching, the SDK's retries, deadlines, dimension checks and the circuit breaker."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest
from pydantic import SecretStr

from bench.fakes.openai_server import (
    EmbeddingStep,
    ScriptedOpenAI,
    embedding_html_error,
    embedding_rate_limited,
    unauthorized,
)
from pipeline.llm.breaker import BreakerState, CircuitBreaker
from storage.errors import EmbeddingFailure, EmbeddingUnavailable
from storage.remote_embedder import OpenAIEmbedder

pytestmark = pytest.mark.integration

DIM = 48


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAI]:
    async with ScriptedOpenAI(embedding_dim=DIM) as scripted:
        yield scripted


def embedder(server: ScriptedOpenAI, **overrides: Any) -> OpenAIEmbedder:
    options: dict[str, Any] = {
        "model": "text-embedding-test",
        "base_url": server.base_url,
        "api_key": SecretStr("sk-test-not-real"),
        "dim": DIM,
        "timeout_s": 5.0,
        "max_retries": 2,
    } | overrides
    return OpenAIEmbedder(**options)


def expected(server: ScriptedOpenAI, texts: list[str]) -> np.ndarray:
    return np.vstack([server.embed(t) for t in texts])


async def test_vectors_come_back_in_input_order_decoded_from_base64(server: ScriptedOpenAI) -> None:
    remote = embedder(server)
    texts = ["pair the remote", "reset the hub", "", "update the firmware over wifi"]
    server.queue_embeddings(EmbeddingStep(shuffle=True))
    try:
        vectors = await remote.embed_passages(texts)
    finally:
        await remote.close()
    request = server.embedding_requests[0]
    assert request["encoding_format"] == "base64"  # the SDK's default: the fake answered in that encoding
    assert request["model"] == "text-embedding-test"
    assert request["input"][2] == " "  # an empty input is refused by OpenAI: sent as a blank
    assert vectors.shape == (4, DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors[[0, 1, 3]], expected(server, [texts[0], texts[1], texts[3]]), atol=1e-6)


async def test_batches_stay_within_the_limit_and_no_e5_prefix_is_added(server: ScriptedOpenAI) -> None:
    remote = embedder(server, batch_size=3)
    texts = [f"section {i} about volume" for i in range(8)]
    try:
        vectors = await remote.embed_passages(texts)
        query = await remote.embed_queries(["how loud"])
    finally:
        await remote.close()
    sizes = [len(r["input"]) for r in server.embedding_requests]
    assert sizes == [3, 3, 2, 1]
    assert [t for r in server.embedding_requests[:3] for t in r["input"]] == texts  # no "passage: "
    assert server.embedding_requests[3]["input"] == ["how loud"]  # no "query: "
    np.testing.assert_allclose(vectors, expected(server, texts), atol=1e-6)
    assert query.shape == (1, DIM)


async def test_configured_prefixes_for_an_e5_served_remotely(server: ScriptedOpenAI) -> None:
    remote = embedder(server, query_prefix="query: ", passage_prefix="passage: ")
    try:
        await remote.embed_queries(["how loud"])
        await remote.embed_passages(["volume"])
    finally:
        await remote.close()
    assert [r["input"] for r in server.embedding_requests] == [["query: how loud"], ["passage: volume"]]
    assert remote.model_name != embedder(server).model_name  # prefixed vectors are another space


async def test_429_with_retry_after_and_an_html_500_are_retried_by_the_sdk(server: ScriptedOpenAI) -> None:
    remote = embedder(server)
    server.queue_embeddings(embedding_rate_limited(0.05), embedding_html_error(500))
    try:
        vectors = await remote.embed_passages(["pair the remote"])
    finally:
        await remote.close()
    assert len(server.embedding_requests) == 3  # one answer, two retried failures: nothing lost, nothing extra
    assert all(r["input"] == ["pair the remote"] for r in server.embedding_requests)
    np.testing.assert_allclose(vectors, expected(server, ["pair the remote"]), atol=1e-6)
    assert remote.breaker.status().failures == 0


async def test_a_reset_connection_is_retried(server: ScriptedOpenAI) -> None:
    remote = embedder(server)
    server.queue_embeddings(EmbeddingStep(reset=True))
    try:
        vectors = await remote.embed_queries(["reset the hub"])
    finally:
        await remote.close()
    assert len(server.embedding_requests) == 2
    np.testing.assert_allclose(vectors, expected(server, ["reset the hub"]), atol=1e-6)


@pytest.mark.parametrize(
    ("steps", "failure"),
    [
        pytest.param([embedding_html_error(502)] * 2, EmbeddingFailure.SERVER_ERROR, id="html-5xx"),
        pytest.param([embedding_rate_limited(0.05)] * 2, EmbeddingFailure.RATE_LIMITED, id="429"),
        pytest.param([EmbeddingStep(reset=True)] * 2, EmbeddingFailure.UNREACHABLE, id="reset"),
        pytest.param([EmbeddingStep(dim=DIM + 1)], EmbeddingFailure.WRONG_DIMENSION, id="wrong-dimension"),
    ],
)
async def test_failures_after_the_retries_are_typed(
    server: ScriptedOpenAI, steps: list[EmbeddingStep], failure: EmbeddingFailure
) -> None:
    remote = embedder(server, max_retries=1)
    server.queue_embeddings(*steps)
    try:
        with pytest.raises(EmbeddingUnavailable) as caught:
            await remote.embed_passages(["pair the remote"])
    finally:
        await remote.close()
    assert caught.value.failure is failure
    assert "pair the remote" not in str(caught.value)  # no user or document text in errors (they reach logs)
    assert remote.breaker.status().failures == 1


async def test_a_rejected_key_is_not_retried(server: ScriptedOpenAI) -> None:
    remote = embedder(server)
    step = unauthorized()
    server.queue_embeddings(EmbeddingStep(status=401, raw_body=step.raw_body))
    try:
        with pytest.raises(EmbeddingUnavailable) as caught:
            await remote.embed_queries(["x"])
    finally:
        await remote.close()
    assert caught.value.failure is EmbeddingFailure.REJECTED
    assert len(server.embedding_requests) == 1


async def test_a_hanging_endpoint_is_cut_at_the_query_deadline(server: ScriptedOpenAI) -> None:
    remote = embedder(server, timeout_s=30.0, query_deadline_s=0.3)
    server.queue_embeddings(EmbeddingStep(delay_s=10.0))
    try:
        with pytest.raises(EmbeddingUnavailable) as caught:
            await remote.embed_queries(["how loud"])
    finally:
        await remote.close()
    assert caught.value.failure is EmbeddingFailure.TIMEOUT


async def test_the_sdk_timeout_per_attempt_is_retried(server: ScriptedOpenAI) -> None:
    remote = embedder(server, timeout_s=0.3, max_retries=1, deadline_s=30.0)
    server.queue_embeddings(EmbeddingStep(delay_s=10.0))
    try:
        vectors = await remote.embed_passages(["pair the remote"])
    finally:
        await remote.close()
    assert len(server.embedding_requests) == 2
    np.testing.assert_allclose(vectors, expected(server, ["pair the remote"]), atol=1e-6)


async def test_the_breaker_stops_requests_to_a_failing_endpoint(server: ScriptedOpenAI) -> None:
    clock = [0.0]
    breaker = CircuitBreaker(threshold=2, cooldown_s=30.0, clock=lambda: clock[0])
    remote = embedder(server, max_retries=0, breaker=breaker)
    server.queue_embeddings(embedding_html_error(500), embedding_html_error(500))
    try:
        for _ in range(2):
            with pytest.raises(EmbeddingUnavailable):
                await remote.embed_queries(["x"])
        with pytest.raises(EmbeddingUnavailable) as caught:
            await remote.embed_queries(["x"])
        assert caught.value.failure is EmbeddingFailure.BREAKER_OPEN
        assert len(server.embedding_requests) == 2  # the third call sent nothing
        clock[0] = 31.0  # after the cool-down one trial call goes out, succeeds and closes the breaker
        assert (await remote.embed_queries(["x"])).shape == (1, DIM)
        assert breaker.status().state is BreakerState.CLOSED
    finally:
        await remote.close()


async def test_the_dimension_is_probed_when_not_configured(server: ScriptedOpenAI) -> None:
    remote = embedder(server, dim=None)
    try:
        with pytest.raises(RuntimeError):
            _ = remote.dim
        assert await remote.resolve_dim() == DIM
        assert remote.dim == DIM
        assert len(server.embedding_requests) == 1 and len(server.embedding_requests[0]["input"]) == 1
    finally:
        await remote.close()


async def test_a_cancelled_call_gives_no_verdict_on_the_endpoint(server: ScriptedOpenAI) -> None:
    remote = embedder(server)
    server.queue_embeddings(EmbeddingStep(delay_s=10.0))
    try:
        task = asyncio.create_task(remote.embed_queries(["x"]))
        while not server.embedding_requests:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert remote.breaker.status().failures == 0
    finally:
        await remote.close()


# --- a real model server: llama.cpp (xllamacpp) serving embeddings from SmolLM2-135M, on 127.0.0.1 ------------------


async def test_against_llama_cpp_real_embeddings_server() -> None:
    """The wire format as a real server speaks it (base64 asked by the SDK, llama.cpp's own reply), batching and the
    dimension probe; a small chat model mean-pooled is a poor embedder, but its vectors are real and consistent."""
    from bench.fakes.llama_server import LlamaServer, LlamaUnavailable, unavailable

    reason = unavailable()
    if reason is not None:
        pytest.skip(f"real model server unavailable: {reason}")
    try:
        with LlamaServer.start(ctx=2048, threads=2, embedding=True) as llama:
            remote = OpenAIEmbedder(model="smollm2", base_url=llama.base_url, batch_size=2, max_retries=0)
            try:
                dim = await remote.resolve_dim()
                texts = ["Hold HOME and BACK to pair the remote.", "Reset the hub", "Pair the remote control"]
                vectors = await remote.embed_passages(texts)
                again = await remote.embed_passages(texts[::-1])
            finally:
                await remote.close()
    except LlamaUnavailable as exc:
        pytest.skip(f"real model server unavailable: {exc}")
    assert dim > 100 and vectors.shape == (3, dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(again[::-1], vectors, atol=1e-3)  # order kept across batches of 2
