"""lang offline: lingua over a bounded language set; short texts take the thread's language."""

from __future__ import annotations

import pytest

from pipeline.agents.lang import LangAgent
from pipeline.envelope import Context, Payload
from tests.pipeline.fakes import history

pytestmark = [pytest.mark.unit, pytest.mark.slow]  # the first test builds the detector (1-10 s)

AGENT = LangAgent()  # the detector is built once per process and shared


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("How do I pair the remote with my speaker?", "en"),
        ("¿Cómo emparejo el mando con el altavoz?", "es"),
        ("Wie verbinde ich die Fernbedienung mit dem Lautsprecher?", "de"),
        ("Comment associer la télécommande à l'enceinte ?", "fr"),
        ("Как подключить пульт к колонке?", "ru"),
        ("如何将遥控器与音箱配对？", "zh"),
        ("Como faço para emparelhar o controle remoto?", "pt"),
    ],
)
async def test_detects_the_language(text: str, language: str) -> None:
    result = await AGENT.run(Payload(text=text), Context())
    assert result.payload.language == language
    assert result.payload.confidence is not None and 0 < result.payload.confidence <= 1


async def test_short_text_takes_the_language_of_the_thread() -> None:
    thread = history("¿Cómo emparejo el mando con el altavoz?", "¿Y cuánto dura la batería?")
    result = await AGENT.run(Payload(text="ok, gracias"), Context(history=thread))
    assert result.payload.language == "es"
    assert "thread history" in result.decision


async def test_short_text_without_history_falls_back_to_the_docs_language() -> None:
    result = await AGENT.run(Payload(text="ok"), Context(docs_language="en"))
    assert result.payload.language == "en"


async def test_a_sure_short_text_keeps_its_own_language() -> None:
    thread = history("How do I pair the remote with my speaker?")
    result = await AGENT.run(Payload(text="как это работает?"), Context(history=thread))
    assert result.payload.language == "ru"


async def test_mentions_do_not_sway_detection() -> None:
    result = await AGENT.run(Payload(text="<@U0123ABC> ¿cómo reinicio el altavoz de fábrica?"), Context())
    assert result.payload.language == "es"
