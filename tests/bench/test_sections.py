"""The overhead and throughput sections on tiny sizes (outcomes and arithmetic, never timings)."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from bench import overhead, throughput
from bench.throughput import semaphore_bound
from bot.settings import DEFAULT_ROLE_LIMITS
from pipeline.types import Role

pytestmark = pytest.mark.unit


def test_bound_is_the_bottleneck_roles_limit_over_its_time_per_message() -> None:
    calls = Counter(overhead.ANSWER_PATH)
    assert calls[Role.GUARDRAILS] == 2
    # guardrails: one instance, two calls of 0.2 s per message -> 2.5 messages per second
    assert semaphore_bound(DEFAULT_ROLE_LIMITS, calls, 0.2) == pytest.approx(2.5)
    wider = {**DEFAULT_ROLE_LIMITS, Role.GUARDRAILS: 4}
    # then lang, augmentation and quality (one instance, one call) bound it at 5 per second
    assert semaphore_bound(wider, calls, 0.2) == pytest.approx(5.0)


async def test_overhead_runs_the_whole_answer_path_through_the_runner() -> None:
    result = await overhead.run(messages=20, warmup=2)
    assert result.messages == 20
    assert list(result.per_role_p50_ms) == [
        "lang", "translation", "essence", "guardrails", "search", "guardrails#2", "augmentation", "response",
        "quality", "finish",
    ]  # fmt: skip
    assert all(math.isfinite(v) for v in result.per_role_p50_ms.values())  # figures for the report, no timing bound
    assert set(result.figures()) == {k for k in result.figures() if k.startswith("overhead_")}


async def test_throughput_loses_no_conversation() -> None:
    result = await throughput.run(conversations=15, call_s=0.001)
    assert result.outcomes == {"answer": 15} and result.lost == 0
    assert result.bound_per_s == pytest.approx(1 / (2 * 0.001))
    assert result.peak_memory_mb > 0
