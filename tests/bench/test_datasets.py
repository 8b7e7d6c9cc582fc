"""The shared-data loaders of the benchmark (e-manual gold by title, SQuAD sample) and the translated question sets."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench import crosslang, emanual, squad
from bench.retrieval import DATA, load_jsonl
from tests.conftest import shared_path

pytestmark = pytest.mark.unit


def test_titles_match_despite_case_space_trailing_colon_and_curly_quotes() -> None:
    assert emanual.normalise_title("  Updating the TV\u2019s Software: ") == emanual.normalise_title(
        "updating the TV's  software"
    )
    assert emanual.normalise_title("Picture Size") != emanual.normalise_title("Picture Mode")


def _layout(root: Path) -> Path:
    (root / "emanual" / "raw").mkdir(parents=True)
    corpus = {
        "section_0": {"id": "section_0", "title": "Pairing the Remote", "text": ["Hold Home and Back."]},
        "section_1": {"id": "section_1", "title": "Sleep Timer:", "text": ["The TV turns off later."]},
        "section_2": {"id": "section_2", "title": "Pairing the remote", "text": ["Point it at the TV."]},
    }
    (root / emanual.CORPUS).write_text(json.dumps(corpus), encoding="utf-8")
    rows = [
        ("normal-1", "Normal Q&A", "How do I pair?", "Remote>Pairing the remote"),
        ("normal-2", "Normal Q&A", "Turn off later?", "Settings>Sleep timer"),
        ("yes-1", "Yes/No Q&A", "Is there a zebra?", "Animals>Zebra"),
    ]
    lines = [json.dumps({"id": i, "qa_set": s, "question": q, "answer": "", "section_hierarchy": h, "link": ""})
             for i, s, q, h in rows]  # fmt: skip
    (root / emanual.QA).write_text("\n".join(lines), encoding="utf-8")
    return root


def test_gold_is_the_last_title_of_the_hierarchy_and_unresolved_questions_are_counted(tmp_path: Path) -> None:
    manual = emanual.load(_layout(tmp_path))
    assert manual.totals == {"Normal": 2, "Yes/No": 1}
    assert manual.resolved() == {"Normal": 2}
    gold = {q["id"]: q["gold"] for q in manual.questions}
    assert gold == {"normal-1": "emanual/section_0|emanual/section_2", "normal-2": "emanual/section_1"}
    assert emanual.present(tmp_path) is None
    assert emanual.present(tmp_path / "absent") == tmp_path / "absent" / emanual.CORPUS


def test_shared_emanual_resolves_most_questions_of_each_set() -> None:
    manual = emanual.load(shared_path())
    assert sum(manual.totals.values()) == 684 and len(manual.corpus) >= 250
    resolved = manual.resolved()
    assert resolved["Normal"] >= 240 and resolved["Paraphrased"] >= 120, resolved
    sources = {d["source"] for d in manual.corpus}
    assert all(set(q["gold"].split("|")) <= sources for q in manual.questions)


def test_squad_sample_takes_the_first_articles_and_gives_each_question_its_paragraph() -> None:
    docs, questions = squad.retrieval_sample(shared_path("squad", "dev-v1.1.json"), articles=2, questions=50)
    assert len({d["title"] for d in docs}) == 2 and len(questions) == 50
    sources = {d["source"] for d in docs}
    assert all(q["gold"] in sources for q in questions)


@pytest.mark.parametrize("lang", crosslang.LANGUAGES)
def test_each_translated_set_has_40_plus_questions_split_in_halves(lang: str) -> None:
    rows = load_jsonl(DATA / f"crosslang_emanual_{lang}.jsonl")
    assert len(rows) >= 40
    assert all(r["lang"] == lang and r["question"] != r["english"] and r["gold"] for r in rows)
    splits = Counter(r["split"] for r in rows)
    assert set(splits) == set(crosslang.SPLITS) and abs(splits["tune"] - splits["test"]) <= 1


def test_translations_are_of_the_same_english_questions_with_their_shared_data_gold() -> None:
    english = {lang: {r["id"]: (r["english"], r["gold"]) for r in load_jsonl(DATA / f"crosslang_emanual_{lang}.jsonl")}
               for lang in crosslang.LANGUAGES}  # fmt: skip
    first = english[crosslang.LANGUAGES[0]]
    assert all(rows == first for rows in english.values())
    manual = {q["id"]: (q["question"], q["gold"]) for q in emanual.load(shared_path()).questions}
    assert all(manual[i] == pair for i, pair in first.items())


def test_questions_of_a_split_come_with_their_english_originals() -> None:
    test = crosslang.questions("test")
    by_lang = Counter(q["lang"] for q in test)
    assert set(by_lang) == {"en", *crosslang.LANGUAGES} and len(set(by_lang.values())) == 1
    assert {q["group"] for q in test} == {"test"}


def test_the_translated_shoppers_questions_are_the_answerable_ones_with_their_gold_and_english_originals() -> None:
    tune = crosslang.shoppers_questions("tune")
    by_lang = Counter(q["lang"] for q in tune)
    assert set(by_lang) == {"en", *crosslang.SHOPPERS_LANGUAGES} and len(set(by_lang.values())) == 1
    assert all(q["gold"].startswith("emanual/section_") for q in tune) and {q["group"] for q in tune} == {"tune"}
    assert not {q["question"] for q in tune} & {q["question"] for q in crosslang.shoppers_questions("test")}


def test_each_thread_of_the_follow_up_set_cites_sections_of_the_shared_emanual_that_have_text() -> None:
    """bench/data/emanual_threads.jsonl: follow-ups over the e-manual, the last turn scored against its gold; a gold
    section that is missing or empty (the manual has a few title-only sections) could never be cited."""
    corpus_file = shared_path("emanual", "raw", "smart_tv_remote_manual_corpus.json")
    sections = {r["id"]: r for r in json.loads(corpus_file.read_text(encoding="utf-8")).values()}
    threads = load_jsonl(DATA / "emanual_threads.jsonl")
    assert len(threads) >= 30 and len({t["id"] for t in threads}) == len(threads)
    for thread in threads:
        assert thread["thread"] and thread["question"] and thread["gold"], thread["id"]
        for gold in thread["gold"]:
            section = sections[gold.removeprefix("emanual/")]
            assert "".join(section["text"]).strip(), (thread["id"], gold)


def test_the_translated_manual_questions_come_with_their_english_twins_and_the_experts_answer() -> None:
    """`bench.honesty crosslang`: each translated e-manual question and its English original share the id, gold and
    reference (the expert's answer in the shared QA file), so a language's replies are read against its twins'."""
    from bench.honesty import crosslang_items

    qa = {json.loads(line)["id"]: json.loads(line)["answer"]
          for line in shared_path("emanual", "smart_tv_remote_qa.cleaned.jsonl").read_text().splitlines()}  # fmt: skip
    items = crosslang_items("test")
    english = {i["id"]: i for i in items if i["lang"] == "en"}
    translated = [i for i in items if i["lang"] != "en"]
    assert Counter(i["lang"] for i in translated) == {lang: len(english) for lang in crosslang.LANGUAGES}
    for item in translated:
        twin = english[item["id"]]
        assert item["question"] != twin["question"] and item["gold"] == twin["gold"] and item["gold"]
        assert item["reference"] == twin["reference"] == qa[item["id"]] and item["split"] == "test"
    assert {i["id"] for i in crosslang_items("tune")}.isdisjoint(english)
