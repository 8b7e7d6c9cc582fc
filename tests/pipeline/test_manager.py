"""The manager's table: every row is reachable and routes where it says; first match wins."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.envelope import Payload
from pipeline.manager import TABLE, Manager, NoRoute, Outcome, Situation, Transition
from pipeline.types import (
    ActionKind,
    Answerability,
    AnswerabilityReason,
    DocsGap,
    QualityDecision,
    Role,
    SearchQuality,
    SuggestedAction,
)

pytestmark = pytest.mark.unit


def situation(sender: Role | None, *, research: int = 0, regenerate: int = 0, **changes: Any) -> Situation:
    return Situation(
        sender=sender,
        payload=Payload(text="how do I pair the remote?").evolve(**changes),
        research_rounds=research,
        regenerate_rounds=regenerate,
        max_research_rounds=1,
        max_regenerate_rounds=1,
    )


SEARCHED = {"search_quality": SearchQuality.GOOD}
DRAFTED = {"response": "Hold the Link key for 3 seconds. [1]"}
UNCOVERED = {"response": "I couldn't find this in the documentation.", "docs_insufficient": DocsGap.POOR_SEARCH}

# (case id, situation, expected next step, expected round counter)
CASES: list[tuple[str, Situation, Role | Outcome, str | None]] = [
    ("start", situation(None), Role.LANG, None),
    ("resume with a search choice", situation(None, chosen_action=SuggestedAction("Remote")), Role.SEARCH, None),
    (
        "resume with rephrase",
        situation(None, chosen_action=SuggestedAction("Rephrase", ActionKind.REPHRASE)),
        Role.CLARIFICATION,
        None,
    ),
    ("lang", situation(Role.LANG), Role.TRANSLATION, None),
    ("translation", situation(Role.TRANSLATION), Role.ESSENCE, None),
    ("essence", situation(Role.ESSENCE), Role.GUARDRAILS, None),
    ("essence asks to clarify", situation(Role.ESSENCE, needs_clarification=True), Role.CLARIFICATION, None),
    ("guardrails before search", situation(Role.GUARDRAILS), Role.SEARCH, None),
    ("search", situation(Role.SEARCH, **SEARCHED), Role.GUARDRAILS, None),
    ("guardrails after search", situation(Role.GUARDRAILS, within_scope=True, **SEARCHED), Role.AUGMENTATION, None),
    ("capability refusal", situation(Role.GUARDRAILS, refusal_reason="capability"), Outcome.REFUSAL, None),
    ("out of scope", situation(Role.GUARDRAILS, within_scope=False, **SEARCHED), Outcome.REFUSAL, None),
    ("augmentation", situation(Role.AUGMENTATION, **SEARCHED), Role.RESPONSE, None),
    ("response", situation(Role.RESPONSE, **SEARCHED), Role.QUALITY, None),
    ("approve", situation(Role.QUALITY, quality_decision=QualityDecision.APPROVE, **DRAFTED), Outcome.ANSWER, None),
    (
        "approved, but the docs do not cover it",
        situation(Role.QUALITY, quality_decision=QualityDecision.APPROVE, **UNCOVERED),
        Outcome.NO_COVERAGE,
        None,
    ),
    (
        "approved, no response",
        situation(Role.QUALITY, quality_decision=QualityDecision.APPROVE),
        Outcome.NO_COVERAGE,
        None,
    ),
    (
        "approved, and answerable",
        situation(
            Role.QUALITY, quality_decision=QualityDecision.APPROVE, answerability=Answerability(True, 0.9), **DRAFTED
        ),
        Outcome.ANSWER,
        None,
    ),
    (
        "the docs do not answer it",
        situation(
            Role.QUALITY,
            quality_decision=QualityDecision.APPROVE,
            answerability=Answerability(False, 0.1, AnswerabilityReason.MISSING_TERMS),
        ),
        Outcome.NO_COVERAGE,
        None,
    ),
    ("research", situation(Role.QUALITY, quality_decision=QualityDecision.RESEARCH), Role.SEARCH, "research"),
    (
        "research of a 'not covered' response, rounds left",
        situation(Role.QUALITY, quality_decision=QualityDecision.RESEARCH, **UNCOVERED),
        Role.SEARCH,
        "research",
    ),
    (
        "research exhausted",
        situation(Role.QUALITY, research=1, quality_decision=QualityDecision.RESEARCH, **DRAFTED),
        Outcome.ANSWER,
        None,
    ),
    (
        "research exhausted, still not covered",
        situation(Role.QUALITY, research=1, quality_decision=QualityDecision.RESEARCH, **UNCOVERED),
        Outcome.NO_COVERAGE,
        None,
    ),
    ("regenerate", situation(Role.QUALITY, quality_decision=QualityDecision.REGENERATE), Role.RESPONSE, "regenerate"),
    (
        "regenerate exhausted",
        situation(Role.QUALITY, regenerate=1, quality_decision=QualityDecision.REGENERATE),
        Role.CLARIFICATION,
        None,
    ),
    ("quality clarify", situation(Role.QUALITY, quality_decision=QualityDecision.CLARIFY), Role.CLARIFICATION, None),
    ("clarification done", situation(Role.CLARIFICATION, needs_clarification=True), Outcome.CLARIFICATION, None),
]


@pytest.mark.parametrize(("situation_", "expected", "counts"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_routes(situation_: Situation, expected: Role | Outcome, counts: str | None) -> None:
    row = Manager().route(situation_)
    assert row.to == expected
    assert row.counts_round == counts


def test_every_row_of_the_table_is_exercised() -> None:
    manager = Manager()
    used = {manager.route(case[1]) for case in CASES}
    assert set(TABLE) - used == set()


@pytest.mark.parametrize("sender", [r for r in Role if r not in (Role.MANAGER, Role.CLARIFICATION)] + [None])
def test_any_role_may_ask_to_clarify(sender: Role | None) -> None:
    asking = situation(sender, needs_clarification=True, clarification_reason="vague", **SEARCHED)
    assert Manager().route(asking).to is Role.CLARIFICATION


@pytest.mark.parametrize("sender", [r for r in Role if r is not Role.MANAGER] + [None])
def test_a_refusal_from_any_role_ends_the_run(sender: Role | None) -> None:
    assert Manager().route(situation(sender, refusal_reason="capability")).to is Outcome.REFUSAL


def test_refusal_wins_over_clarification() -> None:
    both = situation(Role.ESSENCE, refusal_reason="capability", needs_clarification=True)
    assert Manager().route(both).to is Outcome.REFUSAL


def test_no_matching_row_is_reported() -> None:
    only_start = Manager(table=(Transition(Role.LANG, TABLE[0].when, Role.TRANSLATION),))
    with pytest.raises(NoRoute):
        only_start.route(situation(Role.QUALITY))
