from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from bench.fakes.openai_server import ScriptedOpenAI
from pipeline.llm.client import OpenAIChat
from pipeline.types import ChatMessage, LLMResult, LLMUsage, Role


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAI]:
    async with ScriptedOpenAI() as scripted:
        yield scripted


@pytest.fixture
async def chat(server: ScriptedOpenAI) -> AsyncIterator[OpenAIChat]:
    client = OpenAIChat(
        api_key="sk-test-do-not-log",
        base_url=server.base_url,
        models={Role.RESPONSE: "big-model"},
        default_model="small-model",
        timeout_s=1.0,
        max_retries=2,
    )
    yield client
    await client.close()


class FakeLLM:
    """A function-driven LLM: `answer(schema_title, messages)` returns the structured data."""

    def __init__(self, answer: Callable[[str, list[ChatMessage]], dict[str, Any]]) -> None:
        self.answer = answer
        self.calls: list[tuple[Role, str, list[ChatMessage]]] = []

    async def complete(
        self,
        messages: Any,
        *,
        role: Role,
        schema: dict[str, Any] | None = None,
        temperature: float | None = None,
    ) -> LLMResult:
        title = str((schema or {}).get("title", ""))
        self.calls.append((role, title, list(messages)))
        data = self.answer(title, list(messages))
        return LLMResult(text=str(data), data=data, usage=LLMUsage(prompt_tokens=100, completion_tokens=10, calls=1))
