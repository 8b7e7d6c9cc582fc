"""Retrieval quality: section-level hit@1, hit@5 and MRR of our fused search against keyword-only (BM25) and
embedding-only baselines, in one run over the same index; plus quality-threshold calibration and index latency.

    python -m bench.retrieval                    # fixture manual: English and cross-language questions
    python -m bench.retrieval --emanual DIR      # the public e-manual corpus + QA (see bench/emanual_data.py)
    python -m bench.retrieval --calibrate        # fit storage/search/quality.py thresholds on labelled questions
    python -m bench.retrieval --latency          # LocalVectorIndex p50/p95 at 100k x 384
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.types import Embedder, SearchRequest
from storage.db import Database
from storage.embedder import E5Embedder
from storage.ingest import Ingestor
from storage.ingest.readers import iter_files, pretty, read_document_text, text_to_doc
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever, QualityThresholds, grade
from storage.search.fusion import dense_to_unit
from storage.search.tokenize import tokenize
from storage.vector_index import VectorRecord

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
FIXTURE_MANUAL = REPO / "tests" / "fixtures" / "manual"
COLLECTION = "bench"
SYSTEMS = ("ours", "bm25", "dense")
ALL_SYSTEMS = (*SYSTEMS, "fixed")  # "fixed": an even blend of dense and BM25, the non-adaptive reference


@dataclass(frozen=True, slots=True)
class QuestionResult:
    question: str
    lang: str
    gold: str | None
    system: str
    rank: int | None  # 1-based rank of the gold section among the top 10, None when absent
    top_score: float
    margin: float
    group: str = ""  # e.g. the e-manual QA set; "" when the question set has no groups


class DiskCachedEmbedder:
    """An embedder whose vectors are kept on disk (`bench/.cache/`, gitignored), keyed by model, kind and text, so a
    rerun of a benchmark embeds only what it has not seen. New vectors are appended as one `.npz` shard per call."""

    def __init__(self, inner: Embedder, folder: Path) -> None:
        self._inner = inner
        self.model_name = str(getattr(inner, "model_name", type(inner).__name__))
        self._folder = folder / self.model_name
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        if self._folder.is_dir():
            shards = sorted(self._folder.glob("*.npz"))
            for shard in shards:
                with np.load(shard) as data:
                    self._vectors.update({key: data[key] for key in data.files})
            if len(shards) > 20:  # one file per embed call adds up: merge what was read into one
                self._write(self._vectors)
                for shard in shards:
                    shard.unlink(missing_ok=True)

    @property
    def dim(self) -> int:
        return self._inner.dim

    def _write(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        """One shard, written under a temporary name and renamed, so a reader never sees half of it."""
        self._folder.mkdir(parents=True, exist_ok=True)
        name = f"{time.time_ns()}-{os.getpid()}"
        temporary = self._folder / f"{name}.tmp"
        with temporary.open("wb") as handle:
            np.savez(handle, **vectors)  # type: ignore[arg-type]
        temporary.rename(self._folder / f"{name}.npz")

    @staticmethod
    def _key(kind: str, text: str) -> str:
        return f"{kind[0]}{hashlib.sha1(text.encode('utf-8')).hexdigest()}"

    async def _embed(self, texts: Sequence[str], kind: str) -> npt.NDArray[np.float32]:
        keys = [self._key(kind, t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._vectors}
        if missing:
            embed = self._inner.embed_queries if kind == "query" else self._inner.embed_passages
            fresh = await embed(list(missing.values()))
            new = dict(zip(missing, fresh.astype(np.float32), strict=True))
            self._vectors.update(new)
            self._write(new)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([self._vectors[k] for k in keys])

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._embed(texts, "query")

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._embed(texts, "passage")


class CachedQueries:
    """Embeds each distinct question once, so the systems compared in one run share the query vectors."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._cache: dict[str, npt.NDArray[np.float32]] = {}
        self.model_name = str(getattr(inner, "model_name", type(inner).__name__))

    @property
    def dim(self) -> int:
        return self._inner.dim

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for text, vector in zip(missing, await self._inner.embed_queries(missing), strict=True):
                self._cache[text] = vector
        return np.vstack([self._cache[t] for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._inner.embed_passages(texts)


def detect_language(text: str) -> str | None:
    """The language the offline lang agent finds for `text` (lingua over the same languages), None if none."""
    from pipeline.agents.lang import build_detector

    values = build_detector().compute_language_confidence_values(text)
    return values[0].language.iso_code_639_1.name.lower() if values and values[0].value > 0 else None


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def folder_to_seed(folder: Path) -> list[dict[str, Any]]:
    """A folder of Markdown/HTML/text as seed records whose sources are relative paths (stable gold keys)."""
    records = []
    for file in iter_files(folder):
        rel = file.relative_to(folder)
        doc = text_to_doc(
            read_document_text(file.read_bytes(), file.suffix.lower()),
            doc_id=rel.as_posix(),
            source=rel.as_posix(),
            fallback_title=pretty(file.stem),
            path_crumbs=tuple(pretty(p) for p in rel.parent.parts),
        )
        chunks = [
            {"title": c.title, "section": c.section, "crumbs": list(c.crumbs), "text": c.text} for c in doc.chunks
        ]
        records.append(
            {"id": doc.id, "source": doc.source, "title": doc.title, "crumbs": list(doc.crumbs), "content": doc.content,
             "chunks": chunks}
        )
    return records


def _matches(url: str, gold: str) -> bool:
    """`gold` is a section (`source#anchor`), a whole document (`source`), or alternatives joined by `|`."""
    return any(url == g or ("#" not in g and url.split("#", 1)[0] == g) for g in gold.split("|"))


def _rank(urls: Sequence[str], gold: str | None) -> int | None:
    if gold is None:
        return None
    for i, url in enumerate(urls[:10]):
        if _matches(url, gold):
            return i + 1
    return None


def _dedupe(urls: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(urls))


async def run_questions(
    corpus_docs: Sequence[Mapping[str, Any]],
    qa_pairs: Sequence[Mapping[str, Any]],
    systems: Sequence[str] = SYSTEMS,
    *,
    embedder: Embedder | None = None,
) -> list[QuestionResult]:
    """Index `corpus_docs` (seed records) in a scratch SQLite database and answer every question with each system."""
    embedder = CachedQueries(embedder or E5Embedder())
    with tempfile.TemporaryDirectory() as scratch:
        db = Database(f"sqlite+aiosqlite:///{scratch}/bench.db")
        await db.migrate()
        seed = Path(scratch) / "corpus.jsonl"
        seed.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in corpus_docs), encoding="utf-8")
        index = LocalVectorIndex(embedder.dim)
        await Ingestor(db, embedder, index).ingest([str(seed)], collection=COLLECTION)
        retriever = HybridRetriever(db, embedder, index)
        await retriever.load()
        # as the pipeline's search agent asks: with the language the lang agent detects
        requests = [
            SearchRequest(text=str(p["question"]), language=detect_language(str(p["question"])), top_k=10,
                          collections=(COLLECTION,))
            for p in qa_pairs
        ]  # fmt: skip
        if "ours" in systems:
            await retriever.wait_for_levels()  # embedded in the background: measure them complete
        else:
            await retriever.close()  # the baselines read no title or unit level: not embedded
        corpus = retriever.corpus
        assert corpus is not None
        results: list[QuestionResult] = []
        for pair, request in zip(qa_pairs, requests, strict=True):
            question, gold, lang = str(pair["question"]), pair.get("gold"), str(pair.get("lang", "en"))
            group = str(pair.get("group", ""))
            for system in systems:
                top_score = margin = 0.0
                if system == "ours":
                    response = await retriever.search(request)
                    urls = [h.url for h in response.hits]
                    top_score, margin = response.top_score, response.margin  # what the grade reads
                elif system == "bm25":
                    scores = corpus.text_level.scores(tokenize(question))
                    order = [int(i) for i in np.argsort(-scores, kind="stable")[:50] if scores[i] > 0]
                    urls = _dedupe([corpus.chunks[i].url for i in order])
                elif system == "fixed":
                    vector = (await embedder.embed_queries([question]))[0]
                    cosine = index.scores_for(vector, [c.id for c in corpus.chunks])
                    dense = dense_to_unit(np.array([cosine.get(c.id, 0.0) for c in corpus.chunks], dtype=np.float32))
                    keyword = corpus.text_level.scores(tokenize(question))
                    blend = 0.5 * dense + 0.5 * (keyword / keyword.max() if keyword.max() > 0 else keyword)
                    urls = _dedupe([corpus.chunks[int(i)].url for i in np.argsort(-blend, kind="stable")[:50]])
                elif system == "dense":
                    vector = (await embedder.embed_queries([question]))[0]
                    matches = await index.query(vector, top_k=50, collections=(COLLECTION,))
                    urls = _dedupe([corpus.chunks[corpus.row_of[m.id]].url for m in matches])
                else:
                    raise ValueError(f"unknown system {system!r}; use {ALL_SYSTEMS}")
                results.append(
                    QuestionResult(question, lang, gold, system, _rank(urls, gold), top_score, margin, group)
                )
        await retriever.close()
        await db.dispose()
    return results


def summarise(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """{"systems": {system: metrics}, "by_language": {lang: {system: metrics}}, "by_group": {group: {...}}} over
    answerable questions."""

    def metrics(rows: list[QuestionResult]) -> dict[str, float]:
        n = len(rows)
        if n == 0:
            return {"n": 0, "hit@1": 0.0, "hit@5": 0.0, "mrr": 0.0}
        return {
            "n": n,
            "hit@1": sum(r.rank == 1 for r in rows) / n,
            "hit@5": sum(r.rank is not None and r.rank <= 5 for r in rows) / n,
            "mrr": sum(1.0 / r.rank for r in rows if r.rank) / n,
        }

    answerable = [r for r in results if r.gold is not None]
    by_system: dict[str, list[QuestionResult]] = defaultdict(list)
    by_lang: dict[str, dict[str, list[QuestionResult]]] = defaultdict(lambda: defaultdict(list))
    by_group: dict[str, dict[str, list[QuestionResult]]] = defaultdict(lambda: defaultdict(list))
    for r in answerable:
        by_system[r.system].append(r)
        by_lang[r.lang][r.system].append(r)
        if r.group:
            by_group[r.group][r.system].append(r)
    return {
        "systems": {s: metrics(rows) for s, rows in by_system.items()},
        "by_language": {lang: {s: metrics(rows) for s, rows in systems.items()} for lang, systems in by_lang.items()},
        "by_group": {g: {s: metrics(rows) for s, rows in systems.items()} for g, systems in by_group.items()},
    }


def evaluate(
    corpus_docs: Sequence[Mapping[str, Any]],
    qa_pairs: Sequence[Mapping[str, Any]],
    systems: Sequence[str] = SYSTEMS,
    *,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """Section-level hit@1 / hit@5 / MRR per system (and per question language). `qa_pairs` hold `question`,
    `gold` (a section's `source#anchor`, or `source` for a whole document) and optionally `lang`."""
    return summarise(asyncio.run(run_questions(corpus_docs, qa_pairs, systems, embedder=embedder)))


def fit_thresholds(results: Sequence[QuestionResult], *, precision: float = 0.9) -> QualityThresholds:
    """`good_score`: the cut on the top fused score that best separates answerable from off-topic questions
    (balanced accuracy); `excellent_*`: the widest score/margin region whose top hits are right >= `precision`."""
    ours = [r for r in results if r.system == "ours"]
    positives = [r.top_score for r in ours if r.gold is not None]
    negatives = [r.top_score for r in ours if r.gold is None]
    if not positives or not negatives:
        raise ValueError("calibration needs both answerable and off-topic questions")
    candidates = sorted(set(positives + negatives))
    best_cut, best_accuracy = candidates[0], -1.0
    for low, high in zip(candidates, [*candidates[1:], candidates[-1] + 1e-6], strict=True):
        cut = (low + high) / 2
        accuracy = (np.mean([p >= cut for p in positives]) + np.mean([n < cut for n in negatives])) / 2
        if accuracy > best_accuracy:
            best_cut, best_accuracy = cut, float(accuracy)
    best = (1.01, 0.0, 0)
    for score in sorted({r.top_score for r in ours}):
        for margin in (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3):
            chosen = [r for r in ours if r.top_score >= score and r.margin >= margin]
            right = sum(r.rank == 1 for r in chosen)
            if chosen and right / len(chosen) >= precision and len(chosen) > best[2]:
                best = (score, margin, len(chosen))
    return QualityThresholds(
        good_score=round(best_cut, 3), excellent_score=round(max(best[0], best_cut), 3), excellent_margin=best[1]
    )


def print_table(title: str, summary: Mapping[str, Any]) -> None:
    print(f"\n{title}")
    print(f"{'questions':<12}{'system':<8}{'n':>4}{'hit@1':>8}{'hit@5':>8}{'MRR':>8}")
    rows = [("all", summary["systems"]), *sorted(summary["by_language"].items())]
    for group, systems in rows:
        for system in ALL_SYSTEMS:
            if system in systems:
                m = systems[system]
                print(f"{group:<12}{system:<8}{m['n']:>4}{m['hit@1']:>8.3f}{m['hit@5']:>8.3f}{m['mrr']:>8.3f}")


def fixture_questions(*, offtopic: bool = False) -> list[dict[str, Any]]:
    files = ["fixture_qa_en.jsonl", "exact_en.jsonl", *(f"crosslang_{lang}.jsonl" for lang in ("ru", "es", "de", "zh"))]
    if offtopic:
        files.append("offtopic.jsonl")
    return [pair for name in files for pair in load_jsonl(DATA / name)]


async def latency(n: int = 100_000, dim: int = 384, queries: int = 200) -> dict[str, float]:
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    index = LocalVectorIndex(dim)
    await index.upsert(
        [VectorRecord(f"c{i}", matrix[i], "d", "", "", (), "", "a" if i % 4 else "b") for i in range(n)]
    )
    out: dict[str, float] = {}
    for label, collections in (("all", ("a", "b")), ("one", ("a",))):
        timings = []
        for i in range(queries):
            started = time.perf_counter()
            await index.query(matrix[i], top_k=20, collections=collections)
            timings.append((time.perf_counter() - started) * 1000)
        out[f"{label}_p50_ms"] = float(np.percentile(timings, 50))
        out[f"{label}_p95_ms"] = float(np.percentile(timings, 95))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__.splitlines()[0])
    parser.add_argument("--emanual", type=Path, help="folder with the e-manual corpus JSON and QA CSV/JSON")
    parser.add_argument("--calibrate", action="store_true", help="fit the search-quality thresholds")
    parser.add_argument("--latency", action="store_true", help="vector index latency at 100k x 384")
    args = parser.parse_args(argv)
    if args.latency:
        print(json.dumps(asyncio.run(latency()), indent=2))
        return
    if args.emanual:
        from bench.emanual_data import load_emanual

        corpus, qa = load_emanual(args.emanual)
        results = asyncio.run(run_questions(corpus, qa, ALL_SYSTEMS))
        print_table(f"e-manual: {len(corpus)} sections, {len(qa)} questions", summarise(results))
    else:
        corpus = folder_to_seed(FIXTURE_MANUAL)
        results = asyncio.run(run_questions(corpus, fixture_questions(offtopic=args.calibrate), ALL_SYSTEMS))
        print_table(f"fixture manual: {len(corpus)} documents", summarise(results))
    grades: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in results:
        if r.system == "ours":
            grades["answerable" if r.gold else "off-topic"][grade(r.top_score, r.margin).value] += 1
    print("\nquality grades (current thresholds):", {k: dict(v) for k, v in grades.items()})
    if args.calibrate:
        print("fitted:", fit_thresholds(results))


if __name__ == "__main__":
    main()
