"""clarification: the clarifying question in the person's language, with choices from the corpus.

Templates per reason live in `pipeline.locales`. Choices are the suggested actions another role proposed, or
else the distinct sections the search matched (at most `max_options`), plus "rephrase my question". When a role
asked before anything was searched (a vague first message), the sections nearest to the message are looked up, so
the person still gets choices from the documentation rather than only "rephrase".
"""

from __future__ import annotations

from typing import ClassVar

from pipeline.agents.base import Strategy, run_with_fallback
from pipeline.agents.search import section_actions
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import content_words, texts
from pipeline.text import looks_like_question
from pipeline.types import (
    ActionKind,
    ClarificationReason,
    QualityDecision,
    Retriever,
    Role,
    SearchHit,
    SearchRequest,
    SuggestedAction,
)


def clarification_reason(payload: Payload) -> ClarificationReason:
    """Why we ask (the template's key): the asking role's reason when it gave one, else inferred."""
    if payload.chosen_action is not None and payload.chosen_action.kind is ActionKind.REPHRASE:
        return ClarificationReason.REPHRASE
    if payload.clarification_reason:
        return payload.clarification_reason
    if payload.quality_decision is QualityDecision.REGENERATE:
        return ClarificationReason.UNVERIFIED
    if payload.quality_decision is QualityDecision.CLARIFY:
        return ClarificationReason.NO_COVERAGE
    return ClarificationReason.GENERIC


def answers_clarification(pending: Payload, reply: str) -> bool:
    """Whether `reply` answers the pending clarifying question (or refines the question it asked about), rather
    than starting a new question. A reply that is itself a question sharing no word with the pending question or
    its choices is a new question ("What's the capital of France?"); short replies, replies naming a choice, and
    replies that share a word with the pending question answer it."""
    words = set(content_words(reply))
    if not words:
        return True  # "yes", "that one": only meaningful as an answer
    asked = " ".join(
        [pending.canonical_question or "", pending.text, *(f"{a.label} {a.value}" for a in pending.suggested_actions)]
    )
    if words & set(content_words(asked)):
        return True
    return not looks_like_question(reply)


class ClarificationAgent:
    role: ClassVar[Role] = Role.CLARIFICATION

    def __init__(
        self,
        *,
        retriever: Retriever | None = None,
        max_options: int = 4,
        option_floor: float = 0.0,
        llm: Strategy | None = None,
    ) -> None:
        self._retriever = retriever
        self._max_options = max_options  # topic choices; with "rephrase" at most 5 buttons, Slack's comfortable row
        self._option_floor = option_floor
        self._llm = llm

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        if payload.clarification_reason is ClarificationReason.THANKED:
            return await self._offline(payload, context)  # a fixed line: nothing for a model to write
        return await run_with_fallback(payload, context, self._offline, self._llm)

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        words = texts(payload.language)
        reason = clarification_reason(payload)
        generic = words.clarify[ClarificationReason.GENERIC]
        message = words.clarify.get(reason) or payload.clarification_message or generic
        if reason in (ClarificationReason.REPHRASE, ClarificationReason.THANKED):
            options: tuple[SuggestedAction, ...] = ()
        else:
            proposed = tuple(a for a in payload.suggested_actions if a.kind is ActionKind.SEARCH)
            hits = payload.search_results or await self._nearest_sections(payload, context)
            found = proposed or section_actions(hits, floor=self._option_floor, limit=self._max_options)
            options = (*found[: self._max_options], SuggestedAction(words.rephrase_label, ActionKind.REPHRASE))
        result = payload.evolve(
            needs_clarification=True,
            clarification_reason=reason,
            clarification_message=message,
            suggested_actions=options,
        )
        return AgentResult(result, f"clarify ({reason}) with {len(options)} choices")

    async def _nearest_sections(self, payload: Payload, context: Context) -> tuple[SearchHit, ...]:
        if self._retriever is None:
            return ()
        query = payload.canonical_question or payload.text
        # text_eng is the English of the message; once the question was rewritten (a vague "it doesn't work" in a
        # thread becomes the thread's topic) it no longer says what to look for
        english = payload.language in (None, "en")
        request = SearchRequest(
            text=query,
            text_eng=query if english else (payload.text_eng if query == payload.text else None),
            language=payload.language,
            collections=context.collections,
            top_k=20,
        )
        return (await self._retriever.search(request)).hits
