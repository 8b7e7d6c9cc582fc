"""answerability: does the best evidence answer *this* question, or only a nearby one?

A step of the quality role, run before the answer is checked line by line (and before any LLM review): a search
finds the section nearest to the question, but nearest is not answering. The signals, each measured by `python -m
bench.answerability` on the labelled shoppers' questions, the e-manual, docbot's own docs and SQuAD v2.0 (figures
in docs/benchmarks.md):

- meaning: the bundled multilingual model's cosine between the question and the best passage of the sources the
  answer cites (pipeline/reading.py), in any language: the strongest signal, and the only one a question in
  another language than the docs has besides names and numbers;
- distinguishing terms: the names (capitalised words), numbers (with their unit when they have one: "40 inch" is
  not a page marker "- 40 -", "100 Mbps" is not "100 MB") and product/error codes of the sentences that ask must
  appear in the quoted block (the sources the answer cites), not merely somewhere in the corpus;
- unknown names: names the question writes like names (in Latin script in any language: "Roku", "AirPlay", "PS5";
  every Latin-script word of a Russian or Chinese question) that no document uses: a product or service the docs
  never mention;
- term coverage: the share of the question's content words found in the best *passage* of the quote: up to
  `PASSAGE_SENTENCES` consecutive sentences of one quoted block, under the sources' headings. The words of a
  question the docs do not answer are often all there, but scattered: "delete my voice history" over an
  equalizer's "Voice" preset in one section and a profile's "watch history" in another (a document removed), or a
  SQuAD v2 question built from words of several sentences of its paragraph;
- a number asked for: a question that wants a size, weight, count or rate (pipeline/intent.py, read for meaning in
  any language) needs a number in a sentence holding the question's words ("how many HDMI ports?" is not answered
  by a sentence on HDMI ports beside one on a cable of "10 feet (3 m)"), and a question asking how many things
  there are ("how many", "cuántos", "几个": `Lexicon.how_many`) a count, not a measurement; a yes/no question
  whether something is there ("does it have a LAN port?": `locales.asks_presence`) wants the thing, not a number;
- the thing asked about: a yes/no question whether the product has something ("does it have a headphone port?",
  "does it support Dolby Atmos?": `locales.after_presence`) needs every word naming that thing in the quote
  (`thing_missing`), not a quote that shares "headphone" with it ("A Mobile exclusive headphone may not be
  available") or an equalizer's settings for Dolby Atmos; read in the docs' language only;
- a shop's question: price, shipping, warranty, what comes in the box (pipeline/intent.py) is rarely in the docs;
- negation: a question asking what is *not* / *never* so, or the opposite of what the passage says ("last" where
  it says "first", "turn on" where it says "turn off"), needs a passage that says so too (a passage's "without"
  says so; a question's "without" is a condition of what it asks, "how do I add workspaces without three
  setups?", not a negation);
- unknown words: words of the message that no document uses at all, not even spelt a letter apart ("How much
  does a subscription cost per month?", "voice during a Slack huddle"): one lowers the score, two or more and the
  question is about something the docs never mention (the words the person typed, in the docs' language only: a
  translation's or a model's rewording's words are not theirs);
- agreement: the best section is the best by keywords and by embedding alike; margin: how far ahead it is;
- a central unknown word: when the message has one word no document uses, the model's cosine between the message
  with and without it. A word the question is about ("hulu" in "does this tv support hulu live tv?", "height" in
  "what is height with stand?") moves its meaning far; context ("legal" in "legal is asking how long we keep
  questions") hardly at all. Such a word counts as a name no document uses.

A quote that is `off_topic` (every name missing, two unknown words, or no passage with more than a third of the
question's words) scores 0; otherwise a logistic regression over the signals (`COEFFICIENTS`, refitted by `python
-m bench.answerability --fit`) gives a score in [0, 1]. Below the deployment's threshold the question is not
answerable: the person gets "the docs don't say" with the closest sections, and the run is a `no_coverage` refusal
(a docs gap for the digest). A section the person picked from a clarification answers whatever its score (the
quality role). In LLM mode the response model's typed `insufficient` (after one research round) decides on its
own (`MODEL_INSUFFICIENT`), whatever the score.

Term checks that depend on words (capitalised names, negation, coverage) run only when the question is in the
docs' language; meaning, Latin-script names, numbers and codes are compared whatever the language.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import math
import re
from dataclasses import dataclass
from functools import cache

from rapidfuzz import process
from rapidfuzz.distance import OSA

from pipeline import text as textutil
from pipeline.closest import section_label
from pipeline.envelope import Payload
from pipeline.locales import (
    FUNCTION_WORDS,
    SWITCH_REACH,
    after_presence,
    asks_presence,
    how_many_of,
    lexicon,
    texts,
)
from pipeline.locales.base import words
from pipeline.types import (
    Answerability,
    AnswerabilityReason,
    AnswerabilitySignals,
    DocsGap,
    Embedder,
    QuestionIntent,
    SearchHit,
    SourceReference,
    Vocabulary,
)

MARGIN_SCALE = 0.1  # a margin this large (in fused score) counts fully
MEANING_FLOOR, MEANING_SCALE = 0.75, 0.15  # the e5 cosine range a passage's meaning is read in (below: nothing)
INTENT_SCALE = 0.05  # this much nearer a shop's or an opinion question than a docs question counts fully
MAX_CLOSEST = 3
MAX_QUESTION_CHARS = 140
SEEN_HITS = 5  # the sections a missing name is looked for in before it counts as unknown to the docs
MIN_COVERAGE = 0.34  # below it, no passage of the quote is about the question (see `off_topic`)
MEANING_ON_TOPIC = 0.86  # ... unless the quote is this close in meaning (chosen on the tune halves)
UNKNOWN_WORDS = 2  # this many words of the question that no document uses: it asks about something else
MIN_FUZZY = 3  # a word longer than this may be misspelt (by `textutil.edits_allowed`)
CENTRAL_SHIFT = 0.04  # a message's meaning moved this far without a word makes that word its subject (tune halves)
SHIFT_DEADLINE_S = 5.0  # the two embeddings of that check; past it the word is not weighed
PASSAGE_SENTENCES = 3  # a passage: this many consecutive sentences of one quoted block (chosen on the tune split)

_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*")
_POSSESSIVE = re.compile(r"['’]s$")
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_DIGIT = re.compile(r"\d")
_NEGATION = re.compile(r"\b(?:not|never|no|none|neither|nor|cannot)\b|n['’]t\b", re.IGNORECASE)
# a passage's "without" states an absence, which answers a "not"; a question's "without" is a condition of what it
# asks ("how do I add workspaces without three setups?"), not a negated fact
_ABSENCE = re.compile(r"\bwithout\b", re.IGNORECASE)
_WH_WORDS = frozenset({"what", "what's", "whats", "which", "who", "whom", "whose", "when", "where", "why", "how"})
_YEAR_OR_DATE = re.compile(
    r"\b\d{3,4}s?\b|\b(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"century|centuries|decade|bc|ad|bce|ce)\b",
    re.IGNORECASE,
)
_QUANTITY = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|"
    r"thousand|million|billion|dozen|several|half|double|twice|single)\b",
    re.IGNORECASE,
)
_ASKS_DATE = re.compile(r"\bwhen\b|\b(?:what|which) (?:year|decade|century|date|month)\b", re.IGNORECASE)
_ASKS_NUMBER = re.compile(
    r"\bhow (?:many|much|long|far|old|big|large|often)\b|\bwhat (?:percentage|percent|number|amount)\b",
    re.IGNORECASE,
)
_ASKS_NAME = re.compile(r"^\s*who(?:m|se)?\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the decision reads: the question and the blocks the answer quotes, plus the search's ranking."""

    question: str
    blocks: tuple[str, ...]  # texts of the sources the answer cites (the best source when it cites none)
    quoted: str  # the sentences the answer quotes ("" when the answer is not extractive)
    hits: tuple[SearchHit, ...]
    same_language: bool  # the question is in the docs' language: word-level checks apply
    titles: tuple[str, ...] = ()  # headings of those sources (their crumbs): what every quoted passage is under
    asked: str = ""  # the message as the person wrote it (no model's or translator's rewording)
    own_words: bool = False  # `asked` is in the docs' language: its words can be looked up in the docs
    unknown: tuple[str, ...] = ()  # the words of `asked` no document uses (`Vocabulary.unknown_terms`)
    unknown_names: tuple[str, ...] = ()  # the names of `asked`, in any language, no document uses
    meaning: float = 0.0  # the reading's cosine of the question with the best passage of the cited sources
    intent: QuestionIntent = QuestionIntent.DOCS
    intent_margin: float = 0.0
    headed: tuple[tuple[str, str], ...] = ()  # (headings, what is quoted) per cited source
    unknown_shift: float = 0.0  # 1 - cosine of `asked` with and without its one unknown word (0: not measured)


# -- signals --------------------------------------------------------------------------------------------------


# A number with its unit, as people write measurements ("40 inch", "100 Mbps", "60Hz", '55"', "40 дюймов"): the
# unit decides what the number is ("100 MB" is not "100 Mbps"; a page marker "- 40 -" is not 40 inches).
_MEASUREMENT = re.compile(r"(\d+(?:[.,]\d+)?)(\s?-?\s?)(\"|”|''|%|[^\W\d_]+)")
UNITS: dict[str, str] = {
    alias: unit
    for unit, aliases in {
        "inch": '" ” \'\' inch inches pulgada pulgadas zoll pouce pouces дюйм дюйма дюймов 英寸 寸',
        "cm": "cm", "mm": "mm", "ft": "ft feet foot", "kg": "kg kilo kilos kilogram kilograms кг 公斤",
        "lb": "lb lbs pound pounds libras фунт фунтов 磅", "w": "w watt watts vatios вт 瓦", "kw": "kw",
        "v": "v volt volts voltios вольт", "hz": "hz гц", "khz": "khz", "mhz": "mhz", "ghz": "ghz",
        "kbps": "kbps", "mbps": "mbps mbit", "gbps": "gbps", "kb": "kb", "mb": "mb мб", "gb": "gb гб",
        "tb": "tb", "ms": "ms", "min": "min mins minute minutes minuto minutos minuten минут", "hour": "h hr hrs hour "
        "hours hora horas stunde stunden час часа часов", "percent": "% percent", "nits": "nit nits", "p": "p",
        "k": "k", "mah": "mah", "db": "db",
    }.items()
    for alias in aliases.split()
}  # fmt: skip


def measurements(text: str) -> set[str]:
    """The numbers of `text` written with a unit, as "<number> <unit>" ("55 inch" for '55"' and "55 Zoll")."""
    found = set()
    for number, gap, unit in _MEASUREMENT.findall(text):
        canonical = UNITS.get(unit.lower())
        if canonical is not None and (len(unit) > 1 or not gap):  # "1080p", "4K", "5V": one letter only glued
            found.add(f"{number.replace(',', '.')} {canonical}")
    return found


def distinguishing_terms(question: str, *, same_language: bool, language: str = "en") -> set[str]:
    """Names (capitalised words after the first word), numbers (with their unit when they have one: "40 inch") and
    codes of the sentences of the question that ask (`asking_sentences`), as written."""
    asked = asking_sentences(question)
    measured = measurements(asked)
    numbers = set(_NUMBER.findall(asked)) - {m.split()[0] for m in measured}
    codes = {c for c in textutil.codes(asked) if not any(c.startswith(m.split()[0]) for m in measured)}
    terms = numbers | codes | measured
    if same_language:
        stop = lexicon(language).stopwords
        first = asked.split()[:1]
        names = (_bare(w) for w in _WORD.findall(asked) if w[:1].isupper() and [w] != first)
        terms |= {w for w in names if w.lower() not in stop}
    return terms


def asking_sentences(question: str) -> str:
    """The sentences of `question` that ask, when some ask and others only tell: "someone pasted a 3 page stack
    trace. can i cap how long a question can be?" asks nothing about a 3, "Spectrum does have 4k cable. will this tv
    work on hd cable only?" nothing about Spectrum; the whole question when none asks or every sentence does."""
    said = textutil.sentences(question)
    asking = [s for s in said if textutil.looks_like_question(s)]
    return " ".join(asking) if asking and len(asking) < len(said) else question


# the languages whose yes/no questions name the thing right after the verb ("does it have X?", "¿tiene X?", "есть
# ли X?"); German and Dutch put the subject there ("Hat der Fernseher X?"), Japanese and Korean the thing before it
THING_AFTER_VERB = frozenset({"en", "es", "fr", "it", "pt", "pl", "ru", "zh"})


def asked_thing(question: str, language: str = "en") -> list[str]:
    """The words naming what a yes/no question asks whether the product has: the first run of content words after
    its verb ("headphone port" of "Does it have a headphone port?", "google play app" of "Does it come with the
    google play app?"); [] when it asks nothing of the kind in `language`."""
    rest = after_presence(asking_sentences(question), language) if language in THING_AFTER_VERB else None
    if rest is None:
        return []
    stop = lexicon(language).stopwords
    thing: list[str] = []
    for word in textutil.tokens(rest):
        if word in stop or not word.isalnum():
            if thing:
                break
            continue
        thing.append(word)
    return thing


def thing_missing(question: str, quoted: str, language: str = "en") -> bool:
    """A yes/no question whether something is there ("does it have a headphone port?") over a quote that never
    names every word of that thing: the quote is about something else ("A Mobile exclusive headphone may not be
    available"), whatever else it shares with the question. A word spelt a letter apart counts as named, and so
    does one the quote writes as two ("tvplus" where it says "TV PLUS")."""
    thing = asked_thing(question, language)
    if not thing:
        return False
    stop = lexicon(language).stopwords
    wanted = textutil.features(" ".join(thing), stop, language, asked=True)
    said = textutil.tokens(quoted)
    joined = " ".join(a + b for a, b in itertools.pairwise(said))
    named = textutil.features(quoted, stop, language) | textutil.features(joined, stop, language)
    return bool(wanted) and typo_tolerant_overlap(wanted, named) < 1.0


def missing_terms(terms: set[str], block: str) -> set[str]:
    """The terms `block` does not contain: numbers and codes anywhere in it, measurements with their unit, names as
    whole words written the same way ("Teams" is not "teams"; a case-insensitive or stemmed match lets common words
    stand in for names), or hyphenated as the docs write them ("WiFi" for "Wi-Fi"); a number typed without the colons
    the docs write between its digits is there ("444" for "4:4:4")."""
    folded = block.lower()
    words = {_bare(w) for w in _WORD.findall(block)}
    whole = {w.lower() for w in textutil.written_whole(block)}  # "Wi-Fi" is how the docs write "WiFi"
    measured = measurements(block)

    def absent(term: str) -> bool:
        if " " in term and term[:1].isdigit():  # a measurement: that number with that unit
            return term not in measured
        if any(ch.isdigit() for ch in term):
            return term.lower() not in folded and term.lower() not in whole
        return term not in words and term.replace("-", "").lower() not in whole

    return {t for t in terms if absent(t)}


def _bare(word: str) -> str:
    """Without a possessive 's ("Beyoncé's" -> "Beyoncé")."""
    return _POSSESSIVE.sub("", word)


def unmatched_negation(question: str, passage: str) -> bool:
    """The question negates and the passage does not, or it asks for the opposite of what the passage says ("the
    *last* ..." where the passage has "first" and not "last"). Only the sentence that asks counts, and a "why", an
    "if" or a sentence that states does not: "The screen is not displaying. How do I fix this?", "Why is there no
    PIP?", "What if it still does not respond?" and "the bot doesn't answer in my channel" describe a symptom whose
    answer need not negate anything."""
    asked_sentence = (textutil.sentences(question) or [question])[-1]
    _, comma, last = asked_sentence.rpartition(",")
    if comma and textutil.tokens(last)[:1] and textutil.tokens(last)[0] in textutil.QUESTION_WORDS:
        asked_sentence = last  # "Anynet+ is not working, what should I check?": the symptom, then the question
    words = textutil.tokens(asked_sentence)
    # a sentence asks when it opens with a question word or an auxiliary, or holds a wh-word ("J. A. Hobson didn't
    # want which races ...?"); one that does neither reports what happens
    asks = (bool(words) and words[0] in textutil.QUESTION_WORDS) or not _WH_WORDS.isdisjoint(words)
    symptom = words[:1] == ["why"] or "if" in words or not asks  # "what if it still does not respond?"
    negates = _NEGATION.search(passage) is not None or _ABSENCE.search(passage) is not None
    if not symptom and _NEGATION.search(asked_sentence) is not None and not negates:
        return True
    asked, said = set(textutil.tokens(asked_sentence)), set(textutil.tokens(passage))
    asked |= switched(asked_sentence)
    said |= switched(passage)
    return any(a in asked and a not in said and b in said for pair in OPPOSITES for a, b in (pair, pair[::-1]))


_SWITCH_VERBS = frozenset({"turn", "power", "switch"})  # English stems: the docs' side (`SWITCH_VERBS` has others')
_HYPHENATED = re.compile(r"\b([^\W_]+)-([^\W_]+)\b")


def switched(text: str) -> set[str]:
    """What `text` turns on or off, as "<verb> on" / "<verb> off" ("turn on" for "turns the TV on", "power on" for
    "power-on"); the "off" of a hyphenated word is no particle ("the TV turns soft-off" names a state)."""

    def parts(match: re.Match[str]) -> str:
        verb = textutil.stem(match.group(1).lower()) in _SWITCH_VERBS
        return f"{match.group(1)} {match.group(2)}" if verb else f"{match.group(1)}{match.group(2)}"

    words = textutil.tokens(_HYPHENATED.sub(parts, text))
    found = set()
    for i, word in enumerate(words):
        verb = textutil.stem(word)
        if verb in _SWITCH_VERBS:
            particle = next((w for w in words[i + 1 : i + 1 + SWITCH_REACH] if w in ("on", "off")), None)
            if particle is not None:
                found.add(f"{verb} {particle}")
    return found


# English opposites a SQuAD v2 question swaps to make itself unanswerable (tune split: 3% of the unanswerable
# questions, none of the answerable ones)
OPPOSITES = (
    ("first", "last"), ("most", "least"), ("largest", "smallest"), ("before", "after"), ("earliest", "latest"),
    ("highest", "lowest"), ("increase", "decrease"), ("minimum", "maximum"), ("more", "less"), ("partial", "whole"),
    ("won", "lost"), ("win", "lose"), ("start", "end"), ("north", "south"), ("east", "west"), ("major", "minor"),
    ("oldest", "newest"), ("early", "late"), ("public", "private"), ("positive", "negative"),
    # a device's switches: asked how to turn it on, a passage on turning it off answers something else
    ("turn on", "turn off"), ("power on", "power off"), ("switch on", "switch off"),
)  # fmt: skip


def answer_type_missing(question: str, block: str) -> bool:
    """The question asks for a date, a number or a name and the block has none."""
    if _ASKS_DATE.search(question):
        return _YEAR_OR_DATE.search(block) is None
    if _ASKS_NUMBER.search(question):
        return _QUANTITY.search(block) is None
    if _ASKS_NAME.search(question):
        return not any(i > 0 for i, _ in _capitalised_after_start(block))
    return False


def _capitalised_after_start(block: str) -> list[tuple[int, str]]:
    out = []
    for sentence in textutil.sentences(block):
        for i, word in enumerate(sentence.split()):
            if _CAPITALISED.fullmatch(word.strip(".,;:()\"'")):
                out.append((i, word))
    return out


def term_coverage(question: str, quoted: str, language: str = "en") -> float:
    stop = lexicon(language).stopwords
    asked = textutil.features(question, stop, language, asked=True)
    return textutil.overlap(asked, textutil.features(quoted, stop, language))


def typo_tolerant_overlap(wanted: set[str], said: set[str]) -> float:
    """The share of `wanted` found in `said`, a word spelt a letter apart (two from eight letters) counting as found:
    "creat a profle" asks about "create a profile" (rapidfuzz's optimal string alignment distance, as the
    vocabulary forgives misspellings)."""
    if not wanted:
        return 0.0
    found = wanted & said
    for word in wanted - found:
        edits = textutil.edits_allowed(word)
        if len(word) > MIN_FUZZY and process.extractOne(word, said, scorer=OSA.distance, score_cutoff=edits):
            found.add(word)
    return len(found) / len(wanted)


def best_passage(question: str, quoted: str, language: str = "en", *, heading: str = "") -> tuple[str, float]:
    """The passage of `quoted` (blocks apart by a blank line) holding the largest share of the question's content
    words, and that share; a passage is up to `PASSAGE_SENTENCES` consecutive sentences of one block, never two,
    read under `heading` (the sources' crumbs: "Creating a profile for each person" over "Open the profile ...")."""
    stop = lexicon(language).stopwords
    wanted = textutil.features(question, stop, language, asked=True)
    above = textutil.features(heading, stop, language)
    best, best_share = "", -1.0
    for block in quoted.split("\n\n"):
        said = textutil.sentences(block) or [block]
        for start in range(len(said)):
            passage = " ".join(said[start : start + PASSAGE_SENTENCES])
            share = typo_tolerant_overlap(wanted, above | textutil.features(passage, stop, language))
            if share > best_share:
                best, best_share = passage, share
    return best, max(best_share, 0.0)


def states_a_number(question: str, quoted: str, language: str = "en", *, same_language: bool = True) -> bool:
    """Whether `quoted` gives a number where it speaks of what is asked: in a sentence holding one of the question's
    content words. A question in another language shares only the words both languages write alike ("HDMI", "USB"
    in "¿Cuántos puertos HDMI tiene?"): the number must be beside one of those, or anywhere when it shares none. A
    question asking how many things there are needs a count, not a measurement (`states_a_count`)."""
    counting = asks_a_count(question)

    def gives(text: str) -> bool:
        return states_a_count(text, language) if counting else _DIGIT.search(text) is not None

    stop = lexicon(language).stopwords
    wanted = textutil.features(question, stop, language, asked=True)
    if not same_language:
        wanted &= textutil.features(quoted, stop, language)
        if not wanted:
            return gives(quoted)
    return any(
        gives(sentence) and typo_tolerant_overlap(wanted, textutil.features(sentence, stop, language)) > 0
        for sentence in textutil.sentences(quoted)
    )


# what a number after which these stand measures rather than counts ("10 feet", "3 m", "30 seconds", "3840 x 2160")
_MEASURING_WORDS = frozenset(UNITS) | words("m s sec secs second seconds day days week weeks month months year years x")
_BARE_NUMBER = re.compile(r"(?<![\w.,:/×-])\d+(?![\w.,:%\"”'’×-])")  # not "1080p", "0.66", "16:9", '55"', "4K"
_DIMENSION_BEFORE = re.compile(r"\d\s*[x×]\s*$")
_COUNT_WORDS = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b", re.IGNORECASE)


def asks_a_count(question: str) -> bool:
    """Whether `question` asks how many things there are ("how many HDMI ports", "¿cuántos puertos?", "几个接口"),
    not how many units something measures ("how many watts")."""
    counted = how_many_of(question)
    if counted is None:
        return False
    first = _WORD.search(counted)
    return first is None or first.group(0).lower() not in _MEASURING_WORDS


def states_a_count(text: str, language: str = "en") -> bool:
    """Whether `text` gives a count: a whole number that measures nothing ("2 HDMI ports", where "a cable of 10 feet
    (3 m)", "3840 x 2160", "16:9" and "1080p" measure), or in English docs a number word ("two USB ports")."""
    for match in _BARE_NUMBER.finditer(text):
        after = _WORD.match(text[match.end() :].lstrip())
        if _DIMENSION_BEFORE.search(text[: match.start()]) or (after and after.group(0).lower() in _MEASURING_WORDS):
            continue
        return True
    return language == "en" and _COUNT_WORDS.search(text) is not None


def levels_agree(hits: tuple[SearchHit, ...]) -> bool:
    """The best section is also the best by the keyword level and by the embedding level."""
    if not hits:
        return False
    best = hits[0].level_scores
    for level in ("keywords", "dense"):
        if best.get(level, 0.0) < max(h.level_scores.get(level, 0.0) for h in hits):
            return False
    return best.get("keywords", 0.0) > 0


def margin(hits: tuple[SearchHit, ...]) -> float:
    if not hits:
        return 0.0
    return hits[0].score - (hits[1].score if len(hits) > 1 else 0.0)


def measure(evidence: Evidence, language: str = "en") -> AnswerabilitySignals:
    block = "\n\n".join(evidence.blocks)
    same = evidence.same_language
    terms = distinguishing_terms(evidence.question, same_language=same, language=language)
    quoted = evidence.quoted or block
    if evidence.headed:  # each source's quote under its own headings: words of two sections never add up
        passage, coverage = max(
            (best_passage(evidence.question, quoted, language, heading=heading) for heading, quoted in evidence.headed),
            key=lambda found: found[1],
        )
    else:
        heading = "\n".join(evidence.titles)
        passage, coverage = best_passage(evidence.question, quoted, language, heading=heading)
    missing = missing_terms(terms, quoted)  # in what is quoted, not only nearby
    found = "\n\n".join(h.text for h in evidence.hits[:SEEN_HITS])
    return AnswerabilitySignals(
        term_coverage=round(coverage, 4) if same else 1.0,
        missing_terms=len(missing),
        distinguishing_terms=len(terms),
        # names and codes only: a bare number ("(2)" after a question asked again) is no subject the docs lack
        unseen_terms=len({t for t in missing_terms(missing, found) if not t.isdigit()}) if evidence.hits else 0,
        unknown_terms=len(evidence.unknown),  # looked up only for the person's own words, each once
        unmatched_negation=same and unmatched_negation(evidence.question, passage),
        answer_type_missing=same and answer_type_missing(evidence.question, block),
        levels_agree=levels_agree(evidence.hits),
        margin=round(margin(evidence.hits), 4),
        top_score=round(evidence.hits[0].score, 4) if evidence.hits else 0.0,
        meaning=round(evidence.meaning, 4),
        unknown_names=len(evidence.unknown_names),
        unknown_shift=round(evidence.unknown_shift, 4),
        # "how many ...?" asks for a number in so many words, whatever its meaning reads as ("有几个HDMI接口？");
        # "does it have ...?" asks whether the thing is there, however near "how many ... does it have?" it reads
        number_missing=((evidence.intent is QuestionIntent.MEASURE and not asks_presence(evidence.question))
                        or asks_a_count(evidence.question))
        and not states_a_number(evidence.question, quoted, language, same_language=same),
        thing_missing=same and thing_missing(evidence.question, "\n".join((*evidence.titles, quoted)), language),
        purchase=evidence.intent_margin if evidence.intent is QuestionIntent.PURCHASE else 0.0,
        opinion=evidence.intent_margin if evidence.intent is QuestionIntent.OPINION else 0.0,
        same_language=same,
    )


# -- the decision ---------------------------------------------------------------------------------------------


# A logistic regression over the signals, fitted on the tune halves of every labelled set: the shoppers' questions
# (English and translated into nine languages), the e-manual's questions, docbot's newcomers' questions, and SQuAD
# v2.0 dev articles 11-20 (about 830 questions; the test halves and SQuAD's first ten articles are what
# docs/benchmarks.md reports), by `python -m bench.answerability --only emanual,shoppers,newcomer --split tune
# --rows --out A.json` and `--only squad --squad-skip-articles 10 --rows --out B.json`, then `--fit` on both (rows,
# merged: bench/results/answerability-tune-20261126-stop36.json.gz; L2 1.0; a failed check is never allowed to
# raise the score: such a coefficient is held at 0 and the rest refitted). The questions `off_topic` already refuses
# are left out of the fit. Refitted on the same rows after a question's "without" stopped counting as a negation, and
# again when the meaning of a question in another language got its own weight (`meaning_across`), and when the number
# asked for had to be beside the question's words, "turn on" met "turn off" and words were read whole (stop 42), and
# when a question in another language had to find its number beside the words both languages write (stop 43), and
# when "how many" came to want a count, not a measurement (stop 44), and when only the sentences that ask gave the
# terms and a question whether something is there stopped wanting a number (stop 47), and when such a question came to
# need the thing it asks about in the quote (`no_thing`, stop 48).
COEFFICIENTS: dict[str, float] = {
    "bias": -2.07,
    "coverage": 1.23,
    "missing": -1.13,
    "negation": -2.8,
    "answer_type": 0.0,
    "agree": 0.0,
    "margin": 0.0,
    "meaning": 3.09,
    "unknown_name": -2.61,
    "unknown_word": 0.0,
    "no_number": -1.42,
    "no_thing": -1.45,
    "purchase": -1.18,
    "opinion": 0.0,
    "other_language": 0.56,
    "meaning_across": -1.02,
}
# The same fit without the meaning feature (`--fit` prints both): the decision when the passages could not be read for
# meaning (no embedder, or it failed: `Reading.unread`), so a failing model never refuses every question.
WORDS_ONLY_COEFFICIENTS: dict[str, float] = {
    "bias": 0.16,
    "coverage": 1.6,
    "missing": -1.12,
    "negation": -2.92,
    "answer_type": 0.0,
    "agree": 0.0,
    "margin": 0.0,
    "meaning": 0.0,
    "unknown_name": -2.66,
    "unknown_word": 0.0,
    "no_number": -1.51,
    "no_thing": -1.53,
    "purchase": -1.48,
    "opinion": -0.11,
    "other_language": -0.83,
    "meaning_across": 0.0,
}


def off_topic(signals: AnswerabilitySignals) -> bool:
    """The quote is about something else, whatever the rest says: every one of several names/numbers/codes of the
    question is absent from it ("What does E-2099 mean?" over E-2041's section; "Python 2.7", "Microsoft Teams"),
    or its one name is, and none of the sections the search found has it either ("Elasticsearch", "Weaviate"), or
    no passage of it holds more than a third of the question's words ("delete my voice history" over an equalizer's
    "Voice" preset and a profile's "watch history"). Not fitted: documentation questions the docs lack are mostly
    like this, while SQuAD v2's unanswerable questions keep their paragraph's names and words, so the regression
    hardly sees such quotes (on the tune split these rules refuse 4 of the 160 answerable questions answered and 11
    of the 130 unanswerable ones; on docbot's docs 17 of its 20 unanswerable questions). Two words of the question
    that no document uses ("subscription ... month", "voice ... huddle") say the same of lower-case words: on the
    held-out sets that rule refused 3 more of docbot's 20 and none of the answerable SQuAD and e-manual questions
    (docs/benchmarks.md). The third rule does not apply to a quote the model reads as close in meaning
    (`MEANING_ON_TOPIC`): newcomers' answerable questions refused by it fell from 0.22 to 0.10, the other sets kept
    their rates (docs/benchmarks.md, issue 26)."""
    every_term_missing = signals.missing_terms > 0 and signals.missing_terms >= signals.distinguishing_terms
    unknown = signals.distinguishing_terms >= 2 or signals.unseen_terms == signals.missing_terms
    # a chatty question ("bot doesnt reply in my channel. DMs work fine tho") holds few of its words in the passage
    # that answers it: a passage that close in meaning is about it, and the regression decides
    scattered = signals.term_coverage < MIN_COVERAGE and signals.meaning < MEANING_ON_TOPIC
    return (every_term_missing and unknown) or signals.unknown_terms >= UNKNOWN_WORDS or scattered


# The features read from the passages' meaning: left out together when they could not be read (`--fit` leaves them
# out of `WORDS_ONLY_COEFFICIENTS`).
MEANING_FEATURES = ("meaning", "meaning_across")


def features(signals: AnswerabilitySignals) -> dict[str, float]:
    """The signals as the regression reads them (every name of `COEFFICIENTS` but the bias)."""
    meaning = min(max((signals.meaning - MEANING_FLOOR) / MEANING_SCALE, 0.0), 1.0)
    return {
        "coverage": signals.term_coverage,
        "missing": float(signals.missing_terms > 0),  # one of several absent: the usual doubt
        "negation": float(signals.unmatched_negation),
        "answer_type": float(signals.answer_type_missing),
        "agree": float(signals.levels_agree),
        "margin": min(max(signals.margin, 0.0) / MARGIN_SCALE, 1.0),
        "meaning": meaning,
        "unknown_name": float(signals.unknown_names > 0 or central_unknown(signals)),
        "unknown_word": float(signals.unknown_terms > 0),
        "no_number": float(signals.number_missing),
        "no_thing": float(signals.thing_missing),
        "purchase": min(max(signals.purchase, 0.0) / INTENT_SCALE, 1.0),
        "opinion": min(max(signals.opinion, 0.0) / INTENT_SCALE, 1.0),
        "other_language": float(not signals.same_language),
        # the same cosine weighs differently across languages: a question and a passage in two languages sit about
        # as close whether or not the passage answers (docs/benchmarks.md, stop 40)
        "meaning_across": meaning * float(not signals.same_language),
    }


def central_unknown(signals: AnswerabilitySignals) -> bool:
    """The question's one word no document uses is what it asks about, by its meaning (`CENTRAL_SHIFT`)."""
    return signals.unknown_shift >= CENTRAL_SHIFT


def score(signals: AnswerabilitySignals, coefficients: dict[str, float] | None = None) -> float:
    """How likely the quoted evidence answers the question, in [0, 1] (0 when it is `off_topic`); weighed without
    meaning when the passages were not read for it."""
    if off_topic(signals):
        return 0.0
    if coefficients is None:
        coefficients = COEFFICIENTS if signals.meaning > 0 else WORDS_ONLY_COEFFICIENTS
    logit = coefficients["bias"] + sum(coefficients[name] * value for name, value in features(signals).items())
    return round(1.0 / (1.0 + math.exp(-logit)), 4)


def _reason(signals: AnswerabilitySignals) -> AnswerabilityReason:
    if signals.unknown_terms >= UNKNOWN_WORDS:
        return AnswerabilityReason.UNKNOWN_TERMS
    if signals.missing_terms or signals.thing_missing:
        return AnswerabilityReason.MISSING_TERMS
    if central_unknown(signals):
        return AnswerabilityReason.UNKNOWN_TERMS
    if signals.unmatched_negation:
        return AnswerabilityReason.UNMATCHED_NEGATION
    if signals.answer_type_missing:
        return AnswerabilityReason.NO_ANSWER_TYPE
    return AnswerabilityReason.WEAK_EVIDENCE


def decide(
    signals: AnswerabilitySignals, threshold: float | None, *, docs_insufficient: bool | None = None
) -> Answerability:
    """Answerable unless the model said the documents are insufficient or the score is below `threshold`
    (None: measure only, never refuse)."""
    value = score(signals)
    if docs_insufficient:
        return Answerability(False, value, AnswerabilityReason.MODEL_INSUFFICIENT, signals)
    if threshold is not None and value < threshold:
        return Answerability(False, value, _reason(signals), signals)
    return Answerability(True, value, None, signals)


def evidence_of(payload: Payload, docs_language: str) -> Evidence:
    """The question and the quoted block of a payload that has sources and an answer."""
    question = payload.canonical_question or payload.text
    same = payload.language in (None, docs_language) or reads_as(question, docs_language)
    own = payload.language in (None, docs_language) or reads_as(payload.text, docs_language)
    if not same and payload.text_eng:
        question, same = payload.text_eng, True
    answer = "" if payload.docs_insufficient else payload.response or ""  # a "not covered" text quotes nothing
    by_number = {s.number: s for s in payload.source_references}
    cited = [by_number[n] for n in dict.fromkeys(textutil.citations(answer)) if n in by_number]
    blocks = cited or list(payload.source_references[:1])
    titles = tuple(dict.fromkeys(" › ".join(dict.fromkeys((*s.crumbs, s.title))) for s in blocks))
    reading = payload.reading
    numbers = {s.number for s in blocks}
    by_source = quoted_by_source(answer)
    headed = tuple(
        (" › ".join(dict.fromkeys((*s.crumbs, s.title))), by_source[s.number]) for s in cited if by_source.get(s.number)
    )
    meaning = max((p.meaning for p in reading.passages if p.source in numbers), default=0.0) if reading else 0.0
    return Evidence(
        question, tuple(s.text for s in blocks), quoted_text(answer), payload.search_results, same, titles,
        asked=payload.text, own_words=own, meaning=meaning,
        intent=reading.intent if reading else QuestionIntent.DOCS,
        intent_margin=reading.intent_margin if reading else 0.0, headed=headed,
    )  # fmt: skip


_CAPTION = re.compile(r"\*\*[^*]+\*\*(?:\s*\[\d+\])+")  # `**Page › Section** [n]`, the line above a list or table


def quoted_by_source(answer: str) -> dict[int, str]:
    """What an extractive answer quotes from each source it cites (`quoted_text`'s blocks, by their `[n]`)."""
    parts: dict[int, list[str]] = {}
    cited: list[int] = []
    captioned = False
    for line in answer.splitlines():
        bare = line.strip()
        if bare.startswith(">"):
            for number in textutil.citations(bare):
                parts.setdefault(number, []).append(textutil.without_citations(bare.removeprefix(">").strip()))
            captioned = False
        elif _CAPTION.fullmatch(bare):
            cited, captioned = textutil.citations(bare), True
            for number in cited:
                parts.setdefault(number, []).append("")
        elif not bare:
            captioned = False
        elif captioned:
            for number in cited:
                parts[number][-1] = f"{parts[number][-1]}\n{textutil.without_citations(bare)}".strip("\n")
    return {number: "\n\n".join(p for p in texts_ if p) for number, texts_ in parts.items()}


def quoted_text(answer: str) -> str:
    """What an extractive answer quotes from the docs: its `>` paragraphs and the lists, tables and code under a
    caption line, without the caption lines and the citation markers; blocks apart by a blank line (each `>`
    paragraph is one, the lines under one caption are one). "" for an answer in its own words (a model's): the
    sources it cites are the evidence then."""
    blocks: list[list[str]] = [[]]
    captioned = False
    for line in answer.splitlines():
        bare = line.strip()
        if bare.startswith(">"):
            blocks += [[textutil.without_citations(bare.removeprefix(">").strip())], []]
            captioned = False
        elif _CAPTION.fullmatch(bare):
            blocks.append([])
            captioned = True
        elif not bare:
            blocks.append([])
            captioned = False
        elif captioned:
            blocks[-1].append(textutil.without_citations(bare))
    return "\n\n".join("\n".join(block) for block in blocks if block)


def reads_as(text: str, language: str, share: float = 0.3) -> bool:
    """Whether `text` is written in `language` by its function words (a short question's detected language is
    often wrong: "How do I deploy docbot on AWS Lambda?" comes back as German at 0.35)."""
    words = textutil.tokens(text)
    stop = lexicon(language).stopwords
    return bool(words) and sum(w in stop for w in words) / len(words) >= share


@cache
def filler_stems(language: str | None) -> frozenset[str]:
    """The stems of `language`'s function and filler words ("stuff", "thing", "pls", "lol"): a word of these no
    document uses says nothing about what the question is about."""
    return frozenset(textutil.features(" ".join(lexicon(language or "en").stopwords), (), language or "en"))


def looked_up(
    evidence: Evidence, vocabulary: Vocabulary, language: str | None, collections: tuple[str, ...]
) -> Evidence:
    """`evidence` with the words of the person's message no document uses (when it is in the docs' language), and
    its names, in any language, that no document uses (blocking: a vocabulary scan per word it does not know)."""
    words = textutil.without_identifiers(evidence.asked)  # codes and settings are `missing_terms`' part
    unknown = vocabulary.unknown_terms(words, collections) if evidence.own_words else ()
    unknown = tuple(t for t in unknown if t not in filler_stems(language))  # "stuff", "lol": not a subject
    named = textutil.names(words, language, FUNCTION_WORDS)
    unknown_names = tuple(n for n in named if vocabulary.unknown_terms(n, collections))
    return dataclasses.replace(evidence, unknown=unknown, unknown_names=unknown_names)


class AnswerabilityCheck:
    """The decision as the quality role runs it; `threshold` None measures without refusing. With a `vocabulary`
    (the search's keyword index) the question's words no document uses count too."""

    def __init__(
        self, threshold: float | None, vocabulary: Vocabulary | None = None, embedder: Embedder | None = None
    ) -> None:
        self.threshold = threshold
        self._vocabulary = vocabulary
        self._embedder = embedder

    async def assess(self, payload: Payload, docs_language: str, collections: tuple[str, ...]) -> Answerability:
        evidence = evidence_of(payload, docs_language)
        if self._vocabulary is not None:
            evidence = await asyncio.to_thread(self._look_up, evidence, payload.language, collections)
        if len(evidence.unknown) == 1 and self._embedder is not None:
            shift = await self._shift(evidence.asked, evidence.unknown[0])
            evidence = dataclasses.replace(evidence, unknown_shift=shift)
        signals = measure(evidence, docs_language)
        model_says = payload.docs_insufficient is DocsGap.MODEL_SAYS_INSUFFICIENT
        return decide(signals, self.threshold, docs_insufficient=model_says)

    def _look_up(self, evidence: Evidence, language: str | None, collections: tuple[str, ...]) -> Evidence:
        assert self._vocabulary is not None
        return looked_up(evidence, self._vocabulary, language, collections)

    async def _shift(self, asked: str, term: str) -> float:
        """1 - the cosine of `asked` with `asked` without the words of `term`; 0 when that cannot be measured (the
        word is not found as written, or the embedder fails or is slow: the decision then goes without it)."""
        assert self._embedder is not None
        without = without_term(asked, term)
        if without == asked or not without.strip():
            return 0.0
        try:
            async with asyncio.timeout(SHIFT_DEADLINE_S):
                vectors = await self._embedder.embed_queries([asked, without])
        except Exception:  # any embedder failure: the decision is made on the other signals
            return 0.0
        return max(0.0, 1.0 - float(vectors[0] @ vectors[1]))


def without_term(text: str, term: str) -> str:
    """`text` without its words that are `term` as the search's vocabulary writes terms (lower-cased; an ASCII word
    by its English stem: "Hulu" and "hulus" are "hulu")."""

    def is_term(word: str) -> bool:
        folded = word.lower()
        return folded == term or (folded.isascii() and textutil.stem(folded) == term)

    return _WORD.sub(lambda m: "" if is_term(m.group(0)) else m.group(0), text)


# -- what the person gets -------------------------------------------------------------------------------------


def docs_dont_say(question: str, language: str | None, sources: tuple[SourceReference, ...]) -> str:
    """"The docs don't say …" in the person's language, then the closest sections as cited bullets (links), each
    labelled with its page ("Support › Updating the TV's Software") and listed once: a manual that repeats a
    section under the same heading showed the same bullet twice."""
    words = texts(language)
    asked = textutil.shorten(textutil.one_line(question).replace("“", '"').replace("”", '"'), MAX_QUESTION_CHARS)
    head = words.docs_dont_say.format(question=asked)
    if not sources:
        return head
    first_of_label: dict[str, SourceReference] = {}
    for source in sources:  # in the search's order: the best ranked of each label
        first_of_label.setdefault(section_label(source), source)
    closest = list(first_of_label.items())[:MAX_CLOSEST]
    bullets = "\n".join(f"- **{label}** [{s.number}]" for label, s in closest)
    return f"{head}\n\n{words.closest_they_come}\n{bullets}"
