"""bench.answerability: the curve arithmetic, and docbot's 20 unanswerable questions through the whole offline bot."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.answerability import Question, Row, curve, docbot_set, point, run_set
from bench.emanual_data import session_embedder
from bot.settings import Settings

OPERATING_POINT = Settings.model_fields["answerability_threshold"].default  # the deployed default


def row(answerable: bool, kind: str, score: float | None, gold: bool | None = None) -> Row:
    return Row(Question("q", answerable), kind, None, gold, score)


@pytest.mark.unit
def test_a_point_of_the_curve_refuses_below_the_threshold_and_counts_gold_only_when_answered() -> None:
    rows = [
        row(True, "answer", 0.9, gold=True),
        row(True, "answer", 0.2, gold=True),  # refused at 0.3: its gold no longer counts
        row(True, "clarification", None, gold=False),  # declined by the pipeline at any threshold
        row(False, "answer", 0.1),
        row(False, "answer", 0.8),
    ]
    assert point(rows, 0.0) == {"threshold": 0.0, "unanswerable_refused": 0.0, "answerable_refused": 0.333,
                                "gold_cited": 0.667}  # fmt: skip
    assert point(rows, 0.3) == {"threshold": 0.3, "unanswerable_refused": 0.5, "answerable_refused": 0.667,
                                "gold_cited": 0.333}  # fmt: skip
    refused = [p["unanswerable_refused"] for p in curve(rows)]
    assert refused == sorted(refused)  # a higher threshold never refuses less


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(1800)  # ingests docs/ with e5: minutes on a loaded 2-core box
async def test_docbots_docs_do_not_answer_the_twenty_questions() -> None:
    """The 20 questions of bench/data/docbot_unanswerable.jsonl through the whole offline bot over docs/, with the
    bundled e5 embeddings as in production (the hashing stand-in finds nothing, so every question would be refused
    as out of scope and the test would prove nothing). Slow: it ingests docs/ (minutes on a loaded box)."""
    folder, questions = docbot_set()
    assert len(questions) == 20
    # the bundled e5 vectors, memoised on disk across sessions like the e-manual tests' (the same model's output)
    rows = await run_set("docbot", [str(folder)], questions, session_embedder(), threshold=OPERATING_POINT)
    refused = [r for r in rows if r.kind != "answer"]
    # Issue 15 asks for 0.8. Measured 0.95 (19 of 20) since two words of a question that no document uses count as
    # a question about something else ("subscription ... month", "voice ... huddle", "rotate ... downtime"); the one
    # still answered quotes "Back up the PostgreSQL database as usual", which does answer it, in part. The floor
    # leaves one question of room for docs that grow.
    assert len(refused) / len(rows) >= 0.9
    # most of them by the answerability decision, not by the search finding nothing
    assert sum(r.reason == "no_coverage" and r.score is not None for r in refused) >= 10


@pytest.mark.unit
def test_the_deployed_coefficients_are_the_fit_of_the_committed_tune_rows() -> None:
    """pipeline/agents/answerability.py's COEFFICIENTS come from `--fit` on the committed tune rows: a change to a
    signal or a feature that moves the fit shows here, and the coefficients are refitted, never edited by hand."""
    from bench.answerability import fit
    from pipeline.agents.answerability import COEFFICIENTS, MEANING_FEATURES, WORDS_ONLY_COEFFICIENTS

    rows = Path(__file__).resolve().parents[2] / "bench" / "results" / "answerability-tune-20261126-stop36.json.gz"
    assert fit([rows]) == COEFFICIENTS
    assert fit([rows], without=MEANING_FEATURES) == WORDS_ONLY_COEFFICIENTS


@pytest.mark.unit
def test_the_recorded_evidence_holds_the_unknown_words_the_decision_reads() -> None:
    """`--fit` and `--rescore --remeasure` read the words no document uses from a run's rows: they must be the words
    the quality role counts, filler ("lol", "anyone") left out, not a second look-up of its own."""
    from bench.answerability import _evidence
    from tests.pipeline.test_answerability import RecordingVocabulary, answered

    payload = answered("has anyone paired the remote over zigbee lol?", "Hold the Link key to pair the remote again.")
    recorded = _evidence(payload, "en", RecordingVocabulary(("anyon", "zigbe", "lol")))
    assert recorded["unknown"] == ["zigbe"]
