"""Answerability: when do the docs not answer? The trade-off curve behind `DOCBOT_ANSWERABILITY_THRESHOLD`.

    .venv/bin/python -m bench.answerability                       # SQuAD v2 sample + e-manual + docbot's docs
    .venv/bin/python -m bench.answerability --only squad --squad-questions 60
    .venv/bin/python -m bench answerability ...                   # the same, through the bench entry point

Each question runs once through the whole offline pipeline (`App.runner`, as `build_app` wires it) with the
threshold at 0, so nothing is refused on the answerability score but the score and its signals are recorded on
the envelope. The decision is a pure threshold on that score and a refusal ends the run, so every point of the
curve follows from that one pass: at threshold t a question is refused when the pipeline refused it anyway or
its score is below t; gold is cited when it was and the question is not refused. `--confirm T` reruns the sets
with the threshold at T to check the chosen point end to end (research rounds included).

Sets:
- SQuAD v2.0 dev sample (`load_squad`: first 10 articles, 300 questions, seed 7 - the sample of issue 15):
  `is_impossible` questions are the unanswerable ones; gold = the question's paragraph.
- e-manual: the 261 sections as documents; questions whose last `section_hierarchy` title names a corpus section
  (case-insensitively) are answerable with that section as gold; bench/data/emanual_unanswerable.jsonl holds
  questions about things the manual does not have (error codes, features).
- docbot's own docs (docs/ of this repo): bench/data/docbot_unanswerable.jsonl, 20 questions they do not answer.

Runs on the machine as it is; no wall-clock figure is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import hashlib
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.emanual_data import load_corpus
from bench.retrieval import load_jsonl
from bot.evaluation import cites_gold, load_squad
from bot.settings import Settings
from pipeline.envelope import Context, Payload
from pipeline.types import Embedder, Vocabulary

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data"
DOCBOT_UNANSWERABLE = DATA / "docbot_unanswerable.jsonl"
EMANUAL_UNANSWERABLE = DATA / "emanual_unanswerable.jsonl"
DEFAULT_SHARED = REPO.parent / "shared" / "data"
BASE_URL = "https://docs.example.com/"
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(0, 17))


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    answerable: bool
    gold_source: str | None = None
    gold_section: str | None = None


@dataclass(frozen=True, slots=True)
class Row:
    question: Question
    kind: str  # answer / refusal / clarification / ...
    reason: str | None
    gold_cited: bool | None
    score: float | None  # None when the run ended before the answerability step
    signals: dict[str, Any] = field(default_factory=dict)
    evidence: dict[str, Any] | None = None  # what the decision read (`--rows`): refitting needs no pipeline run

    @property
    def declined(self) -> bool:
        """Refused or asked back without answering (as bot.evaluation counts it: no cited answer)."""
        return self.kind != "answer"

    def refused_at(self, threshold: float) -> bool:
        return self.declined or (self.score is not None and self.score < threshold)


# -- data -------------------------------------------------------------------------------------------------------


def squad_set(
    path: Path, *, articles: int, questions: int, skip: int = 0
) -> tuple[list[dict[str, Any]], list[Question]]:
    """The sample of `load_squad`; `skip` leaves out the first articles (the tune split: articles the reported
    sample does not contain)."""
    if skip:
        data = json.loads(path.read_text(encoding="utf-8"))
        with tempfile.TemporaryDirectory() as scratch:
            later = Path(scratch) / "squad.json"
            later.write_text(json.dumps({"data": data["data"][skip:]}), encoding="utf-8")
            docs, pairs = load_squad(later, articles=articles, questions=questions)
    else:
        docs, pairs = load_squad(path, articles=articles, questions=questions)
    return docs, [Question(p.question, p.answerable, gold_source=p.gold_source) for p in pairs]


def emanual_set(
    folder: Path, *, questions: int | None, split: str = "all"
) -> tuple[list[dict[str, Any]], list[Question]]:
    # the manual as every other bench reads it (bench/emanual_data.py): the PDF's page-number lines ("- 35 -") are
    # dropped, so a number the decision finds in a quote is the manual's, not a page's
    docs = load_corpus(folder / "raw" / "smart_tv_remote_manual_corpus.json")
    titles = {str(doc["title"]).strip().casefold() for doc in docs}
    asked: list[Question] = []
    for line in (folder / "smart_tv_remote_qa.cleaned.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        gold = str(record.get("section_hierarchy") or "").split(">")[-1].strip()
        if split != "all" and held_out(str(record["id"])) != split:
            continue
        if gold and gold.casefold() in titles:
            asked.append(Question(str(record["question"]), True, gold_section=gold))
    if questions is not None:
        asked = asked[:questions]
    if split == "all":  # ours, few and reported whole: never in a fit
        asked += [Question(q["question"], False) for q in load_jsonl(EMANUAL_UNANSWERABLE)]
    return docs, asked


def docbot_set() -> tuple[Path, list[Question]]:
    return REPO / "docs", [Question(q["question"], False) for q in load_jsonl(DOCBOT_UNANSWERABLE)]


def held_out(key: str) -> str:
    """The half of a set an id belongs to, "tune" or "test" (md5 of the id, as bench/honesty.py splits)."""
    return "test" if hashlib.md5(key.encode()).digest()[0] % 2 else "tune"  # a split, not security


def shoppers_set(folder: Path, split: str) -> tuple[list[dict[str, Any]], list[Question]]:
    """The e-manual's sections and the labelled shoppers' questions of `split` (English and translated; the labels'
    own split: bench/data/shoppers_labelled.jsonl, shoppers_translated_*.jsonl)."""
    docs, _ = emanual_set(folder, questions=0)
    rows = load_jsonl(DATA / "shoppers_labelled.jsonl")
    for path in sorted(DATA.glob("shoppers_translated_*.jsonl")):
        rows += load_jsonl(path)
    return docs, [Question(r["question"], bool(r["answerable"])) for r in rows if split in ("all", r["split"])]


def newcomer_set(split: str) -> tuple[Path, list[Question]]:
    """docbot's docs and the newcomers' questions of `split` (bench/data/docbot_newcomer.jsonl): the vague ones
    left out (they want a clarifying question, not a verdict on evidence)."""
    rows = [r for r in load_jsonl(DATA / "docbot_newcomer.jsonl") if r["kind"] != "vague"]
    rows = [r for r in rows if split in ("all", r["split"])]
    return REPO / "docs", [Question(r["question"], bool(r["answerable"])) for r in rows]


# -- running ----------------------------------------------------------------------------------------------------


def _settings(scratch: Path, threshold: float) -> Settings:
    extra: dict[str, Any] = (
        {"answerability_threshold": threshold} if "answerability_threshold" in Settings.model_fields else {}
    )
    # generous role timeouts: on a loaded machine a slow step must not count as a refusal
    return Settings(_env_file=None, data_dir=scratch, role_timeout_s=600, question_deadline_s=1200, **extra)


async def run_set(
    name: str, sources: Sequence[str], questions: Sequence[Question], embedder: Embedder, *, threshold: float = 0.0
) -> list[Row]:
    """Every question once through `App.runner` (the pipeline as production wires it) over freshly ingested docs."""
    from bot.app import build_app

    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as scratch:
        app = await build_app(_settings(Path(scratch), threshold), embedder=embedder)
        try:
            await app.ingest(list(sources), base_url=BASE_URL)
            await app.reload_search()
            for number, question in enumerate(questions):
                result = await app.runner.run(
                    conversation_id=f"{name}-{number}",
                    message_id=f"{name}-{number}",
                    payload=Payload(text=question.text),
                    context=Context(docs_language=app.settings.docs_language),
                )
                verdict = getattr(result.envelope.payload, "answerability", None)
                final = result.envelope.payload
                gold = cites_gold([s.url for s in result.sources], [s.title for s in result.sources],
                                  gold_source=question.gold_source, gold_section=question.gold_section)  # fmt: skip
                rows.append(Row(
                    question=question,
                    kind=result.kind.value,
                    reason=result.reason,
                    gold_cited=(gold and result.kind.value == "answer") if question.answerable and gold is not None
                    else None,
                    score=verdict.score if verdict is not None else None,
                    signals=_signals(verdict),
                    evidence=_evidence(final, app.settings.docs_language, app.retriever) if verdict is not None
                    else None,
                ))  # fmt: skip
                if (number + 1) % 50 == 0:
                    _say(f"{name}: {number + 1}/{len(questions)}")
        finally:
            await app.close()
    return rows


def _evidence(payload: Payload, docs_language: str, vocabulary: Vocabulary) -> dict[str, Any]:
    """The question, quote, cited blocks, ranked hits and the words no document uses the decision read, as JSON."""
    from pipeline.agents.answerability import evidence_of, looked_up

    # the words the decision itself looks up (filler words left out), so a fit reads what production reads
    seen = looked_up(evidence_of(payload, docs_language), vocabulary, payload.language, ("default",))
    hits = [{"text": h.text, "score": h.score, "doc": h.doc_id, "levels": h.level_scores} for h in seen.hits[:5]]
    return {"question": seen.question, "same_language": seen.same_language, "quoted": seen.quoted,
            "blocks": list(seen.blocks), "hits": hits, "answer": payload.response,
            "titles": list(seen.titles), "asked": seen.asked, "own_words": seen.own_words,
            "unknown": list(seen.unknown), "unknown_names": list(seen.unknown_names), "meaning": seen.meaning,
            "intent": seen.intent.value, "intent_margin": seen.intent_margin,
            "headed": [list(pair) for pair in seen.headed],
            # measured with the embedder by the decision itself: read off its verdict
            "unknown_shift": payload.answerability.signals.unknown_shift if payload.answerability else 0.0}  # fmt: skip


def _signals(verdict: Any) -> dict[str, Any]:
    if verdict is None:
        return {}
    return {name: getattr(verdict.signals, name) for name in SIGNAL_NAMES}


# -- figures ----------------------------------------------------------------------------------------------------


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 3) if total else None


def point(rows: Sequence[Row], threshold: float) -> dict[str, Any]:
    answerable = [r for r in rows if r.question.answerable]
    unanswerable = [r for r in rows if not r.question.answerable]
    with_gold = [r for r in answerable if r.gold_cited is not None]
    return {
        "threshold": threshold,
        "unanswerable_refused": _rate(sum(r.refused_at(threshold) for r in unanswerable), len(unanswerable)),
        "answerable_refused": _rate(sum(r.refused_at(threshold) for r in answerable), len(answerable)),
        "gold_cited": _rate(sum(bool(r.gold_cited) and not r.refused_at(threshold) for r in with_gold), len(with_gold)),
    }


def curve(rows: Sequence[Row], thresholds: Sequence[float] = THRESHOLDS) -> list[dict[str, Any]]:
    return [point(rows, t) for t in thresholds]


def signal_rates(rows: Sequence[Row]) -> dict[str, dict[str, float | None]]:
    """How often each signal fires (or its mean) on answerable vs unanswerable questions that reached the step."""
    out: dict[str, dict[str, float | None]] = {}
    for label, wanted in (("answerable", True), ("unanswerable", False)):
        reached = [r for r in rows if r.question.answerable is wanted and r.signals]
        n = len(reached)
        out[label] = {
            "reached": n,
            "missing_terms": _rate(sum(r.signals["missing_terms"] > 0 for r in reached), n),
            "unmatched_negation": _rate(sum(r.signals["unmatched_negation"] for r in reached), n),
            "answer_type_missing": _rate(sum(r.signals["answer_type_missing"] for r in reached), n),
            "levels_agree": _rate(sum(r.signals["levels_agree"] for r in reached), n),
            "mean_term_coverage": round(sum(r.signals["term_coverage"] for r in reached) / n, 3) if n else None,
            "mean_margin": round(sum(r.signals["margin"] for r in reached) / n, 3) if n else None,
        }
    return out


def markdown_curve(name: str, points: Sequence[dict[str, Any]]) -> str:
    lines = [f"**{name}**", "", "| threshold | unanswerable refused | answerable refused | gold cited (answerable) |",
             "|---|---|---|---|"]  # fmt: skip
    lines += [f"| {p['threshold']:.2f} | {p['unanswerable_refused']} | {p['answerable_refused']} | {p['gold_cited']} |"
              for p in points]  # fmt: skip
    return "\n".join(lines)


def _say(message: str) -> None:
    print(f"[answerability] {message}", file=sys.stderr, flush=True)


# -- the run ----------------------------------------------------------------------------------------------------


async def collect(args: argparse.Namespace) -> dict[str, Any]:
    from bench.shared import cached_embedder

    embedder = cached_embedder(args.embedder)  # vectors memoised under bench/.cache/ (no timing is reported)
    figures: dict[str, Any] = {"threshold_confirmed": args.confirm}
    wanted = set(args.only.split(",")) if args.only else {"squad", "emanual", "docbot"}
    with tempfile.TemporaryDirectory() as scratch:
        sets: list[tuple[str, list[str], list[Question]]] = []
        squad = args.data / "squad" / "dev-v2.0.json"
        if "squad" in wanted and squad.is_file():
            docs, asked = squad_set(squad, articles=args.squad_articles, questions=args.squad_questions,
                                    skip=args.squad_skip_articles)  # fmt: skip
            seed = Path(scratch) / "squad.jsonl"
            seed.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), encoding="utf-8")
            sets.append(("squad_v2", [str(seed)], asked))
        emanual = args.data / "emanual"
        if "emanual" in wanted and (emanual / "raw").is_dir():
            docs, asked = emanual_set(emanual, questions=args.emanual_questions, split=args.split)
            seed = Path(scratch) / "emanual.jsonl"
            seed.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), encoding="utf-8")
            sets.append(("emanual", [str(seed)], asked))
        if "docbot" in wanted:
            folder, asked = docbot_set()
            sets.append(("docbot_docs", [str(folder)], asked))
        if "shoppers" in wanted and (emanual / "raw").is_dir():
            docs, asked = shoppers_set(emanual, args.split)
            seed = Path(scratch) / "emanual-shoppers.jsonl"
            seed.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), encoding="utf-8")
            sets.append(("shoppers", [str(seed)], asked))
        if "newcomer" in wanted:
            folder, asked = newcomer_set(args.split)
            sets.append(("newcomer", [str(folder)], asked))
        for name, sources, asked in sets:
            _say(f"{name}: {len(asked)} questions")
            rows = await run_set(name, sources, asked, embedder)
            figures[name] = {
                "questions": len(rows),
                "answerable": sum(r.question.answerable for r in rows),
                "unanswerable": sum(not r.question.answerable for r in rows),
                "curve": curve(rows),
                "signals": signal_rates(rows),
            }
            if args.confirm is not None:
                confirmed = await run_set(name, sources, asked, embedder, threshold=args.confirm)
                figures[name]["confirmed"] = point(confirmed, 0.0) | {"threshold": args.confirm}
            if args.rows:
                figures[name]["rows"] = [
                    {"q": r.question.text, "answerable": r.question.answerable, "source": r.question.gold_source,
                     "kind": r.kind, "reason": r.reason,
                     "gold": r.gold_cited, "score": r.score, **r.signals, "evidence": r.evidence} for r in rows
                ]  # fmt: skip
    return figures


def saved_run(path: Path) -> dict[str, Any]:
    """A saved `--rows` run, plain or gzipped (`.gz`: the committed tune rows, bench/results/)."""
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    loaded: dict[str, Any] = json.loads(raw.decode("utf-8"))
    return loaded


def saved_evidence(row: dict[str, Any]) -> Any:
    """The `Evidence` a saved row's decision read (None when the run ended before the decision)."""
    from pipeline.agents.answerability import Evidence, quoted_text
    from pipeline.types import QuestionIntent, SearchHit

    seen = row.get("evidence")
    if not seen:
        return None
    # runs saved before the answer and the headings were kept: each quoted line was one block; a SQuAD paragraph's
    # heading is its article's title
    quoted = quoted_text(seen["answer"]) if "answer" in seen else seen["quoted"].replace("\n", "\n\n")
    source = str(row.get("source") or "")
    titles = seen.get("titles", [source.split("/")[1].replace("_", " ")] if source.startswith("squad/") else [])
    hits = tuple(SearchHit(chunk_id=f"h{i}", doc_id=h["doc"], section="", title="", crumbs=(), url="", text=h["text"],
                           score=h["score"], level_scores=h["levels"]) for i, h in enumerate(seen["hits"]))  # fmt: skip
    # runs saved before the unknown words were kept had no vocabulary: none counted
    return Evidence(seen["question"], tuple(seen["blocks"]), quoted, hits, seen["same_language"], tuple(titles),
                    asked=seen.get("asked", seen["question"]), own_words=seen.get("own_words", False),
                    unknown=tuple(seen.get("unknown", ())), unknown_names=tuple(seen.get("unknown_names", ())),
                    meaning=seen.get("meaning", 0.0), intent=QuestionIntent(seen.get("intent", "docs")),
                    intent_margin=seen.get("intent_margin", 0.0),
                    headed=tuple((str(h), str(q)) for h, q in seen.get("headed", ())),
                    unknown_shift=seen.get("unknown_shift", 0.0))  # fmt: skip


SIGNAL_NAMES = ("term_coverage", "missing_terms", "distinguishing_terms", "unseen_terms", "unknown_terms",
                "unmatched_negation", "answer_type_missing", "levels_agree", "margin")  # fmt: skip


def saved_signals(row: dict[str, Any], *, remeasure: bool) -> Any:
    """A saved row's signals: as measured in the run, or measured again from its evidence with the current code."""
    from pipeline.agents.answerability import measure
    from pipeline.types import AnswerabilitySignals

    if remeasure:
        evidence = saved_evidence(row)
        return measure(evidence) if evidence is not None else None
    if row.get("term_coverage") is None:
        return None
    return AnswerabilitySignals(**{k: row[k] for k in SIGNAL_NAMES if k in row})


def older_decision(path: Path) -> Any:
    """An older pipeline/agents/answerability.py (`git show REV:pipeline/agents/answerability.py > FILE`) as a
    function from a saved row to its score: the baseline decision on the same evidence."""
    import importlib.util

    from pipeline.types import SearchHit

    spec = importlib.util.spec_from_file_location("older_answerability", path)
    assert spec is not None and spec.loader is not None
    older = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = older  # dataclasses look their module up while the file runs
    spec.loader.exec_module(older)

    def scored(row: dict[str, Any]) -> float | None:
        seen = row.get("evidence")
        if not seen:
            return None
        quoted = older.quoted_text(seen["answer"]) if seen.get("answer") is not None else seen["quoted"]
        hits = tuple(SearchHit(chunk_id=f"h{i}", doc_id=h["doc"], section="", title="", crumbs=(), url="",
                               text=h["text"], score=h["score"], level_scores=h["levels"])
                     for i, h in enumerate(seen["hits"]))  # fmt: skip
        evidence = older.Evidence(seen["question"], tuple(seen["blocks"]), quoted, hits, seen["same_language"])
        return float(older.score(older.measure(evidence)))

    return scored


def rescored(path: Path, *, remeasure: bool = False, before: bool = False, older: Path | None = None) -> dict[str, Any]:
    """The curves of a saved run (`--rows --out FILE`): with `before`, the scores the run itself gave (the code of
    that run); with `older`, the scores of an older decision module on the same evidence; otherwise the current
    `score` of the run's signals, or, with `remeasure`, of the signals measured again from each question's saved
    evidence (the same pipeline pass: only the decision's code differs)."""
    from pipeline.agents.answerability import score

    baseline = older_decision(older) if older is not None else None
    saved = saved_run(path)
    figures: dict[str, Any] = {}
    for name, body in saved.items():
        if not isinstance(body, dict) or "rows" not in body:
            continue
        rows = []
        for r in body["rows"]:
            signals = saved_signals(r, remeasure=remeasure)
            value = (baseline(r) if baseline is not None else r["score"] if before
                     else score(signals) if signals is not None else None)  # fmt: skip
            shown = {k: getattr(signals, k) for k in SIGNAL_NAMES} if signals is not None else {}
            rows.append(Row(Question(r["q"], r["answerable"]), r["kind"], r["reason"], r["gold"], value, shown))
        figures[name] = {"questions": len(rows), "answerable": sum(r.question.answerable for r in rows),
                         "unanswerable": sum(not r.question.answerable for r in rows), "curve": curve(rows),
                         "signals": signal_rates(rows)}  # fmt: skip
    return figures


# -- fitting the regression -------------------------------------------------------------------------------------

NEVER_RAISES = (  # a failed check: coefficient <= 0
    "missing", "negation", "answer_type", "unknown_name", "unknown_word", "no_number", "no_thing", "purchase",
    "opinion",
)
NEVER_LOWERS = ("coverage", "agree", "margin", "meaning")  # coefficient >= 0


def fit(paths: Sequence[Path], *, l2: float = 1.0, without: Sequence[str] = ()) -> dict[str, float]:
    """`COEFFICIENTS` for pipeline/agents/answerability.py from saved tune runs (`--rows`): a logistic regression
    (Newton's method, L2 on all but the bias) of "answerable" on `features` of the signals measured again from each
    row's evidence, over the questions that reached the decision. A coefficient of the wrong sign (a failed check
    that would raise the score) is held at 0 and the others refitted; the features `without` names are left out
    (held at 0: `WORDS_ONLY_COEFFICIENTS` is the fit without "meaning")."""
    import numpy as np

    from pipeline.agents.answerability import features, off_topic

    xs: list[list[float]] = []
    ys: list[float] = []
    names: list[str] = []
    for path in paths:
        for body in saved_run(path).values():
            for r in body.get("rows", []) if isinstance(body, dict) else []:
                signals = saved_signals(r, remeasure=True)
                if signals is None or off_topic(signals):  # refused whatever the regression says
                    continue
                named = features(signals)
                names = list(named)
                xs.append(list(named.values()))
                ys.append(1.0 if r["answerable"] else 0.0)
    x_all, y = np.array(xs), np.array(ys)
    kept = [i for i, name in enumerate(names) if name not in without]
    while True:
        x = np.hstack([np.ones((len(y), 1)), x_all[:, kept]])
        w = np.zeros(x.shape[1])
        penalty = np.diag([0.0] + [l2] * len(kept))
        for _ in range(100):
            p = 1.0 / (1.0 + np.exp(-x @ w))
            step = np.linalg.solve((x.T * (p * (1 - p))) @ x + penalty, x.T @ (p - y) + penalty @ w)
            w -= step
            if float(np.abs(step).max()) < 1e-9:
                break
        wrong = [kept[i] for i, c in enumerate(w[1:]) if (names[kept[i]] in NEVER_RAISES and c > 0)
                 or (names[kept[i]] in NEVER_LOWERS and c < 0)]  # fmt: skip
        if not wrong:
            break
        kept = [k for k in kept if k not in wrong]
    fitted = dict.fromkeys(names, 0.0) | {names[k]: float(c) for k, c in zip(kept, w[1:], strict=True)}
    return {"bias": round(float(w[0]), 2)} | {k: round(v, 2) for k, v in fitted.items()}


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.answerability", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_SHARED, help="shared data folder (emanual/, squad/)")
    parser.add_argument("--only", help="comma-separated sets: squad, emanual, docbot, shoppers, newcomer")
    parser.add_argument("--split", default="all", choices=("all", "tune", "test"),
                        help="the half of the e-manual, shoppers' and newcomers' questions (all: every one)")
    parser.add_argument("--squad-articles", type=int, default=10)
    parser.add_argument("--squad-questions", type=int, default=300)
    parser.add_argument("--squad-skip-articles", type=int, default=0,
                        help="start after this many articles (10: the tune split, disjoint from the reported sample)")
    parser.add_argument("--emanual-questions", type=int, default=None, help="answerable e-manual questions (all)")
    parser.add_argument("--confirm", type=float, default=None, help="rerun with this threshold, end to end")
    parser.add_argument("--embedder", choices=("e5", "hashing"), default="e5")
    parser.add_argument("--rows", action="store_true", help="include every question's row in the JSON")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    parser.add_argument("--rescore", type=Path, nargs="*", help="recompute the curves of saved --rows runs, no run")
    parser.add_argument("--remeasure", action="store_true",
                        help="with --rescore: measure the signals again from each row's saved evidence")
    parser.add_argument("--before", action="store_true", help="with --rescore: the scores the saved run gave")
    parser.add_argument("--older", type=Path, help="with --rescore: score with this older answerability.py instead")
    parser.add_argument("--fit", type=Path, nargs="*", help="fit COEFFICIENTS on saved --rows runs (the tune split)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from bot.logs import configure_logging
    from pipeline.agents.answerability import MEANING_FEATURES

    configure_logging("WARNING")
    args = parse(argv)
    if args.fit:
        words_only = fit(args.fit, without=MEANING_FEATURES)
        coefficients = {"COEFFICIENTS": fit(args.fit), "WORDS_ONLY_COEFFICIENTS": words_only}
        print(json.dumps(coefficients, indent=1))
        return coefficients
    if args.rescore:
        figures: dict[str, Any] = {}
        for path in args.rescore:
            figures |= rescored(path, remeasure=args.remeasure, before=args.before, older=args.older)
    else:
        figures = asyncio.run(collect(args))
    for name, body in figures.items():
        if isinstance(body, dict) and "curve" in body:
            print(markdown_curve(f"{name} ({body['answerable']} answerable, {body['unanswerable']} unanswerable)",
                                 body["curve"]))  # fmt: skip
            print()
            if "confirmed" in body:
                print(f"confirmed end to end: {body['confirmed']}\n")
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1, ensure_ascii=False), encoding="utf-8")
    return figures


if __name__ == "__main__":
    main()
