"""translation: clean the text (whitespace, control characters, mentions); English text becomes `text_eng`.

Offline there is no translation: other languages pass through and the multilingual embedder carries the
cross-language search.
"""

from __future__ import annotations

from typing import ClassVar

from pipeline.agents.base import Strategy, run_with_fallback
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.text import clean, strip_mentions
from pipeline.types import Role


class TranslationAgent:
    role: ClassVar[Role] = Role.TRANSLATION

    def __init__(self, llm: Strategy | None = None) -> None:
        self._llm = llm

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        cleaned = payload.evolve(text=clean(strip_mentions(payload.text)) or clean(payload.text))
        return await run_with_fallback(cleaned, context, self._offline, self._llm)

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        if (payload.language or "en") == "en":
            return AgentResult(payload.evolve(text_eng=payload.text), "normalised; english")
        return AgentResult(payload.evolve(text_eng=None), f"normalised; pass-through ({payload.language})")
