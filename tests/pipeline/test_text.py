"""pipeline.text: the names a question uses, in any language."""

from __future__ import annotations

import pytest

from pipeline.locales import all_lexicons
from pipeline.text import features, names, sentences, tokens

pytestmark = pytest.mark.unit
FUNCTION_WORDS = frozenset().union(*(lex.stopwords for lex in all_lexicons().values()))


@pytest.mark.parametrize(
    ("question", "language", "found"),
    [
        ("Can I install Peacock and Apple TV+?", "en", ["Peacock", "Apple", "TV+"]),
        ("Does this samsung tv support hulu live tv?", "en", []),  # lower-case words are not written as names
        ("Is it VESA compatible? What about the PS5.", "en", ["VESA", "PS5"]),  # each sentence's first word is not
        ("Поддерживает ли он Roku и Wi-Fi?", "ru", ["Roku", "Wi-Fi"]),  # Latin script in a Cyrillic question
        ("这台电视有WiFi吗？", "zh", ["WiFi"]),
        ("Hat der Fernseher WLAN und AirPlay?", "de", ["WLAN", "AirPlay"]),  # German nouns are capitalised
        ("Does it work with the Xbox? Does it?", "en", ["Xbox"]),
        # accented words are whole words of the language, not a name cut at the accent ("Est", "HDMI-Anschl")
        ("¿Cómo selecciono el modo de sonido Estándar?", "es", []),
        ("Wie viele HDMI-Anschlüsse hat er?", "de", ["HDMI"]),  # of a compound, the part written as a name
        ("Kann ich meine iTunes-Käufe anschauen?", "de", ["iTunes"]),
        ("Wie höre ich den Ton über Bluetooth-Geräte?", "de", []),
        ("Is Beyoncé on the Grammys list?", "en", ["Beyoncé", "Grammys"]),  # in English an accented name is one
        ("如何重置Smart Hub？", "zh", ["Smart", "Hub"]),  # a Chinese question is not Latin script, however many
    ],
)
def test_names_are_the_words_written_as_names_in_any_language(question: str, language: str, found: list[str]) -> None:
    assert names(question, language, FUNCTION_WORDS) == found


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("ब्लूटूथ हेडफ़ोन को टीवी से कैसे जोड़ूं?", ["ब्लूटूथ", "हेडफ़ोन", "को", "टीवी", "से", "कैसे", "जोड़ूं"]),  # vowel signs
        ("כיצד לחבר אוזניות?", ["כיצד", "לחבר", "אוזניות"]),
        ("Как подключить наушники?", ["как", "подключить", "наушники"]),
        ("What’s the café mode?", ["what's", "the", "café", "mode"]),
    ],
)
def test_words_keep_their_combining_marks(text: str, words: list[str]) -> None:
    """A Devanagari vowel sign is a combining mark, not `\\w` to Python's `re`: "ब्लूटूथ" was cut into pieces
    (and a Hindi question had one content word, a fragment)."""
    assert tokens(text) == words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("你好。我很好！真的吗？", ["你好。", "我很好！", "真的吗？"]),
        ("他说：“你好。”然后走了。", ["他说：“你好。”", "然后走了。"]),  # the closing quote stays with its sentence
        (  # a Chinese question quoted inside an English sentence does not end it
            "Traditional characters (這個電視有藍牙嗎？ , as people write in Taiwan) are zh-Hant. Next.",
            ["Traditional characters (這個電視有藍牙嗎？ , as people write in Taiwan) are zh-Hant.", "Next."],
        ),
        ('"Slack Socket Mode怎么设置？" is Chinese. Done.', ['"Slack Socket Mode怎么设置？" is Chinese.', "Done."]),
    ],
)
def test_chinese_and_japanese_sentences_end_at_their_own_stops_not_in_a_quote(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


@pytest.mark.parametrize(
    ("asked", "passage"),
    [
        ("Is it WiFi?", "Connect the TV to a Wi-Fi network."),  # typed whole, written with a hyphen
        ("does it have wi-fi", "Connect the TV to a Wi-Fi network."),
        ("Is there an onscreen keyboard?", "An on-screen keyboard appears."),
        ("my set top box", "Connect the set-top box."),  # typed in parts: the passage keeps its parts too
        ("my set-top box", "Connect the set-top box."),
        ("Is it WiFi?", "Connect the TV to a WiFi network."),
        ("chroma 444", "YCbCr 4:4:4 chroma sampling"),  # a number typed without the colons between its digits
    ],
)
def test_a_hyphenated_word_is_found_however_the_question_writes_it(asked: str, passage: str) -> None:
    assert features(asked, {"is", "it", "does", "have", "there", "an", "my"}, asked=True) <= features(passage)


def test_a_question_keeps_its_words_as_typed_and_a_passage_adds_its_hyphenated_words_whole() -> None:
    """A whole word added to the question ("docsteam" of "#docs-team") would be a word no passage has, lowering
    every passage's share alike."""
    assert features("post it in #docs-team", asked=True) == {"post", "it", "in", "doc", "team"}
    assert features("built-in Wi-Fi") == {"built", "in", "builtin", "wi", "fi", "wifi"}
