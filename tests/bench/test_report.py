"""The benchmark table and percentiles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.report import FIGURE_KEYS, data_missing, missing_keys, rows, table
from bot.evaluation import percentile

pytestmark = pytest.mark.unit


def _figures(**changes: Any) -> dict[str, Any]:
    figures: dict[str, Any] = dict.fromkeys(FIGURE_KEYS)
    figures.update(
        overhead_p50_ms=0.25, overhead_p95_ms=0.4, overhead_baseline_p50_ms=0.01, overhead_baseline_p95_ms=0.02,
        overhead_per_role_p50_ms={"lang": 0.02, "finish": 0.03},
        throughput_ratio=0.9, throughput_per_s=2.25, throughput_bound_per_s=2.5,
        search_p95_ms_100k=12.0, search_p50_ms_100k=9.0, ack_p99_ms=60.0,
        recall_at_1={"fixture": {"ours": 0.8, "bm25": 0.6, "dense": 0.7}, "emanual": None, "squad": None},
        recall_at_5={"fixture": {"ours": 0.9, "bm25": 0.8, "dense": 0.85}, "emanual": None, "squad": None},
        mrr={"fixture": {"ours": 0.85, "bm25": 0.7, "dense": 0.75}, "emanual": None, "squad": None},
        skipped={"recall.emanual": data_missing(Path("/nowhere/emanual")), "recall.squad": "skipped: x",
                 "eval": "error: RuntimeError: boom", "ack": "error: OSError: no port"},
    )  # fmt: skip
    figures.update(changes)
    return figures


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile(values, 100) == 100.0
    assert percentile([3.0], 99) == 3.0
    assert percentile([5.0, 1.0, 3.0], 0) == 1.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_targets_say_met_or_missed() -> None:
    text = table(_figures())
    assert "| 0.250 ms / 0.400 ms | 0.010 ms / 0.020 ms | <= 1 ms (met) |" in text
    assert ">= 0.95 (missed)" in text
    assert "<= 15 ms (met)" in text
    assert "<= 50 ms (missed)" in text
    assert "ours above bm25 and dense (met)" in text
    assert "<= 1 ms (missed)" in table(_figures(overhead_p50_ms=1.5))
    beaten = _figures()
    beaten["recall_at_1"] = {"fixture": {"ours": 0.6, "bm25": 0.6, "dense": 0.5}}
    assert "ours above bm25 and dense (missed)" in table(beaten)  # a tie is not "above"


def test_absent_data_and_failed_sections_show_their_reason() -> None:
    by_figure = {r.figure: r.value for r in rows(_figures())}
    assert by_figure["recall@1 / @5 / MRR, emanual"] == "skipped: data not present at /nowhere/emanual"
    assert by_figure["recall@1 / @5 / MRR, squad"] == "skipped: x"
    assert by_figure["eval (whole pipeline)"] == "error: RuntimeError: boom"
    assert by_figure["ack"] == "error: OSError: no port"
    assert by_figure["recall@1 / @5 / MRR, fixture"] == "ours 0.800 / 0.900 / 0.850"
    assert "-" in by_figure["Slack ack p50 / p99 (adapter vs bare aiohttp)"]  # null figures print as "-"


def test_missing_keys() -> None:
    figures = _figures()
    assert missing_keys(figures) == []
    del figures["ack_p99_ms"]
    assert missing_keys(figures) == ["ack_p99_ms"]


def test_eval_rows_count_failed_replies() -> None:
    summary = {"name": "fixture manual", "questions": 10, "gold_cited_rate": 0.5, "answer_f1": 0.25,
               "clarification_rate": 0.1, "refusal_rate_unanswerable": 1.0, "refusal_rate_answerable": 0.0,
               "latency_p50_ms": 120.0, "latency_p95_ms": 250.0, "kinds": {"answer": 7, "notice": 2, "silent": 1}}
    by_figure = {r.figure: r.value for r in rows(_figures(eval=summary))}  # fmt: skip
    assert by_figure["eval, fixture manual: gold cited / token-F1 (failed replies)"] == "0.500 / 0.250 (3 of 10)"
    assert "120 ms, 250 ms" in by_figure["  clarification / refusal on unanswerable (answerable) / latency p50, p95"]
