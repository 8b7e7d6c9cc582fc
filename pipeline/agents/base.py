"""What every role shares: an offline strategy that always works, and an optional LLM strategy tried first.

An agent composes the two with `run_with_fallback`: when the LLM strategy raises `StrategyFailed` (timeout,
rate limit, malformed output after one repair, refusal), the offline strategy answers and the trace says
`llm->offline`. The LLM issue adds LLM strategies without reshaping the agents.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pipeline.envelope import AgentResult, Context, Payload
from pipeline.types import LLMUsage

Strategy = Callable[[Payload, Context], Awaitable[AgentResult]]


class StrategyFailed(Exception):
    """An LLM strategy could not produce a valid result; `reason` is operator-facing (no user text, no secrets).
    `usage` counts the tokens the failed attempt still spent, so the trace shows them."""

    def __init__(self, reason: str, usage: LLMUsage | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.usage = usage if usage is not None else LLMUsage()


LLM_OVERRULED = "llm-overruled"
"""A hop's strategy when the model answered in time but a guard took the offline result instead (a weak model's
drifted question, uncited draft, needless "regenerate"...): the model was available, so the person gets no
"answered without the language model" note and the answer is not degraded; the reason is in the hop's decision."""


async def run_with_fallback(
    payload: Payload, context: Context, offline: Strategy, llm: Strategy | None
) -> AgentResult:
    if llm is None:
        return await offline(payload, context)
    try:
        return await llm(payload, context)
    except StrategyFailed as failure:
        result = await offline(payload, context)
        return AgentResult(
            payload=result.payload,
            decision=f"{result.decision} (llm failed: {failure.reason})",
            usage=result.usage + failure.usage,
            strategy="llm->offline",
        )
