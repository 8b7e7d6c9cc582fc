"""FeedbackStore on both backends: one vote per person and run."""

from __future__ import annotations

import pytest

from storage.db import Database
from storage.feedback import FeedbackStore

pytestmark = pytest.mark.integration


async def test_one_vote_per_person_and_run(db: Database):
    feedback = FeedbackStore(db)
    assert await feedback.record("c1", "run-1", "U1", helpful=True)
    assert not await feedback.record("c1", "run-1", "U1", helpful=False)  # the first vote stands
    assert await feedback.record("c1", "run-1", "U2", helpful=False)
    assert await feedback.record("c1", "run-2", "U1", helpful=False)
    assert await feedback.counts("run-1") == (1, 1)
    assert await feedback.counts("run-2") == (0, 1)


async def test_votes_without_a_run_are_idempotent_per_conversation(db: Database):
    feedback = FeedbackStore(db)
    assert await feedback.record("c1", None, "U1", helpful=True)
    assert not await feedback.record("c1", None, "U1", helpful=True)
    assert await feedback.record("c2", None, "U1", helpful=True)
