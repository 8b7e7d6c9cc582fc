"""The retrieval benchmark on the fixture manual: fusion keeps the best of keyword and embedding search, in English,
across languages, and for exact terms."""

from __future__ import annotations

import pytest

from bench.retrieval import FIXTURE_MANUAL, evaluate, fixture_questions, folder_to_seed


@pytest.mark.integration
@pytest.mark.slow
def test_fusion_matches_the_best_baseline_per_question_kind() -> None:
    result = evaluate(folder_to_seed(FIXTURE_MANUAL), fixture_questions())
    by_lang = result["by_language"]
    for lang in ("ru", "es", "de", "zh"):
        ours, bm25 = by_lang[lang]["ours"], by_lang[lang]["bm25"]
        assert ours["hit@5"] >= 0.9 and ours["mrr"] >= by_lang[lang]["dense"]["mrr"] - 0.05, (lang, by_lang[lang])
        assert bm25["hit@5"] <= 0.5  # keyword search alone cannot cross languages
    assert by_lang["exact"]["ours"]["hit@1"] == 1.0
    assert by_lang["en"]["ours"]["mrr"] >= max(by_lang["en"]["bm25"]["mrr"], by_lang["en"]["dense"]["mrr"]) - 0.02
    assert result["systems"]["ours"]["mrr"] >= result["systems"]["dense"]["mrr"]
