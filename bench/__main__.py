"""`python -m bench`: every figure docbot claims, each beside a baseline measured in the same run.

    .venv/bin/python -m bench                  # full run (about 10-15 minutes on 2 cores): table + bench/results/*.json
    .venv/bin/python -m bench --quick          # a few minutes, smaller sizes, nothing written
    .venv/bin/python -m bench --quick --json   # the figures as one JSON object on stdout
    .venv/bin/python -m bench --data DIR       # shared data (emanual/, squad/) from DIR instead of ../shared/data
                                               # (or $DOCBOT_SHARED_DATA)
    .venv/bin/python -m bench answerability    # the answerability trade-off curve (bench/answerability.py)
    .venv/bin/python -m bench --scale --baseline /tmp/base-scale   # start-up/memory/rebuild vs a baseline tree

Sections: framework overhead, throughput under 200 concurrent conversations, vector/hybrid search latency and
ingest rate, Slack ack latency, retrieval recall (fixture manual always; e-manual and SQuAD when their data is
present, otherwise "skipped: data not present at <path>"), and the whole-pipeline evaluation of the fixture manual.
Progress goes to stderr; a section that fails is reported under `skipped` with its error, never hides the others.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import crosslang, emanual, overhead, search_latency, squad, throughput
from bench.report import FIGURE_KEYS, RECALL_SETS, SYSTEMS, data_missing, machine, table, write_json
from bench.retrieval import FIXTURE_MANUAL, fixture_questions, folder_to_seed, run_questions, summarise
from bench.shared import DEFAULT_DATA, cached_embedder, make_embedder
from bot import evaluation
from bot.settings import Settings
from pipeline.types import Embedder

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
MANUAL_QA = REPO / "tests" / "bench" / "data" / "manual_qa.jsonl"
DOCS_BASE_URL = "https://docs.example.com/"
DEFAULT_QUEUE_LIMIT: int = Settings.model_fields["role_queue_limit"].default


@dataclass(frozen=True, slots=True)
class Options:
    """Sizes of every section; `quick()` and `full()` are the two presets."""

    quick: bool
    messages: int
    conversations: int
    call_s: float
    sizes: tuple[int, ...]
    queries: int
    ingest_collections: int
    ack_rounds: int
    ack_pipeline_s: float
    recall_questions: int | None
    squad_articles: int | None
    squad_questions: int
    eval_questions: int | None
    embedder: str = "e5"

    @classmethod
    def full(cls) -> Options:
        return cls(False, 3000, 200, 0.2, (10_000, 100_000), 200, 10, 10, 2.0, None, squad.ARTICLES, 1000, None)

    @classmethod
    def quick_preset(cls) -> Options:
        return cls(True, 300, 200, 0.02, (10_000, 100_000), 50, 2, 3, 2.0, None, 5, 200, None)


def _say(message: str) -> None:
    print(f"[bench {datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


# -- sections ---------------------------------------------------------------------------------------------------


async def overhead_section(opts: Options) -> dict[str, Any]:
    return (await overhead.run(opts.messages, warmup=min(200, opts.messages))).figures()


async def throughput_section(opts: Options) -> dict[str, Any]:
    result = await throughput.run(opts.conversations, opts.call_s)
    # the same burst against the service's default wait queue: how many get "busy, try again"
    queued = await throughput.run(opts.conversations, min(opts.call_s, 0.01), max_waiting=DEFAULT_QUEUE_LIMIT)
    return {**result.figures(), "throughput_busy_at_default_queue": queued.outcomes.get("busy", 0)}


async def search_section(opts: Options, embedder: Embedder) -> dict[str, Any]:
    figures = await search_latency.run(
        opts.sizes, opts.queries, opts.ingest_collections, opts.recall_questions, embedder=embedder
    )
    figures.update(await asyncio.to_thread(search_latency.vector_latency_one_blas_thread, opts.sizes, opts.queries))
    for size in (10_000, 100_000):  # a size left out of a tiny run stays a (null) key
        label = f"{size // 1000}k"
        for key in (f"search_p50_ms_{label}", f"search_p95_ms_{label}", f"search_baseline_p95_ms_{label}"):
            figures.setdefault(key, None)
            figures.setdefault(f"{key}_blas1", None)
    return figures


async def ack_section(opts: Options) -> dict[str, Any]:
    from bench import slack_ack

    result = await slack_ack.run(concurrency=50, rounds=opts.ack_rounds, pipeline_s=opts.ack_pipeline_s)
    return {
        "ack_p50_ms": result.adapter.p50_ms,
        "ack_p99_ms": result.adapter.p99_ms,
        "ack_baseline_p50_ms": result.baseline.p50_ms,
        "ack_baseline_p99_ms": result.baseline.p99_ms,
        "ack_non_200": result.non_200,
    }


async def recall_section(opts: Options, data: Path, embedder: Embedder) -> tuple[dict[str, Any], dict[str, str]]:
    """hit@1 / hit@5 / MRR per system for each question set, via bench/retrieval.py; absent data is skipped."""
    at1: dict[str, Any] = dict.fromkeys(RECALL_SETS)
    at5: dict[str, Any] = dict.fromkeys(RECALL_SETS)
    mrr: dict[str, Any] = dict.fromkeys(RECALL_SETS)
    sizes: dict[str, Any] = dict.fromkeys(RECALL_SETS)
    skipped: dict[str, str] = {}
    by_language: dict[str, Any] = {}
    by_set: dict[str, Any] = {}

    async def measure(name: str, corpus: list[dict[str, Any]], qa: list[dict[str, Any]]) -> None:
        _say(f"recall {name}: {len(corpus)} documents, {len(qa)} questions")
        summary = summarise(await run_questions(corpus, qa, SYSTEMS, embedder=embedder))
        systems = summary["systems"]
        at1[name] = {s: systems[s]["hit@1"] for s in SYSTEMS}
        at5[name] = {s: systems[s]["hit@5"] for s in SYSTEMS}
        mrr[name] = {s: systems[s]["mrr"] for s in SYSTEMS}
        sizes[name] = {"documents": len(corpus), "questions": systems["ours"]["n"]}
        if name == "fixture":
            by_language.update({lang: {s: m["hit@1"] for s, m in rows.items()}
                                for lang, rows in summary["by_language"].items()})  # fmt: skip
        if name == "emanual":
            by_set.update(summary["by_group"])

    questions = fixture_questions()
    if opts.recall_questions is not None:
        questions = questions[:: max(1, len(questions) // opts.recall_questions)][: opts.recall_questions]
    await measure("fixture", folder_to_seed(FIXTURE_MANUAL), questions)

    missing = emanual.present(data)
    resolved: dict[str, Any] | None = None
    if missing is None:
        manual = emanual.load(data)
        qa = manual.questions
        if opts.recall_questions is not None:
            qa = qa[:: max(1, len(qa) // opts.recall_questions)][: opts.recall_questions]
        resolved = {"questions": manual.totals, "resolved": manual.resolved()}
        await measure("emanual", manual.corpus, qa)
    else:
        skipped["recall.emanual"] = data_missing(missing)

    path = data / squad.V1
    if path.is_file():
        docs, qa = squad.retrieval_sample(path, articles=opts.squad_articles, questions=opts.squad_questions)
        await measure("squad", docs, qa)
        sizes["squad"]["articles"] = sorted({d["title"] for d in docs})
    else:
        skipped["recall.squad"] = data_missing(path)
    figures = {"recall_at_1": at1, "recall_at_5": at5, "mrr": mrr, "recall_sizes": sizes,
               "recall_fixture_at_1_by_language": by_language, "recall_emanual_by_set": by_set or None,
               "recall_emanual_resolved": resolved}  # fmt: skip
    return figures, skipped


async def crosslang_section(data: Path, embedder: Embedder) -> tuple[dict[str, Any], dict[str, str]]:
    """Translated e-manual questions (ru, es, de, zh, fr) against their English originals, held-out split."""
    missing = emanual.present(data)
    if missing is not None:
        return {"crosslang": None}, {"crosslang": data_missing(missing)}
    return {"crosslang": await crosslang.run(data, embedder, split="test")}, {}


async def _evaluate_on(
    docs_sources: Sequence[str], pairs: Sequence[evaluation.QAPair], name: str, embedder: Embedder
) -> evaluation.EvalReport:
    from bot.app import build_app

    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(_env_file=None, data_dir=Path(scratch))
        app = await build_app(settings, embedder=embedder)
        try:
            await app.ingest(list(docs_sources), base_url=DOCS_BASE_URL)
            return await evaluation.evaluate(app, pairs, name=name)
        finally:
            await app.close()


async def eval_section(opts: Options, data: Path, embedder: Embedder) -> tuple[dict[str, Any], dict[str, str]]:
    """The whole pipeline (offline) on the fixture manual's QA set, and SQuAD v2.0 refusals when present."""
    pairs = evaluation.load_qa(MANUAL_QA)
    if opts.eval_questions is not None:
        pairs = pairs[: opts.eval_questions // 2] + [p for p in pairs if not p.answerable][: opts.eval_questions // 2]
    report = await _evaluate_on([str(FIXTURE_MANUAL)], pairs, "fixture manual", embedder)
    if not opts.quick:
        evaluation.write_report(report, RESULTS / "eval-fixture.json", RESULTS / "eval-fixture.md")
    figures: dict[str, Any] = {"eval": report.summary(), "eval_squad_v2": None}
    skipped: dict[str, str] = {}
    squad2 = data / squad.V2
    if squad2.is_file():
        docs, squad_pairs = evaluation.load_squad(squad2, articles=opts.squad_articles or squad.ARTICLES,
                                                  questions=min(opts.squad_questions, 300))  # fmt: skip
        with tempfile.TemporaryDirectory() as scratch:
            seed = Path(scratch) / "squad-v2.jsonl"
            seed.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), encoding="utf-8")
            squad_report = await _evaluate_on([str(seed)], squad_pairs, "SQuAD v2.0 dev sample", embedder)
        figures["eval_squad_v2"] = squad_report.summary()
    else:
        skipped["eval_squad_v2"] = data_missing(squad2)
    return figures, skipped


# -- the run ----------------------------------------------------------------------------------------------------


async def collect(opts: Options, data: Path) -> dict[str, Any]:
    """Run every section; a failing section leaves its keys null and says why under `skipped`."""
    embedder = make_embedder(opts.embedder)
    load_at_start = machine()["load_average"]
    started = time.perf_counter()
    figures: dict[str, Any] = dict.fromkeys(FIGURE_KEYS)
    skipped: dict[str, str] = {}

    async def section(name: str, body: Callable[[], Awaitable[Any]]) -> None:
        _say(f"{name} ...")
        begin = time.perf_counter()
        try:
            result = await body()
        except Exception as exc:  # one broken section must not hide the others
            skipped[name] = f"error: {type(exc).__name__}: {exc}"
            _say(f"{name} failed: {type(exc).__name__}: {exc}")
            return
        found, skips = result if isinstance(result, tuple) else (result, {})
        figures.update(found)
        skipped.update(skips)
        _say(f"{name} done in {time.perf_counter() - begin:.1f} s")

    await section("overhead", lambda: overhead_section(opts))
    await section("throughput", lambda: throughput_section(opts))
    await section("search", lambda: search_section(opts, embedder))
    await section("ack", lambda: ack_section(opts))
    quality_embedder = cached_embedder(opts.embedder)  # vectors kept on disk: reruns embed only what is new
    await section("recall", lambda: recall_section(opts, data, quality_embedder))
    await section("crosslang", lambda: crosslang_section(data, quality_embedder))
    await section("eval", lambda: eval_section(opts, data, embedder))
    figures["skipped"] = skipped
    figures["meta"] = {
        "quick": opts.quick,
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started, 1),
        "machine": machine(),
        "load_average_at_start": load_at_start,
        "embedder": opts.embedder,
        "data": str(data),
        "sizes": {"messages": opts.messages, "conversations": opts.conversations, "call_ms": opts.call_s * 1000,
                  "vectors": list(opts.sizes), "vector_queries": opts.queries,
                  "ingest_collections": opts.ingest_collections, "ack_rounds": opts.ack_rounds,
                  "squad_articles": opts.squad_articles, "squad_questions": opts.squad_questions},
    }  # fmt: skip
    return figures


def parse(argv: Sequence[str] | None) -> tuple[Options, argparse.Namespace]:
    parser = argparse.ArgumentParser(prog="python -m bench", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few-minute run with smaller sizes; writes nothing")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data folder (emanual/, squad/)")
    parser.add_argument("--out", type=Path, default=None, help="results folder (full runs default to bench/results)")
    parser.add_argument(
        "--llm-real", action="store_true", help="only bench.llm_real: the bot against a real llama.cpp server (slow)"
    )
    tiny = parser.add_argument_group("sizes (override the preset; small values are for smoke tests)")
    tiny.add_argument("--messages", type=int)
    tiny.add_argument("--conversations", type=int)
    tiny.add_argument("--call-ms", type=float)
    tiny.add_argument("--sizes", help="vector index sizes, comma-separated")
    tiny.add_argument("--queries", type=int)
    tiny.add_argument("--ingest-collections", type=int)
    tiny.add_argument("--ack-rounds", type=int)
    tiny.add_argument("--ack-pipeline-s", type=float)
    tiny.add_argument("--recall-questions", type=int)
    tiny.add_argument("--eval-questions", type=int)
    tiny.add_argument("--embedder", choices=("e5", "hashing"), help="hashing: a fast stand-in, figures meaningless")
    args = parser.parse_args(argv)
    preset = Options.quick_preset() if args.quick else Options.full()
    changes = {
        "messages": args.messages,
        "conversations": args.conversations,
        "call_s": args.call_ms / 1000 if args.call_ms is not None else None,
        "sizes": tuple(int(s) for s in args.sizes.split(",") if s) if args.sizes else None,
        "queries": args.queries,
        "ingest_collections": args.ingest_collections,
        "ack_rounds": args.ack_rounds,
        "ack_pipeline_s": args.ack_pipeline_s,
        "recall_questions": args.recall_questions,
        "eval_questions": args.eval_questions,
        "embedder": args.embedder,
    }
    from dataclasses import replace

    return replace(preset, **{k: v for k, v in changes.items() if v is not None}), args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from bot.logs import configure_logging

    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["answerability"]:  # `python -m bench answerability ...`: the curve of issue 15
        from bench import answerability

        return answerability.main(args_in[1:])
    configure_logging("WARNING")
    rest = list(sys.argv[1:] if argv is None else argv)
    if "--scale" in rest:  # issue 16's section runs apart (fresh processes, a baseline tree): see bench/scale.py
        from bench import scale

        rest.remove("--scale")
        scale.main(rest)
        return {}
    opts, args = parse(argv)
    if args.llm_real:  # its own section, never part of --quick or the full run (minutes per question on 2 cores)
        from bench import llm_real

        llm_real.main(["--data", str(args.data)])
        return {}
    figures = asyncio.run(collect(opts, args.data))
    out = args.out if args.out is not None else (None if opts.quick else RESULTS)
    if out is not None:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M")
        path = out / f"bench-{'quick' if opts.quick else 'full'}-{stamp}.json"
        write_json(figures, path)
        _say(f"wrote {path}")
    if args.json:
        print(json.dumps(figures, ensure_ascii=False))
    else:
        print(table(figures))
    return figures


if __name__ == "__main__":
    main()
