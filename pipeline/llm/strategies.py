"""One LLM strategy per role that has an LLM behaviour; each fills the same payload fields as the offline agent.

Plug them into the agents through their `llm` argument: `XAgent(..., llm=strategies.get(XAgent.role))`.
Any failure raises `StrategyFailed`, so `run_with_fallback` lets the offline strategy answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import Sequence

from pipeline import text as textutil
from pipeline.agents.base import Strategy, StrategyFailed
from pipeline.agents.response import no_coverage_answer
from pipeline.envelope import AgentResult, Context, Payload, StreamCallback
from pipeline.llm import prompts
from pipeline.llm.client import StreamStats
from pipeline.llm.leak_guard import repeats_system_prompt
from pipeline.llm.schemas import (
    Answer,
    Clarification,
    EssenceDecision,
    GuardrailsDecision,
    LanguageDecision,
    QualityVerdict,
    ScopeVerdict,
    Translation,
    Understanding,
)
from pipeline.llm.streaming import StreamingLLM, stream_answer
from pipeline.llm.structured import OFFLINE_RESERVE_S, M, ask, call_deadline, remaining_s
from pipeline.llm.understand import Understander
from pipeline.locales.chinese import in_its_script
from pipeline.types import (
    LLM,
    ActionKind,
    ChatMessage,
    ClarificationReason,
    ContextType,
    DocsGap,
    LLMUsage,
    QualityDecision,
    RefusalReason,
    Role,
    StrategyUsed,
    SuggestedAction,
)

log = logging.getLogger(__name__)

DEFAULT_SCOPE = "the team's product and its documentation"
MAX_OPTIONS = 4
MAX_OPTION_CHARS = 75  # Slack button labels
_LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}$")
MIN_CONFIDENCE = 0.3  # below it a model's language guess is not trusted; the detector decides
MIN_QUESTION_WORDS = 2  # a "canonical question" of one word ("en") is no understanding


def weak_question(question: str) -> bool:
    """An empty or one-word canonical question (a small model's "en", "?"): the offline reading is better."""
    return len(re.findall(r"\w+", question)) < MIN_QUESTION_WORDS


def weak_understanding(found: Understanding) -> str | None:
    """Why the shared understanding is too weak to act on (each role then falls back offline), or None."""
    if found.confidence < MIN_CONFIDENCE:
        return f"weak understanding (confidence {found.confidence:.2f})"
    if weak_question(found.canonical_question):
        return "weak understanding (no usable canonical question)"
    return None


def language_code(raw: str) -> str:
    """`pt-BR` -> `pt`; anything that is not an ISO 639 code fails the strategy."""
    code = re.split(r"[-_]", raw.strip().lower())[0]
    if not _LANGUAGE_CODE.match(code):
        raise StrategyFailed("llm gave an invalid language code")
    return code


def same_language(a: str | None, b: str) -> bool:
    return a is not None and a.split("-")[0].lower() == b.split("-")[0].lower()


def _llm(payload: Payload, decision: str, usage: LLMUsage) -> AgentResult:
    return AgentResult(payload=payload, decision=decision, usage=usage, strategy=StrategyUsed.LLM)


def _scope_fields(verdict: ScopeVerdict, reason: str) -> dict[str, object]:
    inside = verdict == "in_scope"
    outside = RefusalReason.OUT_OF_SCOPE if verdict == "out_of_scope" else RefusalReason.CAPABILITY
    refusal = None if inside else outside
    return {"within_scope": inside, "scope_reason": reason, "refusal_reason": refusal}


class _LLMRole:
    """An LLM strategy: its calls end within the role's share of the question's time (`call_deadline`), so the
    offline strategy and the rest of the pipeline can still answer in time."""

    def __init__(
        self, llm: LLM, *, role_timeout_s: float | None = None, offline_reserve_s: float = OFFLINE_RESERVE_S
    ) -> None:
        self.llm = llm
        self.role_timeout_s = role_timeout_s
        self.offline_reserve_s = offline_reserve_s

    def deadline(self, context: Context, role: Role) -> float | None:
        return call_deadline(
            context.deadline, role, role_timeout_s=self.role_timeout_s, offline_reserve_s=self.offline_reserve_s
        )

    async def decide(
        self, messages: Sequence[ChatMessage], output: type[M], role: Role, context: Context
    ) -> tuple[M, LLMUsage]:
        """One structured decision of `role`, within its share of the question's time."""
        return await ask(self.llm, messages, output, role=role, deadline=self.deadline(context, role))


class LanguageStrategy(_LLMRole):
    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        found, usage = await self.decide(prompts.language(payload, context), LanguageDecision, Role.LANG, context)
        if found.confidence < MIN_CONFIDENCE:
            raise StrategyFailed(f"llm unsure of the language ({found.confidence:.2f})", usage)
        code = in_its_script(language_code(found.language), payload.text)  # "zh" for Traditional text: "zh-Hant"
        result = payload.evolve(language=code, confidence=found.confidence)
        return _llm(result, f"language={code} ({found.confidence:.2f})", usage)


class TranslationStrategy(_LLMRole):
    """Skips the call when the text is already in the documentation's language."""

    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        if same_language(payload.language, context.docs_language):
            return _llm(payload.evolve(text_eng=payload.text), f"already {context.docs_language}; no call", LLMUsage())
        found, usage = await self.decide(prompts.translation(payload, context), Translation, Role.TRANSLATION, context)
        return _llm(payload.evolve(text_eng=found.text_eng), f"translated {payload.language}->en", usage)


def _essence_fields(
    canonical: str, context_type: str, clarify: bool, reason: str | None, context: Context
) -> dict[str, object]:
    kind = ContextType(context_type) if context.history else ContextType.NEW_TOPIC
    fields: dict[str, object] = {"canonical_question": canonical.strip(), "context_type": kind}
    if clarify:
        fields |= {"needs_clarification": True, "clarification_reason": ClarificationReason(reason or "ambiguous")}
    return fields


def _essence_decision(fields: dict[str, object]) -> str:
    kind = fields["context_type"]
    return f"{kind}, clarify" if fields.get("needs_clarification") else f"{kind}"


class EssenceStrategy(_LLMRole):
    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        found, usage = await self.decide(prompts.essence(payload, context), EssenceDecision, Role.ESSENCE, context)
        if weak_question(found.canonical_question):
            raise StrategyFailed("llm gave no usable canonical question", usage)
        fields = _essence_fields(
            found.canonical_question,
            found.context_type,
            found.needs_clarification,
            found.clarification_reason,
            context,
        )
        return _llm(payload.evolve(**fields), _essence_decision(fields), usage)


class GuardrailsStrategy(_LLMRole):
    """Capability and topic, before search (the agent judges the evidence after search without a model)."""

    def __init__(
        self,
        llm: LLM,
        scope: str = DEFAULT_SCOPE,
        *,
        role_timeout_s: float | None = None,
        offline_reserve_s: float = OFFLINE_RESERVE_S,
    ) -> None:
        super().__init__(llm, role_timeout_s=role_timeout_s, offline_reserve_s=offline_reserve_s)
        self.scope = scope

    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        found, usage = await self.decide(
            prompts.guardrails(payload, context, self.scope),
            GuardrailsDecision,
            Role.GUARDRAILS,
            context,
        )
        return _llm(payload.evolve(**_scope_fields(found.verdict, found.reason)), found.verdict, usage)


class ResponseStrategy(_LLMRole):
    """Writes the cited answer in the user's language; on a regenerate round it reads the reviewer's notes.

    With `context.stream` set, the first draft is streamed (plain text) and shown through that callback as it
    grows; later drafts (regenerate, research) use the structured call, since a shown draft cannot be unsent.
    """

    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        if not payload.source_references:  # nothing to ground on: the localized "not covered" text, no call
            answer = no_coverage_answer(payload.language, ())
            uncovered = payload.evolve(response=answer, docs_insufficient=DocsGap.NO_SOURCES)
            return _llm(uncovered, "no sources; no call", LLMUsage())
        if context.stream is not None and payload.response is None and isinstance(self.llm, StreamingLLM):
            return await self._streamed(payload, context, self.llm, context.stream)
        language = payload.language or context.docs_language
        feedback = payload.quality_notes if payload.quality_decision is QualityDecision.REGENERATE else ()
        found, usage = await self.decide(
            prompts.answer(payload, context, language=language, feedback=feedback),
            Answer,
            Role.RESPONSE,
            context,
        )
        if found.insufficient:  # typed: the localized "not covered" text with the closest sections, never the model's
            answer = no_coverage_answer(payload.language, payload.source_references)
            uncovered = payload.evolve(response=answer, docs_insufficient=DocsGap.MODEL_SAYS_INSUFFICIENT)
            return _llm(uncovered, "documents insufficient", usage)
        if not found.answer.strip():
            raise StrategyFailed("llm gave an empty answer", usage)
        cites = sorted(set(textutil.citations(found.answer)))
        answered = payload.evolve(response=found.answer.strip(), docs_insufficient=None)
        return _llm(answered, f"answer citing {cites}", usage)

    async def _streamed(
        self, payload: Payload, context: Context, llm: StreamingLLM, show: StreamCallback
    ) -> AgentResult:
        """The answer through `stream_answer`; `show` sees the text so far. Any failure (the connection, the
        deadline, a reply quoting the system prompt) raises `StrategyFailed`, so the offline answer replaces
        whatever was shown."""
        deadline = self.deadline(context, Role.RESPONSE)
        language = payload.language or context.docs_language
        system = prompts.answer_plain(payload, context, language=language)[0].content
        stats = StreamStats()
        showing = True
        try:
            async with asyncio.timeout(remaining_s(deadline)):
                timed = dataclasses.replace(context, deadline=deadline)
                async for _ in stream_answer(llm, payload, timed, stats=stats):
                    if repeats_system_prompt(stats.text, system):
                        raise StrategyFailed("the reply repeated the system prompt")
                    if showing:
                        showing = await _show(show, stats.text)
        except TimeoutError:
            raise StrategyFailed("answer stream passed the role's deadline", usage=stats.usage) from None
        except StrategyFailed as failure:
            raise StrategyFailed(failure.reason, usage=stats.usage + failure.usage) from None
        answer = stats.text.strip()
        if not answer:
            raise StrategyFailed("llm gave an empty answer", usage=stats.usage)
        cites = sorted(set(textutil.citations(answer)))
        answered = payload.evolve(response=answer, docs_insufficient=None)
        return _llm(answered, f"answer citing {cites} (streamed)", stats.usage)


async def _show(show: StreamCallback, text: str) -> bool:
    """Pass the text so far on; a failing callback only ends the showing, never the answer."""
    try:
        await show(text)
    except Exception:
        log.warning("showing the streamed answer failed; the answer continues unshown", exc_info=True)
        return False
    return True


class QualityStrategy(_LLMRole):
    """Checks cited numbers in code first (a bad number means regenerate, no call), then asks the model
    whether every claim is supported."""

    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        if not payload.response:
            raise StrategyFailed("no answer to review")
        if payload.docs_insufficient:  # as offline: research once, then accept
            searched_again = payload.quality_decision is QualityDecision.RESEARCH
            decision = QualityDecision.APPROVE if searched_again else QualityDecision.RESEARCH
            uncovered = ("the documents found do not cover the question",)
            return _llm(self._decided(payload, decision, uncovered), f"{decision}: not covered", LLMUsage())
        known = {s.number for s in payload.source_references}
        cited = textutil.citations(payload.response)
        missing = sorted(set(cited) - known)
        if missing:
            bad = (f"cites {', '.join(f'[{n}]' for n in missing)} which no source has",)
            regenerate = self._decided(payload, QualityDecision.REGENERATE, bad)
            return _llm(regenerate, "regenerate: bad citation", LLMUsage())
        found, usage = await self.decide(prompts.quality(payload, context), QualityVerdict, Role.QUALITY, context)
        decision = QualityDecision(found.decision)
        notes: tuple[str, ...] = tuple(f"unsupported: {claim}" for claim in found.unsupported_claims[:5])
        if found.notes.strip():
            notes += (found.notes.strip(),)
        if decision is QualityDecision.APPROVE and (found.unsupported_claims or (known and not cited)):
            decision = QualityDecision.REGENERATE  # an approved answer must be supported and cite its sources
            notes += ("the answer must cite its sources",) if not cited else ()
        return _llm(self._decided(payload, decision, notes), str(decision), usage)

    @staticmethod
    def _decided(payload: Payload, decision: QualityDecision, notes: tuple[str, ...]) -> Payload:
        changes: dict[str, object] = {"quality_decision": decision, "quality_notes": notes}
        if decision is QualityDecision.CLARIFY:
            changes |= {"needs_clarification": True, "clarification_reason": ClarificationReason.AMBIGUOUS}
        return payload.evolve(**changes)


class ClarificationStrategy(_LLMRole):
    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        language = payload.language or context.docs_language
        found, usage = await self.decide(
            prompts.clarification(payload, context, language=language),
            Clarification,
            Role.CLARIFICATION,
            context,
        )
        if not found.message.strip():
            raise StrategyFailed("llm gave an empty clarifying question")
        labels = [o.strip()[:MAX_OPTION_CHARS] for o in found.options if o.strip()]
        actions = tuple(
            SuggestedAction(label=label, kind=ActionKind.SEARCH, value=label) for label in dict.fromkeys(labels)
        )[:MAX_OPTIONS]
        result = payload.evolve(
            needs_clarification=True, clarification_message=found.message.strip(), suggested_actions=actions
        )
        return _llm(result, f"clarify with {len(actions)} options", usage)


# --- fast mode: one "understand" call feeds four roles ------------------------------------------------------------


class _Understood:
    """One role's share of the shared "understand" call."""

    def __init__(self, understander: Understander) -> None:
        self.understander = understander


class UnderstoodLanguage(_Understood):
    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        found, usage = await self.understander.understand(payload, context, Role.LANG)
        if found.confidence < MIN_CONFIDENCE:
            raise StrategyFailed(f"llm unsure of the language ({found.confidence:.2f})", usage)
        code = in_its_script(language_code(found.language), payload.text)  # "zh" for Traditional text: "zh-Hant"
        result = payload.evolve(language=code, confidence=found.confidence)
        return _llm(result, f"language={code} ({found.confidence:.2f}) [understand]", usage)


class UnderstoodTranslation(_Understood):
    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        found, usage = await self.understander.understand(payload, context, Role.TRANSLATION)
        weak = weak_understanding(found)
        if weak is not None:
            raise StrategyFailed(weak, usage)
        if same_language(found.language, context.docs_language):
            return _llm(payload.evolve(text_eng=payload.text), f"already {context.docs_language} [understand]", usage)
        return _llm(payload.evolve(text_eng=found.text_eng), f"translated {found.language}->en [understand]", usage)


class UnderstoodEssence(_Understood):
    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        found, usage = await self.understander.understand(payload, context, Role.ESSENCE)
        weak = weak_understanding(found)
        if weak is not None:
            raise StrategyFailed(weak, usage)
        fields = _essence_fields(
            found.canonical_question,
            found.context_type,
            found.needs_clarification,
            found.clarification_reason,
            context,
        )
        return _llm(payload.evolve(**fields), f"{_essence_decision(fields)} [understand]", usage)


class UnderstoodGuardrails(_Understood):
    async def __call__(self, payload: Payload, context: Context) -> AgentResult:
        found, usage = await self.understander.understand(payload, context, Role.GUARDRAILS)
        weak = weak_understanding(found)
        if weak is not None:  # never refuse on a reading the model itself was unsure of
            raise StrategyFailed(weak, usage)
        fields = _scope_fields(found.scope_verdict, found.scope_reason)
        return _llm(payload.evolve(**fields), f"{found.scope_verdict} [understand]", usage)


def build_strategies(
    llm: LLM,
    *,
    fast: bool,
    scope: str = DEFAULT_SCOPE,
    role_timeout_s: float | None = None,
    offline_reserve_s: float = OFFLINE_RESERVE_S,
) -> dict[Role, Strategy]:
    """The LLM strategy of every role that has one. `fast`: one shared "understand" call for lang, translation,
    essence and guardrails. `scope` tells guardrails what the documentation covers. `role_timeout_s` (the runner's
    per-role timeout) caps each role's LLM time; `offline_reserve_s` of the question's deadline is always kept for
    the offline rest of the pipeline (see `pipeline.llm.structured.call_deadline`)."""
    timeout, reserve = role_timeout_s, offline_reserve_s
    strategies: dict[Role, Strategy] = {
        Role.RESPONSE: ResponseStrategy(llm, role_timeout_s=timeout, offline_reserve_s=reserve),
        Role.QUALITY: QualityStrategy(llm, role_timeout_s=timeout, offline_reserve_s=reserve),
        Role.CLARIFICATION: ClarificationStrategy(llm, role_timeout_s=timeout, offline_reserve_s=reserve),
    }
    if fast:
        understander = Understander(
            llm, scope=scope, role_timeout_s=role_timeout_s, offline_reserve_s=offline_reserve_s
        )
        strategies |= {
            Role.LANG: UnderstoodLanguage(understander),
            Role.TRANSLATION: UnderstoodTranslation(understander),
            Role.ESSENCE: UnderstoodEssence(understander),
            Role.GUARDRAILS: UnderstoodGuardrails(understander),
        }
    else:
        strategies |= {
            Role.LANG: LanguageStrategy(llm, role_timeout_s=timeout, offline_reserve_s=reserve),
            Role.TRANSLATION: TranslationStrategy(llm, role_timeout_s=timeout, offline_reserve_s=reserve),
            Role.ESSENCE: EssenceStrategy(llm, role_timeout_s=timeout, offline_reserve_s=reserve),
            Role.GUARDRAILS: GuardrailsStrategy(llm, scope, role_timeout_s=timeout, offline_reserve_s=reserve),
        }
    return strategies
