"""Building the ten offline agents in one call (the composition root passes LLM strategies when it has them)."""

from __future__ import annotations

from collections.abc import Mapping

from pipeline.agents.augmentation import AugmentationAgent
from pipeline.agents.base import Strategy
from pipeline.agents.clarification import ClarificationAgent
from pipeline.agents.essence import EssenceAgent
from pipeline.agents.guardrails import GuardrailsAgent
from pipeline.agents.lang import LangAgent
from pipeline.agents.quality import QualityAgent
from pipeline.agents.response import ResponseAgent
from pipeline.agents.search import SearchAgent
from pipeline.agents.translation import TranslationAgent
from pipeline.envelope import Agent
from pipeline.types import Embedder, Retriever, Role, Vocabulary


def build_agents(
    retriever: Retriever,
    *,
    embedder: Embedder | None = None,
    strategies: Mapping[Role, Strategy] | None = None,
    low_accuracy_language_detection: bool = False,
    answerability_threshold: float | None = None,
) -> dict[Role, Agent]:
    """One agent per role (the manager is the runner's own); `strategies` holds optional LLM strategies by role.

    `answerability_threshold` None measures answerability without refusing (the composition root passes its
    setting). A retriever that is also a `Vocabulary` (the hybrid one) tells the answerability check which words
    of a question no document uses."""
    llm = dict(strategies or {})
    agents: list[Agent] = [
        LangAgent(low_accuracy=low_accuracy_language_detection, llm=llm.get(Role.LANG)),
        TranslationAgent(llm=llm.get(Role.TRANSLATION)),
        EssenceAgent(llm=llm.get(Role.ESSENCE)),
        GuardrailsAgent(llm=llm.get(Role.GUARDRAILS)),
        SearchAgent(retriever, llm=llm.get(Role.SEARCH)),
        AugmentationAgent(embedder, llm=llm.get(Role.AUGMENTATION)),
        ResponseAgent(embedder, llm=llm.get(Role.RESPONSE)),
        QualityAgent(
            answerability_threshold=answerability_threshold,
            vocabulary=retriever if isinstance(retriever, Vocabulary) else None,
            embedder=embedder,
            llm=llm.get(Role.QUALITY),
        ),
        ClarificationAgent(retriever=retriever, llm=llm.get(Role.CLARIFICATION)),
    ]
    return {agent.role: agent for agent in agents}
