"""The composition root in LLM mode: settings alone switch the roles to an OpenAI-compatible endpoint
(the scripted server here), and a failing endpoint still ends in an answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.messages import ReplyKind
from tests.bot.conftest import inbound
from tests.fakes.openai_server import ScriptedOpenAI, server_error

pytestmark = pytest.mark.integration


async def test_llm_mode_is_chosen_by_configuration_and_shows_in_the_trace(make_app: Callable[..., Any]) -> None:
    async with ScriptedOpenAI() as server:
        app = await make_app(openai_api_key="sk-test-not-real", openai_base_url=server.base_url)
        reply = await app.service.handle_message(inbound("How do I pair the remote?"))
        assert reply is not None and reply.kind is ReplyKind.ANSWER
        assert server.chat_calls >= 2
        assert reply.summary is not None and reply.summary.llm_calls >= 2 and reply.summary.prompt_tokens > 0
        trace = await app.runs.trace(reply.conversation_id)
        assert trace is not None
        strategies = {hop.role: hop.strategy for hop in trace.runs[-1].hops}
        assert strategies["response"] == "llm"


async def test_a_failing_endpoint_still_answers_offline_with_a_note(make_app: Callable[..., Any]) -> None:
    async with ScriptedOpenAI(responder=lambda _request: server_error(503)) as server:
        app = await make_app(
            openai_api_key="sk-test-not-real", openai_base_url=server.base_url, llm_timeout_s=2.0
        )
        reply = await app.service.handle_message(inbound("How do I pair the remote?"))
        assert reply is not None and reply.kind is ReplyKind.ANSWER
        assert reply.citations
        trace = await app.runs.trace(reply.conversation_id)
        assert trace is not None
        assert any(hop.strategy == "llm->offline" for hop in trace.runs[-1].hops)
