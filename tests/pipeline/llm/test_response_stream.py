"""The response strategy streaming its first draft through `Context.stream`, via the real SDK against the scripted
server's server-sent events: what the callback sees, when it does not stream, and how failures end offline."""

from __future__ import annotations

import itertools

import pytest

from bench.fakes.openai_server import ScriptedOpenAI, Step, json_reply
from pipeline.agents.base import StrategyFailed
from pipeline.agents.response import ResponseAgent
from pipeline.envelope import Context, Payload
from pipeline.llm import prompts
from pipeline.llm.client import OpenAIChat
from pipeline.llm.leak_guard import repeats_system_prompt
from pipeline.llm.strategies import ResponseStrategy
from pipeline.types import QualityDecision, SourceReference, StrategyUsed

pytestmark = pytest.mark.integration

SOURCES = (SourceReference(1, "c1", "d1", "Pairing", ("Remote",), "https://d/pair", "Hold OK for 5 s.", 0.9),)
PAYLOAD = Payload(text="how to pair", language="en", canonical_question="How do I pair?", source_references=SOURCES)
ANSWER = "Hold the OK button for five seconds until the light blinks [1]. Then release it."


class Shown:
    """A `Context.stream` callback that records every text it is shown."""

    def __init__(self, fail: bool = False) -> None:
        self.texts: list[str] = []
        self.fail = fail

    async def __call__(self, text: str) -> None:
        self.texts.append(text)
        if self.fail:
            raise RuntimeError("the platform is down")


async def test_the_first_draft_streams_through_the_callback(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(Step(content=ANSWER))
    shown = Shown()
    result = await ResponseStrategy(chat)(PAYLOAD, Context(stream=shown))
    assert result.payload.response == ANSWER and result.strategy == StrategyUsed.LLM and "streamed" in result.decision
    assert len(shown.texts) > 5 and shown.texts[-1] == ANSWER
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(shown.texts))
    assert result.usage.calls == 1 and result.usage.completion_tokens > 0
    assert server.requests[0]["stream"] is True


async def test_without_a_callback_the_answer_is_one_structured_call(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(json_reply({"answer": ANSWER, "insufficient": False}))
    result = await ResponseStrategy(chat)(PAYLOAD, Context())
    assert result.payload.response == ANSWER
    assert not server.requests[0].get("stream") and "response_format" in server.requests[0]


async def test_a_second_draft_is_not_streamed(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(json_reply({"answer": "Press OK for five seconds [1].", "insufficient": False}))
    rejected = PAYLOAD.evolve(
        response="It pairs by magic.", quality_decision=QualityDecision.REGENERATE, quality_notes=("unsupported",)
    )
    shown = Shown()
    result = await ResponseStrategy(chat)(rejected, Context(stream=shown))
    assert result.payload.response == "Press OK for five seconds [1]."
    assert shown.texts == [] and not server.requests[0].get("stream")


async def test_a_stream_cut_mid_answer_falls_back_offline(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(*[Step(content=ANSWER, cut_after=4)] * 3)  # the SDK's retries do not apply mid-stream
    shown = Shown()
    with pytest.raises(StrategyFailed):
        await ResponseStrategy(chat)(PAYLOAD, Context(stream=shown))
    assert shown.texts and len(shown.texts[-1]) < len(ANSWER)

    server.queue(Step(content=ANSWER, cut_after=4))
    agent = ResponseAgent(llm=ResponseStrategy(chat))
    result = await agent.run(PAYLOAD.evolve(search_quality=None), Context(stream=Shown()))
    assert result.strategy == StrategyUsed.LLM_FAILED and result.payload.response
    assert result.payload.response != ANSWER


async def test_a_reply_quoting_the_system_prompt_is_never_shown_in_full(
    server: ScriptedOpenAI, chat: OpenAIChat
) -> None:
    system = prompts.answer_plain(PAYLOAD, Context(), language="en")[0].content
    server.queue(Step(content="Sure. My instructions: " + system))
    shown = Shown()
    with pytest.raises(StrategyFailed, match="system prompt"):
        await ResponseStrategy(chat)(PAYLOAD, Context(stream=shown))
    assert shown.texts and not any(repeats_system_prompt(text, system) for text in shown.texts)


async def test_a_failing_callback_stops_the_showing_not_the_answer(server: ScriptedOpenAI, chat: OpenAIChat) -> None:
    server.queue(Step(content=ANSWER))
    shown = Shown(fail=True)
    result = await ResponseStrategy(chat)(PAYLOAD, Context(stream=shown))
    assert result.payload.response == ANSWER and len(shown.texts) == 1
