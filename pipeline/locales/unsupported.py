"""The one line said to people who write in a language without templates, in English and in their own language.

The rest of the reply is in English (the framing of an answer, a notice); this line says why, first in English, then,
where we have it, in the person's language. Keyed by ISO 639-1 code: the languages the detector reports that have no
module of their own (see `pipeline.agents.lang`).
"""

from __future__ import annotations

IN_ENGLISH = (
    "I can't answer in your language yet, so I'm replying in English "
    "(supported: English, Spanish, German, French, Russian, Chinese)."
)

IN_THEIR_LANGUAGE: dict[str, str] = {
    "ar": "لا أستطيع الرد بلغتك بعد، لذلك أجيب بالإنجليزية.",
    "he": "אני עדיין לא יכול לענות בשפה שלך, ולכן אני עונה באנגלית.",
    "hi": "मैं अभी आपकी भाषा में जवाब नहीं दे सकता, इसलिए मैं अंग्रेज़ी में जवाब दे रहा हूँ।",
    "el": "Δεν μπορώ ακόμη να απαντήσω στη γλώσσα σας, οπότε απαντώ στα αγγλικά.",
    "pt": "Ainda não consigo responder no seu idioma, por isso respondo em inglês.",
    "it": "Non posso ancora rispondere nella tua lingua, quindi rispondo in inglese.",
    "nl": "Ik kan nog niet in jouw taal antwoorden, dus ik antwoord in het Engels.",
    "pl": "Nie mogę jeszcze odpowiadać w Twoim języku, więc odpowiadam po angielsku.",
    "uk": "Я ще не можу відповідати вашою мовою, тому відповідаю англійською.",
    "ja": "まだあなたの言語では回答できないため、英語で回答します。",
    "ko": "아직 사용자의 언어로 답변할 수 없어 영어로 답변합니다.",
}
