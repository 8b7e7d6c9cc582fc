"""`bench.seam` on this tree, small: every question goes the whole way (inbox put to outbox sent) and is posted once,
and a question costs at most 10 commits end to end (issue 29's target; reads count, being transactions too)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.seam import REPO, run_child

pytestmark = pytest.mark.integration


def test_a_question_is_settled_and_sent_in_at_most_ten_commits(tmp_path: Path) -> None:
    figures = run_child(REPO, tmp_path, "", conversations=3, replicas=1)
    assert "error" not in figures, figures.get("error")
    assert figures["questions"] == 6 and figures["posted"] == 6  # each question and follow-up answered once
    assert figures["commits_per_question"] <= 10
