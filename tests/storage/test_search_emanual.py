"""The e-manual helper on a tiny corpus in the real layout, and the real benchmark when the shared data is present."""

from __future__ import annotations

import asyncio
import csv
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from bench.emanual_data import MemoEmbedder, count_resolved, load_emanual, session_embedder
from bench.retrieval import evaluate
from tests.conftest import shared_path

# One xdist worker runs every test that embeds the e-manual, so the corpus is embedded once per session (the
# in-memory memo is per process; two workers embedding it at once doubled the cold-cache cost).
pytestmark = pytest.mark.xdist_group("emanual-e5")


@pytest.mark.unit
def test_emanual_layout_is_converted_to_seed_records_and_gold_sections(tmp_path: Path) -> None:
    corpus = {
        "section_0": {"id": "section_0", "title": "Using Bixby", "text": ["Speak into the", "microphone.", "- 7 -"]},
        "section_1": {"id": "section_1", "title": "Running Bixby", "text": ["Press and hold the", "button."]},
        "section_2": {"id": "section_2", "title": "Using Bixby", "text": ["A guide to", "voice commands", "for TV."]},
    }
    (tmp_path / "tv_manual_corpus.json").write_text(json.dumps(corpus))
    with (tmp_path / "tv_50_questions.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question_id", "question", "section_path", "section_link", "answer"])
        writer.writerow([1, "How do I run Bixby?", "Quick Guides>Using Bixby>Running Bixby", "", "Press and hold"])
        writer.writerow([2, "Which voice commands exist?", "Guides>Using Bixby", "", "A guide to voice commands"])
        writer.writerow([3, "Unrelated", "Nowhere>Missing", "", "zebra giraffe"])
    docs, pairs = load_emanual(tmp_path)
    assert [d["source"] for d in docs] == ["emanual/section_0", "emanual/section_1", "emanual/section_2"]
    assert docs[0]["content"] == "Speak into the microphone."
    assert pairs == [
        {"question": "How do I run Bixby?", "gold": "emanual/section_1", "lang": "en"},
        {"question": "Which voice commands exist?", "gold": "emanual/section_2", "lang": "en"},  # tie broken by text
    ]


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first e-manual test of a session embeds the corpus (memoised, cached on disk after)
def test_emanual_benchmark_fusion_is_not_worse_than_either_baseline() -> None:
    folder = shared_path("emanual")
    docs, pairs = load_emanual(folder)
    kept, total = count_resolved(folder)
    assert len(docs) >= 250 and kept >= 0.95 * total, (len(docs), kept, total)
    embedder = session_embedder()
    asyncio.run(embedder.embed_queries([p["question"] for p in pairs]))  # one batch, memoised for the searches
    result = evaluate(docs, pairs, embedder=embedder)["systems"]
    print(f"\ne-manual: {len(docs)} sections, {kept} of {total} questions with a resolved gold section: {result}")
    for metric in ("hit@5", "mrr"):
        assert result["ours"][metric] >= max(result["bm25"][metric], result["dense"][metric]) - 0.03, result
    # floors a little under what was measured (ours on all 665: hit@1 0.656, hit@5 0.914, MRR 0.766; BM25 alone
    # 0.650 / 0.916 / 0.760; embeddings alone 0.445 / 0.779 / 0.583)
    assert result["ours"]["hit@1"] >= 0.62 and result["ours"]["hit@5"] >= 0.88 and result["ours"]["mrr"] >= 0.73


class CountingEmbedder:
    model_name = "counting/test"

    def __init__(self) -> None:
        self.embedded: list[str] = []

    @property
    def dim(self) -> int:
        return 3

    async def _embed(self, texts: Sequence[str], offset: float) -> npt.NDArray[np.float32]:
        self.embedded += texts
        return np.array([[len(t), offset, 1.0] for t in texts], dtype=np.float32)

    async def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._embed(texts, 0.0)

    async def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self._embed(texts, 1.0)


@pytest.mark.unit
async def test_memo_embedder_embeds_each_text_once_and_reuses_the_disk_cache(tmp_path: Path) -> None:
    first = CountingEmbedder()
    memo = MemoEmbedder(first, tmp_path)
    queries = await memo.embed_queries(["pair", "reset", "pair"])
    passages = await memo.embed_passages(["pair"])
    assert first.embedded == ["pair", "reset", "pair"]  # queries and passages kept apart
    assert queries[0].tolist() == queries[2].tolist() != passages[0].tolist()
    second = CountingEmbedder()
    again = await MemoEmbedder(second, tmp_path).embed_queries(["reset", "pair"])
    assert second.embedded == [] and again.tolist() == queries[[1, 0]].tolist()  # a later session: from disk
    assert (await MemoEmbedder(second, None).embed_queries(["reset"])).shape == (1, 3) and second.embedded == ["reset"]


# Measured on the held-out half (docs/benchmarks.md, cross-language, stop 40): hit@1 0.54-0.68 and hit@5 0.71-0.89
# per language.
FLOOR_AT_1 = 0.50
FLOOR_AT_5 = 0.70
# The tune half's mean hit@1 over the five languages: 0.66 measured, 0.54 without the unit level.
TUNE_FLOOR_WITH_UNITS = 0.60


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(1800)  # shares the session's (disk-cached) e5 vectors with the English e-manual test
def test_cross_language_held_out_floors() -> None:
    """`python -m bench.crosslang --split test` on the held-out half: floors a little under what was measured (see
    docs/benchmarks.md, cross-language), so a change that loses the title or unit level fails here."""
    from bench import crosslang

    data = shared_path()
    embedder = session_embedder()
    asyncio.run(embedder.embed_queries([q["question"] for q in crosslang.questions("test")]))  # one batch
    figures = asyncio.run(crosslang.run(data, embedder, split="test", systems=("ours",)))["languages"]
    print(f"\ncross-language, held-out half: {figures}")
    assert figures["en"]["ours_hit@1"] >= 0.8
    for lang in crosslang.LANGUAGES:
        assert figures[lang]["ours_hit@1"] >= FLOOR_AT_1 and figures[lang]["ours_hit@5"] >= FLOOR_AT_5, (lang, figures)


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(1800)  # shares the session's (disk-cached) e5 vectors with the English e-manual test
def test_the_unit_level_lifts_translated_questions_on_the_tune_half() -> None:
    """A question in another language lines up with one sentence of a section better than with the whole section:
    a change that loses the unit level (or its raise) fails here."""
    from bench import crosslang

    embedder = session_embedder()
    asyncio.run(embedder.embed_queries([q["question"] for q in crosslang.questions("tune")]))  # one batch
    figures = asyncio.run(crosslang.run(shared_path(), embedder, split="tune", systems=("ours",)))["languages"]
    mean = sum(figures[lang]["ours_hit@1"] for lang in crosslang.LANGUAGES) / len(crosslang.LANGUAGES)
    assert mean >= TUNE_FLOOR_WITH_UNITS, figures


# Tune-half questions (bench/data/crosslang_emanual_*.jsonl) whose answer lost to a section of a title and a menu
# path ("Running the accessibility functions": "Settings General Accessibility Try Now") before such chunks were
# lowered across languages (storage.search.fusion.short_text_lowered).
STUB_OUTRANKED = [
    ("À quoi servent les raccourcis d'accessibilité ?", "emanual/section_162"),
    ("¿Para qué sirven los accesos directos de accesibilidad?", "emanual/section_162"),
    ("Wie kann ich mein Mobilgerät mit dem Fernseher verbinden?", "emanual/section_40"),
    ("Comment connecter mon appareil mobile au téléviseur ?", "emanual/section_40"),
]


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(1800)  # shares the session's (disk-cached) e5 vectors with the other e-manual tests
def test_a_section_of_a_title_and_a_menu_path_does_not_outrank_the_answer_across_languages() -> None:
    from bench.emanual import load
    from bench.retrieval import run_questions

    manual = load(shared_path())
    questions = [{"question": q, "gold": gold, "group": ""} for q, gold in STUB_OUTRANKED]
    results = asyncio.run(run_questions(manual.corpus, questions, ("ours",), embedder=session_embedder()))
    assert [r.rank for r in results] == [1] * len(STUB_OUTRANKED), [(r.question, r.rank) for r in results]
