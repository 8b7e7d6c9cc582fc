"""The one line said to people who write in a language without templates, in English and in their own language.

The rest of the reply is in English (the framing of an answer, a notice); this line says why, first in English, then,
where we have it, in the person's language. Keyed by ISO 639-1 code: the languages the detector reports that have no
module of their own (see `pipeline.agents.lang`).
"""

from __future__ import annotations

from collections.abc import Iterable


def in_english(languages: Iterable[str]) -> str:
    """The line in English, naming the `languages` that have templates."""
    return f"I can't answer in your language yet, so I'm replying in English (supported: {', '.join(languages)})."


IN_THEIR_LANGUAGE: dict[str, str] = {
    "ar": "لا أستطيع الرد بلغتك بعد، لذلك أجيب بالإنجليزية.",
    "he": "אני עדיין לא יכול לענות בשפה שלך, ולכן אני עונה באנגלית.",
    "hi": "मैं अभी आपकी भाषा में जवाब नहीं दे सकता, इसलिए मैं अंग्रेज़ी में जवाब दे रहा हूँ।",
    "el": "Δεν μπορώ ακόμη να απαντήσω στη γλώσσα σας, οπότε απαντώ στα αγγλικά.",
    "uk": "Я ще не можу відповідати вашою мовою, тому відповідаю англійською.",
}
