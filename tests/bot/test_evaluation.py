"""The evaluation engine's metrics on hand-made cases, and `evaluate` over a scripted service."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.evaluation import (
    EvalReport,
    EvalRow,
    QAPair,
    best_f1,
    cites_gold,
    compare,
    evaluate,
    load_qa,
    load_report,
    load_squad,
    normalize_answer,
    token_f1,
    write_report,
)
from pipeline.messages import Citation, Inbound, Reply, ReplyKind, ThreadFetcher

pytestmark = pytest.mark.unit


def test_normalisation_drops_case_punctuation_articles_and_citation_markers() -> None:
    assert normalize_answer("The **Home** key, and [1] the Back key!") == ["home", "key", "and", "back", "key"]


def test_token_f1_on_hand_computed_cases() -> None:
    assert token_f1("two AAA batteries", "two AAA batteries") == 1.0
    assert token_f1("the remote", "a keyboard") == 0.0
    # prediction 4 tokens, reference 2, 2 shared: precision 1/2, recall 1, F1 2/3
    assert token_f1("hold Home and Back", "Home Back") == pytest.approx(2 / 3)
    # repeated tokens count at most as often as they occur in both
    assert token_f1("key key key", "key") == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert token_f1("", "") == 1.0
    assert token_f1("anything", "") == 0.0


def test_best_f1_takes_the_best_reference_and_none_without_references() -> None:
    assert best_f1("forty seconds", ["ten minutes", "about forty seconds"]) == pytest.approx(0.8)
    assert best_f1("forty seconds", []) is None


def test_gold_source_matches_page_or_section() -> None:
    urls = ["https://docs.example.com/network/wifi.md#using-a-wired-ethernet-connection"]
    titles = ["Using a wired Ethernet connection"]
    assert cites_gold(urls, titles, gold_source="network/wifi.md#using-a-wired-ethernet-connection", gold_section=None)
    assert cites_gold(urls, titles, gold_source="network/wifi.md", gold_section=None)  # no anchor: any section
    assert not cites_gold(
        urls, titles, gold_source="network/wifi.md#connecting-to-a-wireless-network", gold_section=None
    )
    assert cites_gold(urls, titles, gold_source="wifi.md", gold_section=None)  # a trailing path part
    assert not cites_gold(urls, titles, gold_source="fi.md", gold_section=None)  # not at a path boundary
    assert cites_gold(urls, titles, gold_source=None, gold_section="using a wired ethernet connection")
    assert cites_gold(urls, ["Other"], gold_source=None, gold_section="Using a wired Ethernet connection")  # anchor
    assert not cites_gold([], [], gold_source="network/wifi.md", gold_section=None)
    assert cites_gold(urls, titles, gold_source=None, gold_section=None) is None


def test_load_qa_reads_jsonl_with_aliases_and_reports_the_bad_line(tmp_path: Path) -> None:
    good = tmp_path / "qa.jsonl"
    good.write_text(
        '{"question": "Q1?", "answer": "A1", "gold": "a.md#x"}\n\n'
        '{"question": "Q2?", "answer": ["A2", "B2"], "gold_section": "Intro", "lang": "de"}\n'
        '{"question": "Q3?", "answerable": false}\n',
        encoding="utf-8",
    )
    pairs = load_qa(good)
    assert pairs[0] == QAPair("Q1?", ("A1",), "a.md#x")
    assert pairs[1].answers == ("A2", "B2") and pairs[1].gold_section == "Intro" and pairs[1].lang == "de"
    assert pairs[2].answerable is False and pairs[2].answers == ()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok", "answer": "x"}\n{"answer": "no question"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:2"):
        load_qa(bad)


def _squad(path: Path) -> Path:
    data = {"version": "v2.0", "data": [
        {"title": "Corvid_Hub", "paragraphs": [
            {"context": "The hub starts in forty seconds.", "qas": [
                {"id": "1", "question": "How long does it start?", "answers": [{"text": "forty seconds"},
                                                                                {"text": "forty seconds"}],
                 "is_impossible": False},
                {"id": "2", "question": "What colour is the moon?", "answers": [], "is_impossible": True}]},
            {"context": "Night mode keeps speech clear.", "qas": [
                {"id": "3", "question": "What does night mode keep clear?", "answers": [{"text": "speech"}]}]}]},
        {"title": "Other", "paragraphs": [{"context": "Unrelated.", "qas": [
            {"id": "4", "question": "Unrelated?", "answers": [{"text": "yes"}]}]}]},
    ]}  # fmt: skip
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_load_squad_gives_paragraph_documents_and_marks_impossible_questions(tmp_path: Path) -> None:
    docs, pairs = load_squad(_squad(tmp_path / "dev-v2.0.json"))
    assert [d["source"] for d in docs] == ["squad/Corvid_Hub/0", "squad/Corvid_Hub/1", "squad/Other/0"]
    assert pairs[0].answers == ("forty seconds",) and pairs[0].gold_source == "squad/Corvid_Hub/0"
    assert pairs[1].answerable is False and pairs[1].answers == ()
    assert pairs[2].gold_source == "squad/Corvid_Hub/1"
    docs, pairs = load_squad(tmp_path / "dev-v2.0.json", articles=1, questions=2, seed=3)
    assert len(docs) == 2 and len(pairs) == 2
    assert pairs == load_squad(tmp_path / "dev-v2.0.json", articles=1, questions=2, seed=3)[1]  # fixed sample
    assert load_qa(tmp_path / "dev-v2.0.json")[3].question == "Unrelated?"


class ScriptedService:
    """Replies from a table keyed by question text; records what it was sent."""

    def __init__(self, replies: dict[str, Reply | None]) -> None:
        self.replies = replies
        self.sent: list[Inbound] = []

    async def handle_message(self, inbound: Inbound, fetcher: ThreadFetcher | None = None) -> Reply | None:
        self.sent.append(inbound)
        return self.replies.get(inbound.text, Reply(ReplyKind.REFUSAL, "No.", "en", "c", reason="out_of_scope"))


class ScriptedApp:
    def __init__(self, service: ScriptedService) -> None:
        self.service = service


def _citation(url: str, title: str = "T") -> Citation:
    return Citation(1, title, (), url, "c1", 0.9)


async def test_evaluate_scores_each_kind_of_reply() -> None:
    replies: dict[str, Reply | None] = {
        "pair?": Reply(ReplyKind.ANSWER, "Hold Home and Back [1].", "en", "c",
                       citations=(_citation("https://d/remote.md#pairing"),)),
        "wrong source?": Reply(ReplyKind.ANSWER, "Unrelated [1].", "en", "c",
                               citations=(_citation("https://d/sound.md#volume"),)),
        "vague?": Reply(ReplyKind.CLARIFICATION, "Which one?", "en", "c"),
        "uncited?": Reply(ReplyKind.ANSWER, "The docs do not cover this.", "en", "c"),
        "answered anyway?": Reply(ReplyKind.ANSWER, "Paris [1].", "en", "c", citations=(_citation("https://d/x"),)),
    }  # fmt: skip
    pairs = [
        QAPair("pair?", ("hold Home and Back",), "remote.md#pairing"),
        QAPair("wrong source?", ("volume keys",), "remote.md"),
        QAPair("vague?", ("something",), "remote.md"),
        QAPair("off topic?", answerable=False),  # scripted refusal
        QAPair("uncited?", answerable=False),
        QAPair("answered anyway?", answerable=False),
    ]
    service = ScriptedService(replies)
    report = await evaluate(ScriptedApp(service), pairs, name="scripted", warmup=False)
    summary = report.summary()
    assert summary["questions"] == 6 and summary["answerable"] == 3 and summary["unanswerable"] == 3
    assert summary["gold_cited_rate"] == pytest.approx(1 / 3)
    assert summary["answer_f1"] == pytest.approx((1.0 + 0.0 + 0.0) / 3)
    assert summary["clarification_rate"] == pytest.approx(1 / 6)
    assert summary["refusal_rate_unanswerable"] == pytest.approx(2 / 3)  # refusal + uncited answer decline
    assert summary["refusal_rate_answerable"] == 0.0
    assert summary["kinds"] == {"answer": 4, "clarification": 1, "refusal": 1}
    assert len({i.thread_key for i in service.sent}) == 6 and len({i.user_id for i in service.sent}) == 6


async def test_warmup_message_is_sent_but_not_scored() -> None:
    service = ScriptedService({})
    report = await evaluate(ScriptedApp(service), [QAPair("q?", ("a",), "a.md")])
    assert len(service.sent) == 2 and len(report.rows) == 1 and report.rows[0].question == "q?"


def _report(name: str, kinds: list[str]) -> EvalReport:
    rows = [EvalRow(f"q{i}", kind, None, True, kind == "answer", 0.5, 10.0 * (i + 1), ("u",))
            for i, kind in enumerate(kinds)]  # fmt: skip
    return EvalReport(name, rows)


def test_reports_round_trip_and_compare_side_by_side(tmp_path: Path) -> None:
    a, b = _report("before", ["answer", "clarification"]), _report("after", ["answer", "answer"])
    write_report(a, tmp_path / "a.json", tmp_path / "a.md")
    loaded = load_report(tmp_path / "a.json")
    assert loaded.rows == a.rows and loaded.summary() == a.summary()
    assert "| gold source cited | 0.500 |" in (tmp_path / "a.md").read_text(encoding="utf-8")
    table = compare(loaded, b)
    assert table.splitlines()[0] == "| metric | before | after | Δ |"
    assert "| gold source cited | 0.500 | 1.000 | +0.500 |" in table
    assert "| clarification rate | 0.500 | 0.000 | -0.500 |" in table
