"""The shared ending of the roles that check a model's result: `keep_or_overrule` keeps it, or takes the offline
result with the role's reason, and says which in the hop's strategy; the guardrails role's own rule through it."""

from __future__ import annotations

import pytest

from pipeline.agents.base import OfflineResult, StrategyFailed, keep_or_overrule
from pipeline.agents.guardrails import GuardrailsAgent
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.types import LLMUsage, StrategyUsed

pytestmark = pytest.mark.unit

CTX = Context()
MODEL_USAGE = LLMUsage(prompt_tokens=120, completion_tokens=8, calls=1)


class Offline:
    """An offline strategy that counts its runs."""

    def __init__(self) -> None:
        self.runs = 0

    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        self.runs += 1
        return AgentResult(payload.evolve(language="fr"), "language=fr (0.90)")


async def model(payload: Payload, context: Context) -> AgentResult:
    return AgentResult(payload.evolve(language="en"), "llm: en", usage=MODEL_USAGE, strategy=StrategyUsed.LLM)


async def failing_model(payload: Payload, context: Context) -> AgentResult:
    raise StrategyFailed("timeout", LLMUsage(prompt_tokens=50, calls=1, estimated=True))


async def test_a_result_the_rule_accepts_is_the_models_and_the_offline_strategy_runs_only_if_asked() -> None:
    offline = Offline()

    async def accept(result: AgentResult, _offline: OfflineResult) -> str | None:
        return None

    kept = await keep_or_overrule(Payload(text="Bonjour ?"), CTX, offline, model, accept)
    assert kept.strategy is StrategyUsed.LLM and kept.payload.language == "en" and kept.decision == "llm: en"
    assert offline.runs == 0


async def test_an_overruled_result_is_the_offline_one_with_the_reason_and_the_models_tokens() -> None:
    offline = Offline()
    seen: list[str | None] = []

    async def compare(result: AgentResult, offline_result: OfflineResult) -> str | None:
        theirs = await offline_result()
        seen.append(theirs.payload.language)
        return f"llm said {result.payload.language}; the detector is fairly sure"

    taken = await keep_or_overrule(Payload(text="Bonjour ?"), CTX, offline, model, compare)
    assert taken.strategy is StrategyUsed.LLM_OVERRULED and taken.payload.language == "fr"
    assert taken.decision == "language=fr (0.90) (llm said en; the detector is fairly sure)"
    assert taken.usage == MODEL_USAGE  # the model's tokens stay counted though its result was not taken
    assert seen == ["fr"] and offline.runs == 1  # the rule's offline result is the one taken, not a second run


async def test_a_failed_model_falls_back_without_asking_the_rule() -> None:
    offline = Offline()
    asked: list[AgentResult] = []

    async def rule(result: AgentResult, _offline: OfflineResult) -> str | None:
        asked.append(result)
        return "never"

    result = await keep_or_overrule(Payload(text="Bonjour ?"), CTX, offline, failing_model, rule)
    assert result.strategy is StrategyUsed.LLM_FAILED and "llm failed: timeout" in result.decision
    assert result.payload.language == "fr" and result.usage.prompt_tokens == 50
    assert asked == [] and offline.runs == 1


async def test_guardrails_does_not_take_a_models_refusal_before_the_search() -> None:
    async def refusing(payload: Payload, context: Context) -> AgentResult:
        refused = payload.evolve(refusal_reason="out_of_scope")
        return AgentResult(refused, "llm: out of scope", usage=MODEL_USAGE, strategy=StrategyUsed.LLM)

    result = await GuardrailsAgent(llm=refusing).run(Payload(text="How do I pair the remote?"), CTX)
    assert result.strategy is StrategyUsed.LLM_OVERRULED and result.payload.refusal_reason is None
    assert "llm refused a request the offline reading accepts" in result.decision
