"""`python -m bench --quick --json` on tiny sizes: every figure present, absent data skipped with its path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.report import FIGURE_KEYS, RECALL_SETS, SYSTEMS

REPO = Path(__file__).resolve().parents[2]
TINY = [
    "--quick", "--json", "--embedder", "hashing", "--messages", "30", "--conversations", "12", "--call-ms", "2",
    "--sizes", "500", "--queries", "5", "--ingest-collections", "1", "--ack-rounds", "1", "--ack-pipeline-s", "0.1",
    "--recall-questions", "6", "--eval-questions", "4",
]  # fmt: skip


def _bench(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "bench", *TINY, *args], cwd=REPO, capture_output=True, text=True, timeout=110
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def _tiny_shared_data(root: Path) -> Path:
    """The e-manual (corpus JSON under raw/, QA JSONL) and SQuAD dev JSON, a few items each, in the shared layout."""
    emanual = root / "emanual"
    (emanual / "raw").mkdir(parents=True)
    corpus = {
        "section_0": {"id": "section_0", "title": "Pairing the remote", "text": ["Hold Home and Back for five",
                                                                                 "seconds to pair the remote."]},
        "section_1": {"id": "section_1", "title": "Sleep timer", "text": "The sleep timer turns the TV off later."},
        "section_2": {"id": "section_2", "title": "Picture size", "text": "Picture size fits the image to the screen."},
    }  # fmt: skip
    (emanual / "raw" / "smart_tv_remote_manual_corpus.json").write_text(json.dumps(corpus), encoding="utf-8")
    qa = [
        {"id": "normal-1", "qa_set": "Normal Q&A", "question": "How do I pair my remote?",
         "answer": "Hold Home and Back", "section_hierarchy": "Remote>Pairing the remote", "link": ""},
        {"id": "paraphrased-1", "qa_set": "Paraphrased Q&A", "question": "How do I turn the TV off after a while?",
         "answer": "The sleep timer", "section_hierarchy": "General>Sleep timer:", "link": ""},
        {"id": "yes-1", "qa_set": "Yes/No Q&A", "question": "Can it fly?", "answer": "No",
         "section_hierarchy": "General>Flying", "link": ""},
    ]  # fmt: skip
    (emanual / "smart_tv_remote_qa.cleaned.jsonl").write_text("\n".join(json.dumps(r) for r in qa), encoding="utf-8")
    squad = root / "squad"
    squad.mkdir()
    paragraphs = [
        {"context": "Corvids are birds that solve puzzles.",
         "qas": [{"id": "a", "question": "Which birds solve puzzles?", "answers": [{"text": "Corvids"}]}]},
        {"context": "Lentils are legumes cooked in soups.",
         "qas": [{"id": "b", "question": "What are lentils cooked in?", "answers": [{"text": "soups"}]}]},
    ]  # fmt: skip
    (squad / "dev-v1.1.json").write_text(json.dumps({"data": [{"title": "Misc", "paragraphs": paragraphs}]}))
    impossible = {"id": "c", "question": "Who painted the Mona Lisa?", "answers": [], "is_impossible": True}
    v2 = [{**paragraphs[0], "qas": [*paragraphs[0]["qas"], impossible]}, paragraphs[1]]
    (squad / "dev-v2.0.json").write_text(json.dumps({"data": [{"title": "Misc", "paragraphs": v2}]}))
    return root


@pytest.mark.integration
@pytest.mark.slow
def test_quick_json_run_on_tiny_sizes(tmp_path: Path) -> None:
    absent = tmp_path / "absent"
    figures = _bench("--data", str(absent))
    assert [k for k in FIGURE_KEYS if k not in figures] == []
    assert not any(reason.startswith("error") for reason in figures["skipped"].values()), figures["skipped"]
    corpus = absent / "emanual" / "raw" / "smart_tv_remote_manual_corpus.json"
    assert figures["skipped"]["recall.emanual"] == f"skipped: data not present at {corpus}"
    assert figures["skipped"]["crosslang"] == f"skipped: data not present at {corpus}"
    assert figures["skipped"]["recall.squad"] == f"skipped: data not present at {absent / 'squad' / 'dev-v1.1.json'}"
    assert figures["recall_at_1"]["emanual"] is None and figures["recall_at_1"]["squad"] is None
    assert set(figures["recall_at_1"]["fixture"]) == set(SYSTEMS)
    assert figures["throughput_lost"] == 0
    assert figures["throughput_busy_at_default_queue"] == 0  # 12 conversations fit the default queue
    roles = set(figures["overhead_per_role_p50_ms"])  # which roles are reported, not how long they took
    assert roles.issuperset({"lang", "guardrails", "guardrails#2", "quality", "finish"})
    assert figures["eval"]["questions"] == 4 and figures["eval"]["unanswerable"] == 2
    assert figures["search_p95_ms_500"] is not None and figures["search_p95_ms_100k"] is None  # size not run
    assert figures["search_p95_ms_500_blas1"] is not None
    assert figures["meta"]["quick"] is True and figures["meta"]["machine"]["cores"] >= 1


@pytest.mark.integration
@pytest.mark.slow
def test_data_option_adds_the_emanual_and_squad_rows(tmp_path: Path) -> None:
    figures = _bench("--data", str(_tiny_shared_data(tmp_path / "shared")))
    for name in RECALL_SETS:
        assert set(figures["recall_at_1"][name]) == set(SYSTEMS), name
    assert figures["recall_sizes"]["emanual"] == {"documents": 3, "questions": 2}  # the Yes/No one names no section
    assert figures["recall_emanual_resolved"] == {"questions": {"Normal": 1, "Paraphrased": 1, "Yes/No": 1},
                                                  "resolved": {"Normal": 1, "Paraphrased": 1}}  # fmt: skip
    assert set(figures["recall_emanual_by_set"]) == {"Normal", "Paraphrased"}
    assert figures["recall_sizes"]["squad"] == {"documents": 2, "questions": 2, "articles": ["Misc"]}
    assert set(figures["crosslang"]["languages"]) == {"en", "ru", "es", "de", "zh", "fr"}
    assert "recall.emanual" not in figures["skipped"] and "recall.squad" not in figures["skipped"]
    squad_eval = figures["eval_squad_v2"]  # SQuAD v2.0 through the whole pipeline, its impossible question included
    assert squad_eval["questions"] == 3 and squad_eval["unanswerable"] == 1
    assert squad_eval["refusal_rate_unanswerable"] is not None
