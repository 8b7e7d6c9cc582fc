"""quality: is every statement of the answer traceable to a source it cites?

Offline checks, line by line (template lines such as the lead-in are exempt): every cited number must exist; a
quote must appear verbatim in a source it cites; a bullet naming a section must name a cited source; other prose
must cite and share most of its content words with what it cites (checked only when the answer is in the docs'
language). A failure asks to regenerate. "The docs don't cover this" asks for one research round first.

Before any of that (and before an LLM review), the answerability step (pipeline/agents/answerability.py) asks
whether the quoted evidence answers *this* question; when it does not, the answer is replaced by "the docs don't
say" with the closest sections, `answerability` records the typed reason, and the manager ends the run as a
`no_coverage` refusal. In LLM mode the response model's typed `insufficient` (`DocsGap.MODEL_SAYS_INSUFFICIENT`)
asks for one research round like any "not covered"; if the model still says so, the same decision refuses with
reason `model_insufficient`.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from pipeline import text as textutil
from pipeline.agents.answerability import AnswerabilityCheck, docs_dont_say
from pipeline.agents.base import OfflineResult, Strategy, keep_or_overrule
from pipeline.agents.search import section_key
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import UNSUPPORTED_LANGUAGE, lexicon, texts
from pipeline.types import ActionKind, DocsGap, Embedder, QualityDecision, Role, SourceReference, Vocabulary


def chose_this_section(payload: Payload) -> bool:
    """The run resumed from a section the person picked, and the sources are that section."""
    chosen = payload.chosen_action
    if chosen is None or chosen.kind is not ActionKind.SEARCH or not chosen.value:
        return False
    picked = {h.chunk_id for h in payload.search_results if section_key(h).casefold() == chosen.value.casefold()}
    return bool(picked) and any(s.chunk_id in picked for s in payload.source_references)


def _folded(text: str) -> str:
    return textutil.comparable(text)


def untraceable_lines(
    answer: str, sources: tuple[SourceReference, ...], *, language: str | None, docs_language: str, min_overlap: float
) -> list[str]:
    """Operator-facing notes, one per line of `answer` that is not backed by a source it cites."""
    words = texts(language)
    templates = {
        _folded(t)
        for t in (
            words.answer_lead_in,
            words.team_answer_lead_in,
            words.no_coverage,
            words.closest_sections,
            UNSUPPORTED_LANGUAGE,
        )
    }
    by_number = {s.number: s for s in sources}
    notes: list[str] = []
    lines = answer.splitlines()
    skip_until = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if number <= skip_until or not line or _folded(line) in templates:
            continue
        block = _captioned_block(lines, number - 1)
        if block is not None:
            # `**Page › Section** [n]` over a quoted list, table or code block: every line is checked as a quote
            skip_until = number + len(block)
            cited = textutil.citations(line)
            backing = [by_number[n] for n in cited if n in by_number]
            quoted = "\n".join(block)
            if not backing or any(
                not any(_folded(part) in _folded(s.text) for s in backing)
                for part in (p.rstrip("…").strip() for p in textutil.sentences(quoted))
                if _folded(part)
            ):
                notes.append(f"line {number} quotes a block not found in sources {cited}")
            continue
        cited = textutil.citations(line)
        missing = sorted({n for n in cited if n not in by_number})
        if missing:
            notes.append(f"line {number} cites {missing}, which no source has")
            continue
        if not cited:
            notes.append(f"line {number} cites no source")
            continue
        backing = [by_number[n] for n in cited]
        body = textutil.without_citations(line)
        if body.startswith(">"):
            quote = body.lstrip("> ").strip()
            for sentence in textutil.sentences(quote):
                piece = _folded(sentence.rstrip("…").strip())
                if piece and not any(piece in _folded(s.text) for s in backing):
                    notes.append(f"line {number} quotes text not found in sources {cited}")
                    break
        elif body.startswith(("- ", "* ")) and body.lstrip("-* ").strip("* ").strip() in {s.title for s in backing}:
            continue
        elif (language or docs_language) == docs_language:
            stop = lexicon(docs_language).stopwords
            claimed = textutil.features(body, stop, docs_language)
            found = set().union(*(textutil.features(s.text, stop, docs_language) for s in backing))
            if textutil.overlap(claimed, found) < min_overlap:
                notes.append(f"line {number} is not supported by sources {cited}")
    return notes


def _captioned_block(lines: list[str], index: int) -> list[str] | None:
    """The lines under a caption line (`**...** [n]` followed by non-blank lines), or None."""
    line = lines[index].strip()
    if not (line.startswith("**") and textutil.citations(line) and index + 1 < len(lines) and lines[index + 1].strip()):
        return None
    block: list[str] = []
    for following in lines[index + 1 :]:
        if not following.strip():
            break
        block.append(following)
    return block


class QualityAgent:
    role: ClassVar[Role] = Role.QUALITY

    def __init__(
        self,
        *,
        min_overlap: float = 0.6,
        answerability_threshold: float | None = None,
        vocabulary: Vocabulary | None = None,
        embedder: Embedder | None = None,
        llm: Strategy | None = None,
    ) -> None:
        """`answerability_threshold` None measures answerability without ever refusing; `vocabulary` (the search's
        keyword index) lets it see the question's words that no document uses, and `embedder` how central such a
        word is to the question."""
        self._min_overlap = min_overlap
        self._answerability = AnswerabilityCheck(answerability_threshold, vocabulary, embedder)
        self._llm = llm

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        # a response that already says the docs don't cover it (typed, offline or model) takes the research path;
        # the model's typed "insufficient" after that round is the answerability decision's (MODEL_INSUFFICIENT)
        model_says = payload.docs_insufficient is DocsGap.MODEL_SAYS_INSUFFICIENT
        searched_again = payload.quality_decision is QualityDecision.RESEARCH
        if payload.source_references and payload.response and (not payload.docs_insufficient or
                                                                (model_says and searched_again)):  # fmt: skip
            verdict = await self._answerability.assess(payload, context.docs_language, context.collections)
            if not verdict.answerable and chose_this_section(payload):
                # the person picked this section from a clarification: they say it is what they asked about, so it
                # answers, whatever the score of their (often one-word) question against it
                verdict = dataclasses.replace(verdict, answerable=True, reason=None)
            payload = payload.evolve(answerability=verdict)
            if not verdict.answerable:
                question = payload.canonical_question or payload.text
                reply = docs_dont_say(question, payload.language, payload.source_references)
                refused = payload.evolve(response=reply, quality_decision=QualityDecision.APPROVE, quality_notes=())
                reason = verdict.reason.value if verdict.reason else "unknown"
                return AgentResult(refused, f"not answerable ({reason}, score {verdict.score:.2f})")
        return await keep_or_overrule(payload, context, self._offline, self._llm, self._overrule)

    @staticmethod
    async def _overrule(model: AgentResult, offline_result: OfflineResult) -> str | None:
        # A model's verdict that withholds the answer is taken only where the offline check finds fault too: a weak
        # model asking to regenerate (or to clarify) a draft whose every line is traceable to a source it cites
        # would otherwise end in a clarification instead of that answer. A model's "clarify" is never taken: the
        # offline verdict (approve or regenerate) stands instead.
        decision = model.payload.quality_decision
        if decision is QualityDecision.APPROVE:
            return None
        offline = await offline_result()
        if offline.payload.quality_decision is not QualityDecision.APPROVE and decision is not QualityDecision.CLARIFY:
            return None
        said = decision.value if decision else "nothing"
        return f"llm said {said}; the offline check differs"

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        answer = (payload.response or "").strip()
        if not answer:
            return self._decide(payload, QualityDecision.REGENERATE, ("there is no answer",))
        if payload.docs_insufficient:  # typed "the docs don't cover this", set by the response role
            if payload.quality_decision is QualityDecision.RESEARCH:
                return self._decide(payload, QualityDecision.APPROVE, ("docs do not cover it, after a research round",))
            return self._decide(payload, QualityDecision.RESEARCH, ("the docs found do not cover the question",))
        notes = untraceable_lines(
            answer,
            payload.source_references,
            language=payload.language,
            docs_language=context.docs_language,
            min_overlap=self._min_overlap,
        )
        if notes:
            return self._decide(payload, QualityDecision.REGENERATE, tuple(notes))
        return self._decide(payload, QualityDecision.APPROVE, ())

    @staticmethod
    def _decide(payload: Payload, decision: QualityDecision, notes: tuple[str, ...]) -> AgentResult:
        result = payload.evolve(quality_decision=decision, quality_notes=notes)
        summary = f"{decision.value}" + (f": {notes[0]}" if notes else "")
        return AgentResult(result, summary)
