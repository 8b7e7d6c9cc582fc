"""Structured outputs of every LLM decision, as pydantic models, and their strict JSON schemas.

The schema `title` doubles as the `json_schema` name the endpoint sees. Every string, list and number is bounded
(`maxLength`, `maxItems`, `minimum`/`maximum`: OpenAI's strict mode and llama.cpp's grammar (llguidance) both enforce
them), and every decision has a `max_tokens` (`MAX_TOKENS`, by schema title) a little above what its bounded JSON
can take, so a runaway generation is cut by the server instead of holding its slot.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ScopeVerdict = Literal["in_scope", "out_of_scope", "beyond_capabilities"]
ClarifyReason = Literal["vague", "ambiguous"]  # keys of the localized clarification texts


SHORT = 200  # a reason, a note, a topic label
QUESTION = 400  # one canonical question or a translated message
ANSWER = 2400  # a cited answer


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LanguageDecision(_Output):
    model_config = ConfigDict(title="language_decision")
    language: str = Field(max_length=8, description="ISO 639-1 code of the message's language, e.g. en, de, ru")
    confidence: float = Field(ge=0, le=1)


class Translation(_Output):
    model_config = ConfigDict(title="translation")
    text_eng: str = Field(
        max_length=QUESTION * 2, description="the message in clear English, spelling fixed, meaning unchanged"
    )


class EssenceDecision(_Output):
    model_config = ConfigDict(title="essence_decision")
    canonical_question: str = Field(
        max_length=QUESTION, description="one self-contained question in English, pronouns resolved"
    )
    context_type: Literal["new_topic", "follow_up"]
    needs_clarification: bool
    clarification_reason: ClarifyReason | None = Field(
        description="vague: too little to go on; ambiguous: several readings"
    )


class GuardrailsDecision(_Output):
    model_config = ConfigDict(title="guardrails_decision")
    verdict: ScopeVerdict
    reason: str = Field(max_length=SHORT)


class Understanding(_Output):
    """The fast configuration's single call: lang + translation + essence + guardrails."""

    model_config = ConfigDict(title="understanding")
    language: str = Field(max_length=8, description="ISO 639-1 code, e.g. en, de, ru")
    confidence: float = Field(ge=0, le=1)
    text_eng: str = Field(max_length=QUESTION * 2)
    canonical_question: str = Field(max_length=QUESTION)
    context_type: Literal["new_topic", "follow_up"]
    needs_clarification: bool
    clarification_reason: ClarifyReason | None = Field(
        description="vague: too little to go on; ambiguous: several readings"
    )
    scope_verdict: ScopeVerdict
    scope_reason: str = Field(max_length=SHORT)


class Answer(_Output):
    model_config = ConfigDict(title="answer")
    answer: str = Field(max_length=ANSWER, description="the answer in the user's language, citing sources as [n]")
    insufficient: bool = Field(description="true when the documents do not answer the question")


class QualityVerdict(_Output):
    model_config = ConfigDict(title="quality_verdict")
    decision: Literal["approve", "research", "regenerate", "clarify"]
    unsupported_claims: list[Annotated[str, Field(max_length=SHORT)]] = Field(max_length=5)
    notes: str = Field(max_length=SHORT * 2)


class Clarification(_Output):
    model_config = ConfigDict(title="clarification")
    message: str = Field(max_length=QUESTION, description="a short clarifying question in the user's language")
    options: list[Annotated[str, Field(max_length=75)]] = Field(
        max_length=4, description="up to four likely topics the person may mean, in their language"
    )


# the most a decision may generate (tokens), by schema title; a plain streamed answer uses "answer"
MAX_TOKENS: dict[str, int] = {
    "language_decision": 40,
    "translation": 300,
    "essence_decision": 200,
    "guardrails_decision": 120,
    "understanding": 500,
    "answer": 900,
    "quality_verdict": 400,
    "clarification": 250,
}
DEFAULT_MAX_TOKENS = 900


def max_tokens_for(schema: dict[str, Any] | None) -> int:
    """The token cap of a structured decision (by its schema title), or of a plain answer."""
    if schema is None:
        return MAX_TOKENS["answer"]
    return MAX_TOKENS.get(str(schema.get("title") or ""), DEFAULT_MAX_TOKENS)


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the form strict structured output accepts: every property required,
    no extra properties, no defaults."""
    schema = copy.deepcopy(model.model_json_schema())

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            node.pop("default", None)
            if node.get("type") == "object" and "properties" in node:
                node["additionalProperties"] = False
                node["required"] = list(node["properties"])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(schema)
    return schema
