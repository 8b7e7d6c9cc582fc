from __future__ import annotations

import pytest

from adapters.slack.dedupe import RecentKeys

pytestmark = pytest.mark.unit


def test_first_time_once_within_ttl_then_again_after_expiry() -> None:
    now = [0.0]
    seen = RecentKeys(ttl_s=10, clock=lambda: now[0])
    assert seen.first_time("a") and not seen.first_time("a")
    now[0] = 9.9
    assert not seen.first_time("a")
    now[0] = 10.1
    assert seen.first_time("a")


def test_bounded_size_forgets_oldest() -> None:
    seen = RecentKeys(ttl_s=100, max_keys=3, clock=lambda: 0.0)
    for key in "abcd":
        assert seen.first_time(key)
    assert len(seen) == 3
    assert seen.first_time("a")  # forgotten
    assert not seen.first_time("d")
