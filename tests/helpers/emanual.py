"""The public e-manual QA data (EMNLP 2021 Findings, "Samsung Smart TV/Remote" manual) in the seed schema.

Tolerates the likely layouts of a folder: a corpus JSON of sections (`{"section_0": {"id", "title", "text"}}`, a list
of such objects, or JSONL; `text` a string or a list of lines) and QA as CSV (`question, section_path, answer`, as in
`smart_tv_remote_50_questions.csv`) or JSON/JSONL or a zip holding either. The gold section is the corpus id when the
QA names one, else the section whose title is the last part of `section_path` (ties and misses: the section whose text
shares most words with the answer).
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

_WORD = re.compile(r"\w+")
_PAGE_MARK = re.compile(r"^-\s*\d+\s*-$")


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _section_text(value: Any) -> str:
    lines = value if isinstance(value, list) else str(value or "").splitlines()
    kept = [str(line).strip() for line in lines]
    kept = [line for line in kept if line and line != '"' and not _PAGE_MARK.match(line)]
    return re.sub(r"\s+([,.;:)])", r"\1", " ".join(kept))


def _records(raw: str) -> list[Mapping[str, Any]]:
    raw = raw.strip()
    try:
        data: Any = json.loads(raw)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in raw.splitlines() if line.strip()]
    if isinstance(data, dict):
        for key in ("data", "sections", "questions", "qa"):
            if isinstance(data.get(key), list):
                return [r for r in data[key] if isinstance(r, dict)]
        return [{"id": key, **value} for key, value in data.items() if isinstance(value, dict)]
    return [r for r in data if isinstance(r, dict)]


def load_corpus(path: Path) -> list[dict[str, Any]]:
    """Seed records, one document per manual section, with `source` = `emanual/<section id>` as the gold key."""
    out = []
    for i, record in enumerate(_records(path.read_text(encoding="utf-8"))):
        section_id = str(record.get("id") or f"section_{i}")
        title = str(record.get("title") or section_id)
        text = _section_text(record.get("text") or record.get("content") or "")
        if text:
            out.append({"id": section_id, "source": f"emanual/{section_id}", "title": title, "crumbs": [title],
                        "content": text})
    return out


def _qa_rows(path: Path) -> Iterable[Mapping[str, Any]]:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                if name.endswith((".csv", ".json", ".jsonl")) and not name.startswith("__MACOSX"):
                    data = archive.read(name).decode("utf-8-sig")
                    yield from (csv.DictReader(io.StringIO(data)) if name.endswith(".csv") else _records(data))
        return
    text = path.read_text(encoding="utf-8-sig")
    yield from (csv.DictReader(io.StringIO(text)) if path.suffix == ".csv" else _records(text))


def _title_matches(title: str, component: str) -> bool:
    """Equal after normalising, or the corpus title is a long prefix (the extraction cut titles at line ends)."""
    t, c = _norm(title), _norm(component)
    return bool(t) and (t == c or (len(t) >= 20 and c.startswith(t)))


def _gold(row: Mapping[str, Any], corpus: list[dict[str, Any]]) -> str | None:
    """The gold source; sections the manual repeats (same title, nearly the same words) are all accepted: `a|b`."""
    ids = {d["id"]: d for d in corpus}
    for key in ("section_id", "gold", "section"):
        value = str(row.get(key) or "")
        if value in ids:
            return str(ids[value]["source"])
    path = str(row.get("section_path") or row.get("section_title") or row.get("title") or "")
    candidates: list[dict[str, Any]] = []
    for component in reversed([part for part in path.split(">") if part.strip()]):
        candidates = [d for d in corpus if _title_matches(d["title"], component)]
        if candidates:
            break
    answer = _words(str(row.get("answer") or ""))
    if not answer:
        return "|".join(d["source"] for d in candidates) or None

    def overlap(doc: Mapping[str, Any]) -> float:
        return len(answer & _words(doc["content"])) / len(answer)

    pool = candidates or corpus
    best = max(overlap(d) for d in pool)
    if not candidates and best < 0.6:
        return None
    return "|".join(d["source"] for d in pool if overlap(d) >= best - 0.2)


def load_emanual(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(seed records, QA pairs with `question`, `gold`, `lang`) from a folder holding the e-manual files."""
    corpus_files = sorted(p for p in folder.iterdir() if "corpus" in p.name and p.suffix in (".json", ".jsonl"))
    if not corpus_files:
        raise FileNotFoundError(f"no *corpus*.json in {folder}")
    corpus = load_corpus(corpus_files[0])
    qa_files = sorted(
        p for p in folder.iterdir()
        if p not in corpus_files and (p.suffix in (".csv", ".zip") or "qa" in p.name.lower() or "question" in p.name)
    )
    pairs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for qa_file in qa_files:
        for row in _qa_rows(qa_file):
            question = str(row.get("question") or "").strip()
            if not question or question in seen:
                continue
            gold = _gold(row, corpus)
            if gold is not None:
                seen.add(question)
                pairs.append({"question": question, "gold": gold, "lang": "en"})
    return corpus, pairs
