import pytest

from pipeline.messages.question import InputProblem, check_question

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("raw", ["", "   ", "\n\t  \n"])
def test_empty_or_whitespace_is_empty(raw: str) -> None:
    assert check_question(raw, max_chars=100).problem is InputProblem.EMPTY


def test_a_50000_character_question_is_too_long_and_truncated() -> None:
    checked = check_question("why " * 12_500, max_chars=4000)
    assert checked.problem is InputProblem.TOO_LONG
    assert len(checked.text) == 4000


def test_binary_junk_is_unreadable() -> None:
    junk = bytes(range(256)).decode("latin-1") * 4
    assert check_question(junk, max_chars=4000).problem is InputProblem.UNREADABLE
    assert check_question("\x00\x01\x02\x03", max_chars=4000).problem is InputProblem.UNREADABLE


@pytest.mark.parametrize(
    "text",
    [
        "How do I pair the remote? 📺🔌",
        "كيف أقوم بإقران جهاز التحكم عن بعد؟",  # Arabic, right to left
        "איך מחברים את השלט?",  # Hebrew with no marks
        "\u202bمرحبا\u202c how are you",  # explicit bidi embedding marks are kept
        "如何配对遥控器？",
    ],
)
def test_emoji_and_right_to_left_text_pass_unchanged(text: str) -> None:
    checked = check_question(text, max_chars=4000)
    assert checked.problem is None
    assert checked.text == " ".join(text.split())


def test_control_characters_are_removed_but_text_kept() -> None:
    checked = check_question("how\x07 do I\x1b reset it?", max_chars=4000)
    assert checked.problem is None
    assert checked.text == "how do I reset it?"


def test_lone_surrogates_do_not_crash() -> None:
    checked = check_question("reset \ud800 the tv", max_chars=4000)
    assert checked.problem is None
    assert "reset" in checked.text
