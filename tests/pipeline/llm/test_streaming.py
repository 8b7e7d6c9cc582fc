"""Answer streaming through the real SDK against the scripted server's server-sent events, and the batching
adapters use to respect platform edit limits."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from bench.fakes.openai_server import ScriptedOpenAI, Step, refusal, server_error
from pipeline.agents.base import StrategyFailed
from pipeline.envelope import Context, Payload
from pipeline.llm.client import OpenAIChat, StreamStats
from pipeline.llm.streaming import coalesce, stream_answer
from pipeline.types import SourceReference

SOURCES = (SourceReference(1, "c1", "d1", "Pairing", ("Remote",), "https://d/pair", "Hold OK for 5 s.", 0.9),)
PAYLOAD = Payload(text="how to pair", language="en", canonical_question="How do I pair?", source_references=SOURCES)
ANSWER = "Hold the OK button for five seconds until the light blinks [1]."


@pytest.mark.integration
async def test_stream_yields_the_answer_in_pieces_and_counts_tokens(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(Step(content=ANSWER))
    stats = StreamStats()
    deltas = [d async for d in stream_answer(chat, PAYLOAD, Context(), stats=stats)]
    assert len(deltas) > 5 and "".join(deltas) == ANSWER == stats.text
    assert stats.usage.calls == 1 and stats.usage.completion_tokens > 0
    sent = server.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["model"] == "big-model" and "<documents>" in sent["messages"][1]["content"]


@pytest.mark.integration
async def test_stream_failure_before_the_first_delta_raises(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(*[server_error(500)] * 3)
    with pytest.raises(StrategyFailed, match="500"):
        async for _ in stream_answer(chat, PAYLOAD, Context()):
            pass


@pytest.mark.integration
async def test_stream_refusal_raises(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(refusal())
    with pytest.raises(StrategyFailed, match="refused"):
        async for _ in stream_answer(chat, PAYLOAD, Context()):
            pass


@pytest.mark.integration
async def test_stream_stops_at_the_deadline(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    # a 20 s stream against a 6 s deadline (a second kept for the offline fallback): the first chunks come half a
    # second apart, so some arrive however loaded the box, and the stream cannot finish in time
    server.queue(Step(content=" ".join(["word"] * 40), chunk_delay_s=0.5))
    received: list[str] = []
    with pytest.raises(StrategyFailed, match="deadline"):
        async for delta in stream_answer(chat, PAYLOAD, Context(deadline=time.monotonic() + 6.0)):
            received.append(delta)
    assert 0 < len(received) < 40


@pytest.mark.unit
async def test_stream_needs_sources() -> None:
    with pytest.raises(StrategyFailed):
        async for _ in stream_answer(None, Payload(text="q"), Context()):  # type: ignore[arg-type]
            pass


@pytest.mark.unit
async def test_coalesce_batches_deltas_by_interval() -> None:
    now = [0.0]

    async def deltas() -> AsyncIterator[str]:
        for piece in ["a", "b", "c", "d", "e"]:
            yield piece
            now[0] += 0.4

    batches = [b async for b in coalesce(deltas(), min_interval_s=1.0, clock=lambda: now[0])]
    assert batches == ["a", "bcd", "e"]  # at t=0, t=1.2, then the rest at the end
    assert "".join(batches) == "abcde"
