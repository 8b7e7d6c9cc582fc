"""Answer quality through the whole pipeline: the engine behind `docbot eval QA_FILE`.

Each question goes to `App.service.handle_message` as a new thread (its own user and workspace, so per-user limits
do not interfere) and the reply is scored:

- gold cited: a citation points at the gold source (`gold_source`, a URL or a path the citation URL ends with; no
  `#anchor` matches any section of that page) or the gold section (`gold_section`, a section title or anchor);
- answer token-F1: SQuAD's token F1 of the reply text (citation markers and markup removed) against the reference
  answer(s), the best over several references;
- clarification rate: replies that ask a clarifying question, over all questions;
- refusal rate on unanswerable questions (`answerable: false`): replies that decline (a refusal, or an answer that
  cites nothing), over the unanswerable questions; its mirror, answerable questions refused, is reported too;
- latency p50/p95 of `handle_message`.

QA files: JSONL, one object per line with `question`, `answer` (a string or a list), optional `gold_source` (alias
`gold`), `gold_section`, `answerable` (default true) and `lang`. SQuAD JSON (v1.1 / v2.0) is read by
`load_squad`, whose unanswerable v2.0 questions have `answerable: false`.
"""

from __future__ import annotations

import json
import math
import random
import re
import statistics
import string
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pipeline.messages import Inbound, Reply, ReplyKind, ThreadFetcher
from pipeline.text import without_citations


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return float(ordered[rank - 1])


def p50_p95(values: Sequence[float]) -> tuple[float, float]:
    return float(statistics.median(values)), percentile(values, 95)


# -- data -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QAPair:
    question: str
    answers: tuple[str, ...] = ()  # reference answers; empty for unanswerable questions
    gold_source: str | None = None
    gold_section: str | None = None
    answerable: bool = True
    lang: str | None = None


def qa_from_mapping(record: Mapping[str, Any]) -> QAPair:
    question = str(record.get("question") or "").strip()
    if not question:
        raise ValueError("a QA record needs a non-empty 'question'")
    raw = record.get("answer", record.get("answers"))
    answers: tuple[str, ...]
    if raw is None:
        answers = ()
    elif isinstance(raw, str):
        answers = (raw,) if raw.strip() else ()
    else:
        answers = tuple(str(a.get("text", "")) if isinstance(a, Mapping) else str(a) for a in raw)
        answers = tuple(a for a in answers if a.strip())
    gold = record.get("gold_source", record.get("gold"))
    section = record.get("gold_section")
    return QAPair(
        question=question,
        answers=answers,
        gold_source=str(gold) if gold else None,
        gold_section=str(section) if section else None,
        answerable=bool(record.get("answerable", True)),
        lang=str(record["lang"]) if record.get("lang") else None,
    )


def load_qa(path: Path) -> list[QAPair]:
    """Question/answer pairs from a JSONL file (see the module docstring) or a SQuAD JSON file."""
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix == ".json":
        data = json.loads(text)
        if isinstance(data, Mapping) and isinstance(data.get("data"), list):
            return load_squad(path)[1]
        if isinstance(data, list):
            return [qa_from_mapping(r) for r in data]
        raise ValueError(f"{path}: expected SQuAD JSON or a list of QA objects")
    pairs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            pairs.append(qa_from_mapping(json.loads(line)))
        except (ValueError, AttributeError) as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
    return pairs


def squad_source(title: str, paragraph: int) -> str:
    return f"squad/{title}/{paragraph}"


def load_squad(
    path: Path, *, articles: int | None = None, questions: int | None = None, seed: int = 7
) -> tuple[list[dict[str, Any]], list[QAPair]]:
    """SQuAD v1.1/v2.0 JSON as (seed records, one per paragraph; QA pairs whose gold source is that paragraph).

    `articles` keeps the first n articles (file order); `questions` draws a fixed sample of that many questions
    (`random.Random(seed).sample`, then file order). v2.0's `is_impossible` questions have `answerable=False`
    and keep their paragraph as the gold source (the paragraph does not answer them).
    """
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    if articles is not None:
        data = data[:articles]
    docs: list[dict[str, Any]] = []
    pairs: list[QAPair] = []
    for article in data:
        title = str(article["title"])
        for number, paragraph in enumerate(article["paragraphs"]):
            source = squad_source(title, number)
            name = title.replace("_", " ")
            docs.append({"id": f"{title}-{number}", "source": source, "title": name, "crumbs": [name],
                         "content": paragraph["context"]})  # fmt: skip
            for qa in paragraph["qas"]:
                impossible = bool(qa.get("is_impossible", False))
                answers = tuple(dict.fromkeys(str(a["text"]) for a in qa.get("answers", [])))
                pairs.append(QAPair(str(qa["question"]), () if impossible else answers, source,
                                    answerable=not impossible, lang="en"))  # fmt: skip
    if questions is not None and questions < len(pairs):
        chosen = set(random.Random(seed).sample(range(len(pairs)), questions))
        pairs = [p for i, p in enumerate(pairs) if i in chosen]
    return docs, pairs


# -- metrics ----------------------------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)  # plus every Unicode punctuation character (category P)


def normalize_answer(text: str) -> list[str]:
    """SQuAD's normalisation (lower case, no punctuation, no English articles), as tokens; markup removed."""
    text = without_citations(text).replace("**", " ")
    text = "".join(" " if ch in _PUNCTUATION or unicodedata.category(ch).startswith("P") else ch for ch in text.lower())
    return _ARTICLES.sub(" ", text).split()


def token_f1(prediction: str, reference: str) -> float:
    predicted, gold = normalize_answer(prediction), normalize_answer(reference)
    if not predicted or not gold:
        return float(predicted == gold)
    common = Counter(predicted) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def best_f1(prediction: str, references: Iterable[str]) -> float | None:
    scores = [token_f1(prediction, r) for r in references]
    return max(scores) if scores else None


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.casefold()).strip("-")


def cites_gold(
    urls: Sequence[str], titles: Sequence[str], *, gold_source: str | None, gold_section: str | None
) -> bool | None:
    """Whether a citation hits the gold; None when the pair names no gold."""
    if gold_source is None and gold_section is None:
        return None
    for url, title in zip(urls, titles, strict=True):
        if gold_source is not None:
            target = url if "#" in gold_source else url.split("#", 1)[0]
            gold = gold_source.lstrip("/")
            if target in (gold_source, gold) or target.endswith("/" + gold):
                return True
        if gold_section is not None:
            anchor = url.split("#", 1)[1] if "#" in url else ""
            if title.casefold() == gold_section.casefold() or (anchor and anchor == _slug(gold_section)):
                return True
    return False


# -- running ----------------------------------------------------------------------------------------------------


class MessageHandler(Protocol):
    async def handle_message(self, inbound: Inbound, fetcher: ThreadFetcher | None = None) -> Reply | None: ...


class EvaluatedApp(Protocol):
    """What `evaluate` needs of `bot.app.App`."""

    @property
    def service(self) -> MessageHandler: ...


@dataclass(frozen=True, slots=True)
class EvalRow:
    question: str
    kind: str  # the reply kind, or "silent" when there was no reply
    reason: str | None
    answerable: bool
    gold_cited: bool | None
    f1: float | None
    latency_ms: float
    cited: tuple[str, ...] = ()
    cached: bool = False

    @property
    def declined(self) -> bool:
        return self.kind == ReplyKind.REFUSAL.value or (self.kind == ReplyKind.ANSWER.value and not self.cited)


def _rate(hits: int, total: int) -> float | None:
    return hits / total if total else None


@dataclass(slots=True)
class EvalReport:
    name: str
    rows: list[EvalRow]
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        rows = self.rows
        answerable = [r for r in rows if r.answerable]
        unanswerable = [r for r in rows if not r.answerable]
        with_gold = [r for r in answerable if r.gold_cited is not None]
        with_answer = [r for r in answerable if r.f1 is not None]
        p50, p95 = p50_p95([r.latency_ms for r in rows]) if rows else (None, None)
        return {
            "name": self.name,
            "questions": len(rows),
            "answerable": len(answerable),
            "unanswerable": len(unanswerable),
            "gold_cited_rate": _rate(sum(bool(r.gold_cited) for r in with_gold), len(with_gold)),
            "answer_f1": sum(r.f1 or 0.0 for r in with_answer) / len(with_answer) if with_answer else None,
            "clarification_rate": _rate(sum(r.kind == ReplyKind.CLARIFICATION.value for r in rows), len(rows)),
            "refusal_rate_unanswerable": _rate(sum(r.declined for r in unanswerable), len(unanswerable)),
            "refusal_rate_answerable": _rate(sum(r.declined for r in answerable), len(answerable)),
            "latency_p50_ms": p50,
            "latency_p95_ms": p95,
            "kinds": dict(Counter(r.kind for r in rows)),
        }


WARMUP_QUESTION = "hello"


def _inbound(question: str, number: int, token: str) -> Inbound:
    return Inbound(
        platform="eval",
        workspace_id=f"eval-{number}",
        channel_id="eval",
        thread_id=None,
        message_id=f"{token}-{number}",
        user_id=f"eval-{number}",
        user_name="eval",
        text=question,
        ts=datetime.now(UTC),
    )


async def evaluate(
    app: EvaluatedApp,
    qa_pairs: Sequence[QAPair],
    *,
    name: str = "eval",
    on_progress: Callable[[int, int], None] | None = None,
    warmup: bool = True,
) -> EvalReport:
    """Run every question through `app.service.handle_message` (one new thread each, one at a time) and score it.

    `warmup` first sends one unscored message so loading models (language detector, embedder) is not counted
    as the first question's latency."""
    token = f"eval{time.time_ns()}"
    rows: list[EvalRow] = []
    if warmup and qa_pairs:
        await app.service.handle_message(_inbound(WARMUP_QUESTION, -1, token))
    for number, pair in enumerate(qa_pairs):
        started = time.perf_counter()
        reply = await app.service.handle_message(_inbound(pair.question, number, token))
        latency = (time.perf_counter() - started) * 1000
        if reply is None:
            rows.append(
                EvalRow(
                    pair.question,
                    "silent",
                    None,
                    pair.answerable,
                    False if pair.answerable and (pair.gold_source or pair.gold_section) else None,
                    0.0 if pair.answers else None,
                    latency,
                )
            )
        else:
            urls = [c.url for c in reply.citations]
            gold = cites_gold(urls, [c.title for c in reply.citations], gold_source=pair.gold_source,
                              gold_section=pair.gold_section)  # fmt: skip
            rows.append(EvalRow(
                question=pair.question,
                kind=reply.kind.value,
                reason=reply.reason,
                answerable=pair.answerable,
                gold_cited=gold if pair.answerable else None,
                f1=best_f1(reply.text, pair.answers) if pair.answerable else None,
                latency_ms=latency,
                cited=tuple(urls),
                cached=reply.cached,
            ))  # fmt: skip
        if on_progress is not None:
            on_progress(number + 1, len(qa_pairs))
    return EvalReport(name, rows)


# -- reports ----------------------------------------------------------------------------------------------------

_SUMMARY_ROWS: tuple[tuple[str, str], ...] = (
    ("questions", "questions"),
    ("answerable", "answerable"),
    ("unanswerable", "unanswerable"),
    ("gold_cited_rate", "gold source cited"),
    ("answer_f1", "answer token-F1"),
    ("clarification_rate", "clarification rate"),
    ("refusal_rate_unanswerable", "refusal rate, unanswerable"),
    ("refusal_rate_answerable", "refused although answerable"),
    ("latency_p50_ms", "latency p50 (ms)"),
    ("latency_p95_ms", "latency p95 (ms)"),
)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}" if value >= 10 else f"{value:.3f}"
    return str(value)


def markdown(report: EvalReport) -> str:
    summary = report.summary()
    lines = [f"## {report.name}", "", "| metric | value |", "|---|---|"]
    lines += [f"| {label} | {_cell(summary[key])} |" for key, label in _SUMMARY_ROWS]
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(summary["kinds"].items()))
    lines += ["", f"Replies by kind: {kinds or 'none'}."]
    lines += [f"Note: {note}" for note in report.notes]
    return "\n".join(lines) + "\n"


def compare(a: EvalReport, b: EvalReport) -> str:
    """Two reports side by side as a Markdown table, with the difference b - a."""
    left, right = a.summary(), b.summary()
    lines = [f"| metric | {a.name} | {b.name} | Δ |", "|---|---|---|---|"]
    for key, label in _SUMMARY_ROWS:
        x, y = left[key], right[key]
        delta = f"{y - x:+.3f}" if isinstance(x, int | float) and isinstance(y, int | float) else "-"
        lines.append(f"| {label} | {_cell(x)} | {_cell(y)} | {delta} |")
    return "\n".join(lines) + "\n"


def to_json(report: EvalReport) -> dict[str, Any]:
    return {"name": report.name, "created": report.created, "summary": report.summary(), "notes": report.notes,
            "rows": [asdict(r) for r in report.rows]}  # fmt: skip


def write_report(report: EvalReport, json_path: Path, md_path: Path) -> None:
    """The report as JSON (summary and one row per question) and as a Markdown table."""
    for path in (json_path, md_path):
        path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(to_json(report), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(report), encoding="utf-8")


def load_report(path: Path) -> EvalReport:
    """A report written by `write_report` (for `docbot eval --compare A B`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = [EvalRow(**{**row, "cited": tuple(row.get("cited", ()))}) for row in data["rows"]]
    return EvalReport(str(data["name"]), rows, created=str(data.get("created", "")), notes=list(data.get("notes", [])))
