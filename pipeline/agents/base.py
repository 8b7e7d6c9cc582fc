"""What every role shares: an offline strategy that always works, and an optional LLM strategy tried first.

An agent composes the two with `run_with_fallback`: when the LLM strategy raises `StrategyFailed` (timeout,
rate limit, malformed output after one repair, refusal), the offline strategy answers and the trace says
`llm->offline` (`StrategyUsed.LLM_FAILED`). A role that checks the model's result against its offline reading uses
`keep_or_overrule` with its own rule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pipeline.envelope import AgentResult, Context, Payload
from pipeline.types import LLMUsage, StrategyUsed

Strategy = Callable[[Payload, Context], Awaitable[AgentResult]]


class StrategyFailed(Exception):
    """An LLM strategy could not produce a valid result; `reason` is operator-facing (no user text, no secrets).
    `usage` counts the tokens the failed attempt still spent, so the trace shows them."""

    def __init__(self, reason: str, usage: LLMUsage | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.usage = usage if usage is not None else LLMUsage()


async def run_with_fallback(payload: Payload, context: Context, offline: Strategy, llm: Strategy | None) -> AgentResult:
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
            strategy=StrategyUsed.LLM_FAILED,
        )


OfflineResult = Callable[[], Awaitable[AgentResult]]
"""The offline strategy's result for the same payload, computed on the first call only."""

Overrule = Callable[[AgentResult, OfflineResult], Awaitable[str | None]]
"""A role's rule for the model's result: why the offline result is taken instead, or None to keep the model's."""


async def keep_or_overrule(
    payload: Payload, context: Context, offline: Strategy, llm: Strategy | None, overrule: Overrule
) -> AgentResult:
    """`run_with_fallback`, then the role's `overrule` judges a result the model gave in time. An overruled hop says
    `LLM_OVERRULED`, not `LLM_FAILED`: the model was available, so the reply gets no "answered without the language
    model" note; the reason is in the hop's decision, and the tokens the model spent stay counted."""
    result = await run_with_fallback(payload, context, offline, llm)
    if result.strategy is not StrategyUsed.LLM:
        return result
    computed: list[AgentResult] = []

    async def offline_result() -> AgentResult:
        if not computed:
            computed.append(await offline(payload, context))
        return computed[0]

    why = await overrule(result, offline_result)
    if why is None:
        return result
    taken = await offline_result()
    return AgentResult(
        payload=taken.payload,
        decision=f"{taken.decision} ({why})",
        usage=result.usage,
        strategy=StrategyUsed.LLM_OVERRULED,
    )
