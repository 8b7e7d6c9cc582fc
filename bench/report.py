"""The benchmark's figures as one flat JSON object, the table printed from it, and the machine it ran on.

A figure that could not be measured (its data is absent) is `null` in the JSON with its reason under `skipped`, and
prints as "skipped: <reason>" in the table. Every figure sits next to its baseline measured in the same run.
"""

from __future__ import annotations

import json
import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SYSTEMS = ("ours", "bm25", "dense")
RECALL_SETS = ("fixture", "emanual", "squad")

# Every key `python -m bench --json` prints, in table order (tests check that a quick run produces all of them).
FIGURE_KEYS: tuple[str, ...] = (
    "overhead_p50_ms",
    "overhead_p95_ms",
    "overhead_baseline_p50_ms",
    "overhead_baseline_p95_ms",
    "overhead_per_role_p50_ms",
    "throughput_ratio",
    "throughput_per_s",
    "throughput_bound_per_s",
    "throughput_e2e_p50_ms",
    "throughput_e2e_p95_ms",
    "throughput_peak_memory_mb",
    "throughput_lost",
    "throughput_busy_at_default_queue",
    "search_p50_ms_10k",
    "search_p95_ms_10k",
    "search_p50_ms_100k",
    "search_p95_ms_100k",
    "search_baseline_p95_ms_10k",
    "search_baseline_p95_ms_100k",
    "search_p50_ms_10k_blas1",
    "search_p95_ms_10k_blas1",
    "search_p50_ms_100k_blas1",
    "search_p95_ms_100k_blas1",
    "hybrid_p50_ms",
    "hybrid_p95_ms",
    "hybrid_baseline_p95_ms",
    "ingest_chunks_per_s",
    "ingest_baseline_chunks_per_s",
    "ack_p50_ms",
    "ack_p99_ms",
    "ack_baseline_p50_ms",
    "ack_baseline_p99_ms",
    "ack_non_200",
    "recall_at_1",
    "recall_at_5",
    "mrr",
    "recall_emanual_by_set",
    "recall_emanual_resolved",
    "crosslang",
    "eval",
    "eval_squad_v2",
)

TARGETS: Mapping[str, str] = {
    "overhead_p50_ms": "<= 1 ms",
    "throughput_ratio": ">= 0.95",
    "search_p95_ms_100k": "<= 15 ms",
    "ack_p99_ms": "<= 50 ms",
    "recall_at_1": "ours above bm25 and dense",
}


def skipped(reason: str) -> str:
    return f"skipped: {reason}"


def data_missing(path: Path) -> str:
    return skipped(f"data not present at {path}")


@dataclass(frozen=True, slots=True)
class Row:
    figure: str
    value: str
    baseline: str
    target: str = ""


def _num(value: Any, unit: str = "", digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value}{unit}"
    if isinstance(value, float):
        if abs(value) >= 100:
            return f"{value:,.0f}{unit}"
        return f"{value:.{digits}g}{unit}" if 0 < abs(value) < 1e-3 else f"{value:.{digits}f}{unit}"
    return str(value)


def _met(value: Any, target: str) -> str:
    """`target (met)` / `target (missed)` for the figures with a numeric target."""
    if not isinstance(value, int | float) or not target:
        return target
    match = re.match(r"(<=|>=) ([\d.]+)", target)
    if match is None:
        return target
    bound = float(match.group(2))
    ok = value <= bound if match.group(1) == "<=" else value >= bound
    return f"{target} ({'met' if ok else 'missed'})"


def rows(figures: Mapping[str, Any]) -> list[Row]:
    """The table's rows from the figures object `python -m bench --json` prints."""
    skip: Mapping[str, str] = figures.get("skipped", {})
    f = figures
    out = [
        Row(
            "overhead per message p50 / p95 (runner vs plain loop)",
            f"{_num(f['overhead_p50_ms'], ' ms')} / {_num(f['overhead_p95_ms'], ' ms')}",
            f"{_num(f['overhead_baseline_p50_ms'], ' ms')} / {_num(f['overhead_baseline_p95_ms'], ' ms')}",
            _met(f["overhead_p50_ms"], TARGETS["overhead_p50_ms"]),
        ),
        Row(
            "  per role p50 (routing + slot + timeout)",
            ", ".join(f"{role} {_num(ms, '', 3)}" for role, ms in (f["overhead_per_role_p50_ms"] or {}).items())
            + " ms",
            "",
        ),
        Row(
            "throughput ratio (measured / semaphore bound)",
            _num(f["throughput_ratio"]),
            f"bound {_num(f['throughput_bound_per_s'], '/s')}, measured {_num(f['throughput_per_s'], '/s')}",
            _met(f["throughput_ratio"], TARGETS["throughput_ratio"]),
        ),
        Row(
            "  end to end p50 / p95, peak memory, lost",
            f"{_num(f['throughput_e2e_p50_ms'], ' ms')} / {_num(f['throughput_e2e_p95_ms'], ' ms')}, "
            f"{_num(f['throughput_peak_memory_mb'], ' MB')}, {_num(f['throughput_lost'])} lost",
            "",
        ),
        Row(
            "  same burst, default wait queue (DOCBOT_ROLE_QUEUE_LIMIT): answered busy",
            _num(f.get("throughput_busy_at_default_queue")),
            "",
        ),
        Row(
            "vector search p50 / p95 at 10k (local index vs bare numpy)",
            f"{_num(f['search_p50_ms_10k'], ' ms')} / {_num(f['search_p95_ms_10k'], ' ms')}",
            f"p95 {_num(f['search_baseline_p95_ms_10k'], ' ms')}",
        ),
        Row(
            "vector search p50 / p95 at 100k",
            f"{_num(f['search_p50_ms_100k'], ' ms')} / {_num(f['search_p95_ms_100k'], ' ms')}",
            f"p95 {_num(f['search_baseline_p95_ms_100k'], ' ms')}",
            _met(f["search_p95_ms_100k"], TARGETS["search_p95_ms_100k"]),
        ),
        Row(
            "  same, BLAS on one thread (OPENBLAS_NUM_THREADS=1): 10k / 100k",
            f"{_num(f.get('search_p50_ms_10k_blas1'), ' ms')} / {_num(f.get('search_p95_ms_10k_blas1'), ' ms')}; "
            f"{_num(f.get('search_p50_ms_100k_blas1'), ' ms')} / {_num(f.get('search_p95_ms_100k_blas1'), ' ms')}",
            f"p95 {_num(f.get('search_baseline_p95_ms_10k_blas1'), ' ms')}; "
            f"{_num(f.get('search_baseline_p95_ms_100k_blas1'), ' ms')}",
            _met(f.get("search_p95_ms_100k_blas1"), TARGETS["search_p95_ms_100k"]),
        ),
        Row(
            "hybrid search p50 / p95, fixture manual (vs dense only)",
            f"{_num(f['hybrid_p50_ms'], ' ms')} / {_num(f['hybrid_p95_ms'], ' ms')}",
            f"p95 {_num(f['hybrid_baseline_p95_ms'], ' ms')}",
        ),
        Row(
            "ingest, chunks per second (vs embedder alone)",
            _num(f["ingest_chunks_per_s"], "/s"),
            _num(f["ingest_baseline_chunks_per_s"], "/s"),
        ),
        Row(
            "Slack ack p50 / p99 (adapter vs bare aiohttp)",
            f"{_num(f['ack_p50_ms'], ' ms')} / {_num(f['ack_p99_ms'], ' ms')}",
            f"{_num(f['ack_baseline_p50_ms'], ' ms')} / {_num(f['ack_baseline_p99_ms'], ' ms')}",
            _met(f["ack_p99_ms"], TARGETS["ack_p99_ms"]),
        ),
    ]
    for name in RECALL_SETS:
        at1 = (f["recall_at_1"] or {}).get(name)
        label = f"recall@1 / @5 / MRR, {name}"
        if at1 is None:
            out.append(Row(label, skip.get(f"recall.{name}", skipped("not run")), ""))
            continue
        at5, mrr = f["recall_at_5"][name], f["mrr"][name]

        def cell(
            system: str, at5: Mapping[str, float] = at5, mrr: Mapping[str, float] = mrr, at1: Mapping[str, float] = at1
        ) -> str:
            return f"{at1[system]:.3f} / {at5[system]:.3f} / {mrr[system]:.3f}"

        beaten = all(at1["ours"] > at1[s] for s in ("bm25", "dense"))
        target = f"{TARGETS['recall_at_1']} ({'met' if beaten else 'missed'})"
        out.append(Row(label, f"ours {cell('ours')}", f"bm25 {cell('bm25')}; dense {cell('dense')}", target))
    for qa_set, systems in (f.get("recall_emanual_by_set") or {}).items():
        out.append(
            Row(
                f"  e-manual {qa_set} ({systems['ours']['n']} q): @1 / @5 / MRR",
                "ours " + " / ".join(f"{systems['ours'][m]:.3f}" for m in ("hit@1", "hit@5", "mrr")),
                "; ".join(
                    f"{s} " + " / ".join(f"{systems[s][m]:.3f}" for m in ("hit@1", "hit@5", "mrr"))
                    for s in SYSTEMS[1:]
                    if s in systems
                ),
            )
        )
    cross = f.get("crosslang")
    if cross is None:
        out.append(Row("cross-language hit@1 / @5", skip.get("crosslang", skipped("not run")), ""))
    else:
        for lang, m in cross["languages"].items():
            out.append(
                Row(
                    f"cross-language {lang} ({cross['split']}, {m['n']} q): hit@1 / @5 (ratio to en)",
                    f"ours {m['ours_hit@1']:.3f} / {m['ours_hit@5']:.3f} ({m['ratio@1']} / {m['ratio@5']})",
                    f"bm25 {m['bm25_hit@1']:.3f} / {m['bm25_hit@5']:.3f}; "
                    f"dense {m['dense_hit@1']:.3f} / {m['dense_hit@5']:.3f}",
                    "" if lang == "en" else ">= 0.90 x en at @1"
                    + (" (met)" if (m["ratio@1"] or 0) >= 0.9 else " (missed)"),
                )
            )
    for key in ("eval", "eval_squad_v2"):
        evaluation = f.get(key)
        if evaluation is None:
            out.append(Row(f"{key} (whole pipeline)", skip.get(key, skipped("not run")), ""))
            continue
        out.append(
            Row(
                f"{key}, {evaluation['name']}: gold cited / token-F1 (failed replies)",
                f"{_num(evaluation['gold_cited_rate'])} / {_num(evaluation['answer_f1'])} "
                f"({evaluation['kinds'].get('notice', 0) + evaluation['kinds'].get('silent', 0)} of "
                f"{evaluation['questions']})",
                "",
            )
        )
        out.append(
            Row(
                "  clarification / refusal on unanswerable (answerable) / latency p50, p95",
                f"{_num(evaluation['clarification_rate'])} / {_num(evaluation['refusal_rate_unanswerable'])} "
                f"({_num(evaluation['refusal_rate_answerable'])})"
                f" / {_num(evaluation['latency_p50_ms'], ' ms')}, {_num(evaluation['latency_p95_ms'], ' ms')}",
                "",
            )
        )
    for key, reason in skip.items():
        if not key.startswith(("recall.", "eval", "crosslang")):
            out.append(Row(key, reason, ""))
    return out


def table(figures: Mapping[str, Any]) -> str:
    """A Markdown table (readable in a terminal too)."""
    lines = ["| figure | value | baseline (same run) | target |", "|---|---|---|---|"]
    lines += [f"| {r.figure} | {r.value} | {r.baseline} | {r.target} |" for r in rows(figures)]
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    """CPU model, core count, memory and Python version of the machine running the benchmark."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gb: float | None = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": memory_gb,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
    }


def write_json(figures: Mapping[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")


def missing_keys(figures: Mapping[str, Any]) -> list[str]:
    return [key for key in FIGURE_KEYS if key not in figures]
