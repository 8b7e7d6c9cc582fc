"""All user-facing text, one module per language, plus the lexicons the offline roles read.

`texts(lang)` and `lexicon(lang)` fall back to English for languages without a module.
"""

from __future__ import annotations

import re
from types import ModuleType

from pipeline.locales import de, en, es, fr, it, ja, ko, nl, pl, pt, ru, unsupported, zh, zh_hant
from pipeline.locales.base import Lexicon, Texts
from pipeline.locales.chinese import TRADITIONAL_CHINESE, chinese_code
from pipeline.text import has_cjk, sentences, tokens

# each module's code is its name, but Chinese in Traditional characters: "zh-Hant" (BCP 47), from `zh_hant`
_MODULES: dict[str, ModuleType] = {
    getattr(m, "CODE", m.__name__.rsplit(".", 1)[1]): m
    for m in (en, es, de, fr, ru, zh, zh_hant, pt, it, ja, ko, nl, pl)
}
_TEXTS: dict[str, Texts] = {code: m.TEXTS for code, m in _MODULES.items()}
_LEXICONS: dict[str, Lexicon] = {code: m.LEXICON for code, m in _MODULES.items()}
SUPPORTED: tuple[str, ...] = tuple(_TEXTS)
DEFAULT = "en"

__all__ = [
    "DEFAULT",
    "FUNCTION_WORDS",
    "SUPPORTED",
    "TRADITIONAL_CHINESE",
    "UNSUPPORTED_LANGUAGE",
    "Lexicon",
    "Texts",
    "after_presence",
    "all_lexicons",
    "already_tried",
    "asks_for_something_else",
    "asks_how_to",
    "asks_only_an_amount",
    "asks_why",
    "asks_yes_no",
    "base_language",
    "content_words",
    "failure_words",
    "how_many_of",
    "is_supported",
    "language_name",
    "lexicon",
    "negates",
    "reports_failure",
    "texts",
    "unsupported_line",
    "with_unsupported_line",
]  # fmt: skip


def base_language(lang: str | None) -> str:
    """The language of a code or platform locale ("pt-BR", "es-419", "ja-JP", "zh-CN" → "pt", "es", "ja", "zh"),
    the default for None; whether it has templates is `is_supported`'s to say.

    Chinese keeps its script, since the two are written with different characters: "zh-TW", "zh_HK", "zh-Hant"
    (Discord's and Slack's locales for Taiwan, Hong Kong) → "zh-Hant"; "zh", "zh-CN", "zh-SG", "zh-Hans" → "zh"."""
    base = (lang or DEFAULT).lower().split("-")[0].split("_")[0]
    return chinese_code(lang or DEFAULT) if base == "zh" else base


# One line above an answer to a question in a language without templates, in English, naming the languages above
# (`unsupported_line` adds the person's own language where we have it).
UNSUPPORTED_LANGUAGE = unsupported.in_english(m.NAME for m in _MODULES.values())


def language_name(lang: str) -> str:
    """The English name of a language code, for a model's instructions ("Write the answer in Portuguese"): the
    locale's own name, else the language detector's name for it, else the code."""
    base = base_language(lang)
    if base in _MODULES:
        return str(_MODULES[base].NAME)
    from lingua import IsoCode639_1, Language

    try:
        return Language.from_iso_code_639_1(IsoCode639_1.from_str(base)).name.title()
    except ValueError:
        return lang


def is_supported(lang: str | None) -> bool:
    """Whether `lang` has its own templates (None means the default)."""
    return lang is None or base_language(lang) in _TEXTS


def unsupported_line(lang: str | None) -> str:
    """The line saying `lang` has no templates: in English, then in `lang` itself when we have it."""
    own = unsupported.IN_THEIR_LANGUAGE.get(base_language(lang))
    return f"{UNSUPPORTED_LANGUAGE}\n{own}" if own else UNSUPPORTED_LANGUAGE


def with_unsupported_line(text: str, lang: str | None) -> str:
    """`text` as said to a person writing in `lang`: unchanged for a language with templates, else opened by
    `unsupported_line` (once: an answer whose framing already opens with the English line gets the rest of it)."""
    if is_supported(lang):
        return text
    body = text.removeprefix(UNSUPPORTED_LANGUAGE).lstrip("\n") if text.startswith(UNSUPPORTED_LANGUAGE) else text
    return f"{unsupported_line(lang)}\n\n{body}" if body else unsupported_line(lang)


def texts(lang: str | None) -> Texts:
    return _TEXTS.get(base_language(lang), _TEXTS[DEFAULT])


def lexicon(lang: str | None) -> Lexicon:
    return _LEXICONS.get(base_language(lang), _LEXICONS[DEFAULT])


def all_lexicons() -> dict[str, Lexicon]:
    return dict(_LEXICONS)


# A message saying something failed, in every supported language: a word that says so on its own ("broken",
# "keeps crashing", "stopped working", "dejó de funcionar", "不行"), or a word for working said with a negation
# ("doesn't work", "no funciona", "не работает"); "how does it work?" asks how it works, not what to do when it fails.
BROKEN_WORDS = (
    "broken", "fail", "error", "wrong", "crash", "freez", "froze", "stopped work", "stops work", "dejó de func",
    "parou de func", "smesso di funz", "cessé de fonc", "перестал", "不行", "動かない", "使えない", "できない", "안 돼",
    "안돼", "안 되", "작동하지 않", "되지 않", "не получа", "не получил",
)  # fmt: skip
WORKING_WORDS = (
    "work", "funciona", "funktioniert", "klappt", "marche", "работает", "funziona", "werkt", "działa", "작동", "工作",
)  # fmt: skip
# finding words: negated, they say the answer's step is not there ("I don't see the delete option", "no aparece",
# "je ne le trouve pas", "找不到"); not "show", which a question asks with ("I don't know how to show subtitles");
# Italian "non compare" as a phrase: "compar" alone is English "compare"
FINDING_WORDS = (
    "see", "find", "found", "appear", "locate", "encuentr", "aparec", "veo", "trouv", "vois", "affich", "finde",
    "sehe", "erschein", "angezeigt", "trov", "vedo", "non compa", "encontr", "vejo", "vind", "zie", "znajd", "widz",
    "найти", "найд", "вижу", "видн", "появ", "找不到", "看不到", "不显示", "不顯示", "没有显示", "沒有顯示", "見つから",
    "見当たら", "表示されない", "見えない", "안 보", "못 찾", "보이지 않", "찾을 수 없",
)  # fmt: skip
_WORKING_OR_FINDING = (*WORKING_WORDS, *FINDING_WORDS)  # negated: the answer did not work
NEGATIONS = frozenset({
    "not", "no", "never", "nicht", "kein", "keine", "keinen", "nie", "ne", "pas", "jamais", "не", "нет", "non", "não",
    "nunca", "niet", "geen", "nooit", "안", "못",
})  # fmt: skip


MAX_ENDING = 3  # letters after a stem of Latin letters that still make a form of it: "working", "encuentran"


def _says(word: str, stem: str) -> bool:
    """`word` is a form of `stem`: the stem with an ending ("works", "trouvé", "появляется"), or, in a language
    written without spaces between words, anywhere in it ("找不到"). "workspace" and "network" are not "work"."""
    if has_cjk(stem):
        return stem in word
    return word.startswith(stem) and (not stem.isascii() or len(word) - len(stem) <= MAX_ENDING)


def _word_forms(text: str) -> list[str]:
    """The words of `text` as `_says` reads them: without punctuation, an elided article or pronoun split off
    ("s'affiche")."""
    return [w.strip("?!.,;:¿¡()\"") for token in text.split() for w in token.replace("'", " ").split()]


# "why", opening a question in every supported language ("¿por qué no ...?", "warum ...", "为什么 ..."): with a negation
# it asks about a fault ("why doesn't the remote pair?"), not for a way to do something
WHY_WORDS = (
    "why", "por qué", "porque", "warum", "wieso", "weshalb", "pourquoi", "почему", "perché", "perche", "por que",
    "waarom", "dlaczego", "为什么", "為什麼", "为啥", "なぜ", "どうして", "왜",
)  # fmt: skip


def asks_why(text: str) -> bool:
    """Whether `text` asks why: it opens with a "why" word (anywhere in it where words are not spaced)."""
    folded = text.lower().strip().lstrip("¿¡").replace("’", "'")
    return any(folded.startswith(w) if not has_cjk(w) else w in folded for w in WHY_WORDS)


# English contractions as chat is typed, without the apostrophe ("bot doesnt reply", "what if that doesnt work")
UNAPOSTROPHED_NEGATIONS = frozenset({
    "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "wont", "cant", "couldnt", "wouldnt", "shouldnt",
    "hasnt", "havent", "hadnt", "aint",
})  # fmt: skip


def negates(text: str) -> bool:
    """Whether `text` holds a negation ("doesn't", "doesnt", "no", "nicht", "не", "不") in any supported language."""
    folded = text.lower().replace("’", "'")
    words = [w.strip("?!.,;:()\"") for w in folded.split()]
    return any(w in NEGATIONS or w in UNAPOSTROPHED_NEGATIONS or w.endswith("n't") for w in words) or any(
        c in folded for c in "不没沒"
    )


def reports_failure(text: str) -> bool:
    """Whether `text` says something does not work, or is not there to be found (in any supported language)."""
    folded = text.lower().replace("’", "'")
    if any(w in folded for w in BROKEN_WORDS) or any(w in folded for w in FINDING_WORDS if has_cjk(w) or " " in w):
        return True
    return negates(folded) and any(_says(w, f) for w in _word_forms(folded) for f in _WORKING_OR_FINDING)


def failure_words(words: list[str]) -> list[str]:
    """The words of `words` that say what failed to work or to be found ("see" in "I don't see the option")."""
    return [w for w in words if any(_says(form, f) for form in _word_forms(w.lower()) for f in _WORKING_OR_FINDING)]


# a switch's two positions ("turn on" / "turn off", "einschalten" / "ausschalten", "aanzetten" / "uitzetten"), the
# verbs or stems the particle follows, and how far after its verb it may come ("turn the subtitles on")
SWITCH_PARTICLES = (("on", "off"), ("ein", "aus"), ("an", "aus"), ("aan", "uit"))
SWITCH_VERBS = ("turn", "switch", "power", "schalt", "mach", "zet", "doe")
SWITCH_REACH = 3

_YES_NO = {lang: re.compile(lex.yes_no, re.IGNORECASE) for lang, lex in _LEXICONS.items() if lex.yes_no}

# the thanking words of every language, longest first ("thank you" before "thank"); words that may come with them
# and ask nothing ("great, thanks, that worked!")
_THANKS = re.compile("|".join(
    re.escape(t) if has_cjk(t) else rf"(?<!\w){re.escape(t)}(?!\w)"
    for t in sorted({t for lex in _LEXICONS.values() for t in lex.thanks}, key=len, reverse=True)
))  # fmt: skip
CLOSING_WORDS = frozenset({
    "great", "perfect", "awesome", "cool", "nice", "worked", "works", "helped", "helps", "helpful", "much", "lot",
    "again", "ok", "okay", "super", "bot", "docbot", "genial", "perfecto", "parfait", "perfekt", "toll", "perfetto",
    "ottimo", "perfeito", "ótimo", "отлично", "супер", "prima", "top", "świetnie", "mille",
})  # fmt: skip
MAX_THANKS_WORDS = 8  # "thanks, that worked perfectly, much appreciated": longer messages say more than thanks


def only_thanks(text: str) -> bool:
    """Whether `text` thanks and asks or reports nothing ("thanks!", "great, thank you so much", "muchas gracias",
    "谢谢！"): a thanking word of any supported language, and besides it only function words and words that close a
    talk."""
    folded = text.lower().replace("’", "'")
    if "?" in folded or "？" in folded or reports_failure(folded) or len(folded.split()) > MAX_THANKS_WORDS:
        return False
    rest, found = _THANKS.subn(" ", folded)
    return found > 0 and all(word in CLOSING_WORDS for word in content_words(rest))


# the question words of languages whose questions do not open with them (Chinese, Japanese, Korean): anywhere counts
_UNSPACED_QUESTION_WORDS = tuple(dict.fromkeys(w for lex in _LEXICONS.values() for w in lex.question_words))


def asks_in_words_without_spaces(text: str) -> bool:
    """A question word of Chinese, Japanese or Korean anywhere in `text`, whatever the detected language
    ("这个是怎么包装的？", "重さは何キロですか？", "블루투스 헤드폰을 어떻게 연결하나요?")."""
    return has_cjk(text) and any(w in text for w in _UNSPACED_QUESTION_WORDS)


def asks_yes_no(text: str, lang: str | None = None) -> bool:
    """Whether `text` is a question answered by yes or no ("does it have Wi-Fi?"), by `lang`'s pattern, or any
    supported language's when `lang` has none (a short question's detected language is often wrong)."""
    own = _YES_NO.get(base_language(lang))
    patterns = [own] if own is not None and is_supported(lang) and lang is not None else list(_YES_NO.values())
    return any(p.search(text) for p in patterns)


_PRESENCE = {lang: (_YES_NO[lang], re.compile(lex.presence, re.IGNORECASE)) for lang, lex in _LEXICONS.items()
             if lex.presence and lang in _YES_NO}  # fmt: skip


def asks_presence(text: str) -> bool:
    """Whether `text` asks yes or no whether something is there ("does it have Bluetooth?", "hat er WLAN?",
    "有蓝牙吗？", "리모컨이 있나요?"), in any supported language, by that language's two patterns together: it asks
    for the thing, not for a number."""
    return any(yes_no.search(text) and has.search(text) for yes_no, has in _PRESENCE.values())


def after_presence(text: str, lang: str) -> str | None:
    """What follows the verb of a yes/no question in `lang` whether something is there ("a headphone port?" of "Does
    it have a headphone port?"), or None when `text` does not ask that in `lang`."""
    patterns = _PRESENCE.get(base_language(lang))
    if patterns is None or not patterns[0].search(text):
        return None
    found = patterns[1].search(text)
    return text[found.end() :] if found else None


_HOW_TO = {lang: re.compile(lex.how_to) for lang, lex in _LEXICONS.items() if lex.how_to}


def asks_how_to(text: str, lang: str | None) -> bool:
    """Whether `text` asks how to do something in `lang` (English when unknown): "how do I pair the remote?",
    "¿cómo emparejo el mando?", "遥控器怎么配对？", "steps to set up the hub"."""
    pattern = _HOW_TO.get(base_language(lang or "en"))
    return pattern is not None and pattern.search(text.casefold()) is not None


_HOW_MANY = tuple(re.compile(lex.how_many, re.IGNORECASE) for lex in _LEXICONS.values() if lex.how_many)


def how_many_of(text: str) -> str | None:
    """What `text` asks the number of, when it asks how many in any supported language: the text after the asking
    words ("HDMI ports does it have?" of "How many HDMI ports does it have?"); None for other questions."""
    for pattern in _HOW_MANY:
        found = pattern.search(text)
        if found is not None:
            return text[found.end() :]
    return None


_AMOUNT = tuple(re.compile(lex.amount, re.IGNORECASE) for lex in _LEXICONS.values() if lex.amount)
# words that only bound an amount asked for ("at most", "wie lange maximal?", "¿cuánto tiempo como máximo?")
EXTENT_WORDS = frozenset({
    "max", "maximum", "maximal", "maximale", "maximaal", "máximo", "máxima", "massimo", "massima", "maksymalnie",
    "максимум", "максимально", "min", "minimum", "minimal", "minimale", "minimaal", "mínimo", "mínima", "minimo",
    "minima", "минимум", "most", "least", "once", "exactly", "roughly", "approximately", "genau", "ungefähr",
    "exactamente", "aproximadamente", "exactement", "environ", "esattamente", "circa", "ongeveer", "precies",
    "dokładnie", "około", "точно", "примерно", "time", "zeit", "tiempo", "temps", "tempo", "tijd", "czasu", "времени",
    "最长", "最多", "最少", "最大", "最小", "大概", "最長", "최대", "최소", "대략",
})  # fmt: skip


def asks_only_an_amount(text: str) -> bool:
    """Whether `text` asks an amount and names at most one thing besides ("how long at most?", "how many at once?",
    "wie lange maximal?", "¿cuánto tiempo como máximo?", "how much space does it need?"), not counting the words that
    bound the amount: after another question, it asks that amount of what the question was about."""
    for pattern in _AMOUNT:
        found = pattern.search(text)
        if found is not None:
            rest = f"{text[: found.start()]} {text[found.end() :]}"
            return len([w for w in content_words(rest) if w.lower() not in EXTENT_WORDS]) <= 1
    return False


_OTHER = tuple(re.compile(lex.other, re.IGNORECASE) for lex in _LEXICONS.values() if lex.other)


def asks_for_something_else(text: str) -> bool:
    """Whether `text` asks for something besides what was given ("what else could it be?", "any other way?", "I
    replaced the batteries. what else?", "¿qué más puede ser?", "还有别的办法吗？"), naming at most one thing of its
    own in the sentence that asks: after another question, it asks that question again for what was not said yet."""
    for sentence in sentences(text) or [text]:
        for pattern in _OTHER:
            found = pattern.search(sentence)
            if found is not None:
                return len(content_words(f"{sentence[: found.start()]} {sentence[found.end() :]}")) <= 1
    return False


# words saying a step was taken before ("I already checked the sleep timer", "ya revisé", "habe ich schon", "已经"):
# a statement with one reports what was tried, and asks for what else there is (not Japanese "もう", also "again")
ALREADY_WORDS = (
    "already", "ya", "schon", "bereits", "déjà", "già", "já", "уже", "już", "已经", "已經", "すでに", "既に", "이미",
)  # fmt: skip


def already_tried(text: str) -> bool:
    """Whether `text` is a statement saying what was already tried ("I already checked the sleep timer", "ya revisé
    el temporizador", "已经换过电池了"): after a question it asks for the rest of the answer."""
    if "?" in text or "？" in text:
        return False
    folded = text.casefold()
    forms = set(_word_forms(folded))
    return any(w in folded if has_cjk(w) else w in forms for w in ALREADY_WORDS)


# every supported language's function words ("I", "Does", "der", "как"): never a name, never a topic
FUNCTION_WORDS: frozenset[str] = frozenset().union(*(lex.stopwords for lex in _LEXICONS.values()))
_ANY_SKIP = FUNCTION_WORDS.union(*(lex.deictics for lex in _LEXICONS.values()))


# runs of Han characters, of katakana (with its prolonged-sound mark) or of Hangul syllables, two or more long
CJK_CONTENT_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}|[\u30a0-\u30ff]{2,}|[\uac00-\ud7af]{2,}")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # Han and kana
HANGUL = re.compile(r"[\uac00-\ud7a3]")
# a Korean word apart from the Latin letters or digits glued to it ("TV를": "TV", "를")
_HANGUL_OR_OTHER = re.compile(r"[\uac00-\ud7a3]+|[^\W_\uac00-\ud7a3]+(?:['’][^\W_\uac00-\ud7a3]+)?")
_KOREAN_SKIP = ko.LEXICON.stopwords | frozenset(ko.LEXICON.deictics) | ko.ENDINGS
# Korean words opening with a question word are questions, not topics ("어떻게요", "무엇인가요"; not "왜곡")
_KOREAN_ASKING = tuple(w for w in ko.LEXICON.question_words if len(w) > 1)
# the lexicons of the languages written without spaces (Chinese, Japanese): read by phrases, not words
_UNSPACED_LEXICONS = tuple(lex for lex in _LEXICONS.values() if lex.stop_phrases)
UNSPACED_DEICTICS: tuple[str, ...] = tuple(
    sorted({d for lex in _UNSPACED_LEXICONS for d in lex.deictics}, key=len, reverse=True)
)
_UNSPACED_STOP = sorted(
    {p for lex in _UNSPACED_LEXICONS for p in (*lex.stop_phrases, *lex.deictics)}, key=len, reverse=True
)
_UNSPACED_SPLIT = re.compile("|".join(re.escape(p) for p in _UNSPACED_STOP))


def written_without_spaces(text: str) -> bool:
    """Whether `text` holds Han characters or kana (Chinese, Japanese): read by phrases, its topic set without a
    space. Korean (Hangul) is spaced."""
    return _UNSPACED.search(text) is not None


def is_korean(text: str) -> bool:
    return HANGUL.search(text) is not None and not written_without_spaces(text)


def topic_form(word: str) -> str:
    """How `word` counts as a topic word: a Korean word without its particle or ending ("리모컨을" -> "리모컨"), any
    other word as it is."""
    return ko.stem(word) if HANGUL.match(word) else word


def phrases_pointing_back(text: str) -> list[tuple[int, str]]:
    """(position, word) of each word pointing back ("它", "それ") in a text written without spaces, leaving out the
    longer phrases that only hold one ("それとも", "これから")."""
    masked = text
    for phrase in _UNSPACED_STOP:
        if phrase not in UNSPACED_DEICTICS and any(d in phrase for d in UNSPACED_DEICTICS):
            masked = masked.replace(phrase, "\0" * len(phrase))
    found: list[tuple[int, str]] = []
    for word in UNSPACED_DEICTICS:
        at = masked.find(word)
        if at >= 0:
            found.append((at, word))
    return found


def content_words(text: str, lang: str | None = None) -> list[str]:
    """Words that can carry a topic: not function words, generic verbs or pointing words, in order.

    With `lang` None, a word that is a function word in any supported language is skipped (for mixed threads).

    Text in a script without spaces (Chinese, Japanese) is cut at the stop phrases of those languages' lexicons; the
    remaining runs of two or more Han characters are its content words, and so are runs of katakana (Japanese
    loanwords: "テレビ", "スリープタイマー") and of Hangul; hiragana is Japanese grammar, not a topic. A Korean word
    counts without its particle or ending (`topic_form`), unless it is one of Korean's function words.
    """
    lex = lexicon(lang)
    skip = _ANY_SKIP if lang is None else lex.stopwords | frozenset(lex.deictics)
    if written_without_spaces(text):
        pieces = _UNSPACED_SPLIT.split(text)
        found: list[str] = []
        for piece in pieces:
            found.extend(CJK_CONTENT_RUN.findall(piece))
            found.extend(w for w in tokens(piece) if not has_cjk(w) and w not in skip and len(w) > 1)
        return found
    if HANGUL.search(text):
        words: list[str] = []
        for word in _HANGUL_OR_OTHER.findall(text):
            if not HANGUL.match(word):
                low = word.lower()
                if low not in skip and len(low) > 1 and not low.isdigit():
                    words.append(low)
                continue
            stem = ko.stem(word)
            if word in _KOREAN_SKIP or stem in _KOREAN_SKIP or word.startswith(_KOREAN_ASKING):
                continue
            if len(stem) > 1 or stem != word:  # a one-syllable word alone is a particle or a sound ("앱을": "앱")
                words.append(stem)
        return words
    return [w for w in tokens(text) if w not in skip and len(w) > 1 and not w.isdigit()]
