"""lang: which language the person writes in (lingua, over a bounded set of languages).

Short texts ("ok", "and the TV?") say little about their language, so they take the language of the thread's
earlier messages unless the detector is sure (a different script, for instance).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

from lingua import IsoCode639_1, Language, LanguageDetector, LanguageDetectorBuilder

from pipeline.agents.base import Strategy, run_with_fallback
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.text import one_line, strip_mentions, word_count
from pipeline.types import Role

DEFAULT_LANGUAGES: tuple[str, ...] = ("en", "es", "de", "fr", "ru", "zh", "pt", "it", "ja", "ko", "uk", "pl", "nl")


@lru_cache(maxsize=4)
def build_detector(languages: tuple[str, ...] = DEFAULT_LANGUAGES, low_accuracy: bool = False) -> LanguageDetector:
    """Build (once per process and language set) a detector with its models preloaded. Blocking: ~1 s, ~300 MB
    for the default 13 languages in high-accuracy mode; ~0.1 s, ~20 MB in low-accuracy mode."""
    chosen = [Language.from_iso_code_639_1(IsoCode639_1.from_str(code)) for code in languages]
    builder = LanguageDetectorBuilder.from_languages(*chosen).with_preloaded_language_models()
    if low_accuracy:
        builder = builder.with_low_accuracy_mode()
    return builder.build()


class LangAgent:
    role: ClassVar[Role] = Role.LANG

    def __init__(
        self,
        languages: Sequence[str] = DEFAULT_LANGUAGES,
        *,
        short_words: int = 4,
        sure: float = 0.9,
        min_confidence: float = 0.5,
        low_accuracy: bool = False,
        llm: Strategy | None = None,
    ) -> None:
        self._languages = tuple(languages)
        self._short_words = short_words
        self._sure = sure
        self._min_confidence = min_confidence
        self._low_accuracy = low_accuracy
        self._llm = llm

    async def warm_up(self) -> None:
        """Build the detector off the event loop now rather than on the first question."""
        await asyncio.to_thread(build_detector, self._languages, self._low_accuracy)

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        return await run_with_fallback(payload, context, self._offline, self._llm)

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        text = one_line(strip_mentions(payload.text))
        language, confidence = await asyncio.to_thread(self._detect, text)
        source = "text"
        if word_count(text) < self._short_words and (language is None or confidence < self._sure):
            earlier = " ".join(m.text for m in context.history if not m.from_bot)[-1000:]
            found, found_confidence = await asyncio.to_thread(self._detect, one_line(strip_mentions(earlier)))
            if found is not None:
                language, confidence, source = found, found_confidence, "thread history"
            elif payload.language:
                language, confidence, source = payload.language, payload.confidence or 0.0, "earlier turn"
            elif language is None or confidence < self._min_confidence:
                language, source = context.docs_language, "default"
        elif language is None:
            language, source = context.docs_language, "default"
        result = payload.evolve(language=language, confidence=round(confidence, 3))
        return AgentResult(result, f"language={language} ({confidence:.2f}, from {source})")

    def _detect(self, text: str) -> tuple[str | None, float]:
        if not text.strip():
            return None, 0.0
        values = build_detector(self._languages, self._low_accuracy).compute_language_confidence_values(text)
        if not values or values[0].value <= 0:
            return None, 0.0
        best = values[0]
        return best.language.iso_code_639_1.name.lower(), float(best.value)
