"""The numbered sources: in the order of their best passage, approved team answers after the documentation's
sections (cited below them when both are kept)."""

from __future__ import annotations

import pytest

from pipeline.agents.augmentation import lead_first
from pipeline.types import TEAM_ANSWER_DOC_PREFIX, Passage, PassageKind, Reading, SourceReference

pytestmark = pytest.mark.unit

TEAM = f"{TEAM_ANSWER_DOC_PREFIX}1234"


def source(number: int, doc_id: str, score: float) -> SourceReference:
    return SourceReference(number, f"{doc_id}-0000", doc_id, doc_id, (), f"https://x/{doc_id}", "text", score)


def passage(number: int, score: float) -> Passage:
    return Passage(number, 0, PassageKind.PARAGRAPH, f"passage of {number}", score=score)


def test_a_team_answer_is_numbered_after_the_docs_even_when_its_passage_leads() -> None:
    sources = (source(1, TEAM, 0.9), source(2, "doc-a", 0.7), source(3, "doc-b", 0.6))
    reading = Reading(passages=(passage(1, 0.95), passage(3, 0.8), passage(2, 0.5)))
    ranked, renumbered = lead_first(sources, reading)
    assert [(s.number, s.doc_id) for s in ranked] == [(1, "doc-b"), (2, "doc-a"), (3, TEAM)]
    # the passages follow their sources: the best one (the team answer's) still leads, now as [3]
    assert [(p.source, p.text) for p in renumbered.passages] == [
        (3, "passage of 1"), (1, "passage of 3"), (2, "passage of 2")]
    assert ranked[2].confidence == 0.9  # the order moves, the score (which the answer weighs) does not


def test_without_a_team_answer_the_best_passage_leads_as_before() -> None:
    sources = (source(1, "doc-a", 0.9), source(2, "doc-b", 0.7))
    ranked, _ = lead_first(sources, Reading(passages=(passage(2, 0.9), passage(1, 0.4))))
    assert [s.doc_id for s in ranked] == ["doc-b", "doc-a"]


@pytest.mark.parametrize(
    ("language", "name"),
    [("pt", "Portuguese"), ("ko", "Korean"), ("ar", "Arabic"), ("zh-CN", "Simplified Chinese"),
     ("zh-TW", "Traditional Chinese"), ("zh-Hant", "Traditional Chinese")],
)  # fmt: skip
def test_the_models_instructions_name_the_persons_language(language: str, name: str) -> None:
    """A code the model may misread ("Write the answer in pt") is said by its name: from the locale when docbot has
    one, else from the language detector, for any language it knows."""
    from pipeline.agents.augmentation import grounded_prompt

    prompt = grounded_prompt("Como emparelho o controle?", language, (), max_chars=100)
    assert f"Write the answer in {name}." in prompt
