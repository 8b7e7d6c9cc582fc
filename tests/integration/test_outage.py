"""The short version of `bench.outage` (issue 28, items 3 and 4): the Slack Web API down while questions are asked,
two replicas on one database behind signed HTTP, the production path with shorter backoffs. Every question is
answered once after the recovery, one post per thread, no placeholder left, no apology.

The ten-minute runs and their figures: docs/benchmarks.md ("Slack Web API outages") and docs/reliability.md."""

from __future__ import annotations

import pytest

from bench.outage import POSTGRES, run_outage
from tests.conftest import postgres_reachable

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("fault", ["http_500", "ok_false"])
async def test_questions_asked_during_an_outage_are_answered_once_after_it(fault: str) -> None:
    figures = await run_outage(
        fault, outage_s=12, questions=6, replicas=2, fast=True, in_process=True,
        postgres=POSTGRES if postgres_reachable() else None, settle_s=120,
    )  # fmt: skip
    assert figures.faults_injected > 20 and figures.answered_before_recovery == 0
    if fault == "ok_false":  # some placeholders and replies were posted although Slack answered an error
        assert figures.writes_landed_despite_the_error > 0
    assert figures.answered_once == figures.questions == 6
    assert figures.posts_per_thread_max == 1 and figures.placeholders_left == 0 and figures.apologies == 0
