"""essence: one self-contained canonical question from the thread.

Offline it follows the thread's topic message by message: a message with words of its own sets the topic; a
follow-up that points back ("how does it work?", "¿cómo funciona?", "как это работает?", "它怎么用？") gets the
topic put in place of the pointing word, or added when the language drops it. A question with nothing to go on
("it doesn't work", "help") and no topic in the thread asks to clarify. A reply to a clarification (the payload
arrives with the pending question as `canonical_question`) is combined with that question.

An elliptical follow-up ("and for Discord?", "what about Socket Mode?", "¿y para Discord?") repeats the previous
question with the new name in place of the one it replaces: the matching kind of name (an identifier for an
identifier, a name sharing a word, a capitalised name), else the previous question's topic. A vague message
("it doesn't work") inside a thread with a topic still asks to clarify, with the topic in the question, so the
choices come from that topic's sections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from pipeline import text as textutil
from pipeline.agents.base import OfflineResult, Strategy, keep_or_overrule
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import (
    CJK_CONTENT_RUN,
    SWITCH_PARTICLES,
    SWITCH_REACH,
    SWITCH_VERBS,
    all_lexicons,
    already_tried,
    asks_for_something_else,
    asks_in_words_without_spaces,
    asks_only_an_amount,
    content_words,
    failure_words,
    is_korean,
    lexicon,
    only_thanks,
    phrases_pointing_back,
    reports_failure,
    texts,
    topic_form,
    written_without_spaces,
)
from pipeline.locales.ko import marked_noun, particle_after
from pipeline.text import CODE, QUESTION_WORDS, identifiers, looks_like_question, one_line, sentences, strip_mentions
from pipeline.types import ClarificationReason, ContextType, HistoryMessage, Role

# a word (a Korean one apart from the Latin letters glued to it: "TV를") or a mark
# a hyphenated word is one ("Wi-Fi", "sous-titres", "HDMI-CEC"): cut at the hyphen, its last part became the topic
_WORD_OR_MARK = re.compile(r"[\uac00-\ud7a3]+|[^\W_\uac00-\ud7a3]+(?:['’-][^\W_\uac00-\ud7a3]+)*|[^\w\s]")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_LATIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9+\-]*[A-Za-z0-9+]|[A-Za-z]")
_TAIL = re.compile(r"^(.*?)([\s?!.。？！…]*)$", re.S)
MAX_TOPIC_WORDS = 4
# a message pointing back with this many words of its own or fewer is about the thread's topic ("how far away does
# it work from the TV?"); with more it says enough to be a question of its own (tune threads of the follow-up set)
MAX_POINTING_WORDS = 3
MAX_BARE_VERB_CHARS = 2  # "关掉", "删除", "オフ": a verb without its object, in a script without spaces
# determiners said with a topic ("the remote", "il telecomando"); demonstratives are not ("that port": "port")
_DEMONSTRATIVES = {"this", "that", "das", "dit", "dat", "deze", "questo", "questa", "quello", "quella", "esse", "essa",
                   "este", "esta", "ten", "ta", "te", "to", "그", "이", "저"}  # fmt: skip
_DETERMINERS = frozenset().union(*(lex.determiners for lex in all_lexicons().values())) - _DEMONSTRATIVES


# Openers of an elliptical follow-up, per language: what follows is the new name for the previous question.
# Each optional word ends at a word's end: "und Internet?" is not "und in" + "ternet", "а выключить?" not "а в" + ...
_ELLIPSIS = re.compile(
    r"^\s*(?:and|or|but|also)?\s*(?:what|how)\s+about\s+|^\s*(?:and|or)\s+(?:for|in|on|with|the|if|what\s+about)?\b\s*"
    r"|^\s*[¿]?\s*(?:y|e)\s+(?:para|en|con|el|la|los|las|qué\s+tal|qué\s+hay\s+de|per|nel|nella|in|il|lo|gli|le"
    r"|su|sul|sulla|no|na|nos|nas|em|com|o|a|os|as|sobre|quanto\s+a)?\b\s*"
    r"|^\s*(?:und|oder)\s+(?:für|bei|in|mit|was\s+ist\s+mit|der|die|das)?\b\s*|^\s*was\s+ist\s+mit\s+"
    r"|^\s*et\s+(?:pour|dans|avec|le|la|les|sur)?\b\s*|^\s*(?:qu'en\s+est-il\s+de|quid\s+de)\s+"
    r"|^\s*а\s+(?:для|в|с|как\s+насч[её]т)?\b\s*|^\s*как\s+насч[её]т\s+"
    r"|^\s*en\s+(?:voor|met|in|op|bij|de|het)?\b\s*|^\s*wat\s+dacht\s+je\s+van\s+"
    r"|^\s*a\s+(?:dla|w|we|na|z|ze|do|co\s+z|jak\s+z)\s+|^\s*(?:co|jak)\s+z\s+"
    r"|^\s*(?:那|那么|那麼)\s*",
    re.IGNORECASE,
)
MAX_ELLIPSIS_WORDS = 4
# "iPad呢？", "iPadでは？", "아이패드는요?": Chinese, Japanese and Korean say "what about X?" with a particle after X;
# Japanese "は" and "には" also end questions of their own ("止めるには？"), so there X must be a name
_ELLIPSIS_TAIL = re.compile(
    r"^\s*(?:那|那么|那麼)?\s*(?P<zh>[^?？]{1,30}?)\s*呢\s*[?？]?\s*$"
    r"|^\s*(?P<ja>[A-Za-z0-9][A-Za-z0-9+\- ]{0,29}|[\u30a0-\u30ff]{2,20})\s*(?:では|の場合は|は)\s*[?？]\s*$"
    r"|^\s*(?P<ko>[^?？\s][^?？]{0,29}?)(?:는요|은요)\s*[?？]?\s*$"
)
# words that only stress a bare question word ("how exactly?", "wie genau?", "¿cómo exactamente?")
_EMPHASIS = frozenset({"exactly", "so", "then", "genau", "denn", "exactamente", "exactement", "donc", "esattamente",
                       "exatamente", "именно", "же", "precies"})  # fmt: skip
# a message that goes on from the previous question: "and ...", "also ...", "y ...", "und ...", "et ...", "а ..."
_CONTINUES = re.compile(
    r"^\s*[¿]?\s*(?:and|also|but|then|y|e|además|und|auch|et|aussi|puis|а|и|ещё|еще|também|anche|poi|en|ook|"
    r"oraz|także|również|那|还有|還有|另外)\b",
    re.IGNORECASE,
)


# a condition put to the last question ("and if the docs are in german too?", "what if I can't open a port?", "¿y si
# no tengo internet?"): the words that open one, in the supported languages (a bare "si", "als", "wenn" opens other
# things too: "si può ...?", "als Admin ...")
_IF_OPENERS = re.compile(
    r"^\s*[¿]?\s*(?:(?:and|but|what|so)\s+if|y\s+si|pero\s+si|qu[ée]\s+pasa\s+si|et\s+si|mais\s+si|und\s+wenn|"
    r"aber\s+wenn|was(?:\s+ist)?,?\s+wenn|e\s+se|ma\s+se|mas\s+se|en\s+als|maar\s+als|wat\s+als|a\s+(?:co\s+)?jeśli|"
    r"а\s+(?:что\s+)?если)\b|^\s*(?:那如果|如果|要是|もし|만약)",
    re.IGNORECASE,
)


def _past_opener(question: str) -> str:
    """`question` without the word that goes on from the last question ("and off?": "off?")."""
    opener = _CONTINUES.match(question)
    return question[opener.end() :] if opener else question


def elliptical_phrase(text: str, language: str | None = None) -> str | None:
    """The new name of an elliptical follow-up ("and for Discord?" -> "Discord"), or None for other messages."""
    match = _ELLIPSIS.match(text)
    tail = _ELLIPSIS_TAIL.match(text)
    if (match is None or match.end() == 0) and tail is None:
        return None
    if tail is not None:  # the particle closes it, whatever opens it ("那iPad呢？")
        name = next(key for key, group in tail.groupdict().items() if group is not None)
        rest, opener = tail.group(name).strip(), len(text[: tail.start(name)].strip())
    else:
        assert match is not None
        rest, opener = text[match.end() :].strip().rstrip("?!.。？！ ").strip(), len(match.group(0).strip())
    if rest and _is_infinitive(rest.split()[0].strip(",;:"), language):
        return None  # "¿y para desactivarlos?", "а выключить?": another action on the same thing, not a new name
    words = {w.lower() for w in _WORD.findall(rest)}
    pointing = set().union(*(lex.deictics for lex in all_lexicons().values()))
    asks = words & QUESTION_WORDS or asks_in_words_without_spaces(rest)  # "那怎么关？": "then how to turn it off?"
    if not rest or len(rest.split()) > MAX_ELLIPSIS_WORDS or words & pointing or asks:
        return None  # "¿y eso para qué sirve?": a question of its own that points back, not a new name
    if reports_failure(rest):
        return None  # "¿y si no funciona?", "а если не получается?": the answer did not work, not a new name
    if written_without_spaces(text) and _opens_pointing_back(text.lstrip(), opener):
        return None  # "那个怎么关掉？", "那個怎麼關掉？": "that one" points back; not the opener "那" ("what about")
    return rest


def _opens_pointing_back(text: str, opener: int) -> bool:
    """Whether `text` (written without spaces) opens with a word pointing back that is longer than its `opener`."""
    return any(at == 0 and len(word) > opener for at, word in phrases_pointing_back(text))


def _names(question: str) -> list[str]:
    """Names in a question, most specific first: identifiers, then capitalised words other than the first."""
    found = sorted(identifiers(question), key=len, reverse=True)
    words = [m.group(0) for m in _WORD.finditer(question)]
    capitalised = [
        w for i, w in enumerate(words)
        if len(w) > 1 and ((w[:1].isupper() and i > 0) or any(c.isupper() for c in w[1:])) and w not in found
    ]  # fmt: skip
    return found + capitalised


def _span_ending_with(previous: str, last_word: str, size: int) -> str | None:
    """The `size` words of `previous` that end with `last_word` ("HTTP mode" for "Socket Mode")."""
    words = list(_WORD.finditer(previous))
    for index, word in enumerate(words):
        if word.group(0).lower() == last_word.lower() and index + 1 >= size:
            return previous[words[index + 1 - size].start() : word.end()]
    return None


def _trailing_phrase(previous: str, size: int) -> str | None:
    """The last run of up to `size` content words of `previous` (its noun phrase, in most questions), past the
    function words that may close the question: a verb's particle ("Hoe sluit ik een toetsenbord aan?", "Wie
    schalte ich die Untertitel ein?"), "again", "to it"."""
    words = list(_WORD.finditer(previous))
    content = set(content_words(previous))
    while words and words[-1].group(0).lower() not in content:
        words.pop()
    run: list[re.Match[str]] = []
    for word in reversed(words):
        if word.group(0).lower() not in content or len(run) == size:
            break
        run.insert(0, word)
    return previous[run[0].start() : run[-1].end()] if run else None


MAX_NOUN_PHRASE = 3  # content words after an article that name one thing ("the slack app")


def _phrase_after(previous: str, determiner: str) -> str | None:
    """The content words right after the last `determiner` of `previous` ("phone" of "connect my phone to the tv"
    for "my"), at most `MAX_NOUN_PHRASE` of them; None when it has no such determiner."""
    words = list(_WORD.finditer(previous))
    content = set(content_words(previous))
    for index in range(len(words) - 1, -1, -1):
        if words[index].group(0).lower() != determiner.lower():
            continue
        run = []
        for word in words[index + 1 : index + 1 + MAX_NOUN_PHRASE]:
            if word.group(0).lower() not in content:
                break
            run.append(word)
        return previous[run[0].start() : run[-1].end()] if run else None
    return None


def _one_thing(previous: str, phrase: str, language: str | None) -> bool:
    """Whether the last `phrase` of `previous` names one thing: it comes right after an article or a preposition
    ("the slack app", "a folder of html files") and opens with no infinitive; not a verb and its bare object ("turn
    subtitles" of "how do I turn subtitles off?")."""
    start = previous.lower().rfind(phrase.lower())
    before = list(_WORD.finditer(previous[: max(start, 0)]))
    words = lexicon(language or "en")  # its own language's: Polish "to" is a determiner, English "to" opens a verb
    opened = start > 0 and bool(before) and before[-1].group(0).lower() in words.determiners | words.prepositions
    return opened and not _is_infinitive(phrase.split()[0], language)


# Japanese and Korean mark a noun with the particle after it ("キーボードを接続するには？", "키보드는 어떻게
# 연결해요?"): in a follow-up "マウスは？" or "마우스는요?" the new noun takes the marked one's place
_JAPANESE_MARKED = re.compile(
    r"(?:[A-Za-z0-9][A-Za-z0-9+\-]*|[\u30a0-\u30ff]{2,}|[\u3400-\u4dbf\u4e00-\u9fff]{2,})(?=[をはがにでの])"
)


def _with_marked_noun_replaced(previous: str, phrase: str) -> str | None:
    """`previous` (a Japanese or Korean question) with `phrase` in place of its first noun marked by a particle (the
    Korean particle in the form the new noun takes), or None when it has none."""
    if written_without_spaces(previous):
        found = _JAPANESE_MARKED.search(previous)
        if found is None or found.group(0).lower() not in {w.lower() for w in content_words(previous)}:
            return None
        return previous[: found.start()] + phrase + previous[found.end() :]
    if not is_korean(previous):
        return None
    for word in re.finditer(r"[\uac00-\ud7a3]+", previous):
        marked = marked_noun(word.group(0))
        if marked is not None:
            return previous[: word.start()] + phrase + particle_after(phrase, marked[1]) + previous[word.end() :]
    return None


def substitute(previous: str, phrase: str, language: str | None = None) -> str:
    """`previous` asked again about `phrase`: the name it replaces swapped for it (same kind of name, or the
    words ending like it, or the trailing noun phrase), else `phrase` added. Where every noun has a capital
    (German), a capital does not make a name."""
    phrase_words = _WORD.findall(phrase)
    capitalised = not textutil.capitalises_every_noun(language) and any(w[:1].isupper() for w in phrase_words)
    is_name = bool(identifiers(phrase)) or capitalised
    target = _span_ending_with(previous, phrase_words[-1], len(phrase_words)) if len(phrase_words) > 1 else None
    if target is None and is_name:
        same_kind = [n for n in _names(previous) if bool(identifiers(n)) == bool(identifiers(phrase))]
        target = same_kind[0] if same_kind else None
    if target is None and phrase_words[0].lower() in _DETERMINERS:
        target = _phrase_after(previous, phrase_words[0])  # "and my laptop?": the one "my" opened, not "the tv"
    replaced = _with_marked_noun_replaced(previous, phrase) if target is None else None
    if replaced is not None:
        return replaced
    if target is None:
        target = _trailing_phrase(previous, max(len(phrase_words), 1))
        whole = _trailing_phrase(previous, MAX_NOUN_PHRASE)
        if target is not None and whole is not None and whole != target and _one_thing(previous, whole, language):
            target = whole  # "and for discord?" after "... set up the slack app?": the thing, not its last word
        target = _past_subject_verb(previous, target)
    if target is None or target.lower() == phrase.lower():
        return _add_topic(previous, phrase, "en")
    # the target as whole words, its last place: "télé" of "sur la télé", not the start of "téléphone"
    found = list(re.finditer(rf"(?<!\w){re.escape(target)}(?!\w)", previous, re.IGNORECASE))
    if not found:
        return _add_topic(previous, phrase, "en")
    start, end = found[-1].span()
    before = list(_WORD.finditer(previous[:start]))
    if phrase_words[0].lower() in _DETERMINERS and before and before[-1].group(0).lower() in _DETERMINERS:
        start = before[-1].start()  # "and a mouse?": its own article, not "How do I connect a a mouse?"
    return previous[:start] + phrase + previous[end:]


def _past_subject_verb(previous: str, target: str | None) -> str | None:
    """`target` without its first word when that is the verb after a subject pronoun: "and word files?" after "can
    it read pdfs?" replaces "pdfs", not "read pdfs" (it was "can it word files?")."""
    if target is None or " " not in target.strip():
        return target
    found = list(re.finditer(rf"(?<!\w){re.escape(target)}(?!\w)", previous, re.IGNORECASE))
    before = _WORD.findall(previous[: found[-1].start()]) if found else []
    return target.split(None, 1)[1] if before and before[-1].lower() in SUBJECT_PRONOUNS else target


@dataclass(frozen=True, slots=True)
class Resolution:
    canonical: str
    context_type: ContextType
    vague: bool = False


def _code_topic(text: str, content: set[str]) -> str | None:
    match = CODE.search(text)  # a product or error code: the most specific thing a message is about
    if match is None:
        return None
    before = text[: match.start()].split()
    if before and before[-1].lower() in content:
        return f"{before[-1]} {match.group(0)}"
    return match.group(0)


# the subject pronouns a verb follows in English and French ("how do I turn subtitles on?", "can it read pdfs?",
# "comment je connecte ...?"); German and Dutch put the verb before them or last ("wie schalte ich ...", "hoe kan ik
# ... aanzetten")
SUBJECT_PRONOUNS = frozenset({"i", "we", "you", "they", "it", "je", "nous", "on"})


def topic_of(text: str, language: str | None = None) -> str | None:
    """The phrase a message is about: a product or error code when there is one, else the best run of
    consecutive content words (names first, then longer), without the infinitive that opens or closes it ("Как
    включить субтитры?": "субтитры"; "Wie kann ich die Untertitel einschalten?": "die Untertitel")."""
    content = set(content_words(text))
    code = _code_topic(text, content)
    if code is not None:
        return code
    if not content:
        return None
    if written_without_spaces(text):
        names: list[str] = [w for w in _LATIN_NAME.findall(text) if w.lower() in content]
        if names:
            return names[0]
        cjk_runs = [r for r in content_words(text) if CJK_CONTENT_RUN.fullmatch(r)]
        return max(cjk_runs, key=len) if cjk_runs else None
    runs: list[tuple[int, list[str], str]] = []  # (position of the first word, words, determiner before)
    current: list[str] = []
    start, before, previous = 0, "", ""
    tokens = _WORD_OR_MARK.findall(text)
    for position, token in enumerate(tokens):
        if any(topic_form(part) in content for part in token.lower().replace("’", "'").split("-")):
            if not current:
                start, before = position, previous
            current.append(topic_form(token))  # a Korean word without its particle: "헤드폰을" -> "헤드폰"
        else:
            if current:
                runs.append((start, current, before))
            current = []
        previous = token
    if current:
        runs.append((start, current, before))
    if not runs:
        return None

    def rank(run: tuple[int, list[str], str]) -> tuple[int, int, int, int]:
        position, words, before = run
        named = 0
        for offset, word in enumerate(words):
            if any(c.isupper() for c in word[1:]) or (word[:1].isupper() and position + offset > 0):
                named = 2
            elif word[:1].isupper():
                named = max(named, 1)  # a capital at the start of the message: a name or just the first word
        # a run after an article is a thing ("the answers"); one after "are" describes it ("too long")
        return (named, int(before.lower() in _DETERMINERS), min(len(words), MAX_TOPIC_WORDS), position)

    _, words, before = max(runs, key=rank)
    if len(words) > 1 and before.lower() in SUBJECT_PRONOUNS:
        words, before = words[1:], ""  # "how do I turn subtitles on?": after "I" comes the verb, then the thing
    while len(words) > 1 and _is_infinitive(words[0], language):
        words, before = words[1:], ""
    while len(words) > 1 and _is_infinitive(words[-1], language):
        words = words[:-1]  # German and Dutch put it last: "Wie kann ich die Untertitel einschalten?"
    phrase = " ".join(words[:MAX_TOPIC_WORDS])
    return f"{before.lower()} {phrase}" if before.lower() in _DETERMINERS else phrase


def _is_infinitive(word: str, language: str | None) -> bool:
    """Whether `word` is a verb's infinitive in `language` (`Lexicon.infinitive`; none known: False)."""
    infinitive = lexicon(language).infinitive
    return bool(infinitive) and re.fullmatch(infinitive, word, re.IGNORECASE) is not None


def _points_at_its_object(question: str, content: list[str], language: str | None) -> bool:
    """Whether the question's verb takes the last question's subject as a pronoun: written before the verb right
    after the question word ("¿cómo los desactivo?", "¿cómo se desactivan?", "comment l'activer ?"; before a noun
    the same word is an article, and the question has a word of its own besides the verb: "¿cómo la tele se
    apaga?") or written onto it ("¿cómo desactivarlos?", "como desativá-las?")."""
    lex = lexicon(language)
    if lex.attached_pronoun and re.search(rf"\b{lex.attached_pronoun}\b", question, re.IGNORECASE):
        return True
    if not lex.verb_pronouns or len(content) != 1:
        return False
    words = [m.group(0).lower().replace("’", "'") for m in _WORD.finditer(question)]
    for i, word in enumerate(words[1:], start=1):
        pronoun, elided, _ = word.partition("'")  # "l'activer": the pronoun and its verb in one word
        verb_follows = bool(elided) or i + 1 < len(words)
        if pronoun in lex.verb_pronouns and words[i - 1] in QUESTION_WORDS and verb_follows:
            return True
    return False


# "how do I cancel?", "can we undo?", "how do I turn off?": after a subject pronoun comes a verb (with its particle),
# and with nothing after it, its object is the thread's topic
_VERB_WITHOUT_OBJECT = re.compile(
    r"^\W*(?:how|where|when|why|can|could|should|do|does)\b[\w\s']*?\b(?:i|we|you)\s+([a-z]+)"
    r"(?:\s+(?:on|off|up|down|out|in|back|over|away))?\W*$",
    re.IGNORECASE,
)


def _acts_on_it(question: str, content: list[str], language: str | None) -> bool:
    """Whether the question's one content word is a verb with no object after a question word: "how do I cancel?",
    "comment annuler ?", "¿cómo cancelar?", "как отменить?" ask to do it to the thread's subject; so does a "how"
    and one word where the object goes unsaid ("怎么关掉？", "どうやってオフにしますか？", "어떻게 꺼요?")."""
    if len(content) != 1:
        return False
    dropped = lexicon(language).object_dropped_after
    if dropped and any(word in question for word in dropped) and _deictic_span(question, language) is None:
        # a pointing word, where there is one, is put in the topic's place instead; unspaced, a verb and its object
        # are one run of characters ("连接蓝牙耳机"): a verb alone is short
        return not written_without_spaces(question) or len(content[0]) <= MAX_BARE_VERB_CHARS
    english = _VERB_WITHOUT_OBJECT.match(question)
    if english is not None:
        return english.group(1).lower() == content[0]
    words = [m.group(0).lower() for m in _WORD.finditer(question)]
    asks = bool(words) and words[0].lstrip("¿¡") in QUESTION_WORDS
    return asks and _is_infinitive(content[0], language)


def _deictic_span(question: str, language: str | None) -> tuple[int, int, str] | None:
    """Where the first word pointing back at the previous topic is, if any."""
    if written_without_spaces(question):
        found = phrases_pointing_back(question)
        if not found:
            return None
        start, word = min(found, key=lambda f: (f[0], -len(f[1])))
        return start, start + len(word), word
    lex = lexicon("ko") if is_korean(question) else lexicon(language)
    words = list(_WORD.finditer(question))
    folded = question.lower()
    # "gibt es ...?", "y a-t-il ...?": the pronoun of such a phrase stands for nothing
    idle = [(at, at + len(p)) for p in lex.impersonal for at in (m.start() for m in re.finditer(re.escape(p), folded))]
    for i, match in enumerate(words):
        if any(start <= match.start() < end for start, end in idle):
            continue
        word = match.group(0).lower()
        # "it's not working": the pointing word before a contraction's apostrophe (the rest stays: "Anynet's")
        base = word.replace("’", "'").split("'", 1)[0]
        if base != word and base in lex.deictics:
            return match.start(), match.start() + len(base), base
        if word in lex.possessives:
            return match.start(), match.end(), word  # "their size": the topic's size
        if word not in lex.deictics and topic_form(word) not in lex.deictics:  # "그것을": "그것" with its particle
            continue
        following = words[i + 1].group(0) if i + 1 < len(words) else ""
        between = question[match.end() : words[i + 1].start()] if i + 1 < len(words) else ""
        generic = following.lower() in lex.generic_nouns  # "that setting": the one the talk is about
        if word in lex.determiners and following and not between.strip() and content_words(following) and not generic:
            continue  # "that port", "das Menü": a determiner, not a pronoun
        return match.start(), match.end(), word
    return None


def _with_topic(question: str, topic: str, language: str | None) -> str | None:
    """The question with the topic in place of its pointing word, or None when nothing points back."""
    span = _deictic_span(question, language)
    if span is None:
        return None
    start, end, word = span
    replacement = f"{topic}'s" if word == "its" else topic
    if start == 0 and question[:1].isupper():
        replacement = replacement[:1].upper() + replacement[1:]
    return question[:start] + replacement + question[end:]


def _add_topic(question: str, topic: str, language: str | None) -> str:
    if written_without_spaces(question):
        return f"{topic}{question}"
    if is_korean(question) or lexicon(language).topic_position == "start":
        return f"{topic} {question}"
    match = _TAIL.match(question)
    body, tail = (match.group(1), match.group(2)) if match else (question, "")
    return f"{body} {topic}{tail.strip()}"


# words a follow-up naming the other position of a switch may carry besides it ("and off again?", "en weer uit?")
_AGAIN = frozenset({"again", "back", "wieder", "weer", "it", "them", "sie", "es", "ze", "het"})


def _with_switch_turned(question: str, previous: str) -> str | None:
    """`previous` with its switch in the other position, when `question` names only that position ("and off?",
    "und wie wieder aus?", "en weer uit?"); None otherwise. The particle turned is the one after a switching verb
    (English: "turn on subtitles") or the one that closes the question (German, Dutch: "die Untertitel ein?")."""
    words = [w.lower() for w in _WORD.findall(_past_opener(question))]
    words = [w for w in words if w not in QUESTION_WORDS and w not in _AGAIN]
    if len(words) != 1:
        return None
    asked = list(_WORD.finditer(previous))
    for a, b in SWITCH_PARTICLES:
        for old, new in ((a, b), (b, a)):
            if words[0] != new:
                continue
            for index, word in enumerate(asked):
                if word.group(0).lower() != old:
                    continue
                before = asked[max(0, index - SWITCH_REACH) : index]
                after_verb = any(w.group(0).lower().startswith(SWITCH_VERBS) for w in before)
                if after_verb or index == len(asked) - 1:
                    return previous[: word.start()] + new + previous[word.end() :]
    return None


def _with_last(previous: str, question: str) -> Resolution:
    """`question` asked together with the last question, as a follow-up about what that question asked."""
    return Resolution(f"{previous.rstrip()} {question}", ContextType.FOLLOW_UP)


def resolve(question: str, topic: str | None, language: str | None, previous: str | None = None) -> Resolution:
    """Make `question` self-contained given the thread's current topic and previous question."""
    content = content_words(question)
    # a new name is put in the place of the old one in a question; after a statement ("it keeps unpairing"), "and the
    # batteries?" goes on from it instead
    asked = previous is not None and looks_like_question(previous)
    switched = _with_switch_turned(question, previous) if asked and previous is not None else None
    if switched is not None:
        return Resolution(switched, ContextType.FOLLOW_UP)
    if previous is not None and (asks_for_something_else(question) or already_tried(question)):
        # "what else could it be?" or "I already checked the sleep timer" after "my TV turns off by itself": the last
        # question again, with what the message tells besides ("I replaced the batteries."), for what the thread was
        # not given yet (the reading puts what was already quoted last); alone it was refused or got any quote
        told = [s for s in sentences(question) if not asks_for_something_else(s)]
        return Resolution(" ".join([previous.rstrip(), *told]), ContextType.FOLLOW_UP)
    if previous is not None and len(content) <= MAX_POINTING_WORDS and _IF_OPENERS.match(question):
        # "and if the docs are in german too?" after "how do I make the bot answer in german?": the last question
        # under a condition, so it is asked together with it (alone it was refused)
        return _with_last(previous, question)
    phrase = elliptical_phrase(question, language) if asked else None
    if phrase is not None and previous is not None:
        return Resolution(substitute(previous, phrase, language), ContextType.FOLLOW_UP)
    if previous is not None and len(content) <= MAX_POINTING_WORDS and _offers_a_choice(question, language):
        # "¿por HDMI o por óptico?" after "¿cómo conecto una barra de sonido?": which of two ways to do what the last
        # question asked, so it is asked together with it (alone it got a quote on HDMI UHD Color)
        return _with_last(previous, question)
    if previous is not None and asks_only_an_amount(question):
        # "how long at most?" after "how do I set the sleep timer?": the amount of what the last question was about,
        # so it is asked together with that question (alone it read as a new question and got a quote on storage)
        return _with_last(previous, question)
    if topic is None:
        return Resolution(question, ContextType.NEW_TOPIC, vague=not content)
    if topic.lower() in question.lower():
        return Resolution(question, ContextType.FOLLOW_UP)
    carried = previous is not None and len(content) <= MAX_POINTING_WORDS and (
        _points_at_its_object(question, content, language) or _acts_on_it(question, content, language)
    )
    if previous is not None and carried:
        # "¿y cómo la elimino?" after "¿cómo instalo una aplicación?": asked together with the last question, as
        # its pronoun stands for what that question was about
        return _with_last(previous, question)
    if previous is not None and len(content) - len(failure_words(content)) <= 2 and reports_failure(question):
        # "what if that doesn't work?", "I don't see the delete option": what failed is the answer to the last
        # question (pairing the remote, not the remote), so it is asked together with that question
        return _with_last(previous, question)
    if len(content) <= MAX_POINTING_WORDS:
        replaced = _with_topic(question, topic, language)
        if replaced is not None:
            return Resolution(replaced, ContextType.FOLLOW_UP)
    if previous is not None and _only_asks(question):
        # "how?" after "is there a way to limit which docs a channel can see?": that question, asked with "how"
        asking = _past_opener(question).strip().rstrip("?？").strip()
        return Resolution(f"{asking} {previous.strip().lstrip('¿¡')}", ContextType.FOLLOW_UP)
    if not content:
        return Resolution(_add_topic(question, topic, language), ContextType.FOLLOW_UP)
    if previous is not None and len(content) == 1 and _CONTINUES.match(question):
        # "and how do I delete one?" after "how do I install apps?": a question of one word of its own that goes
        # on from the last one is asked together with it, so the search finds the thread's subject and the new verb
        return _with_last(previous, question)
    return Resolution(question, ContextType.NEW_TOPIC)


def _offers_a_choice(question: str, language: str | None) -> bool:
    """Whether `question` offers two things to choose from ("HDMI or optical?", "¿por HDMI o por óptico?",
    "HDMI还是光纤？"): a word of its language that offers a choice, between two others."""
    choices = lexicon("ko" if is_korean(question) else language).alternatives
    if written_without_spaces(question):
        return any(0 < question.find(word) < len(question.rstrip("?？ ")) - len(word) for word in choices)
    words = [w.lower() for w in _WORD.findall(question)]
    return any(word in choices for word in words[1:-1])


MAX_BARE_QUESTION_WORDS = 2  # "how?", "and why?", "¿y cómo?", "wie genau?": a question word and little else


def _only_asks(question: str) -> bool:
    """Whether `question` is a question word or two and nothing else ("how?", "and why?", "¿cómo?"), after the word
    that goes on from the last question."""
    words = [w.lower() for w in _WORD.findall(_past_opener(question))]
    return 0 < len(words) <= MAX_BARE_QUESTION_WORDS and words[0] in QUESTION_WORDS and all(
        w in QUESTION_WORDS or w in _EMPHASIS for w in words
    )


def thread_topic(history: tuple[HistoryMessage, ...], language: str | None, window: int) -> str | None:
    """Follow the topic through the people's messages of the thread, oldest first."""
    return thread_state(history, language, window)[0]


def thread_state(
    history: tuple[HistoryMessage, ...], language: str | None, window: int
) -> tuple[str | None, str | None]:
    """(topic, last self-contained question) after the people's messages of the thread, oldest first."""
    topic: str | None = None
    previous: str | None = None
    for message in [m for m in history if not m.from_bot][-window:]:
        text = one_line(strip_mentions(message.text))
        if only_thanks(text):
            continue  # "thanks!" asks nothing: the question before it is still the last one
        resolution = resolve(text, topic, language, previous)
        if resolution.vague:
            continue
        previous = resolution.canonical
        if resolution.context_type is ContextType.FOLLOW_UP:
            continue
        topic = topic_of(text, language) or topic
    return topic, previous


def combine(pending: str, reply: str, language: str | None) -> Resolution:
    """A reply to a clarifying question, folded into the question it clarifies."""
    reply_content = content_words(reply)
    if not reply_content:
        return Resolution(pending, ContextType.FOLLOW_UP, vague=not content_words(pending))
    phrase = reply.strip().rstrip("?!.。？！ ")
    if len(reply_content) <= MAX_TOPIC_WORDS - 1:
        resolved = resolve(pending, phrase, language)
        if resolved.canonical != pending:
            return Resolution(resolved.canonical, ContextType.FOLLOW_UP)
        return Resolution(_add_topic(pending, phrase, "en"), ContextType.FOLLOW_UP)
    if not content_words(pending):
        return Resolution(reply, ContextType.FOLLOW_UP)
    return Resolution(f"{pending.rstrip()} {reply}", ContextType.FOLLOW_UP)


def _is_vague_complaint(question: str, language: str | None) -> bool:
    """A statement with no topic words of its own or only a complaint ("it doesn't work", "still broken", "help");
    a question pointing back ("how does it work?") is a follow-up, not a complaint."""
    if looks_like_question(question) or CODE.search(question):
        return False
    words = content_words(question)
    return not words or (len(words) <= 2 and reports_failure(question))


MIN_KEPT_WORDS = 0.5  # share of the message's own words (stemmed, English) a model's canonical question must keep


def _drifted(payload: Payload, canonical: str) -> str | None:
    """Why a model's canonical question is not about the message, or None. Compared in English: the message's
    English text (the translation, or the message when it is English) against the canonical question (English by
    the prompt). Nothing to compare (a message in another language without a translation, or with no content words
    of its own, such as "how does it work?") is not drift: the model may resolve it from the thread."""
    english = payload.text_eng or (payload.text if (payload.language or "en").split("-")[0] == "en" else None)
    if english is None:
        return None
    stop = lexicon("en").stopwords
    own = textutil.features(one_line(strip_mentions(english)), stop, "en") - textutil.features(
        " ".join(lexicon("en").deictics), (), "en"
    )
    if not own:
        return None
    kept = textutil.overlap(own, textutil.features(canonical, stop, "en"))
    return None if kept >= MIN_KEPT_WORDS else f"it keeps {kept:.0%} of the message's words"


class EssenceAgent:
    role: ClassVar[Role] = Role.ESSENCE

    def __init__(self, *, history_window: int = 12, llm: Strategy | None = None) -> None:
        self._window = history_window
        self._llm = llm

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        async def overrule(model: AgentResult, offline_result: OfflineResult) -> str | None:
            # The model's reading is checked against the offline one; where it would cost the person the answer or
            # the right question, the offline reading is taken (the trace says why):
            offline = await offline_result()
            if offline.payload.clarification_reason is ClarificationReason.THANKED:
                return "llm reading not taken: the message only thanks"
            drift = _drifted(payload, model.payload.canonical_question or "")
            if drift is not None:
                # a canonical question that drops what the message asks about ("How do I pair the remote?" -> "The
                # code is in a document.") would send the search elsewhere
                return f"llm question not taken: {drift}"
            if not model.payload.needs_clarification:
                if offline.payload.clarification_reason is not ClarificationReason.VAGUE:
                    return None
                # "it doesn't work" with nothing in the thread to say what "it" is: the model can only have invented
                # the topic, so the person is asked which part they mean
                return "llm question not taken: the message names no topic"
            if offline.payload.needs_clarification:
                return None  # a model's "too vague" is taken where the offline reading finds the question vague too
            return "llm asked to clarify a question the offline reading finds clear"

        return await keep_or_overrule(payload, context, self._offline, self._llm, overrule)

    async def _offline(self, payload: Payload, context: Context) -> AgentResult:
        question = one_line(strip_mentions(payload.text))
        if payload.canonical_question:
            resolution = combine(payload.canonical_question, question, payload.language)
            how = "combined with the clarified question"
        else:
            topic, previous = thread_state(context.history, payload.language, self._window)
            if (topic or previous) and only_thanks(question):
                # "thanks!" after an answer: acknowledged in the person's language; nothing to search or ask back
                result = payload.evolve(
                    canonical_question=topic or previous,
                    context_type=ContextType.FOLLOW_UP,
                    needs_clarification=True,
                    clarification_reason=ClarificationReason.THANKED,
                    clarification_message=texts(payload.language).clarify[ClarificationReason.THANKED],
                )
                return AgentResult(result, "thanks in the thread: acknowledged")
            resolution = resolve(question, topic, payload.language, previous)
            how = f"topic={topic!r}" if resolution.context_type is ContextType.FOLLOW_UP else "self-contained"
            if topic is not None and _is_vague_complaint(question, payload.language):
                # "it doesn't work" in a thread: ask which part, with the thread's topic as the search for choices
                result = payload.evolve(
                    canonical_question=topic,  # the choices are the topic's sections, not "doesn't work" matches
                    context_type=ContextType.FOLLOW_UP,
                    needs_clarification=True,
                    clarification_reason=ClarificationReason.VAGUE,
                    clarification_message=texts(payload.language).clarify[ClarificationReason.VAGUE],
                )
                return AgentResult(result, f"vague within the thread's topic {topic!r}: clarify")
        result = payload.evolve(canonical_question=resolution.canonical, context_type=resolution.context_type)
        if resolution.vague:
            result = result.evolve(
                needs_clarification=True,
                clarification_reason=ClarificationReason.VAGUE,
                clarification_message=texts(payload.language).clarify[ClarificationReason.VAGUE],
            )
            return AgentResult(result, "too vague, no topic in the thread: clarify")
        return AgentResult(result, f"{resolution.context_type.value}; {how}")
