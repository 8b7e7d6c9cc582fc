"""lang: which language the person writes in (lingua, over a bounded set of languages).

Identifiers, code, URLs and product names do not vote: "what does DOCBOT_ROLE_QUEUE_LIMIT do?" is judged on
"what does do?". Short texts ("ok", "and the TV?") say little about their language, so the thread's language and
the docs' language weigh as priors, and a text of only names takes the thread's (else the docs') language. Text in
a script none of the supported languages uses (Arabic, Hebrew, Devanagari, Thai, Greek...) is reported with its
own code (`ar`, ...), so the answer can say in English that this language is not supported. lingua has one Chinese;
a Chinese text written in Traditional characters is reported as `zh-Hant` (`pipeline.locales.chinese.script`), so
its replies are in Traditional characters too.

lingua reads letter n-grams, so a short question of a few borrowed-looking words can sway it ("Is it vesa
compatible?": Spanish at 0.55; "como conecto los auriculares bluetooth?": English at 0.998). When it is unsure, and
whenever the text is short, the text's function words (the `stop-words` package's lists with docbot's own lexicons,
`function_words`) get a second say: a text whose words are clearly one language's function words is in that
language, one that opens a question or an exclamation with "¿" or "¡" is Spanish, and of two languages lingua all
but ties, the one with more function words wins.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

from lingua import IsoCode639_1, Language, LanguageDetector, LanguageDetectorBuilder
from stop_words import StopWordError, get_stop_words

from pipeline.agents.base import OfflineResult, Strategy, keep_or_overrule
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import FUNCTION_WORDS, SUPPORTED, base_language, is_supported, lexicon
from pipeline.locales.chinese import SIMPLIFIED_CHINESE, in_its_script, is_chinese
from pipeline.text import (
    has_cjk,
    one_line,
    strip_mentions,
    tokens,
    without_identifiers,
    without_names,
    word_count,
    written_in_another_script,
)
from pipeline.types import Role

# Names that read as words of some language but are the same in all: they must not vote.
PRODUCT_NAMES = frozenset({
    "slack", "discord", "pinecone", "docbot", "ollama", "vllm", "openai", "azure", "postgresql", "postgres", "sqlite",
    "llama.cpp", "kubernetes", "docker", "github", "markdown", "html", "json", "jsonl", "yaml", "python", "alembic",
    "lingua", "bm25", "gpt", "http", "https", "api", "url",
})  # fmt: skip
_CAMEL = re.compile(r"\b[A-Za-z]+[a-z][A-Z][A-Za-z0-9]*\b|\b[A-Z]{2,}[a-z]*\b")
# Scripts of languages without templates; each maps to an ISO code for the notice.
_SCRIPTS = (
    ("ar", re.compile(r"[\u0600-\u06ff\u0750-\u077f]")), ("he", re.compile(r"[\u0590-\u05ff]")),
    ("hi", re.compile(r"[\u0900-\u097f]")), ("th", re.compile(r"[\u0e00-\u0e7f]")),
    ("el", re.compile(r"[\u0370-\u03ff]")), ("hy", re.compile(r"[\u0530-\u058f]")),
    ("ka", re.compile(r"[\u10a0-\u10ff]")), ("bn", re.compile(r"[\u0980-\u09ff]")),
)  # fmt: skip
MIN_VOTING_WORDS = 3  # names are left out of the vote only when this many words of the person's own remain
SHORT_TEXT_WORDS = 8
GUESS_WORDS = 2  # up to this many words, a language without templates must be sure to be taken
# The languages a word or two may be taken in on the detector's guess alone: the ones with templates when that rule was
# measured (lang bench, stop 37). The ones with templates since share many words with English ("antenna?": Italian
# 0.76, "browser?": Dutch 0.61, "token?": Dutch 0.72): a word or two guessed to be in one of them is taken only with a
# function word of that language that the thread's or docs' language does not have ("grazie", "werkt het?").
GUESSED_ALONE = frozenset({"en", "es", "de", "fr", "ru", "zh"})
DOCS_PRIOR = 1.6
PLAUSIBLE = 0.1  # a short text's fallback language needs this much of the detector's confidence (lang bench, tune half)
THREAD_PRIOR = 2.0
# the function-word vote (chosen on the lang bench's tune half and the real shoppers' English questions):
FUNCTION_SHARE = 0.3  # this share of the words are one language's function words ...
FUNCTION_LEAD = 3.0  # ... this many times the share of the detected language's ...
FUNCTION_MIN_WORDS = 2  # ... and at least this many ("roku" alone is a Polish function word)
TIE_MARGIN = 0.05  # the detector's two best this close are a tie, which their function words break
INVERTED_MARKS = frozenset("¿¡")  # of the supported languages only Spanish writes them ("¿La tele tiene panel IPS?")


def voting_text(text: str) -> str:
    """`text` without what says nothing about its language: URLs, code spans, identifiers, product names, and the
    words written as names ("Bluetooth", "Amazon Fire" mid-sentence; any Latin word in a Chinese or Russian text):
    lingua read "Come collego le cuffie Bluetooth al televisore?" as English (0.99) because of one brand."""
    text = _CAMEL.sub(" ", without_identifiers(text))
    unnamed = without_names(text, FUNCTION_WORDS)
    # names are left out when enough remains to tell the language: three words of the person's own, or words that
    # are all function words (lingua read "Tiene Bluetooth?" as English at 0.99 for the brand; "Hat der Fernseher
    # WLAN?" is German by "hat der"), since a German noun is capitalised too ("Kabellose Kopfhörer?" keeps both); in
    # another script every Latin word is a name, however few words remain ("Orbit Voice有蓝牙吗？" is Chinese)
    enough = word_count(unnamed) >= MIN_VOTING_WORDS or _only_function_words(unnamed)
    text = unnamed if enough or written_in_another_script(unnamed) else text
    kept = [w for w in text.split() if w.strip("?!.,;:()\"'¿¡؟？。،").lower() not in PRODUCT_NAMES]
    return " ".join(kept)


def _only_function_words(text: str) -> bool:
    """Whether `text` has words and every one is a function word of some supported language ("Tiene", "Hat der")."""
    words = tokens(text)
    return bool(words) and all(w in FUNCTION_WORDS for w in words)


@lru_cache(maxsize=32)
def function_words(code: str) -> frozenset[str]:
    """`code`'s function words: the `stop-words` package's list (none when it has no list for `code`) with docbot's
    own lexicon's words added, less the words another supported language's lexicon lists and `code`'s does not. The
    package's English list holds 1,300 words, among them country codes and Latin ("de", "es", "it", "et", "al",
    "come"), which gave English a vote in every Romance question."""
    try:
        listed = frozenset(get_stop_words(code))
    except StopWordError:
        listed = frozenset()
    own = lexicon(code).stopwords if is_supported(code) else frozenset()
    others = frozenset().union(*(lexicon(m).stopwords for m in SUPPORTED if base_language(m) != code))
    return (listed - (others - own)) | own


def _voting_words(text: str) -> list[str]:
    return [w.lower() for w in tokens(text) if not w.isdigit()]


def _function_word_counts(words: Sequence[str], languages: Sequence[str]) -> dict[str, int]:
    """How many of `words` each of `languages` counts among its function words."""
    return {code: sum(w in function_words(code) for w in words) for code in languages}


def function_word_language(text: str, languages: Sequence[str], detected: str | None) -> str | None:
    """The language of `languages` whose function words are most of `text`'s words, when it is not `detected` and
    leads clearly: alone in front, with at least `FUNCTION_SHARE` of the words, `FUNCTION_MIN_WORDS` of them, and
    `FUNCTION_LEAD` times the share of `detected`'s function words. When the detector placed the text in no language
    (`detected` None: "C'è ?", "Y a-t-il le ?"), being alone in front with one of them is enough. None otherwise, and
    for texts with Chinese, Japanese or Korean characters (the tokens are single characters there, not the lists'
    words)."""
    words = _voting_words(text)
    if not words or has_cjk(text):
        return None
    counts = _function_word_counts(words, languages)
    ranked = sorted(counts.values(), reverse=True)
    best = max(counts, key=lambda code: counts[code])
    least = max(FUNCTION_MIN_WORDS, FUNCTION_SHARE * len(words)) if detected is not None else 1
    clear = ranked[0] >= least and ranked[1:2] != ranked[:1]
    if best == detected or not clear or (detected is not None and ranked[0] < FUNCTION_LEAD * counts.get(detected, 0)):
        return None
    return best


def function_word_tie_break(text: str, detected: Sequence[tuple[str, float]]) -> str | None:
    """Of the detector's two best languages, when they are all but tied (`TIE_MARGIN`), the one with more of its
    function words in `text` ("comment connecter un casque bluetooth ?": English 0.485, French 0.484; "comment" and
    "un" are French function words, "un" alone English); None when they are not tied or have as many."""
    if len(detected) < 2 or detected[0][1] - detected[1][1] > TIE_MARGIN or has_cjk(text):
        return None
    (first, _), (second, _) = detected[:2]
    counts = _function_word_counts(_voting_words(text), (first, second))
    if counts[first] == counts[second]:
        return None
    return first if counts[first] > counts[second] else second


def shows_its_function_words(text: str, language: str, other: str) -> bool:
    """Whether a word of `text` is a function word of `language` (its lexicon's) and not one of `other`'s."""
    own = lexicon(language).stopwords - lexicon(other).stopwords if is_supported(language) else frozenset()
    return any(w in own for w in tokens(text))


def asks_in_spanish(text: str, languages: Sequence[str]) -> bool:
    """Whether `text` opens a question or an exclamation with "¿" or "¡", which of the supported languages only
    Spanish writes, and its words are not clearly another language's ("¿this tv has dolby atmos?" is English)."""
    if "es" not in languages or not INVERTED_MARKS & set(text):
        return False
    return function_word_language(text, languages, "es") is None


def unsupported_script(text: str) -> str | None:
    """The code of a language without templates when most letters are in its script."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return None
    for code, script in _SCRIPTS:
        if len(script.findall(text)) * 2 > len(letters):
            return code
    return None


DEFAULT_LANGUAGES: tuple[str, ...] = ("en", "es", "de", "fr", "ru", "zh", "pt", "it", "ja", "ko", "uk", "pl", "nl")
JUDGE_CANDIDATES = 3  # the screen's best languages the judge weighs (with the priors)
SCREEN_SURE = 0.9  # a screen verdict this sure for a prior language (thread or docs) is taken as it is
LONG_TEXT_CHARS = 120  # past this, lingua's low-accuracy mode is as accurate as the high one (its documentation)


def detector_code(language: str) -> str:
    """The detector's code for a language we may already know (the thread's, the docs'): lingua has one Chinese,
    "zh", for both scripts, so "zh-Hant" (or "zh-TW") weighs as "zh"."""
    return SIMPLIFIED_CHINESE if is_chinese(language) else language


def _language(code: str) -> Language:
    return Language.from_iso_code_639_1(IsoCode639_1.from_str(code))


@lru_cache(maxsize=4)
def build_detector(languages: tuple[str, ...] = DEFAULT_LANGUAGES, low_accuracy: bool = False) -> LanguageDetector:
    """A detector over `languages` with every model preloaded (once per process and language set). Blocking: in
    high-accuracy mode ~1-7 s and ~280 MB for the default 13 languages; in low-accuracy mode ~0.2 s and ~30 MB."""
    builder = LanguageDetectorBuilder.from_languages(*map(_language, languages)).with_preloaded_language_models()
    if low_accuracy:
        builder = builder.with_low_accuracy_mode()
    return builder.build()


OVERRULE_MODEL_FROM = 0.75  # the detector's confidence from which it overrules a model's different language


@lru_cache(maxsize=64)
def _judge(candidates: frozenset[str]) -> LanguageDetector:
    """A high-accuracy detector over a few candidate languages. Its models load on first use and stay in lingua's
    process-wide cache, shared by every judge: only the languages questions actually raise are ever loaded
    (20-80 MB each) instead of all of them."""
    return LanguageDetectorBuilder.from_languages(*map(_language, sorted(candidates))).build()


def _ranked(detector: LanguageDetector, text: str) -> list[tuple[str, float]]:
    values = detector.compute_language_confidence_values(text)
    return [(v.language.iso_code_639_1.name.lower(), float(v.value)) for v in values if v.value > 0]


def confidence_values(
    text: str, languages: tuple[str, ...], priors: Sequence[str], *, low_accuracy: bool = False
) -> list[tuple[str, float]]:
    """Languages of `text`, best first, with confidences (blocking).

    A low-accuracy screen over every supported language (trigram models, ~30 MB) answers when it is sure the
    text is in a prior language (the thread's or the docs'), or when the text is long enough for it to be as
    accurate as the high-accuracy mode. Otherwise a high-accuracy judge weighs the screen's few best languages and
    the priors. So the high-accuracy models of a language load only once a question is close to it: a process
    whose people write in the docs' language holds the screen and few or none of them."""
    screen = _ranked(build_detector(languages, True), text)
    if not screen or low_accuracy or len(text) >= LONG_TEXT_CHARS:
        return screen
    best, confidence = screen[0]
    if best in priors and confidence >= SCREEN_SURE:
        return screen
    candidates = frozenset(
        [code for code, _ in screen[:JUDGE_CANDIDATES]] + [code for code in priors if code in languages]
    )
    if len(candidates) == 1:
        return screen
    return _ranked(_judge(candidates), text)


class LangAgent:
    role: ClassVar[Role] = Role.LANG

    def __init__(
        self,
        languages: Sequence[str] = DEFAULT_LANGUAGES,
        *,
        short_words: int = 4,
        sure: float = 0.9,
        min_confidence: float = 0.5,
        low_accuracy: bool = False,
        llm: Strategy | None = None,
    ) -> None:
        self._languages = tuple(languages)
        self._short_words = short_words
        self._sure = sure
        self._min_confidence = min_confidence
        self._low_accuracy = low_accuracy
        self._llm = llm

    async def warm_up(self) -> None:
        """Build the screen off the event loop now rather than on the first question (~0.2 s; the judge's models
        load when a question needs them)."""
        await asyncio.to_thread(build_detector, self._languages, True)

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        return await keep_or_overrule(payload, context, self._offline, self._llm, self._overrule)

    @staticmethod
    async def _overrule(model: AgentResult, offline_result: OfflineResult) -> str | None:
        # A model's language is taken unless the detector is fairly sure of another one: a 135M model called a
        # French question English (the detector: fr 0.87), and it then got an English "not covered" instead of its
        # answer. A short English question the detector only guesses from the docs' language (0.59) stays the
        # model's call.
        offline = await offline_result()
        found, detected = model.payload.language, offline.payload.language
        if detected == found or (offline.payload.confidence or 0.0) < OVERRULE_MODEL_FROM:
            return None
        return f"llm said {found}; the detector is fairly sure"

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        text = one_line(strip_mentions(payload.text))
        foreign = unsupported_script(voting_text(text))  # "ما هو docbot؟": the product's name does not vote
        if foreign is not None:
            result = payload.evolve(language=foreign, confidence=1.0)
            return AgentResult(result, f"language={foreign} (script; no templates, answered in English)")
        earlier = " ".join(m.text for m in context.history if not m.from_bot)[-1000:]
        voting = voting_text(text)
        docs_language = detector_code(context.docs_language)  # as the detector says it: "zh" for "zh-Hant"
        known = payload.language or context.docs_language  # the Chinese script of a text that does not show its own
        thread_language: str | None = None
        if earlier.strip():
            thread_language, _ = await asyncio.to_thread(
                self._detect, voting_text(one_line(strip_mentions(earlier))), (docs_language,)
            )
        thread_language = thread_language or (detector_code(payload.language) if payload.language else None)
        if not voting.strip() or not any(ch.isalpha() for ch in voting):
            language = in_its_script(thread_language or docs_language, text, earlier=earlier, known=known)
            result = payload.evolve(language=language, confidence=0.5)
            return AgentResult(result, f"language={language} (only names and code: thread or docs language)")
        likely = tuple(dict.fromkeys(p for p in (thread_language, docs_language) if p))
        values = await asyncio.to_thread(self._values, voting, likely)
        detected = list(values)  # as the detector ranks them, before the thread's and docs' priors
        source = "text"
        if values and word_count(voting) < SHORT_TEXT_WORDS and values[0][1] < self._sure:
            priors = {docs_language: DOCS_PRIOR}
            if thread_language:
                priors[thread_language] = priors.get(thread_language, 1.0) * THREAD_PRIOR
            weighted = sorted(((lang, conf * priors.get(lang, 1.0)) for lang, conf in values), key=lambda v: -v[1])
            source = "short text; thread history and docs priors" if thread_language else "short text; docs prior"
            raw = dict(values)
            values = [(weighted[0][0], raw[weighted[0][0]])]
            fallback = thread_language or docs_language
            # a word or two the detector cannot place takes the thread's or docs' language, unless the detector all
            # but rules that language out ("Ela conecta no sem fio?": pt 0.48, es 0.46, en 0.04), or, outside a
            # thread, the words are its guess's own function words ("Tem Bluetooth?": "tem", pt 0.40, en 0.14); in
            # a thread a word or two goes on in the thread's language ("and E-3307?" in a Spanish thread)
            guessed = values[0][0]
            own_words = thread_language is None and guessed != fallback
            own_words = own_words and shows_its_function_words(voting, guessed, fallback)
            if values[0][1] < self._min_confidence and raw.get(fallback, 0.0) >= PLAUSIBLE and not own_words:
                values = [(fallback, values[0][1])]
                source = "thread history" if thread_language else "default"
        if not values:
            language, confidence, source = thread_language or docs_language, 0.0, "default"
        else:
            language, confidence = values[0]
        unsure = confidence < self._sure
        # a short text's one loanword sways lingua however sure it says it is ("como conecto los auriculares
        # bluetooth?": English 0.998): its function words get the same say as when it is unsure
        short = word_count(voting) < SHORT_TEXT_WORDS
        placed = language if detected else None  # None: the detector placed it nowhere, `language` is a fallback
        by_function_words = function_word_language(voting, self._languages, placed) if unsure or short else None
        tie_broken = function_word_tie_break(voting, detected) if unsure and by_function_words is None else None
        if by_function_words is not None:
            language, source = by_function_words, f"function words; the detector said {language}"
        elif unsure and language != "es" and asks_in_spanish(voting, self._languages):
            language, source = "es", f"¿ or ¡; the detector said {language}"
        elif tie_broken is not None and tie_broken != language:
            language, source = tie_broken, f"function words break the detector's tie; it said {language}"
        fallback = thread_language or docs_language
        if word_count(voting) <= GUESS_WORDS and unsure and not self._guessable(voting, language, fallback):
            # "token?" reads as Dutch (0.72): a word or two only guessed to be in a language without templates is
            # answered in English all the same, so the thread's or docs' language spares a wrong "not supported" line;
            # and one guessed to be in a language with templates since is taken only with its function words
            language, source = fallback, "a guess without templates or function words; thread or docs"
        language = in_its_script(language, text, earlier=earlier, known=known)
        result = payload.evolve(language=language, confidence=round(confidence, 3))
        return AgentResult(result, f"language={language} ({confidence:.2f}, from {source})")

    @staticmethod
    def _guessable(text: str, language: str, fallback: str) -> bool:
        """Whether a word or two only guessed to be in `language` may be taken in it (see `GUESSED_ALONE`)."""
        return language in GUESSED_ALONE or language == fallback or shows_its_function_words(text, language, fallback)

    def _values(self, text: str, priors: Sequence[str]) -> list[tuple[str, float]]:
        return confidence_values(text, self._languages, priors, low_accuracy=self._low_accuracy)

    def _detect(self, text: str, priors: Sequence[str]) -> tuple[str | None, float]:
        if not text.strip():
            return None, 0.0
        values = self._values(text, priors)
        return values[0] if values else (None, 0.0)
