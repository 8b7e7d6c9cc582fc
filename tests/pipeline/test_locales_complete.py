"""Every registered language is complete and used: its own wording for every text (none left to the English
defaults), yes/no questions read in it, the "not supported" line naming exactly what is registered, and Korean words
compared without their particles."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

from pipeline.locales import (
    SUPPORTED,
    UNSUPPORTED_LANGUAGE,
    asks_how_to,
    asks_in_words_without_spaces,
    asks_presence,
    asks_yes_no,
    content_words,
    is_supported,
    lexicon,
    only_thanks,
    texts,
    with_unsupported_line,
)
from pipeline.locales.base import Texts
from pipeline.locales.ko import stem
from pipeline.locales.unsupported import IN_THEIR_LANGUAGE

pytestmark = pytest.mark.unit

OTHERS = [code for code in SUPPORTED if code != "en"]
NEW = ("pt", "it", "ja", "ko", "nl", "pl")


def test_the_new_languages_are_registered() -> None:
    assert set(NEW) <= set(SUPPORTED)


@pytest.mark.parametrize("language", OTHERS)
def test_no_text_falls_back_to_the_english_one(language: str) -> None:
    """A field left out of a module, or of its later `dataclasses.replace` blocks, keeps `Texts`' English default
    (`retry_label`, `docs_dont_say`, `answered_by`...): every text, and every reason's text, is the language's own."""
    english, local = texts("en"), texts(language)
    assert local is not english and lexicon(language) is not lexicon("en")
    same_word = {("fr", "sources_heading")}  # "Sources" is French too
    for field in dataclasses.fields(Texts):
        mine, reference = getattr(local, field.name), getattr(english, field.name)
        if isinstance(reference, dict):
            assert [k for k in reference if mine[k] == reference[k]] == [], field.name
        elif (language, field.name) not in same_word:
            assert mine != reference, field.name


@pytest.mark.parametrize("language", OTHERS)
def test_every_lexicon_has_what_the_offline_roles_read(language: str) -> None:
    lex = lexicon(language)
    assert lex.deictics and lex.troubleshooting and lex.yes_no
    assert {kind for kind, _ in lex.capability} >= {"code", "injection", "prompt_leak", "roleplay"}
    assert lex.stopwords or (lex.stop_phrases and lex.question_words)  # words, or phrases where nothing is spaced


def test_the_unsupported_line_names_every_registered_language_and_no_other() -> None:
    modules = [code.lower().replace("-", "_") for code in SUPPORTED]  # "zh-Hant": pipeline/locales/zh_hant.py
    names = [importlib.import_module(f"pipeline.locales.{module}").NAME for module in modules]
    listed = UNSUPPORTED_LANGUAGE.split("(supported: ", 1)[1].removesuffix(").").split(", ")
    assert listed == names


@pytest.mark.parametrize("language", NEW)
def test_a_new_language_gets_no_unsupported_line(language: str) -> None:
    assert is_supported(language) and language not in IN_THEIR_LANGUAGE
    assert with_unsupported_line(texts(language).busy, language) == texts(language).busy


@pytest.mark.parametrize("language", ["uk", "ar", "tr", "vi"])
def test_a_language_still_without_templates_keeps_the_line(language: str) -> None:
    assert not is_supported(language)
    assert with_unsupported_line("x", language).startswith(UNSUPPORTED_LANGUAGE)


# (asked by yes or no, asked by a question word): mostly as shoppers asked them (bench/data/shoppers_translated_*)
YES_NO = {
    "pt": (["Tem WiFi?", "Ela tem o app da Apple TV?", "Dá para instalar o Netflix?", "É possível usar fones?"],
           ["Quantas portas USB tem essa TV?", "Como é o controle remoto?"]),
    "it": (["Ha il WiFi?", "C'è la connessione wi-fi?", "Si può montare a parete?", "È compatibile con Alexa?"],
           ["Quante porte USB ha il televisore?", "Com'è fatto il telecomando?"]),
    "ja": (["WiFiはありますか？", "壁掛けできますか？", "Apple TVのアプリはありますか？それとも自分で追加できますか？"],
           ["このテレビの重さは何キロですか？", "リモコンはどんな形ですか？"]),
    "ko": (["와이파이 되나요?", "Apple TV 앱이 있나요?", "벽걸이 가능한가요?"],
           ["32인치 이 TV에는 USB 포트가 몇 개 있나요?", "리모컨은 어떻게 생겼나요?"]),
    "nl": (["Heeft hij wifi?", "Kan ik hem aan de muur hangen?", "Werkt het met Alexa?"],
           ["Hoeveel USB-poorten heeft de tv?", "Hoe ziet de afstandsbediening eruit?"]),
    "pl": (["Czy ma WiFi?", "Czy można go powiesić na ścianie?", "Ma Bluetooth?"],
           ["Ile portów USB ma ten telewizor?", "Jak wygląda pilot?"]),
}  # fmt: skip


@pytest.mark.parametrize(
    ("language", "question", "yes_no"),
    [(lang, q, True) for lang, (yes, _) in YES_NO.items() for q in yes]
    + [(lang, q, False) for lang, (_, other) in YES_NO.items() for q in other],
)
def test_yes_no_questions_in_each_new_language(language: str, question: str, yes_no: bool) -> None:
    assert asks_yes_no(question, language) is yes_no


@pytest.mark.parametrize("question", ["リモコンはどんな形ですか？", "리모컨은 어떻게 생겼나요?"])
def test_japanese_and_korean_question_words_count_anywhere(question: str) -> None:
    assert asks_in_words_without_spaces(question)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("리모컨을", "리모컨"), ("메뉴를", "메뉴"), ("헤드폰은", "헤드폰"), ("소리가", "소리"), ("파일로", "파일"),
        ("설정에서", "설정"), ("연결하나요", "연결"), ("삭제해요", "삭제"), ("앱을", "앱"), ("그것을", "그것"),
        ("아이패드는요", "아이패드"), ("리모컨은요", "리모컨"),  # "what about X?"
        # a word whose end only looks like a particle stays whole
        ("와이파이", "와이파이"), ("마을", "마을"), ("추가", "추가"), ("해상도", "해상도"), ("프로", "프로"),
    ],
)  # fmt: skip
def test_a_korean_word_loses_only_the_particle_that_fits_it(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("블루투스 헤드폰을 어떻게 연결하나요?", ["블루투스", "헤드폰", "연결"]),
        ("32인치 이 TV에는 USB 포트가 몇 개 있나요?", ["인치", "tv", "usb", "포트"]),  # "에는" after "TV" is no word
        ("그거 어떻게 꺼요?", ["꺼요"]),
        ("Come si elimina un'app?", ["elimina", "un'app"]),
        ("Hoe verwijder ik het?", ["verwijder"]),
        ("Jak go usunąć?", ["usunąć"]),
        ("Como faço para apagar isso?", ["apagar"]),
        ("それはどうやって消しますか？", []),
    ],
)
def test_content_words_in_the_new_languages(text: str, words: list[str]) -> None:
    assert content_words(text) == words


def test_every_name_the_package_exports_exists() -> None:
    package = importlib.import_module("pipeline.locales")
    assert [name for name in package.__all__ if not hasattr(package, name)] == []


@pytest.mark.parametrize(
    ("text", "thanks"),
    [
        ("thanks!", True), ("Thank you so much!", True), ("great, thanks, that worked", True), ("thx", True),
        ("¡Muchas gracias!", True), ("vielen Dank", True), ("merci beaucoup !", True), ("grazie mille", True),
        ("obrigado!", True), ("спасибо!", True), ("谢谢！", True), ("謝謝你", True), ("ありがとうございます", True),
        ("감사합니다!", True), ("bedankt", True), ("dzięki", True),
        # a thanks that goes on to ask or to report a failure is a message of its own
        ("thanks, how do I reset it?", False), ("thanks, but it still does not work", False),
        ("gracias, pero no funciona", False), ("thanks for the help with the remote pairing steps", False),
        ("ok", False), ("how do I turn it off", False),
    ],
)  # fmt: skip
def test_a_message_that_only_thanks_is_told_from_one_that_asks(text: str, thanks: bool) -> None:
    assert only_thanks(text) is thanks


def test_every_language_can_be_thanked_in() -> None:
    assert all(lexicon(code).thanks for code in SUPPORTED)


# (asks whether something is there, asks something else): a yes/no question about a thing asks for the thing, where a
# count, a size or a how-question asks for more (pipeline/agents/answerability.py reads the first as needing no number)
PRESENCE = {
    "en": (["Does it have Bluetooth?", "Have lan port ?", "Does it come with a remote?", "Does it support Dolby Atmos?",
            "Is it compatible with TiVo?"],
           ["How many ports does it have?", "Is the screen big?", "Can I mount it?"]),
    "de": (["Hat der Fernseher WLAN?", "Gibt es eine Sleep-Timer-Funktion?", "Unterstützt er Dolby Atmos?"],
           ["Wie viele HDMI-Anschlüsse hat er?"]),
    "es": (["¿Tiene WiFi?", "¿Viene con control remoto?", "¿Es compatible con TiVo?"],
           ["¿Cuántos puertos HDMI tiene?"]),
    "fr": (["Est-ce qu'elle a le WiFi ?", "Y a-t-il une fonction de mise en veille ?",
            "Est-ce qu'elle prend en charge Dolby Atmos ?"],
           ["Combien de ports HDMI a-t-elle ?"]),
    "it": (["Ha il WiFi?", "C'è la funzione di spegnimento programmato?", "È compatibile con TiVo?"],
           ["Quante porte HDMI ha?"]),
    "pt": (["Tem WiFi?", "Vem com controle remoto?", "Suporta Dolby Atmos?"], ["Quantas entradas HDMI ela tem?"]),
    "nl": (["Heeft hij wifi?", "Ondersteunt de tv Dolby Atmos?"], ["Hoeveel USB-poorten heeft de tv?"]),
    "pl": (["Czy ma WiFi?", "Czy obsługuje Dolby Atmos?"], ["Ile portów USB ma ten telewizor?"]),
    "ru": (["Есть ли у него Wi-Fi?", "Есть ли пульт в комплекте?", "Поддерживает ли он Dolby Atmos?"],
           ["Сколько у него HDMI-портов?"]),
    "zh": (["这台电视有WiFi吗？", "有没有蓝牙？", "這台電視有藍牙嗎？", "支持杜比全景声吗？"],
           ["有几个HDMI接口？", "屏幕有多大？"]),
    "ja": (["WiFiはありますか？", "ドルビーアトモスに対応していますか？"], ["HDMI端子はいくつありますか？"]),
    "ko": (["와이파이가 있나요?", "이 제품에 리모컨이 포함되어 있나요?", "돌비 애트모스를 지원하나요?"],
           ["HDMI 포트가 몇 개인가요?"]),
}  # fmt: skip


@pytest.mark.parametrize(
    ("question", "presence"),
    [(q, True) for yes, _ in PRESENCE.values() for q in yes] + [(q, False) for _, no in PRESENCE.values() for q in no],
)
def test_questions_whether_something_is_there_in_each_language(question: str, presence: bool) -> None:
    assert asks_presence(question) is presence


def test_every_language_that_asks_yes_or_no_says_how_it_asks_whether_something_is_there() -> None:
    asking = {code for code in SUPPORTED if lexicon(code).yes_no}
    assert asking == {code for code in SUPPORTED if lexicon(code).presence}
    assert set(PRESENCE) == {code.split("-")[0] for code in SUPPORTED if lexicon(code).presence}


# per language: questions asking how to do something (a procedure answers them), and questions that do not
HOW_TO = {
    "en": (["How do I pair the remote?", "what are the steps to set up the hub"], ["Is it wifi?", "What is HDR?"]),
    "es": (["¿Cómo emparejo el mando?", "Pasos para configurar el hub"], ["¿Qué es HDR?", "¿Tiene wifi?"]),
    "de": (["Wie verbinde ich die Fernbedienung?"], ["Was ist HDR?", "Hat er WLAN?"]),
    "fr": (["Comment connecter la télécommande ?", "Les étapes pour créer un profil"], ["Qu'est-ce que le HDR ?"]),
    "it": (["Come collego il telecomando?"], ["Che cos'è l'HDR?", "Ha il wifi?"]),
    "pt": (["Como conecto o controle?"], ["O que é HDR?", "Tem wifi?"]),
    "nl": (["Hoe koppel ik de afstandsbediening?"], ["Wat is HDR?", "Heeft hij wifi?"]),
    "pl": (["Jak podłączyć pilota?"], ["Co to jest HDR?", "Czy ma WiFi?"]),
    "ru": (["Как подключить пульт?"], ["Что такое HDR?", "Есть ли у него Wi-Fi?"]),
    "zh": (["遥控器怎么配对？", "遙控器怎麼配對？", "如何设置睡眠定时器？"], ["HDR是什么？", "这台电视有WiFi吗？"]),
    "ja": (["リモコンの設定方法は？", "どうやって接続しますか？"], ["HDRとは何ですか？"]),
    "ko": (["리모컨을 어떻게 연결하나요?"], ["HDR이 뭔가요?", "와이파이가 있나요?"]),
}  # fmt: skip


@pytest.mark.parametrize(
    ("language", "question", "how_to"),
    [(lang, q, True) for lang, (yes, _) in HOW_TO.items() for q in yes]
    + [(lang, q, False) for lang, (_, no) in HOW_TO.items() for q in no],
)
def test_questions_asking_how_to_do_something_in_each_language(language: str, question: str, how_to: bool) -> None:
    assert asks_how_to(question, language) is how_to


def test_every_language_says_how_it_asks_how_to_do_something() -> None:
    assert set(HOW_TO) == {code.split("-")[0] for code in SUPPORTED}
    assert all(lexicon(code).how_to for code in SUPPORTED)
    assert asks_how_to("How do I pair the remote?", None)  # the language not known: read as English
