"""The pipeline's vocabulary: roles, decisions, the data that crosses agent boundaries, and the protocols
the pipeline needs from the outside world (implemented in storage/ and bot/, faked in tests)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Final, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

# the shared words live with the neutral messages; the pipeline names them from here too
from pipeline.messages.vocabulary import ActionKind as ActionKind
from pipeline.messages.vocabulary import HistoryMessage as HistoryMessage
from pipeline.messages.vocabulary import Role as Role

Vector = npt.NDArray[np.float32]


TEAM_ANSWER_DOC_PREFIX: Final = "answer-"
"""Documents whose id starts with this are answers the team gave in threads, approved by a maintainer
(storage/answers): searched and answer-decided like any document, numbered after the documentation's sections."""


def is_team_answer(doc_id: str) -> bool:
    return doc_id.startswith(TEAM_ANSWER_DOC_PREFIX)


class ContextType(StrEnum):
    NEW_TOPIC = "new_topic"
    FOLLOW_UP = "follow_up"


class SearchQuality(StrEnum):
    EXCELLENT = "excellent"
    GOOD = "good"
    POOR = "poor"


class StrategyUsed(StrEnum):
    """How a hop got its result, as the trace, the metrics and the reply's notes read it (stored by value)."""

    OFFLINE = "offline"
    LLM = "llm"
    LLM_FAILED = "llm->offline"  # the model failed or was cut; the offline strategy answered (the reply says so)
    LLM_OVERRULED = "llm-overruled"  # the model answered in time, but a guard took the offline result instead
    KEYWORD_ONLY = "keyword-only"  # the vector index failed; the keyword search answered (the reply says so)
    CACHE = "cache"  # the semantic cache answered; no agent ran


class RefusalReason(StrEnum):
    """Why a question is refused: the payload's `refusal_reason` and a refusal's `PipelineResult.reason`."""

    CAPABILITY = "capability"  # beyond what the bot does (write code, role-play, injection)
    OUT_OF_SCOPE = "out_of_scope"  # no evidence in the docs
    NO_COVERAGE = "no_coverage"  # the docs were found but do not say it (a docs gap); a result's reason only


class ClarificationReason(StrEnum):
    """Why the person is asked back; also the key of the localized clarifying question (`Texts.clarify`)."""

    VAGUE = "vague"
    AMBIGUOUS = "ambiguous"
    UNVERIFIED = "unverified"  # no draft could be backed by the docs
    NO_COVERAGE = "no_coverage"  # the review asked to clarify: did you mean one of these topics?
    REPHRASE = "rephrase"  # the person chose "ask in other words"
    GENERIC = "generic"
    THANKED = "thanked"  # thanks in a thread: acknowledged, nothing asked back and nothing searched


class FailureKind(StrEnum):
    """Why a run stopped short: an `EnvelopeError`'s kind and a failure's or busy result's `PipelineResult.reason`."""

    TIMEOUT = "timeout"
    EXCEPTION = "exception"
    BUSY = "busy"
    CIRCUIT_BREAKER = "circuit_breaker"
    ROUTING = "routing"
    INVALID_RESULT = "invalid_result"


class QualityDecision(StrEnum):
    APPROVE = "approve"
    RESEARCH = "research"
    REGENERATE = "regenerate"
    CLARIFY = "clarify"


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One retrieved section of the documentation."""

    chunk_id: str
    doc_id: str
    section: str  # section anchor within the document ("" for the whole document)
    title: str
    crumbs: tuple[str, ...]
    url: str  # citation link (source plus anchor)
    text: str
    score: float  # fused score in [0, 1]
    collection: str = "default"
    level_scores: dict[str, float] = field(default_factory=dict)  # keywords / dense / crumbs / summary


class AnswerabilityReason(StrEnum):
    """Why the evidence found does not answer the question (a docs gap, not a search failure)."""

    MISSING_TERMS = "missing_terms"  # a name, number or code of the question is absent from the quoted block
    UNKNOWN_TERMS = "unknown_terms"  # the question asks about words no document uses ("subscription", "huddle")
    UNMATCHED_NEGATION = "unmatched_negation"  # the question negates; the block does not
    UNKNOWN_NAMES = "unknown_names"  # the question names something (a product, a service) no document mentions
    NO_NUMBER = "no_number"  # the question asks for a number (a size, a count) the quoted block does not give
    NOT_DOCS = "not_docs"  # the question asks what a shop or other people answer (price, shipping, opinions)
    NO_ANSWER_TYPE = "no_answer_type"  # asks when / how many / who; the block has no date / number / name
    WEAK_EVIDENCE = "weak_evidence"  # little of the question in the block, levels disagree, no clear best section
    MODEL_INSUFFICIENT = "model_insufficient"  # the response model said the documents do not answer it


class DocsGap(StrEnum):
    """`Payload.docs_insufficient`: why the response is the localized "not covered" text (a docs gap)."""

    NO_SOURCES = "no_sources"
    POOR_SEARCH = "poor_search"
    NO_QUOTABLE_BLOCK = "no_quotable_block"
    MODEL_SAYS_INSUFFICIENT = "model_says_insufficient"  # the response model's typed `insufficient` (LLM mode)


@dataclass(frozen=True, slots=True)
class AnswerabilitySignals:
    """The measured evidence behind an answerability decision (see pipeline/agents/answerability.py)."""

    term_coverage: float = 0.0  # share of the question's content words in the best passage of the quote
    # (up to three consecutive sentences of one quoted block: words scattered over several blocks do not add up)
    missing_terms: int = 0  # names, numbers and codes of the question absent from the quoted block
    distinguishing_terms: int = 0  # how many names, numbers and codes the question has
    unseen_terms: int = 0  # of the missing names and codes, those no section the search found has either
    unknown_terms: int = 0  # words of the question no document uses, not even spelt a letter apart (own words only)
    unmatched_negation: bool = False
    answer_type_missing: bool = False
    levels_agree: bool = False  # the best section is also the best by keywords and by embedding
    margin: float = 0.0  # fused score of the best section minus the next one's
    top_score: float = 0.0
    # read for meaning, in any language (pipeline/reading.py, pipeline/intent.py)
    meaning: float = 0.0  # the embedding model's cosine between the question and the best quoted passage
    unknown_names: int = 0  # names of the question (Latin-script, in any language) that no document uses
    # how far the question's meaning moves without its one word no document uses (1 - cosine): far, and that word
    # is what it asks about ("does it support hulu?"); near, and it is context ("legal is asking how long ...")
    unknown_shift: float = 0.0
    number_missing: bool = False  # the question asks for a number (a size, a count) and the quoted block has none
    thing_missing: bool = False  # it asks whether the product has a thing ("a headphone port?") the quote never names
    purchase: float = 0.0  # how much nearer the question is to a shop's questions than to a docs question
    opinion: float = 0.0  # how much nearer it is to asking for people's opinions than to a docs question
    same_language: bool = True  # the question is in the docs' language (its words can be compared with theirs)


@dataclass(frozen=True, slots=True)
class Answerability:
    """Does the best evidence answer this question? `score` in [0, 1] is compared with the deployment's threshold."""

    answerable: bool
    score: float
    reason: AnswerabilityReason | None = None  # set when not answerable
    signals: AnswerabilitySignals = AnswerabilitySignals()


@dataclass(frozen=True, slots=True)
class SourceReference:
    """A numbered source an answer may cite as [n]."""

    number: int
    chunk_id: str
    doc_id: str
    title: str
    crumbs: tuple[str, ...]
    url: str
    text: str
    confidence: float


class PassageKind(StrEnum):
    PARAGRAPH = "paragraph"
    LIST = "list"
    TABLE = "table"
    CODE = "code"
    QUOTE = "quote"


@dataclass(frozen=True, slots=True)
class Passage:
    """A quotable piece of a numbered source, read against the question (pipeline/reading.py)."""

    source: int  # the `SourceReference.number` it comes from
    block: int  # 1000 x the block's position in the source, plus the first sentence of a window
    kind: PassageKind
    text: str  # Markdown, as in the source
    ordered: bool = False  # a numbered list
    meaning: float = 0.0  # the embedding model's cosine between the question and the passage (0: not embedded)
    words: float = 0.0  # share of the question's content words in the passage and its headings (docs' language)
    score: float = 0.0  # the ranking: meaning, words and the section's search rank together


class QuestionIntent(StrEnum):
    """What kind of answer a question wants, read from its meaning (pipeline/intent.py)."""

    DOCS = "docs"  # how to, what is, does it do: what documentation explains
    MEASURE = "measure"  # a number: a size, weight, count, rate or capacity
    PURCHASE = "purchase"  # price, shipping, returns, warranty, release: what a shop answers
    OPINION = "opinion"  # how good, would you recommend, anyone else: what other people answer


@dataclass(frozen=True, slots=True)
class Reading:
    """The sources read against the question: passages best first (the one that answers leads) and the kind of
    answer the question wants. Set by the augmentation role; the response quotes from it, the quality role's
    answerability decision weighs it."""

    passages: tuple[Passage, ...] = ()
    intent: QuestionIntent = QuestionIntent.DOCS
    intent_margin: float = 0.0  # how much nearer the question is to its intent than to a docs question (0 for docs)
    unread: str | None = None  # why the passages were read by words and rank only (the embedder failed), if so

    def lead(self) -> Passage | None:
        return self.passages[0] if self.passages else None

    def of_source(self, number: int) -> tuple[Passage, ...]:
        return tuple(p for p in self.passages if p.source == number)


@dataclass(frozen=True, slots=True)
class SuggestedAction:
    """A choice offered to the person; `value` is what resuming with it means (e.g. a topic to search)."""

    label: str
    kind: ActionKind = ActionKind.SEARCH
    value: str = ""


@dataclass(frozen=True, slots=True)
class SearchRequest:
    text: str  # the query in its original language
    text_eng: str | None = None  # English form when known
    language: str | None = None
    collections: tuple[str, ...] = ("default",)
    top_k: int = 8


@dataclass(frozen=True, slots=True)
class SearchResponse:
    hits: tuple[SearchHit, ...]
    quality: SearchQuality
    timings_ms: dict[str, float] = field(default_factory=dict)
    keyword_only: bool = False  # the vector index failed and only the keyword levels answered
    top_score: float = 0.0  # the best section's score the quality grade read (hits are ordered by their own score)
    margin: float = 0.0  # how far that score is ahead of the next section's


@dataclass(frozen=True, slots=True)
class LLMUsage:
    """Calls and tokens. `estimated`: some of the tokens are our estimate (a call cut before the server reported
    its usage still cost the server its prompt), not the server's own count."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    estimated: bool = False

    def __add__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
            self.estimated or other.estimated,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True, slots=True)
class LLMResult:
    text: str
    data: dict[str, Any] | None  # parsed structured output when a schema was given
    usage: LLMUsage


class Retriever(Protocol):
    """Multi-level search over the documentation (storage/ implements it)."""

    async def search(self, request: SearchRequest) -> SearchResponse: ...


@runtime_checkable
class Vocabulary(Protocol):
    """The words the documentation uses (storage/ implements it over the keyword index)."""

    def unknown_terms(self, text: str, collections: tuple[str, ...]) -> tuple[str, ...]:
        """The search terms of `text` that no document of `collections` uses, not even with a letter typed wrong
        (blocking: a scan of the vocabulary for each term it does not know)."""
        ...


class Embedder(Protocol):
    """Text embeddings; implementations run blocking work off the event loop."""

    @property
    def dim(self) -> int: ...

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


@runtime_checkable
class LLM(Protocol):
    """A chat model. `schema` asks for structured output (a JSON schema); the result's `data` is then set."""

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: Role,
        schema: dict[str, Any] | None = None,
        temperature: float | None = None,
    ) -> LLMResult: ...


class Clock(Protocol):
    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...
