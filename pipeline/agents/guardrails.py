"""guardrails: is the request something a documentation assistant does, and do the docs speak to it?

It runs twice, as the manager's table says. Before search (offline or LLM) it checks the capability boundary:
write me a program, ignore your instructions, reveal your prompt, role-play; patterns in every supported language,
whatever language was detected. After search it judges scope from the retrieval evidence alone (no model call):
no hit, or a poor search whose best hit is below `out_of_scope_below`, is out of scope."""

from __future__ import annotations

import re
from typing import ClassVar

from pipeline.agents.base import OfflineResult, Strategy, keep_or_overrule
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import all_lexicons
from pipeline.text import one_line
from pipeline.types import RefusalReason, Role, SearchQuality

CAPABILITY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE)) for lex in all_lexicons().values() for kind, pattern in lex.capability
)


def beyond_capability(text: str) -> str | None:
    """The kind of request beyond a documentation assistant ("code", "injection", ...), or None."""
    flat = one_line(text)
    for kind, pattern in CAPABILITY_PATTERNS:
        if pattern.search(flat):
            return kind
    return None


class GuardrailsAgent:
    role: ClassVar[Role] = Role.GUARDRAILS

    def __init__(self, *, out_of_scope_below: float = 0.3, llm: Strategy | None = None) -> None:
        self._out_of_scope_below = out_of_scope_below
        self._llm = llm

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        if payload.search_quality is not None:
            return self._scope(payload)  # the evidence decides; no model call on the second pass
        offline = self._capability(payload)
        if offline.payload.refusal_reason is not None or self._llm is None:
            return offline  # known injection and capability patterns refuse whatever a model would say
        return await keep_or_overrule(payload, context, self._offline, self._llm, self._overrule)

    @staticmethod
    async def _overrule(model: AgentResult, _offline: OfflineResult) -> str | None:
        # a model's refusal before any search is not taken on its own (a weak model refused "How do I pair the
        # remote?"): the offline reading lets it through, and the search evidence decides the scope after
        if model.payload.refusal_reason is None:
            return None
        return "llm refused a request the offline reading accepts"

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        return self._capability(payload)

    def _capability(self, payload: Payload) -> AgentResult:
        kind = beyond_capability(payload.text) or beyond_capability(payload.canonical_question or "")
        if kind is None:
            return AgentResult(payload, "within capabilities")
        refused = payload.evolve(refusal_reason=RefusalReason.CAPABILITY, scope_reason=f"capability:{kind}")
        return AgentResult(refused, f"beyond capabilities ({kind})")

    def _scope(self, payload: Payload) -> AgentResult:
        top = max((hit.score for hit in payload.search_results), default=0.0)
        if not payload.search_results or (
            payload.search_quality is SearchQuality.POOR and top < self._out_of_scope_below
        ):
            reason = f"no evidence in the docs (search {payload.search_quality}, top score {top:.2f})"
            out = payload.evolve(within_scope=False, refusal_reason=RefusalReason.OUT_OF_SCOPE, scope_reason=reason)
            return AgentResult(out, f"out of scope: top score {top:.2f}")
        inside = payload.evolve(within_scope=True, scope_reason=f"search {payload.search_quality}, top {top:.2f}")
        return AgentResult(inside, f"in scope (search {payload.search_quality}, top {top:.2f})")
