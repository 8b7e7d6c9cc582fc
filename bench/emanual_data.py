"""The public e-manual QA data (EMNLP 2021 Findings, "Samsung Smart TV/Remote" manual) in the seed schema.

The shared layout (../shared/data/emanual): `raw/smart_tv_remote_manual_corpus.json` (261 sections,
`{"section_0": {"id", "title", "text": [lines]}}`) and `smart_tv_remote_qa.cleaned.jsonl` (684 QA pairs: `id, qa_set,
question, answer, section_hierarchy, link`). Also tolerated: the corpus directly in the folder, a list or JSONL of
sections, QA as CSV (`question, section_path, answer`, as in `smart_tv_remote_50_questions.csv`) or JSON/JSONL or a zip
of either (used only when there is no cleaned JSONL, which already holds all of them).

The gold section is the corpus id when the QA names one, else the section(s) whose title is the last part of the
section path (case-insensitive; a corpus title cut at a line end matches as a long prefix). Several sections with that
title (the manual repeats some): those whose text shares most words with the answer, all accepted (`a|b`). No title
match: the section whose text holds most of the answer's words (at least 60 %), else the question is left out.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.types import Embedder

_WORD = re.compile(r"\w+")
_PAGE_MARK = re.compile(r"^-\s*\d+\s*-$")
_MIN_ANSWER_WORDS = 5


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _section_text(value: Any) -> str:
    """A section's printed lines as running text, page numbers dropped. Kept here rather than calling the ingest's
    `extracted_lines_text` because a baseline tree on PYTHONPATH may predate it; tests/storage/test_ingest_readers.py
    checks that the two read the shared manual the same."""
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
            out.append(
                {
                    "id": section_id,
                    "source": f"emanual/{section_id}",
                    "title": title,
                    "crumbs": [title],
                    "content": text,
                }
            )
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
    path = str(
        row.get("section_hierarchy") or row.get("section_path") or row.get("section_title") or row.get("title") or ""
    )
    parts = [part for part in path.split(">") if part.strip()]
    candidates = [d for d in corpus if parts and _title_matches(d["title"], parts[-1])]
    answer = _words(str(row.get("answer") or ""))

    def overlap(doc: Mapping[str, Any]) -> float:
        return len(answer & _words(doc["content"])) / len(answer)

    if candidates:
        if len(candidates) == 1 or not answer:
            return "|".join(d["source"] for d in candidates)
        best = max(overlap(d) for d in candidates)
        return "|".join(d["source"] for d in candidates if overlap(d) >= best - 0.2)
    if len(answer) < _MIN_ANSWER_WORDS:  # "Yes." locates nothing
        return None
    best = max(overlap(d) for d in corpus)
    if best < 0.6:
        return None
    return "|".join(d["source"] for d in corpus if overlap(d) >= best - 0.05)


def _corpus_file(folder: Path) -> Path:
    for where in (folder, folder / "raw"):
        if where.is_dir():
            found = sorted(p for p in where.iterdir() if "corpus" in p.name and p.suffix in (".json", ".jsonl"))
            if found:
                return found[0]
    raise FileNotFoundError(f"no *corpus*.json in {folder} or {folder / 'raw'}")


def _qa_files(folder: Path, corpus_file: Path) -> list[Path]:
    cleaned = sorted(folder.glob("*qa*.cleaned.jsonl"))
    if cleaned:
        return cleaned
    return sorted(
        p for where in (folder, folder / "raw") if where.is_dir() for p in where.iterdir()
        if p != corpus_file and (p.suffix in (".csv", ".zip") or "qa" in p.name.lower() or "question" in p.name)
    )  # fmt: skip


def load_emanual(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(seed records, QA pairs) from a folder holding the e-manual files. Each pair has `question`, `gold`, `lang`
    and, where the QA file says, `qa_set` and `id`; questions whose gold section does not resolve are left out
    (`count_resolved` says how many were kept of how many)."""
    corpus_file = _corpus_file(folder)
    corpus = load_corpus(corpus_file)
    pairs: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for qa_file in _qa_files(folder, corpus_file):
        for row in _qa_rows(qa_file):
            question = str(row.get("question") or "").strip()
            qa_set = str(row.get("qa_set") or "")
            if not question or (qa_set, question) in seen:
                continue
            gold = _gold(row, corpus)
            if gold is not None:
                seen.add((qa_set, question))
                pair = {"question": question, "gold": gold, "lang": "en"}
                pair.update({key: str(row[key]) for key in ("qa_set", "id") if row.get(key)})
                pairs.append(pair)
    return corpus, pairs


def count_resolved(folder: Path) -> tuple[int, int]:
    """(questions kept by `load_emanual`, distinct questions in the QA files) — how many gold sections resolve."""
    corpus_file = _corpus_file(folder)
    total = {
        (str(row.get("qa_set") or ""), str(row.get("question") or "").strip())
        for qa_file in _qa_files(folder, corpus_file) for row in _qa_rows(qa_file) if row.get("question")
    }  # fmt: skip
    return len(load_emanual(folder)[1]), len(total)


class MemoEmbedder:
    """Wraps an embedder so each distinct text is embedded once per test session (queries and passages apart):
    the e-manual tests share the 261 sections' and the questions' vectors instead of recomputing them. With
    `cache_dir`, vectors are also kept on disk (one .npy per model, kind and text hash), so later sessions skip the
    model (the first embedding of the e-manual costs minutes of CPU on a 2-core machine)."""

    def __init__(self, inner: Embedder, cache_dir: Path | None = None) -> None:
        self._inner = inner
        self._memo: dict[tuple[str, str], npt.NDArray[np.float32]] = {}
        self.model_name = str(getattr(inner, "model_name", type(inner).__name__))
        self._dir = cache_dir / re.sub(r"[^\w.-]+", "_", self.model_name) if cache_dir else None

    def _file(self, kind: str, text: str) -> Path | None:
        if self._dir is None:
            return None
        return self._dir / f"{kind}-{hashlib.sha256(text.encode()).hexdigest()}.npy"

    def _from_disk(self, kind: str, text: str) -> bool:
        path = self._file(kind, text)
        if path is None or not path.exists():
            return False
        try:
            vector = np.load(path)
        except (OSError, ValueError):
            return False
        if vector.shape != (self.dim,):
            return False
        self._memo[(kind, text)] = vector.astype(np.float32)
        return True

    def _to_disk(self, kind: str, text: str, vector: npt.NDArray[np.float32]) -> None:
        path = self._file(kind, text)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            with tmp.open("wb") as handle:
                np.save(handle, vector)
            tmp.replace(path)

    @property
    def dim(self) -> int:
        return self._inner.dim

    async def _embed(self, texts: Sequence[str], kind: str) -> npt.NDArray[np.float32]:
        missing = [t for t in dict.fromkeys(texts) if (kind, t) not in self._memo and not self._from_disk(kind, t)]
        if missing:
            embed = self._inner.embed_queries if kind == "query" else self._inner.embed_passages
            for text, vector in zip(missing, await embed(missing), strict=True):
                self._memo[(kind, text)] = vector
                self._to_disk(kind, text, vector)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([self._memo[(kind, t)] for t in texts])

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._embed(texts, "query")

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._embed(texts, "passage")


@cache
def session_embedder() -> MemoEmbedder:
    """The bundled multilingual-e5-small, memoised for the test session and cached on disk under
    $DOCBOT_TEST_CACHE (default ~/.cache/docbot-tests; set it to an empty string to turn the disk cache off)."""
    from storage.embedder import E5Embedder

    folder = os.environ.get("DOCBOT_TEST_CACHE", str(Path.home() / ".cache" / "docbot-tests"))
    # four engines (single-threaded, ~21 MB each): with the cache empty, the worker embedding the e-manual is the
    # run's critical path, and on cores shared with the other workers four threads get it a larger share of them
    return MemoEmbedder(E5Embedder(engines=4), Path(folder) / "embeddings" if folder else None)
