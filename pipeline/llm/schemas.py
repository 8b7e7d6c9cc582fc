"""Structured outputs of every LLM decision, as pydantic models, and their strict JSON schemas.

The schema `title` doubles as the `json_schema` name the endpoint sees.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ScopeVerdict = Literal["in_scope", "out_of_scope", "beyond_capabilities"]
ClarifyReason = Literal["vague", "ambiguous"]  # keys of the localized clarification texts


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LanguageDecision(_Output):
    model_config = ConfigDict(title="language_decision")
    language: str = Field(description="ISO 639-1 code of the message's language, e.g. en, de, ru")
    confidence: float = Field(ge=0, le=1)


class Translation(_Output):
    model_config = ConfigDict(title="translation")
    text_eng: str = Field(description="the message in clear English, spelling fixed, meaning unchanged")


class EssenceDecision(_Output):
    model_config = ConfigDict(title="essence_decision")
    canonical_question: str = Field(description="one self-contained question in English, pronouns resolved")
    context_type: Literal["new_topic", "follow_up"]
    needs_clarification: bool
    clarification_reason: ClarifyReason | None = Field(
        description="vague: too little to go on; ambiguous: several readings"
    )


class GuardrailsDecision(_Output):
    model_config = ConfigDict(title="guardrails_decision")
    verdict: ScopeVerdict
    reason: str


class Understanding(_Output):
    """The fast configuration's single call: lang + translation + essence + guardrails."""

    model_config = ConfigDict(title="understanding")
    language: str
    confidence: float = Field(ge=0, le=1)
    text_eng: str
    canonical_question: str
    context_type: Literal["new_topic", "follow_up"]
    needs_clarification: bool
    clarification_reason: ClarifyReason | None = Field(
        description="vague: too little to go on; ambiguous: several readings"
    )
    scope_verdict: ScopeVerdict
    scope_reason: str


class Answer(_Output):
    model_config = ConfigDict(title="answer")
    answer: str = Field(description="the answer in the user's language, citing sources as [n]")
    insufficient: bool = Field(description="true when the documents do not answer the question")


class QualityVerdict(_Output):
    model_config = ConfigDict(title="quality_verdict")
    decision: Literal["approve", "research", "regenerate", "clarify"]
    unsupported_claims: list[str]
    notes: str


class Clarification(_Output):
    model_config = ConfigDict(title="clarification")
    message: str = Field(description="a short clarifying question in the user's language")
    options: list[str] = Field(description="up to four likely topics the person may mean, in their language")


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
