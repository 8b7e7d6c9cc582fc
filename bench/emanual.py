"""The e-manual in the shared layout: 261 sections and the 684 expert QA pairs, gold sections by title.

    DATA/emanual/raw/smart_tv_remote_manual_corpus.json      {"section_N": {"id", "title", "text": [lines]}}
    DATA/emanual/smart_tv_remote_qa.cleaned.jsonl            id, qa_set, question, answer, section_hierarchy, link

A question's gold is the last title of its `section_hierarchy` ("Quick Guides>Using Smart Hub" -> "Using Smart Hub"),
matched against the corpus titles after light normalisation (case, surrounding space, a trailing colon, curly quotes);
a title the manual repeats accepts any of its sections (`a|b`). Questions whose title names no corpus section are
counted per QA set (`resolved` vs `questions`) and left out, never guessed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.emanual_data import load_corpus

CORPUS = Path("emanual") / "raw" / "smart_tv_remote_manual_corpus.json"
QA = Path("emanual") / "smart_tv_remote_qa.cleaned.jsonl"
QA_SETS = ("Normal", "Paraphrased", "Compound", "Yes/No")


def normalise_title(title: str) -> str:
    text = title.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"\s+", " ", text).strip().rstrip(":").strip().lower()


def qa_set_name(raw: str) -> str:
    """`Normal Q&A` -> `Normal`."""
    return raw.replace("Q&A", "").strip()


@dataclass(frozen=True, slots=True)
class EManual:
    corpus: list[dict[str, Any]]  # seed records, source `emanual/<section id>`
    questions: list[dict[str, Any]]  # question, gold, lang, group (the QA set), id
    totals: dict[str, int]  # questions per QA set, resolved or not

    def resolved(self) -> dict[str, int]:
        return dict(Counter(q["group"] for q in self.questions))


def load(data: Path) -> EManual:
    """The corpus and the QA pairs whose gold section resolves; `data` is the shared data folder."""
    corpus = load_corpus(data / CORPUS)
    by_title: dict[str, list[str]] = {}
    for doc in corpus:
        by_title.setdefault(normalise_title(str(doc["title"])), []).append(str(doc["source"]))
    questions: list[dict[str, Any]] = []
    totals: Counter[str] = Counter()
    for line in (data / QA).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        group = qa_set_name(str(row["qa_set"]))
        totals[group] += 1
        hierarchy = row.get("section_hierarchy") or ""
        parts = hierarchy if isinstance(hierarchy, list) else str(hierarchy).split(">")
        last = str(parts[-1]) if parts else ""
        sources = by_title.get(normalise_title(last))
        if sources:
            questions.append({"id": row["id"], "question": str(row["question"]).strip(), "gold": "|".join(sources),
                              "lang": "en", "group": group})  # fmt: skip
    return EManual(corpus, questions, dict(totals))


def present(data: Path) -> Path | None:
    """The first missing file of the layout, or None when both are there."""
    for rel in (CORPUS, QA):
        if not (data / rel).is_file():
            return data / rel
    return None
