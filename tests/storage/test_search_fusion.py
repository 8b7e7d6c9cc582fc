"""Fusion rules: keyword weight follows vocabulary coverage and language, dense band shifts across languages."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.types import SearchQuality
from storage.search.fusion import (
    SHORT_TEXT_PENALTY,
    SHORT_TEXT_TOKENS,
    adaptive_weights,
    dense_to_unit,
    dispersion,
    fuse,
    is_cross_language,
    short_text_lowered,
    title_path,
    with_titles,
    with_units,
)
from storage.search.keyword import KeywordLevel
from storage.search.quality import QualityThresholds, grade
from storage.search.tokenize import stopword_share, tokenize
from storage.search.units import MAX_UNIT_CHARS, text_units

pytestmark = pytest.mark.unit

DOCS = [
    "Pair the remote by holding Home and Back for five seconds.",
    "Error E-2041 means the hub is too hot; let it cool down.",
    "Night mode compresses loud passages so speech stays clear.",
]


def test_coverage_separates_in_vocabulary_from_foreign_questions() -> None:
    level = KeywordLevel(DOCS)
    assert level.coverage(tokenize("How do I pair the remote?")) == pytest.approx(1.0)
    assert level.coverage(tokenize("Как подключить пульт?")) == 0.0
    assert 0.0 < level.coverage(tokenize("Что значит ошибка E-2041?")) < 0.5  # only the code is shared


def test_question_language_guess() -> None:
    english = stopword_share("How do I pair the remote with the hub?")
    german = stopword_share("Wie verbinde ich die Fernbedienung?")
    assert english > 0.3 and german < 0.15
    assert is_cross_language(None, "en", stopword_share=german, coverage=0.0)
    assert not is_cross_language(None, "en", stopword_share=english, coverage=0.9)
    assert not is_cross_language(None, "en", stopword_share=0.0, coverage=1.0)  # a bare code like "NX-7731"
    assert is_cross_language("de-DE", "en", stopword_share=german, coverage=0.0)  # a known language wins
    assert is_cross_language("de-DE", "en", stopword_share=0.9, coverage=0.3)
    assert not is_cross_language("en", "en-US", stopword_share=0.0, coverage=0.0)


def test_an_english_text_is_monolingual_whatever_the_users_language() -> None:
    """LLM mode searches the model's English canonical question with the user's language on the request."""
    canonical = "How do I pair the remote with the hub?"
    level = KeywordLevel(DOCS)
    share, coverage = stopword_share(canonical), level.coverage(tokenize(canonical))
    assert not is_cross_language("ru", "en", stopword_share=share, coverage=coverage)
    russian = "Как подключить пульт к хабу?"
    assert is_cross_language(
        "ru", "en", stopword_share=stopword_share(russian), coverage=level.coverage(tokenize(russian))
    )
    assert is_cross_language("en", "de", stopword_share=share, coverage=coverage)  # the rule reads English only


def test_keyword_weight_adapts_to_coverage_language_and_dispersion() -> None:
    english = adaptive_weights(0.8, 0.2)
    foreign = adaptive_weights(0.8, 0.2, cross_language=True)
    peaked = adaptive_weights(0.8, 0.9)
    assert foreign.keywords == pytest.approx(english.keywords * 0.8)  # coverage squared across languages
    assert peaked.keywords > english.keywords
    assert adaptive_weights(0.0, 0.9).keywords == 0.0
    assert adaptive_weights(1.0, 0.0, dense_available=False).dense == 0.0


def test_dispersion_and_fuse() -> None:
    assert dispersion(np.array([5.0, 0.1, 0.1, 0.0], dtype=np.float32)) > 0.9
    assert dispersion(np.array([1.0, 1.0, 1.0], dtype=np.float32)) == 0.0
    assert dispersion(np.zeros(3, dtype=np.float32)) == 0.0
    levels = {"dense": np.array([1.0, 0.0], dtype=np.float32), "keywords": np.array([0.0, 1.0], dtype=np.float32),
              "crumbs": np.zeros(2, dtype=np.float32), "summary": np.zeros(2, dtype=np.float32)}
    fused = fuse(levels, adaptive_weights(1.0, 0.5))  # keywords weigh 1.0, dense 1.0
    assert fused.tolist() == pytest.approx([0.5, 0.5])
    assert fuse(levels, adaptive_weights(0.0, 0.0, dense_available=False)).tolist() == [0.0, 0.0]


def test_dense_band_is_lower_across_languages() -> None:
    cosine = np.array([0.70, 0.80, 0.95], dtype=np.float32)
    same = dense_to_unit(cosine)
    cross = dense_to_unit(cosine, cross_language=True)
    assert same[0] == 0.0 and same[2] == 1.0
    assert cross[1] > same[1]


def test_grade() -> None:
    thresholds = QualityThresholds(good_score=0.5, excellent_score=0.7, excellent_margin=0.1)
    assert grade(0.4, 0.3, thresholds) is SearchQuality.POOR
    assert grade(0.8, 0.05, thresholds) is SearchQuality.GOOD
    assert grade(0.8, 0.2, thresholds) is SearchQuality.EXCELLENT


def test_title_level_raises_a_passage_cosine_toward_a_higher_title_cosine_and_never_lowers_it() -> None:
    passage = np.array([0.80, 0.90], dtype=np.float32)
    title = np.array([0.90, 0.70], dtype=np.float32)
    assert with_titles(passage, title, weight=1.0) == pytest.approx([0.85, 0.90])
    assert with_titles(passage, title, weight=3.0) == pytest.approx([0.875, 0.90])
    assert with_titles(passage, None) is passage  # titles not embedded: the passage cosine alone
    assert with_titles(passage, title, weight=0.0) is passage
    assert title_path(("Guide", "Remote"), "Pairing") == "Guide > Remote > Pairing"
    assert title_path(("Guide", "Pairing"), "Pairing") == "Guide > Pairing"


def test_unit_level_raises_toward_the_best_unit_and_never_lowers() -> None:
    passage = np.array([0.80, 0.90, 0.70], dtype=np.float32)
    unit = np.array([0.95, 0.60, -1.0], dtype=np.float32)  # -1: a chunk without units
    assert with_units(passage, unit, weight=2.0) == pytest.approx([0.90, 0.90, 0.70])
    assert with_units(passage, None) is passage  # units not embedded yet


def test_a_chunk_of_few_words_is_lowered_in_proportion_to_its_shortfall_and_a_full_one_not_at_all() -> None:
    cosine = np.array([0.85, 0.85, 0.85, 0.85], dtype=np.float32)
    tokens = np.array([0, SHORT_TEXT_TOKENS // 2, SHORT_TEXT_TOKENS, 4 * SHORT_TEXT_TOKENS], dtype=np.int64)
    lowered = short_text_lowered(cosine, tokens)
    assert lowered == pytest.approx([0.85 - SHORT_TEXT_PENALTY, 0.85 - SHORT_TEXT_PENALTY / 2, 0.85, 0.85], abs=2e-3)
    assert lowered.dtype == np.float32


def test_text_units_are_sentences_with_short_ones_joined_and_long_ones_cut() -> None:
    text = "Select Reset. Then press the Select button to confirm the reset.\n\nOK. " + "Long " * 100 + "end."
    units = text_units(text)
    assert units[0] == "Select Reset. Then press the Select button to confirm the reset."
    assert units[1].startswith("OK. Long Long") and len(units[1]) == MAX_UNIT_CHARS
    assert text_units("Short.") == ["Short."]
    assert text_units("A first full sentence here. Tail.") == ["A first full sentence here. Tail."]
    assert text_units("") == []


def test_sentences_of_a_language_written_without_spaces_are_units_of_their_own() -> None:
    """Japanese and Chinese sentences end at 。！？ with no space after them: the unit level (and the chunker) cut
    there as the answer side does, instead of reading a whole paragraph as one sentence."""
    first = "リモコンの電池を交換するときは、まず背面のカバーを下にずらして開けてください。"
    second = "新しい単四電池を二本、プラスとマイナスの向きを確かめてから入れてください。"
    assert text_units(first + second) == [first, second]
    said = "他说“遥控器没有反应的时候，请先把电池取出来再装回去。”"
    then = "然后在设置菜单里选择重新配对遥控器，等几秒钟就可以正常使用了。"
    assert text_units(said + then) == [said, then]  # the closing quote stays with its sentence


def test_each_table_row_and_list_item_is_a_unit_in_the_order_of_the_text() -> None:
    text = (
        "Settings of the service:\n\n| variable | default | meaning |\n|---|---|---|\n"
        "| `DOCBOT_HTTP_PORT` | `8080` | the port the HTTP server listens on |\n"
        "| `DOCBOT_MAX_QUESTION_CHARS` | `4000` | longer questions are refused with a clear message |\n\n"
        "To change one:\n\n1. Open the `.env` file in the folder you run docbot from.\n"
        "2. Set the variable and restart the bot.\n\n- a bullet item long enough to stand\n  on its own line\n- tail"
    )
    assert text_units(text) == [
        "Settings of the service: DOCBOT_HTTP_PORT 8080 the port the HTTP server listens on",
        "DOCBOT_MAX_QUESTION_CHARS 4000 longer questions are refused with a clear message",
        "To change one: Open the `.env` file in the folder you run docbot from.",
        "Set the variable and restart the bot.",
        "a bullet item long enough to stand on its own line tail",
    ]
