"""search: asks the retriever for the canonical question and grades what came back.

A terse question ("light", "the sound", "limits") that several distinct sections match about equally well (within
10% of the best, whether the search grades it good or excellent: a bare word says nothing of which one) asks the
person which one they mean, with those sections as the choices. A full question is
answered from the best sections instead: asking back on every close call annoys more than it helps; so is any
question with its question word or a yes/no question, however short ("what is picture mode?", "does it have
Wi-Fi?"): the best section answers it, the others are cited beside it when nearly as good. A poor search
does not ask either: nothing in the docs matches well, so the answer says the docs don't cover it (an off-topic
question gets no menu of unrelated sections). A research round (quality asked for it) searches wider, adding the
original text. A message saying what is wrong leads with the sections about that problem (`problem_first`): the ones
its words title, else the ones with a sentence saying the same thing fails; ranked by all its words, it finds a
passage quoting such a message, or a section about another failure, first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import cache
from typing import ClassVar

from pipeline import text as textutil
from pipeline.agents.base import Strategy, run_with_fallback
from pipeline.closest import topic_words
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import (
    BROKEN_WORDS,
    asks_in_words_without_spaces,
    asks_why,
    asks_yes_no,
    content_words,
    lexicon,
    negates,
    reports_failure,
    texts,
)
from pipeline.text import QUESTION_WORDS, sentences, shorten
from pipeline.types import (
    ActionKind,
    ClarificationReason,
    ContextType,
    QualityDecision,
    Retriever,
    Role,
    SearchHit,
    SearchQuality,
    SearchRequest,
    SearchResponse,
    StrategyUsed,
    SuggestedAction,
)

MAX_LABEL_CHARS = 75  # Slack button labels
MIN_PAGE_CHARS = 16  # the least of a page's name a shortened label keeps


def section_actions(hits: tuple[SearchHit, ...], *, floor: float, limit: int) -> tuple[SuggestedAction, ...]:
    """Distinct sections among the hits scoring at least `floor`, best first, as search choices."""
    seen: set[str] = set()
    actions: list[SuggestedAction] = []
    for hit in sorted(hits, key=lambda h: h.score, reverse=True):
        if hit.score < floor:
            break
        title = hit.title.strip() or (hit.crumbs[-1] if hit.crumbs else "")
        key = title.casefold()
        if not title or key in seen:
            continue
        seen.add(key)
        value = section_key(hit)
        actions.append(SuggestedAction(label=choice_label(value, title), kind=ActionKind.SEARCH, value=value))
        if len(actions) == limit:
            break
    return tuple(actions)


def choice_label(key: str, title: str) -> str:
    """A button's label: "Slack › Creating the app" (the page says which section it is); when that is too long for a
    button, the page is shortened, never dropped ("Reliability: nothing lost… › What happens when things go wrong")."""
    if len(key) <= MAX_LABEL_CHARS or key == title:
        return shorten(key, MAX_LABEL_CHARS)
    page = key[: len(key) - len(title)].removesuffix(" › ")
    room = MAX_LABEL_CHARS - len(title) - len(" › ")
    if room < MIN_PAGE_CHARS:  # a long section title: both shortened, the page first
        return shorten(f"{shorten(page, MIN_PAGE_CHARS)} › {title}", MAX_LABEL_CHARS)
    return f"{shorten(page, room)} › {title}"


def section_key(hit: SearchHit) -> str:
    """`parent › title`: what a section choice carries, so same-named sections stay apart."""
    title = hit.title.strip() or (hit.crumbs[-1] if hit.crumbs else "")
    parents = [c for c in hit.crumbs if c.strip() and c.casefold() != title.casefold()]
    return " › ".join([*parents[-1:], title])


def chosen_only(hits: tuple[SearchHit, ...], chosen: str) -> tuple[tuple[SearchHit, ...], bool]:
    """The hits of the section the person chose, when any (they picked it by name: the answer comes from it);
    otherwise all hits unchanged."""
    wanted = chosen.casefold()
    picked = tuple(h for h in hits if section_key(h).casefold() == wanted)
    return (picked, True) if picked else (hits, False)


def full_question(text: str, language: str | None) -> bool:
    """A question with its question word ("what is picture mode?", "how do I reset?", opening any of its sentences;
    in Chinese or Japanese anywhere in it) or a yes/no question ("does it have Wi-Fi?"): the person said what they
    want to know about their words, unlike a bare "light" or "the sound"."""
    openers = [s.strip().lstrip("¿¡").split()[:1] for s in sentences(text) or [text]]
    asks = any(first and first[0].lower() in QUESTION_WORDS for first in openers)  # "I want X. How can I do that?"
    return asks or asks_in_words_without_spaces(text) or asks_yes_no(text, language)


def on_topic(hits: Sequence[SearchHit], topic: str, language: str | None, docs_language: str) -> list[SearchHit]:
    """The hits whose page or section title shares a word of `topic` ("The TV Won't Connect to the Internet" for
    "the internet connection"); a word in the titles of most of them ("TV", "Troubleshooting") says nothing."""
    wanted = topic_words(topic, language, docs_language)
    titles = [textutil.features(" ".join((*h.crumbs, h.title)), (), docs_language) for h in hits]
    common = {w for w in wanted if sum(w in t for t in titles) * 2 > len(titles)} if len(titles) >= 4 else set()
    return [h for h, t in zip(hits, titles, strict=True) if (wanted - common) & t]


def says_what_is_wrong(text: str, language: str | None) -> bool:
    """A message saying something fails ("my remote doesn't work", "keeps crashing"), a statement negating something
    ("the TV has no sound") or a question asking why something is not so ("why doesn't the remote pair?"); a question
    asking how or what with a "not" in it ("how do I make HR's docs answerable in #hr, not in #general?") asks for a
    way."""
    return reports_failure(text) or (negates(text) and (asks_why(text) or not full_question(text, language)))


NAMED_SHARE = 2 / 3  # this share of a section title's words in a message names that section
MIN_TITLE_WORDS = 2  # a one-word title ("Troubleshooting", "Channels") names no particular problem
MAX_SYMPTOM_WORDS = 12  # a sentence stating a problem is short (a row of a table of problems), not a note in passing
BELOW_PROBLEM = 0.9  # the other sections' scores at most this share of the problem's: they are read after it


def named_sections(
    hits: Sequence[SearchHit], message: str, language: str | None, docs_language: str
) -> list[SearchHit]:
    """The hits whose section title the message says in its own words: at least `MIN_TITLE_WORDS` title words, and
    `NAMED_SHARE` of them in the message ("The bot does not answer in a channel" for "the bot doesn't answer in my
    channel", "The TV Won't Connect to the Internet" for "my tv won't connect to the internet")."""
    said = topic_words(message, language, docs_language)
    named = []
    for hit in hits:
        title = topic_words(hit.title, docs_language, docs_language)
        if len(title) >= MIN_TITLE_WORDS and len(title & said) >= NAMED_SHARE * len(title):
            named.append(hit)
    return named


@cache
def failing_words(docs_language: str) -> frozenset[str]:
    """The words that say something fails ("stopped", "crashing"), as `topic_words` gives them: no subject."""
    return frozenset().union(*(topic_words(w, docs_language, docs_language) for w in BROKEN_WORDS))


def stating_sections(
    hits: Sequence[SearchHit], message: str, language: str | None, docs_language: str
) -> list[SearchHit]:
    """The hits with a short sentence saying what the message says fails, of the same thing: every subject word of
    the message, and a failure as the message reports one ("The remote control and/or voice control does not work."
    in a table of problems, for "my remote doesn't work"), or a negation as it negates."""
    subject = topic_words(message, language, docs_language) - failing_words(docs_language)
    if not subject:
        return []
    fails = reports_failure(message)
    stating = []
    for hit in hits:
        for sentence in sentences(hit.text):
            if len(sentence.split()) > MAX_SYMPTOM_WORDS:
                continue
            if subject <= textutil.features(sentence, (), docs_language) and (
                reports_failure(sentence) if fails else negates(sentence)
            ):
                stating.append(hit)
                break
    return stating


def problem_first(
    found: SearchResponse, message: str, language: str | None, docs_language: str
) -> tuple[SearchResponse, tuple[SearchHit, ...]]:
    """A message saying what is wrong, with the sections about that problem first, and those sections: the ones whose
    titles name it (docs title their problem-solving entries by the symptom: "The bot answers twice", "My File Won't
    Play"), else the ones with a sentence stating it (a row of a table of problems). Ranked by all their words, a
    passage that merely mentions the problem (an example in a design note) or a section about another failure ("...
    Isn't Working") comes first."""
    first = named_sections(found.hits, message, language, docs_language) or stating_sections(
        found.hits, message, language, docs_language
    )
    if not first:
        return found, ()
    if first[0] is found.hits[0]:
        return found, tuple(first)  # the search put the problem first already
    ids = {h.chunk_id for h in first}
    top = found.hits[0].score
    # those sections at the best score, the rest a step below in their order: the sources are numbered and read
    # best score first
    lead = tuple(dataclasses.replace(h, score=max(h.score, top)) for h in first)
    below = top * BELOW_PROBLEM
    rest = [dataclasses.replace(h, score=min(h.score, below)) for h in found.hits if h.chunk_id not in ids]
    return dataclasses.replace(found, hits=(*lead, *rest)), lead


class SearchAgent:
    role: ClassVar[Role] = Role.SEARCH

    def __init__(
        self,
        retriever: Retriever,
        *,
        top_k: int = 8,
        research_top_k: int = 16,
        moderate_score: float = 0.3,
        ambiguity_share: float = 0.9,
        terse_words: int = 2,
        max_options: int = 5,
        llm: Strategy | None = None,
    ) -> None:
        self._retriever = retriever
        self._top_k = top_k
        self._research_top_k = research_top_k
        self._moderate_score = moderate_score
        self._ambiguity_share = ambiguity_share
        self._terse_words = terse_words  # a question this short that matches several sections equally is ambiguous
        self._max_options = max_options
        self._llm = llm

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        return await run_with_fallback(payload, context, self._offline, self._llm)

    async def _troubleshooting_first(
        self, found: SearchResponse, request: SearchRequest, language: str | None, docs_language: str
    ) -> SearchResponse:
        """"What if that doesn't work?" after an answer: the docs' troubleshooting sections on the thread's topic
        first, then what the topic's own search found (a topic with no troubleshooting section of its own keeps its
        sections, which often say what to do when it fails, rather than the manual's general troubleshooting)."""
        words = lexicon(docs_language).troubleshooting
        english = f"{request.text_eng} {words}" if request.text_eng else None
        trouble = await self._retriever.search(dataclasses.replace(request, text=f"{request.text} {words}",
                                                                   text_eng=english))  # fmt: skip
        first = on_topic(trouble.hits, request.text, language, docs_language)
        if not first:
            return found
        ids = {h.chunk_id for h in first}
        # the two searches score on their own scales: the topic's sections are kept below the troubleshooting ones,
        # so the sources, numbered best score first, keep this order
        floor = min(h.score for h in first)
        rest = (dataclasses.replace(h, score=min(h.score, floor)) for h in found.hits if h.chunk_id not in ids)
        return dataclasses.replace(found, hits=(*first, *rest)[: request.top_k])

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        query = payload.canonical_question or payload.text
        research = payload.quality_decision is QualityDecision.RESEARCH
        if research and payload.text not in query:
            query = f"{query} {payload.text}"
        failed = payload.context_type is ContextType.FOLLOW_UP and reports_failure(payload.text)
        english = payload.language in (None, "en")
        text_eng = query if english else (payload.text_eng if query == payload.text else None)
        request = SearchRequest(
            text=query,
            text_eng=text_eng,
            language=payload.language,
            collections=context.collections,
            top_k=self._research_top_k if research else self._top_k,
        )
        found = await self._retriever.search(request)
        if failed:
            found = await self._troubleshooting_first(found, request, payload.language, context.docs_language)
        problem: tuple[SearchHit, ...] = ()
        if not failed and says_what_is_wrong(payload.text, payload.language):
            found, problem = problem_first(found, payload.text, payload.language, context.docs_language)
        hits, quality = found.hits, found.quality
        chosen = payload.chosen_action
        if chosen is not None and chosen.kind is ActionKind.SEARCH and chosen.value:
            hits, pinned = chosen_only(hits, chosen.value)
            if not pinned:  # the combined question missed it: look the chosen section up by its own name
                by_name = await self._retriever.search(dataclasses.replace(request, text=chosen.value, text_eng=None))
                found_by_name, pinned = chosen_only(by_name.hits, chosen.value)
                hits = found_by_name if pinned else hits
            if pinned and quality is SearchQuality.POOR:
                quality = SearchQuality.GOOD  # the person named the section; it is relevant by their choice
        found = dataclasses.replace(found, hits=hits, quality=quality)
        result = payload.evolve(search_results=found.hits, search_quality=found.quality)
        top = found.hits[0].score if found.hits else 0.0
        decision = f"{len(found.hits)} hits, {found.quality.value}, top {top:.2f}" + (" (research)" if research else "")
        strategy = StrategyUsed.KEYWORD_ONLY if found.keyword_only else StrategyUsed.OFFLINE
        if found.keyword_only:
            decision += "; keywords only (vector index unavailable)"
        terse = len(content_words(query, payload.language)) <= self._terse_words and not full_question(
            payload.text, payload.language
        )
        clear = found.quality in (SearchQuality.GOOD, SearchQuality.EXCELLENT)  # a poor search asks nothing
        if clear and terse and payload.chosen_action is None and not research:
            floor = max(self._moderate_score, top * self._ambiguity_share)
            # a problem some sections name or state: the choice is among those (one answers, without asking)
            options = section_actions(problem or found.hits, floor=floor, limit=self._max_options)
            if len(options) >= 2:
                result = result.evolve(
                    needs_clarification=True,
                    clarification_reason=ClarificationReason.AMBIGUOUS,
                    clarification_message=texts(payload.language).clarify[ClarificationReason.AMBIGUOUS],
                    suggested_actions=options,
                )
                return AgentResult(result, f"{decision}; {len(options)} candidate sections: clarify", strategy=strategy)
        return AgentResult(result, decision, strategy=strategy)
