"""The numbered sources: the best hits above a share of the top score; approved team answers after the docs."""

from __future__ import annotations

import pytest

from pipeline.agents.augmentation import number_sources
from pipeline.types import TEAM_ANSWER_DOC_PREFIX, SearchHit

pytestmark = pytest.mark.unit


def hit(doc_id: str, score: float) -> SearchHit:
    return SearchHit(f"{doc_id}-0000", doc_id, "", doc_id, (), f"https://x/{doc_id}", f"text of {doc_id}", score)


def test_a_team_answer_is_numbered_after_the_docs_it_was_kept_with() -> None:
    team = f"{TEAM_ANSWER_DOC_PREFIX}1234"
    sources = number_sources((hit("doc-b", 0.6), hit(team, 0.9), hit("doc-a", 0.7), hit("far", 0.2)),
                             limit=5, min_share=0.5)  # fmt: skip
    assert [(s.number, s.doc_id) for s in sources] == [(1, "doc-a"), (2, "doc-b"), (3, team)]
    assert sources[2].confidence == 0.9  # the order moves, the score (which the answer weighs) does not


def test_the_same_floor_and_limit_decide_what_is_kept() -> None:
    team = f"{TEAM_ANSWER_DOC_PREFIX}1"
    kept = number_sources((hit(team, 0.9), hit("doc-a", 0.3)), limit=5, min_share=0.5)
    assert [s.doc_id for s in kept] == [team]  # a doc below the floor is not brought in by the answer's presence
    only_two = number_sources((hit("doc-a", 0.9), hit("doc-b", 0.8), hit(team, 0.7)), limit=2, min_share=0.1)
    assert [s.doc_id for s in only_two] == ["doc-a", "doc-b"]
