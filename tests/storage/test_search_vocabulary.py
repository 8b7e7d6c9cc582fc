"""The words of a question no document uses (storage/search/vocabulary.py), on real keyword levels and through the
hybrid retriever after real ingests: misspellings forgiven, other collections never looked at, removed documents'
words forgotten."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever
from storage.search.keyword import KeywordLevel
from storage.search.vocabulary import unknown_terms
from tests.storage.dbutil import drop_database, make_database

TEXTS = [
    "Activate the subtitles from the accessibility menu.",
    "Pair the remote control with the television.",
    "Picture settings: brightness, contrast and colour temperature.",
]


def every_row(level: KeywordLevel) -> tuple[KeywordLevel, np.ndarray]:
    return level, np.ones(level.size, dtype=np.bool_)


@pytest.mark.unit
def test_words_no_text_has_are_unknown_in_order_once_each() -> None:
    level = KeywordLevel(TEXTS)
    found = unknown_terms([every_row(level)], "Does the subwoofer pair with the soundbar? And the subwoofer's cable?")
    assert found == ("subwoof", "soundbar", "cabl")  # stemmed search terms; "pair" is known


@pytest.mark.unit
@pytest.mark.parametrize(
    "question",
    [
        "Pair the remte control",  # one letter missing
        "Activate the subtitels",  # two letters swapped: one edit
        "Picture colour temprature",  # one letter missing
        "Picture colour tmeprature",  # a long word two edits apart
        "Hpw do I pair the remote?",  # a misspelt function word
        "Why weren't the subtitles activated?",  # the first half of a contraction
        "Why werent the subtitles activated, it doesnt pair",  # contractions typed without the apostrophe
        "Whats the subtitle setting and wheres the remote",  # "whats" stems to "what": a function word
        "Is E-2041 in the 2024 television menu?",  # numbers and codes are not words
    ],
)
def test_misspellings_contractions_numbers_and_codes_are_not_unknown_words(question: str) -> None:
    assert unknown_terms([every_row(KeywordLevel(TEXTS))], question) == ()


@pytest.mark.unit
def test_a_word_further_from_every_term_is_unknown() -> None:
    level = KeywordLevel(TEXTS)
    assert unknown_terms([every_row(level)], "Pair the rmte control") == ("rmte",)  # two edits, four letters
    # three letters: one edit from some term is true of almost any word, so only a function word is forgiven
    assert unknown_terms([every_row(level)], "Hwo do I pair it over vpn?") == ("vpn",)


@pytest.mark.unit
def test_a_word_only_the_uncounted_rows_have_is_unknown() -> None:
    level = KeywordLevel(TEXTS)
    rows = np.array([True, True, False])  # the picture settings are another collection's
    assert unknown_terms([(level, rows)], "brightness and contrast") == ("bright", "contrast")
    assert unknown_terms([(level, rows)], "brighness") == ("brigh",)  # nor does a near word count there
    assert unknown_terms([every_row(level)], "brightness and contrast") == ()


@pytest.mark.integration
async def test_the_retriever_knows_the_words_of_a_collection_and_forgets_a_removed_document(tmp_path: Path) -> None:
    db = await make_database("sqlite", tmp_path)
    try:
        embedder, index = HashingEmbedder(64), LocalVectorIndex(64)
        retriever = HybridRetriever(db, embedder, index)
        ingestor = Ingestor(db, embedder, index, on_change=retriever.reload)
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "remote.md").write_text("# Remote\n\n## Pairing\n\nHold the pairing button for five seconds.\n")
        (docs / "audio.md").write_text("# Audio\n\n## Subwoofer\n\nPlug the subwoofer into the optical output.\n")
        secret = tmp_path / "secret.md"
        secret.write_text("# Firmware\n\n## Unlocking\n\nThe zebra menu unlocks the factory firmware.\n")
        await ingestor.ingest([str(docs)], collection="a")
        await ingestor.ingest([str(secret)], collection="b")
        question = "Does the zebra menu drive the subwoofer?"

        assert retriever.unknown_terms(question, ("a",)) == ("zebra", "menu", "drive")  # b's words are not a's
        assert retriever.unknown_terms(question, ("b",)) == ("drive", "subwoof")
        assert retriever.unknown_terms(question, ("a", "b")) == ("drive",)

        (docs / "audio.md").unlink()
        report = await ingestor.ingest([str(docs)], collection="a")
        assert report.removed == 1
        assert retriever.unknown_terms(question, ("a",)) == ("zebra", "menu", "drive", "subwoof")
    finally:
        await drop_database(db)


@pytest.mark.unit
def test_a_word_the_docs_write_as_two_is_known_and_two_known_words_apart_are_not() -> None:
    level = KeywordLevel([*TEXTS, "Connect to Wi-Fi from the network menu.", "The Play button starts it. Fresh air."])
    found = unknown_terms([every_row(level)], "Does it have wifi or airplay?")
    assert found == ("airplay",)  # "wi" and "fi" stand together in the docs; "air" and "play" never do
    only_first = np.zeros(level.size, dtype=np.bool_)
    only_first[0] = True
    assert unknown_terms([(level, only_first)], "wifi") == ("wifi",)  # in a text the question may not see


@pytest.mark.unit
def test_a_term_looked_up_again_with_its_verdicts_is_not_scanned_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from storage.search import vocabulary

    scanned: list[str] = []
    real_used = vocabulary._used

    def counting(term: str, levels: object) -> bool:
        scanned.append(term)
        return real_used(term, levels)  # type: ignore[arg-type]

    monkeypatch.setattr(vocabulary, "_used", counting)
    levels, seen = [every_row(KeywordLevel(TEXTS))], {}
    assert unknown_terms(levels, "Does Roku pair with the remote?", seen) == ("roku",)
    assert unknown_terms(levels, "Roku", seen) == ("roku",)  # the name alone, as the decision asks next
    assert scanned.count("roku") == 1
