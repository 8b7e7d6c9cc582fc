"""clarification: the clarifying question in the person's language, with choices from the corpus.

Templates per reason live in `pipeline.locales`. Choices are the suggested actions another role proposed, or
else the distinct sections the search matched (at most `max_options`), plus "rephrase my question".
"""

from __future__ import annotations

from typing import ClassVar

from pipeline.agents.base import Strategy, run_with_fallback
from pipeline.agents.search import section_actions
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import texts
from pipeline.types import ActionKind, QualityDecision, Role, SuggestedAction


def clarification_reason(payload: Payload) -> str:
    """The template key for why we ask: the asking role's reason when it is a known one, else inferred."""
    if payload.chosen_action is not None and payload.chosen_action.kind is ActionKind.REPHRASE:
        return "rephrase"
    if payload.clarification_reason:
        return payload.clarification_reason
    if payload.quality_decision is QualityDecision.REGENERATE:
        return "unverified"
    if payload.quality_decision is QualityDecision.CLARIFY:
        return "no_coverage"
    return "generic"


class ClarificationAgent:
    role: ClassVar[Role] = Role.CLARIFICATION

    def __init__(self, *, max_options: int = 5, option_floor: float = 0.0, llm: Strategy | None = None) -> None:
        self._max_options = max_options
        self._option_floor = option_floor
        self._llm = llm

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        return await run_with_fallback(payload, context, self._offline, self._llm)

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        words = texts(payload.language)
        reason = clarification_reason(payload)
        message = words.clarify.get(reason) or payload.clarification_message or words.clarify["generic"]
        if reason == "rephrase":
            options: tuple[SuggestedAction, ...] = ()
        else:
            proposed = tuple(a for a in payload.suggested_actions if a.kind is ActionKind.SEARCH)
            found = proposed or section_actions(
                payload.search_results, floor=self._option_floor, limit=self._max_options
            )
            options = (*found[: self._max_options], SuggestedAction(words.rephrase_label, ActionKind.REPHRASE))
        result = payload.evolve(
            needs_clarification=True,
            clarification_reason=reason,
            clarification_message=message,
            suggested_actions=options,
        )
        return AgentResult(result, f"clarify ({reason}) with {len(options)} choices")
