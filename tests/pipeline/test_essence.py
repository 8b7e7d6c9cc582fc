"""essence offline: pronoun and deictic resolution across languages, follow-up vs new topic, vague questions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pipeline.agents.essence import EssenceAgent, combine, elliptical_phrase, resolve, thread_topic, topic_of
from pipeline.envelope import Context, Payload
from pipeline.locales import texts
from pipeline.types import ContextType, HistoryMessage
from tests.pipeline.fakes import history

pytestmark = pytest.mark.unit


async def asked_after(question: str, language: str, *earlier: str) -> Payload:
    """What the essence role makes of `question` in a thread of the `earlier` messages."""
    result = await EssenceAgent().run(Payload(text=question, language=language), Context(history=history(*earlier)))
    return result.payload


@pytest.mark.parametrize(
    ("language", "earlier", "question", "expected"),
    [
        ("en", "What is Bixby?", "How does it work?", "How does Bixby work?"),
        ("en", "How do I pair the remote?", "Does it need batteries?", "Does the remote need batteries?"),
        ("en", "How do I pair the remote?", "how far away does it work from the TV?",
         "how far away does the remote work from the TV?"),  # three words of its own, still pointing back
        ("en", "How do I pair the remote?", "it's paired, what's the range?",
         "the remote's paired, what's the range?"),  # the pointing word before a contraction's apostrophe
        ("es", "¿Qué es Bixby?", "¿Cómo funciona?", "¿Cómo funciona Bixby?"),
        ("es", "¿Qué es Bixby?", "¿Y eso para qué sirve?", "¿Y Bixby para qué sirve?"),
        ("de", "Was ist Bixby?", "Wie funktioniert das?", "Wie funktioniert Bixby?"),
        ("fr", "Qu'est-ce que Bixby ?", "Comment ça marche ?", "Comment Bixby marche ?"),
        ("ru", "Что такое Bixby?", "Как это работает?", "Как Bixby работает?"),
        ("zh", "Bixby是什么？", "它是怎么工作的？", "Bixby是怎么工作的？"),
        ("zh", "Bixby是什么？", "怎么用？", "Bixby怎么用？"),
        # Traditional characters (Taiwan, Hong Kong) point back as Simplified ones do; "那个"/"那個" is "that one",
        # not the opener "那" of "那 Discord 呢？"
        ("zh-Hant", "Bixby是什麼？", "它是怎麼工作的？", "Bixby是怎麼工作的？"),
        ("zh-Hant", "Bixby是什麼？", "那個怎麼關掉？", "Bixby怎麼關掉？"),
        ("zh-Hant", "Bixby是什麼？", "這個怎麼用？", "Bixby怎麼用？"),
        ("zh", "Bixby是什么？", "那个怎么关掉？", "Bixby怎么关掉？"),
        ("pt", "O que é Bixby?", "Como funciona?", "Como funciona Bixby?"),
        ("pt", "Como pareio o controle remoto?", "E como apago isso?", "E como apago o controle remoto?"),
        ("it", "Che cos'è Bixby?", "Come funziona?", "Come funziona Bixby?"),
        ("it", "Che cos'è Bixby?", "E a cosa serve questo?", "E a cosa serve Bixby?"),
        ("it", "Come installo un'app?", "e come si elimina?", "Come installo un'app? e come si elimina?"),
        ("ja", "Bixbyとは何ですか？", "それはどうやって使いますか？", "Bixbyはどうやって使いますか？"),
        ("ko", "Bixby가 뭐예요?", "그거 어떻게 작동해요?", "Bixby 어떻게 작동해요?"),
        # the topic without its particle ("헤드폰을"), the pointing word with one ("그것을")
        ("ko", "블루투스 헤드폰을 어떻게 연결하나요?", "그것을 어떻게 끊어요?", "블루투스 헤드폰 어떻게 끊어요?"),
        ("nl", "Wat is Bixby?", "Hoe werkt het?", "Hoe werkt Bixby?"),
        ("nl", "Hoe koppel ik de afstandsbediening?", "En hoe reset ik die?", "En hoe reset ik de afstandsbediening?"),
        # the topic without the infinitive German and Dutch put last
        ("de", "Wie kann ich die Untertitel einschalten?", "Wie schalte ich sie aus?",
         "Wie schalte ich die Untertitel aus?"),
        ("nl", "Hoe kan ik ondertitels aanzetten?", "En hoe zet ik ze uit?", "En hoe zet ik ondertitels uit?"),
        ("pl", "Co to jest Bixby?", "Jak to działa?", "Jak Bixby działa?"),
        # "what about X?": X in the place of the noun its particle marks (the Korean particle in X's form)
        ("ja", "キーボードを接続するには？", "マウスは？", "マウスを接続するには？"),
        ("ja", "iPhoneを接続するには？", "iPadでは？", "iPadを接続するには？"),
        ("ja", "スリープタイマーの設定方法は？", "オフタイマーは？", "オフタイマーの設定方法は？"),
        ("ko", "키보드는 어떻게 연결해요?", "마우스는요?", "마우스는 어떻게 연결해요?"),
        ("ko", "블루투스 헤드폰을 어떻게 연결하나요?", "스피커는요?", "블루투스 스피커를 어떻게 연결하나요?"),
        ("ko", "리모컨은 어떻게 페어링해요?", "키보드는요?", "키보드는 어떻게 페어링해요?"),
        # the noun before the words that may close a question: a verb's particle, "again", "to it"
        ("nl", "Hoe sluit ik een toetsenbord aan?", "en een muis?", "Hoe sluit ik een muis aan?"),
        ("nl", "Hoe zet ik ondertitels aan?", "en de instellingen?", "Hoe zet ik instellingen aan?"),  # a noun in -en
        ("de", "Wie schalte ich die Untertitel ein?", "und die Audiodeskription?",
         "Wie schalte ich die Audiodeskription ein?"),
        ("en", "How do I pair the remote again?", "and the keyboard?", "How do I pair the keyboard again?"),
        ("en", "How do I connect a keyboard to it?", "and a mouse?", "How do I connect a mouse to it?"),
    ],
)
async def test_follow_up_becomes_a_question_about_the_topic(
    language: str, earlier: str, question: str, expected: str
) -> None:
    result = await EssenceAgent().run(Payload(text=question, language=language), Context(history=history(earlier)))
    assert result.payload.canonical_question == expected
    assert result.payload.context_type is ContextType.FOLLOW_UP
    assert not result.payload.needs_clarification


@pytest.mark.parametrize(
    ("language", "earlier", "question"),
    [
        # an object pronoun between the question word and the verb: "how do I turn *them* off?"
        ("es", "¿Cómo activo los subtítulos?", "¿cómo los desactivo?"),
        ("es", "¿Cómo instalo una aplicación?", "¿y cómo la elimino?"),
        ("pt", "Como pareio o controle remoto?", "Como o desligo?"),
        ("it", "Come attivo i sottotitoli?", "Come li disattivo?"),
        ("it", "Come attivo i sottotitoli?", "come l'attivo?"),
        ("fr", "Comment régler la minuterie ?", "comment l'activer ?"),
        ("fr", "Comment créer une liste de favoris ?", "et comment la renommer ?"),
        # a reflexive verb whose subject is the last question's: "how are they turned off?"
        ("es", "¿Cómo activo los subtítulos?", "¿Cómo se desactivan?"),
        ("it", "Come installo un'app?", "come si elimina?"),
        # a verb and no object: the object is the last question's subject
        ("en", "How do I set the sleep timer?", "how do I cancel?"),
        ("en", "How do I set the sleep timer?", "can I undo?"),
        ("fr", "Comment régler la minuterie ?", "comment annuler ?"),
        ("ru", "Как установить таймер сна?", "как отменить?"),
        ("en", "How do I turn on subtitles?", "how do I turn off?"),  # a verb with its particle
        # where the object goes unsaid: "how" and a verb alone
        ("zh", "如何打开字幕？", "怎么关掉？"),
        ("zh-Hant", "如何開啟字幕？", "怎麼關掉？"),
        ("ja", "字幕をオンにするには？", "どうやってオフにしますか？"),
        ("ko", "앱은 어떻게 설치해요?", "삭제는 어떻게 해요?"),
        # the pronoun written onto the verb
        ("es", "¿Cómo activo los subtítulos?", "¿cómo desactivarlos?"),
        ("it", "Come attivo i sottotitoli?", "come disattivarli?"),
        ("pt", "Como ativo as legendas?", "como desativá-las?"),
    ],
)
async def test_a_pronoun_before_or_on_the_verb_asks_on_from_the_last_question(
    language: str, earlier: str, question: str
) -> None:
    """Spanish, Portuguese, Italian and French put an object pronoun before the verb or write it onto an
    infinitive: the pronoun stands for what the last question was about, so the two are asked together (the same
    word before a noun is an article, below)."""
    payload = await asked_after(question, language, earlier)
    assert payload.canonical_question == f"{earlier} {question}"
    assert payload.context_type is ContextType.FOLLOW_UP


@pytest.mark.parametrize(
    ("language", "earlier", "question"),
    [
        ("pt", "Como ativo as legendas?", "como a tela fica escura?"),
        ("fr", "Comment activer les sous-titres ?", "Comment les chaînes sont triées ?"),
        ("es", "¿Cómo activo los subtítulos?", "¿Cómo la tele se apaga sola?"),
        ("it", "Come attivo i sottotitoli?", "Come parla il televisore?"),
        # a question about a new thing, however short, is its own
        ("en", "How do I set the sleep timer?", "what is HDMI?"),
        ("es", "¿Cómo programo el temporizador?", "¿cómo Netflix?"),
        ("zh", "如何打开字幕？", "怎么连接蓝牙耳机？"),  # a verb with an object of its own, unspaced
        ("ja", "字幕をオンにするには？", "どうやってスリープタイマーを設定しますか？"),
    ],
)
async def test_an_article_before_its_noun_does_not_point_back(language: str, earlier: str, question: str) -> None:
    payload = await asked_after(question, language, earlier)
    assert payload.canonical_question == question
    assert payload.context_type is ContextType.NEW_TOPIC


@pytest.mark.parametrize(
    "question",
    ["How do I change the picture mode?", "What is that HDMI port for?", "Wie ändere ich das Bildformat?"],
)
async def test_a_self_contained_question_is_a_new_topic(question: str) -> None:
    result = await EssenceAgent().run(Payload(text=question, language="en"), Context(history=history("What is Bixby?")))
    assert result.payload.canonical_question == question
    assert result.payload.context_type is ContextType.NEW_TOPIC


@pytest.mark.parametrize(
    ("language", "question"),
    [("ja", "このテレビの重さは何キロですか？"), ("ja", "スリープタイマー機能はありますか？"),
     ("ko", "블루투스 헤드폰을 어떻게 연결하나요?")],
)
async def test_a_japanese_or_korean_question_is_not_vague(language: str, question: str) -> None:
    """Katakana words and Korean words are topics: these questions were all taken as "tell me more" (only runs of
    Han characters counted)."""
    result = await EssenceAgent().run(Payload(text=question, language=language), Context())
    assert not result.payload.needs_clarification
    assert result.payload.canonical_question == question


@pytest.mark.parametrize(
    ("language", "question"),
    [("en", "it doesn't work"), ("en", "help"), ("es", "no funciona"), ("de", "Es funktioniert nicht"),
     ("fr", "ça ne marche pas"), ("ru", "не работает"), ("zh", "它不工作了")],
)
async def test_vague_question_without_context_asks_to_clarify(language: str, question: str) -> None:
    result = await EssenceAgent().run(Payload(text=question, language=language), Context())
    assert result.payload.needs_clarification
    assert result.payload.clarification_reason == "vague"
    assert result.payload.clarification_message == texts(language).clarify["vague"]


def test_topic_follows_the_thread_through_follow_ups() -> None:
    thread = history("How do I set up the Bixby voice assistant?", "How does it work?", "thanks")
    assert thread_topic(thread, "en", 12) == "the Bixby voice assistant"
    switched = history("What is Bixby?", "How do I pair the remote?")
    assert thread_topic(switched, "en", 12) == "the remote"


def test_mentions_in_the_thread_are_not_topics() -> None:
    assert thread_topic(history("<@U0BOT42> What is Bixby?"), "en", 12) == "Bixby"


def test_bot_messages_do_not_set_the_topic() -> None:
    from dataclasses import replace

    thread = history("What is Bixby?", "Hold the Link key on the remote.")
    thread = (thread[0], replace(thread[1], from_bot=True))
    assert thread_topic(thread, "en", 12) == "Bixby"


@pytest.mark.parametrize(
    ("text", "topic"),
    [("What is Bixby?", "Bixby"), ("Bixby doesn't respond", "Bixby"), ("如何设置Bixby语音助手？", "Bixby"),
     ("How do I pair the remote?", "the remote")],
)
def test_topic_of_prefers_names(text: str, topic: str) -> None:
    assert topic_of(text) == topic


@pytest.mark.parametrize(
    ("text", "topic"),
    [("How do I connect to Wi-Fi?", "Wi-Fi"), ("Comment activer les sous-titres ?", "les sous-titres"),
     ("Wie richte ich das WLAN-Netzwerk ein?", "WLAN-Netzwerk"), ("How do I turn on HDMI-CEC?", "HDMI-CEC")],
)
def test_a_hyphenated_word_is_a_topic_whole(text: str, topic: str) -> None:
    """Cut at its hyphen, "Wi-Fi" left "Fi" as the thread's topic, and "what if it drops?" was asked about "Fi"."""
    assert topic_of(text) == topic


def test_a_question_naming_the_topic_is_kept_as_is() -> None:
    resolution = resolve("Can Bixby read my messages?", "Bixby", "en")
    assert resolution.canonical == "Can Bixby read my messages?"
    assert resolution.context_type is ContextType.FOLLOW_UP


@pytest.mark.parametrize(
    ("pending", "reply", "expected"),
    [
        ("it doesn't work", "Bixby", "Bixby doesn't work"),
        ("How do I reset?", "the remote", "How do I reset the remote?"),
        ("it doesn't work", "the remote does not pair with my speaker anymore", "the remote does not pair with my "
         "speaker anymore"),
    ],
)
def test_a_reply_to_a_clarification_is_combined(pending: str, reply: str, expected: str) -> None:
    assert combine(pending, reply, "en").canonical == expected


async def test_agent_combines_a_reply_when_a_question_is_pending() -> None:
    payload = Payload(text="Bixby", language="en", canonical_question="it doesn't work")
    result = await EssenceAgent().run(payload, Context())
    assert result.payload.canonical_question == "Bixby doesn't work"
    assert not result.payload.needs_clarification


@pytest.mark.parametrize(
    ("earlier", "question", "expected"),
    [
        ("Our hub shows error E-2041 since this morning", "what does it mean?", "E-2041"),
        ("Is the QN90B supported?", "how do I update it?", "QN90B"),
    ],
)
async def test_a_code_in_the_earlier_message_becomes_the_topic(earlier: str, question: str, expected: str) -> None:
    then = datetime.now(UTC) - timedelta(minutes=5)
    context = Context(history=(HistoryMessage(then, "alice", earlier),))
    result = await EssenceAgent().run(Payload(text=question, language="en"), context)
    assert result.payload.canonical_question is not None
    assert expected in result.payload.canonical_question


async def test_a_complaint_inside_a_thread_clarifies_within_the_threads_topic() -> None:
    result = await EssenceAgent().run(
        Payload(text="It doesn't work", language="en"), Context(history=history("What is Bixby?"))
    )
    assert result.payload.needs_clarification and result.payload.clarification_reason == "vague"
    assert result.payload.canonical_question == "Bixby"  # the choices are searched within the topic


@pytest.mark.parametrize(
    ("earlier", "follow_up", "expected"),
    [
        ("How do I create the Slack app?", "and for Discord?", "How do I create the Discord app?"),
        # typed in lower case the name is no name: the new one takes the whole thing's place, not only "app"'s
        ("how do I set up the slack app?", "and for discord?", "how do I set up the discord?"),
        ("how do I reset the picture settings?", "and sound?", "how do I reset the sound?"),
        ("how do I ingest a folder of html files?", "and pdfs?", "how do I ingest a folder of pdfs?"),
        # a verb and its bare object are no one thing: only the object gives way
        ("how do I turn subtitles off?", "and captions?", "how do I turn captions off?"),
        ("can it read pdfs?", "and word files?", "can it read word files?"),  # was "can it word files?"
        ("what do I need to install docbot?", "and discord?", "what do I need to install discord?"),
        ("How do I set up Slack in HTTP mode?", "what about Socket Mode?", "How do I set up Slack in Socket Mode?"),
        ("What is DOCBOT_ROLE_LIMITS?", "and DOCBOT_ROLE_QUEUE_LIMIT?", "What is DOCBOT_ROLE_QUEUE_LIMIT?"),
        ("What is the default HTTP port?", "and the default log level?", "What is the default log level?"),
        ("How do I ingest Markdown files?", "and web pages?", "How do I ingest web pages?"),
        ("¿Cómo creo la app de Slack?", "¿y para Discord?", "¿Cómo creo la app de Discord?"),
        ("Como conecto o Discord?", "e no Slack?", "Como conecto o Slack?"),
        ("Come collego Discord?", "e per Slack?", "Come collego Slack?"),
        ("Hoe koppel ik Discord?", "en voor Slack?", "Hoe koppel ik Slack?"),
        ("Jak połączyć Discord?", "a dla Slacka?", "Jak połączyć Slacka?"),
    ],
)
async def test_an_elliptical_follow_up_repeats_the_previous_question_about_the_new_name(
    earlier: str, follow_up: str, expected: str
) -> None:
    result = await EssenceAgent().run(Payload(text=follow_up, language="en"), Context(history=history(earlier)))
    assert result.payload.canonical_question == expected
    assert result.payload.context_type is ContextType.FOLLOW_UP
    assert not result.payload.needs_clarification


@pytest.mark.parametrize(
    ("language", "earlier", "follow_up", "expected"),
    [
        ("en", "How do I connect a Bluetooth keyboard?", "and a mouse?", "How do I connect a mouse?"),
        # its article says which thing it stands for: "my laptop" for "my phone", not for the last noun "the tv"
        ("en", "how do I connect my phone to the tv?", "and my laptop?", "how do I connect my laptop to the tv?"),
        ("en", "how do I connect a keyboard to the tv?", "and a mouse?", "how do I connect a mouse to the tv?"),
        ("es", "¿cómo conecto mi teléfono a la tele?", "¿y mi portátil?", "¿cómo conecto mi portátil a la tele?"),
        ("es", "¿Cómo conecto un teclado Bluetooth?", "¿y un ratón?", "¿Cómo conecto un ratón?"),
        ("fr", "Comment connecter un clavier Bluetooth ?", "et une souris ?", "Comment connecter une souris ?"),
        # German writes nouns with a capital: "Maus" is not a name to put in place of the name "Bluetooth"
        ("de", "Wie verbinde ich eine Bluetooth-Tastatur?", "und eine Maus?", "Wie verbinde ich eine Maus?"),
        ("de", "Wie spiegele ich mein Handy auf den Fernseher?", "und mit einem iPad?",
         "Wie spiegele ich mein Handy auf einem iPad?"),
        # the last phrase as whole words: "télé" of "sur la télé", not the start of "téléphone"
        ("fr", "Comment dupliquer l'écran de mon téléphone sur la télé ?", "et avec un iPad ?",
         "Comment dupliquer l'écran de mon téléphone sur un iPad ?"),
    ],
)
async def test_the_new_thing_brings_its_own_article(language: str, earlier: str, follow_up: str, expected: str) -> None:
    """ "and a mouse?" after "How do I connect a Bluetooth keyboard?" was "How do I connect a a mouse?"."""
    payload = await asked_after(follow_up, language, earlier)
    assert payload.canonical_question == expected


@pytest.mark.parametrize(
    ("language", "question"),
    [("de", "gibt es eine Kindersicherung?"), ("fr", "y a-t-il un mode nuit ?"),
     ("fr", "faut-il l'appli SmartThings ?")],
)
async def test_the_pronoun_of_an_impersonal_phrase_points_nowhere(language: str, question: str) -> None:
    """ "gibt es ...?" is "is there ...?": its "es" is not the thread's topic ("gibt die Untertitel eine ...")."""
    payload = await asked_after(question, language, "Wie schalte ich die Untertitel ein?")
    assert payload.canonical_question == question


async def test_and_a_new_name_after_a_statement_goes_on_from_the_statement() -> None:
    """ "et les piles ?" after "elle se déconnecte toute seule" has no question to put "piles" into: it was
    "la télécommande se déconnecte toute piles"."""
    payload = await asked_after("et les piles ?", "fr", "Comment jumeler la télécommande ?",
                                "elle se déconnecte toute seule")  # fmt: skip
    assert payload.canonical_question == "la télécommande se déconnecte toute seule et les piles ?"
    assert payload.context_type is ContextType.FOLLOW_UP


async def test_an_elliptical_follow_up_chains_through_the_thread() -> None:
    thread = history("How do I create the Slack app?", "and for Discord?")
    result = await EssenceAgent().run(Payload(text="what about Pinecone?", language="en"), Context(history=thread))
    assert result.payload.canonical_question == "How do I create the Pinecone app?"


@pytest.mark.parametrize(
    ("follow_up", "phrase"),
    [("y las pilas?", "pilas"), ("e per Slack?", "Slack"), ("e come si elimina?", None), ("und Internet?", "Internet"),
     ("and inputs?", "inputs"), ("а в Discord?", "Discord"), ("那怎么关？", None), ("a z iPada?", "iPada"),
     # Chinese, Japanese and Korean close "what about X?" with a particle
     ("iPad呢？", "iPad"), ("那iPad呢？", "iPad"), ("那个呢？", None), ("iPadでは？", "iPad"), ("スマホは？", "スマホ"),
     ("止めるには？", None), ("아이패드는요?", "아이패드"), ("끄려면요?", None)],
)
def test_an_elliptical_opener_is_matched_whole(follow_up: str, phrase: str | None) -> None:
    """"y las" is not "y la" + "s"; "e come si elimina?" asks a question of its own, it names nothing new."""
    assert elliptical_phrase(follow_up) == phrase


@pytest.mark.parametrize(
    ("language", "earlier", "follow_up"),
    [
        ("es", "¿Cómo activo los subtítulos?", "¿y para desactivarlos?"),
        ("pt", "Como ativo as legendas?", "e para desativar?"),
        ("it", "Come attivo i sottotitoli?", "e per disattivarli?"),
        ("fr", "Comment activer les sous-titres ?", "Et les désactiver ?"),
        ("ru", "Как включить субтитры?", "а выключить?"),
        # German writes a verb small, where every noun has a capital; Dutch by its separable verb's prefix
        ("de", "Wie schalte ich die Untertitel ein?", "und ausschalten?"),
        ("nl", "Hoe zet ik ondertitels aan?", "en uitzetten?"),
    ],
)
async def test_and_then_a_verb_asks_another_action_on_the_same_thing(
    language: str, earlier: str, follow_up: str
) -> None:
    """An infinitive after "and" is not a new name to put in the last question's place ("¿Cómo activo los
    desactivarlos?", "Как включить ыключить?"): the two questions are asked together."""
    assert elliptical_phrase(follow_up, language) is None
    payload = await asked_after(follow_up, language, earlier)
    assert payload.canonical_question == f"{earlier} {follow_up}"
    assert payload.context_type is ContextType.FOLLOW_UP


@pytest.mark.parametrize(
    ("language", "earlier", "question", "expected"),
    [
        ("en", "How do I turn on subtitles?", "can I change their size?", "can I change subtitles size?"),
        ("de", "Wie schalte ich die Untertitel ein?", "kann ich ihre Größe ändern?",
         "kann ich die Untertitel Größe ändern?"),
        ("fr", "Comment activer les sous-titres ?", "comment changer leur taille ?",
         "comment changer les sous-titres taille ?"),
        ("es", "¿Cómo activo los subtítulos?", "¿puedo cambiar su tamaño?", "¿puedo cambiar los subtítulos tamaño?"),
        ("pt", "Como ativo as legendas?", "posso mudar o tamanho delas?", "posso mudar o tamanho legendas?"),
        ("ru", "Как включить субтитры?", "можно изменить их размер?", "можно изменить субтитры размер?"),
        ("pl", "Jak włączyć napisy?", "czy mogę zmienić ich rozmiar?", "czy mogę zmienić napisy rozmiar?"),
        # a demonstrative before a noun that names no thing of its own ("where is that setting?" got the network's
        # reset as a new question)
        ("en", "the picture is too dark", "where is that setting?", "where is the picture setting?"),
        ("en", "how do I turn on subtitles?", "where do I find that option?", "where do I find subtitles option?"),
    ],
)
async def test_a_possessive_points_back_at_the_topic(language: str, earlier: str, question: str, expected: str) -> None:
    """ "their size" is the topic's size: a possessive before its noun points back, and so does a demonstrative
    before "setting" or "option", where "that port" names a port. In Russian and Polish the verb that opens the
    first question is not part of its topic."""
    payload = await asked_after(question, language, earlier)
    assert payload.canonical_question == expected
    assert payload.context_type is ContextType.FOLLOW_UP


async def test_a_demonstrative_before_a_noun_names_that_nouns_thing() -> None:
    payload = await asked_after("what does that port do?", "en", "how do I connect my laptop to the tv?")
    assert payload.canonical_question == "what does that port do?"


def test_a_japanese_phrase_holding_a_pointing_word_does_not_point_back() -> None:
    """"それとも" is "or", "それぞれ" "each": neither is "それ" ("it")."""
    assert resolve("それとも赤いですか？", "Bixby", "ja").canonical != "Bixbyとも赤いですか？"
    assert resolve("それはどうやって使いますか？", "Bixby", "ja").canonical == "Bixbyはどうやって使いますか？"


async def test_and_how_with_a_whole_question_is_not_elliptical() -> None:
    result = await EssenceAgent().run(
        Payload(text="and how do I reset the remote?", language="en"), Context(history=history("How do I pair it?"))
    )
    assert result.payload.canonical_question == "and how do I reset the remote?"


@pytest.mark.parametrize("message", ["help, nothing works", "its broken again", "hey quick q about the bot"])
async def test_a_first_message_with_nothing_to_go_on_asks_what_it_is_about(message: str) -> None:
    result = await EssenceAgent().run(Payload(text=message, language="en"), Context())
    assert result.payload.needs_clarification and result.payload.clarification_reason == "vague"
    asked = await EssenceAgent().run(Payload(text="help, pairing the remote fails", language="en"), Context())
    assert not asked.payload.needs_clarification  # a topic of its own is searched


async def test_a_one_word_question_going_on_from_the_last_is_asked_with_it() -> None:
    thread = Context(history=history("How do I install apps on the TV?"))
    result = await EssenceAgent().run(Payload(text="and how do I delete one?", language="en"), thread)
    assert result.payload.canonical_question == "How do I install apps on the TV? and how do I delete one?"
    assert result.payload.context_type is ContextType.FOLLOW_UP
    alone = await EssenceAgent().run(Payload(text="how do I delete one?", language="en"), thread)
    assert alone.payload.canonical_question == "how do I delete one?"  # no "and": a question of its own


@pytest.mark.parametrize(
    ("language", "earlier", "question"),
    [
        ("es", "¿Cómo conecto el mando Samsung Smart Remote?", "¿y si no funciona?"),
        ("ru", "Как подключить пульт Samsung Smart Remote?", "а если не получается?"),
        ("it", "Come collego il telecomando Samsung Smart Remote?", "e se non funziona?"),
    ],
)
async def test_and_if_it_does_not_work_keeps_the_topic_instead_of_replacing_a_name(
    language: str, earlier: str, question: str
) -> None:
    """"¿y si no funciona?" opens like an elliptical follow-up ("¿y para Discord?"), but what follows is the
    answer failing, not a new name: it was put in place of the previous question's name ("¿Cómo conecto el mando si
    no funciona?"), so the search lost what the thread is about."""
    result = await EssenceAgent().run(Payload(text=question, language=language), Context(history=history(earlier)))
    canonical = result.payload.canonical_question or ""
    assert "Samsung Smart" in canonical and question.strip("¿?") in canonical
    assert result.payload.context_type is ContextType.FOLLOW_UP


@pytest.mark.parametrize(
    ("language", "earlier", "follow_up"),
    [
        # that the answer failed: what failed is the answer to the last question (pairing the remote), not the
        # thread's topic alone ("the remote"), and the search needs both
        pytest.param("en", "How do I pair the Samsung Smart Remote?", "what if that doesn't work?", id="failed"),
        pytest.param("en", "How do I turn on Anynet+?", "it's not working, what should I check?", id="failed-check"),
        pytest.param("en", "¿Cómo conecto el mando?", "¿y si no funciona?", id="failed-es"),
        # an amount of what the last question was about ("Wie lange maximal?" got a quote on USB recording)
        pytest.param("en", "how do I set the sleep timer?", "how long at most?", id="amount"),
        pytest.param("en", "how do I connect a bluetooth speaker?", "how many at once?", id="amount-many"),
        pytest.param("en", "how do I record a program to usb?", "how much space does it need?", id="amount-much"),
        pytest.param("de", "Wie stelle ich den Sleep-Timer ein?", "Wie lange maximal?", id="amount-de"),
        pytest.param("es", "¿cómo pongo el temporizador de apagado?", "¿cuánto tiempo como máximo?", id="amount-es"),
        pytest.param("fr", "comment régler la minuterie de veille ?", "combien de temps au maximum ?", id="amount-fr"),
        pytest.param("zh", "怎么设置睡眠定时器？", "最长多久？", id="amount-zh"),
        # which of two ways to do it ("¿por HDMI o por óptico?" got a quote on HDMI UHD Color)
        pytest.param("en", "how do I connect a soundbar?", "hdmi or optical?", id="choice"),
        pytest.param("es", "¿Cómo conecto una barra de sonido?", "¿por HDMI o por óptico?", id="choice-es"),
        pytest.param("de", "Wie verbinde ich eine Soundbar?", "per HDMI oder optisch?", id="choice-de"),
        pytest.param("zh", "怎么连接回音壁？", "HDMI还是光纤？", id="choice-zh"),
        # the step the answer gave is not there ("I don't see the delete option" got a quote on USB files)
        pytest.param("en", "how do I delete an app?", "I don't see the delete option", id="not-found"),
        pytest.param("es", "¿Cómo borro una aplicación?", "no aparece la opción de borrar", id="not-found-es"),
        pytest.param("fr", "Comment supprimer une application ?", "je ne trouve pas l'option supprimer",
                     id="not-found-fr"),
        # the last question under a condition ("and if the docs are in german too?" was refused)
        pytest.param("en", "how do I make the bot answer in german?", "and if the docs are in german too?",
                     id="condition"),
        pytest.param("en", "do I need a public url for that?", "what if I can't open a port?", id="condition-what"),
        pytest.param("es", "¿Cómo conecto el mando?", "¿y si no tengo pilas?", id="condition-es"),
        pytest.param("de", "Wie verbinde ich die Fernbedienung?", "und wenn sie nicht reagiert?", id="condition-de"),
    ],
)  # fmt: skip
async def test_a_follow_up_about_the_last_answer_is_asked_together_with_its_question(
    language: str, earlier: str, follow_up: str
) -> None:
    """That the answer failed, how long or how many, which of two ways, that the step is not there, or a condition:
    each was read as a new question of its own and got an unrelated quote or a refusal; each is about what the last
    question asked, so it is asked with it."""
    payload = await asked_after(follow_up, language, earlier)
    assert payload.canonical_question == f"{earlier} {follow_up}"
    assert payload.context_type is ContextType.FOLLOW_UP


async def test_a_word_that_offers_a_choice_in_another_language_offers_none_here() -> None:
    """Dutch "of" is "or"; in an English question it is "of", and the question stays its own."""
    payload = await asked_after("what is the speed of the mouse?", "en", "can I use a usb keyboard?")
    assert payload.canonical_question == "what is the speed of the mouse?"


@pytest.mark.parametrize(
    ("earlier", "question"),
    [("how do I connect a bluetooth speaker?", "how many HDMI ports does the TV have?"),
     ("how do I set the sleep timer?", "how much does the subscription cost per month?")],
)  # fmt: skip
async def test_an_amount_asked_of_things_it_names_is_a_question_of_its_own(earlier: str, question: str) -> None:
    payload = await asked_after(question, "en", earlier)
    assert payload.canonical_question == question


def test_not_knowing_how_to_show_something_is_no_failure() -> None:
    from pipeline.locales import reports_failure

    assert reports_failure("I can't find the sleep timer") and reports_failure("找不到删除选项")
    assert not reports_failure("I don't know how to show subtitles")


@pytest.mark.parametrize("message", [
    "ça ne s'affiche pas", "l'opzione non compare", "nie znajduję tej opcji", "не появляется кнопка",
    "작동하지 않아요", "삭제 버튼이 보이지 않아요", "削除ボタンが表示されない", "删除按钮不显示", "still not working.",
    "the remote stopped working", "the app keeps crashing", "the picture freezes", "el mando dejó de funcionar",
    "пульт перестал работать", "what if that doesnt work either", "i cant find the delete option",
    "works on the tv, on the remote not.",
])  # fmt: skip
def test_a_step_not_there_or_not_working_is_a_failure_in_its_own_words(message: str) -> None:
    from pipeline.locales import reports_failure

    assert reports_failure(message)


@pytest.mark.parametrize("message", [
    "I can't compare them", "we don't have a workspace yet", "the network isn't listed, what now?",
])  # fmt: skip
def test_a_word_that_only_begins_like_a_failure_word_is_none(message: str) -> None:
    # "compare", "workspace" and "network" hold "compar", "work" (the Italian "non compare" is a phrase now)
    from pipeline.locales import reports_failure

    assert not reports_failure(message)


async def test_asking_how_it_works_is_not_saying_it_failed() -> None:
    result = await EssenceAgent().run(
        Payload(text="How does it work?", language="en"), Context(history=history("How do I pair the remote?"))
    )
    assert result.payload.canonical_question == "How does the remote work?"


@pytest.mark.parametrize(
    ("language", "earlier", "follow_up", "expected"),
    [
        ("en", "is there a way to limit which docs a channel can see?", "how?",
         "how is there a way to limit which docs a channel can see?"),
        ("en", "can I change the language of the answers?", "and how exactly?",
         "how exactly can I change the language of the answers?"),
        ("es", "¿se puede cambiar el idioma?", "¿cómo?", "¿cómo se puede cambiar el idioma?"),
        ("fr", "peut-on changer la langue ?", "comment ?", "comment peut-on changer la langue ?"),
    ],
)  # fmt: skip
async def test_a_bare_question_word_asks_the_last_question_with_it(
    language: str, earlier: str, follow_up: str, expected: str
) -> None:
    """ "how?" after a yes/no question was asked about a topic word of it ("how see?") and got "which one do you
    mean?"; it asks the last question again, with its question word."""
    payload = await asked_after(follow_up, language, earlier)
    assert payload.canonical_question == expected
    assert payload.context_type is ContextType.FOLLOW_UP and not payload.needs_clarification


@pytest.mark.parametrize(
    ("language", "earlier", "follow_up", "expected"),
    [
        ("en", "how do I turn on subtitles?", "and off?", "how do I turn off subtitles?"),
        ("en", "how do I turn subtitles on?", "and off again?", "how do I turn subtitles off?"),
        ("de", "wie schalte ich die untertitel ein?", "und wie wieder aus?", "wie schalte ich die untertitel aus?"),
        ("nl", "hoe zet ik de ondertiteling aan?", "en weer uit?", "hoe zet ik de ondertiteling uit?"),
        # the thing, not the verb before it: "them" was "turn subtitles" ("how do I turn turn subtitles off?")
        ("en", "how do I turn subtitles on?", "and how do I turn them off again?",
         "and how do I turn subtitles off again?"),
    ],
)
async def test_the_other_position_of_a_switch_asks_the_last_question_with_it_turned(
    language: str, earlier: str, follow_up: str, expected: str
) -> None:
    """ "and off?" after "how do I turn on subtitles?" was "how do I turn on off?", and "und aus?" after "wie
    schalte ich die Untertitel ein?" put "aus" in the subtitles' place."""
    payload = await asked_after(follow_up, language, earlier)
    assert payload.canonical_question == expected


async def test_a_threads_topic_is_the_thing_an_article_opens_not_what_is_said_of_it() -> None:
    """ "the answers are too long", then "can I make them shorter?": "them" was "too long" (the longer run of
    content words), so the question became "can I make too long shorter?"."""
    payload = await asked_after("can I make them shorter?", "en", "the answers are too long")
    assert payload.canonical_question == "can I make the answers shorter?"


@pytest.mark.parametrize(("earlier", "question", "asked"), [
    ("My TV turns off by itself", "what else could it be?", "My TV turns off by itself"),
    ("how do I connect a soundbar?", "is there any other way?", "how do I connect a soundbar?"),
    ("my remote doesn't work", "I replaced the batteries. what else?",
     "my remote doesn't work I replaced the batteries."),
    ("My TV turns off by itself", "I already checked the sleep timer",
     "My TV turns off by itself I already checked the sleep timer"),
    ("mi televisor se apaga solo", "¿qué más puede ser?", "mi televisor se apaga solo"),
    ("Mein Fernseher schaltet sich von selbst aus", "Was kann es sonst noch sein?",
     "Mein Fernseher schaltet sich von selbst aus"),
    ("我的电视自己关机", "还有别的原因吗？", "我的电视自己关机"),
])  # fmt: skip
def test_asking_what_else_asks_the_last_question_again(earlier: str, question: str, asked: str) -> None:
    """Alone, "what else could it be?" was refused or got any quote, and "Was kann es sonst noch sein?" had its "es"
    replaced by the topic; it asks the last question again, with what the message tells besides."""
    from pipeline.agents.essence import thread_state

    language = "zh" if "电视" in earlier else None
    topic, previous = thread_state(history(earlier), language, 10)
    resolution = resolve(question, topic, language, previous)
    assert (resolution.canonical, resolution.context_type) == (asked, ContextType.FOLLOW_UP)


def test_a_question_of_its_own_about_another_thing_is_no_what_else() -> None:
    from pipeline.locales import already_tried, asks_for_something_else

    assert not asks_for_something_else("is there another way to connect headphones to the tv?")
    assert not asks_for_something_else("what other apps can I install?")
    assert not already_tried("I already have a soundbar, how do I connect it?")

