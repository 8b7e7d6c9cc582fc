"""Calls per answered question through the real SDK and the scripted server (bench/llm_cost.py's path):
translation is skipped for English, and fast mode needs one understanding call instead of up to four."""

from __future__ import annotations

import pytest

from bench.llm_cost import QUESTIONS, measure

pytestmark = pytest.mark.integration

ENGLISH = sum(q.isascii() for q in QUESTIONS)


async def test_default_mode_skips_translation_for_english_questions() -> None:
    costs = await measure(fast=False, regenerate_every=0)
    calls = sorted(c.calls for c in costs)
    # lang, essence, guardrails, response, quality; plus translation for the others
    assert calls == [5] * ENGLISH + [6] * (len(QUESTIONS) - ENGLISH)


async def test_fast_mode_makes_one_understanding_call() -> None:
    costs = await measure(fast=True, regenerate_every=0)
    assert {c.calls for c in costs} == {3}  # understand, response, quality
    default = await measure(fast=False, regenerate_every=0)
    assert sum(c.tokens for c in costs) < sum(c.tokens for c in default)


async def test_a_regenerate_round_costs_two_more_calls() -> None:
    costs = await measure(fast=True, regenerate_every=1)
    assert {c.calls for c in costs} == {5}
