"""Small text utilities the offline roles share: cleaning, words, sentences and overlap.

Word tokens are lower-cased runs of letters/digits; CJK text has no spaces, so each CJK character is a token
and overlap uses character bigrams as well.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import Stemmer
from markdown_it import MarkdownIt

_MENTION = re.compile(r"<[@#!&][^<>\s]*>")  # Slack <@U123>, <#C1|name>, <!here>; Discord <@123>, <@!1>, <@&1>, <#1>
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{_CJK}]")
# combining marks (Unicode Mn/Mc) that belong inside a word but are not `\w` to `re`: the vowel signs of Devanagari
# and the other Indic scripts, Thai, Lao, Myanmar and Khmer, Hebrew and Arabic points, combining accents
COMBINING_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
)
_LETTER = rf"(?:[^\W_{_CJK}]|[{COMBINING_MARKS}])"
_TOKEN = re.compile(rf"[{_CJK}]|{_LETTER}+(?:['’]{_LETTER}+)?")
# a word written with hyphens between its letters ("Wi-Fi", "pop-up", "set-top"), which people also write whole
_COMPOUND = re.compile(rf"{_LETTER}+(?:[-‐‑]{_LETTER}+)+")
_HYPHENS = re.compile(r"[-‐‑]")
_RATIO = re.compile(r"\d+(?::\d+)+")  # "4:4:4", "16:9": typed without the colons too ("444")
# Latin sentences end at ".", "!" or "?" before a space; Chinese and Japanese ones at "。", "！" or "？" (no space
# follows), taking a closing quote or bracket with them ("你好。”") and not ending inside an English sentence that
# quotes one ("(這個電視有藍牙嗎？ , as people write)").
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])(?!\s*[”\"」』）)\],;:])\s*|(?<=[。！？][”」』])\s*")
_ITEM = re.compile(r"^(?:[-*+•]\s+|\d{1,3}[.)]\s+)")  # a list item opens a new line of thought
_CLOSED = re.compile(r"^(?:#{1,6}\s|>|\|)")  # headings, quotes, table rows: never continued by the next line
_TABLE_RULE = re.compile(r"^\|?\s*:?-{2,}")
# citations `[n]`, one or a run ("[1][2]"), not an index written onto a name in quoted code or text ("sys.argv[0]",
# "items[2]", "f()[1]"): the quote of such a line "cited" a source 0 and failed its own check; after a digit, a mark
# or a word in another script ("8080[1]", "配置[1]") it is a citation
_CITATIONS = re.compile(r"(?<![A-Za-z_)\]])(?:\[\d{1,3}\])+")
_CITATION = re.compile(r"\[(\d{1,3})\]")
_WORDS_ONLY = re.compile(r"[^\w]+")
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")


def clean(text: str) -> str:
    """Drop control and format characters (keeping newlines), collapse runs of spaces, trim."""
    kept = "".join(
        ch if ch == "\n" or unicodedata.category(ch)[0] != "C" else " " for ch in unicodedata.normalize("NFC", text)
    )
    lines = [_SPACES.sub(" ", line).strip() for line in kept.split("\n")]
    return "\n".join(line for line in lines if line).strip()


def strip_mentions(text: str) -> str:
    """Remove platform mention markup (users, channels, roles, broadcast)."""
    return _MENTION.sub(" ", text)


def one_line(text: str) -> str:
    return " ".join(clean(text).split())


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; each CJK character is one token."""
    return [t.lower() for t in _TOKEN.findall(text.replace("’", "'"))]


# Product and error codes (E-2041, SM-T500, QN90B): letters and digits together, possibly joined by - or _.
CODE = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*\b")


def codes(text: str) -> set[str]:
    """The product and error codes in `text`, upper-cased."""
    return {match.upper() for match in CODE.findall(text)}


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


def word_count(text: str) -> int:
    """Words as a reader counts them: two CJK characters count as about one word."""
    toks = tokens(text)
    cjk = sum(1 for t in toks if _CJK_CHAR.fullmatch(t))
    return (len(toks) - cjk) + (cjk + 1) // 2


_SNOWBALL = {
    "en": "english", "es": "spanish", "de": "german", "fr": "french", "ru": "russian", "pt": "portuguese",
    "it": "italian", "nl": "dutch", "pl": "polish",
}


@lru_cache(maxsize=16)
def _stemmer(language: str) -> Stemmer.Stemmer | None:
    name = _SNOWBALL.get(language.split("-")[0].lower())
    return Stemmer.Stemmer(name) if name else None


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The English stem of a lower-case word ("mirroring" -> "mirror"): how the keyword search writes its terms."""
    stemmer = _stemmer("en")
    assert stemmer is not None
    return str(stemmer.stemWord(word))


def written_whole(text: str) -> list[str]:
    """What `text` writes in parts that people also type whole: its hyphenated words without their hyphens ("Wi-Fi":
    "WiFi") and its numbers without the colons between their digits ("4:4:4": "444")."""
    hyphenated = [_HYPHENS.sub("", m.group()) for m in _COMPOUND.finditer(text)]
    return hyphenated + [m.group().replace(":", "") for m in _RATIO.finditer(text)]


def features(text: str, stopwords: Iterable[str] = (), language: str | None = "en", *, asked: bool = False) -> set[str]:
    """Content features for overlap: words minus stopwords, stemmed for `language`, plus CJK character bigrams.

    A hyphenated word of what is read is its parts and also the word whole ("Wi-Fi": "wi", "fi", "wifi"), so a
    question typing it whole ("WiFi") finds it; so is a number with colons between its digits (`written_whole`).
    What is `asked` (the side whose share is counted) keeps its words as typed: a word whole no passage writes would
    count against every passage alike.
    Compare two texts with the same `language` (usually the docs' language) so their stems line up.
    """
    stop = set(stopwords)
    whole = [] if asked else written_whole(text)
    toks = tokens(text) + [w.lower() for w in whole]
    words = [t for t in toks if not _CJK_CHAR.fullmatch(t) and t not in stop and len(t) >= 2]
    stemmer = _stemmer(language) if language else None
    out: set[str] = set(stemmer.stemWords(words) if stemmer else words)
    cjk = [t for t in toks if _CJK_CHAR.fullmatch(t)]
    out.update(a + b for a, b in itertools.pairwise(cjk))
    return out


LONG_TERM = 8  # from this many letters a misspelt word may be two edits away


def edits_allowed(term: str) -> int:
    """How many edits a misspelling of `term` may be away from the word meant: one, two from `LONG_TERM` letters
    (the keyword search's vocabulary and the answerability decision forgive the same typos)."""
    return 2 if len(term) >= LONG_TERM else 1


def overlap(question: set[str], passage: set[str]) -> float:
    """Share of the question's features found in the passage (0..1)."""
    if not question:
        return 0.0
    return len(question & passage) / len(question)


def _logical_lines(text: str) -> list[str]:
    """Lines as an author meant them: hard-wrapped paragraph and list-item lines are joined back together."""
    units: list[str] = []
    open_unit = False  # whether the last unit may continue on the next line
    in_code = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            in_code, open_unit = not in_code, False
            continue
        if not line or in_code:
            if line:
                units.append(line)
            open_unit = False
            continue
        if open_unit and not _ITEM.match(line) and not _CLOSED.match(line):
            units[-1] = f"{units[-1]} {line}"
            continue
        units.append(line)
        open_unit = not _CLOSED.match(line)
    return units


def _table_row(line: str) -> str | None:
    """`| a | b | c |` as `a: b — c`; None for the rule under a table header."""
    if _TABLE_RULE.match(line):
        return None
    cells = [c.strip() for c in line.strip().strip("|").split("|") if c.strip()]
    if not cells:
        return None
    return f"{cells[0]}: {' — '.join(cells[1:])}" if len(cells) > 1 else cells[0]


def sentences(text: str) -> list[str]:
    """Split markdown-ish prose into sentences: wrapped lines are joined, headings, list items and table rows
    (rendered `a: b — c`, header rows dropped) stand alone, and paragraphs are cut after sentence-ending punctuation."""
    out: list[str] = []
    units = _logical_lines(text)
    for position, unit in enumerate(units):
        if unit.startswith("|"):
            following = units[position + 1] if position + 1 < len(units) else ""
            if _TABLE_RULE.match(following):
                continue  # a header row names the columns; it says nothing on its own
            row = _table_row(unit)
            if row:
                out.append(row)
            continue
        unit = _ITEM.sub("", unit.lstrip("#> ").strip())
        for part in SENTENCE_END.split(unit):
            part = part.strip()
            if part:
                out.append(part)
    return out


def comparable(text: str) -> str:
    """Words only, case-folded: for checking that a quote appears in a source whatever its punctuation."""
    return " ".join(_WORDS_ONLY.sub(" ", text).casefold().split())


def citations(text: str) -> list[int]:
    """The citation numbers `[n]` in order of appearance."""
    return [int(n) for run in _CITATIONS.findall(text) for n in _CITATION.findall(run)]


def without_citations(text: str) -> str:
    return " ".join(_CITATIONS.sub(" ", text).split())


def renumber_citations(text: str, mapping: dict[int, int]) -> str:
    """Rewrite `[n]` markers through `mapping`; markers not in it are dropped."""

    def swap(match: re.Match[str]) -> str:
        new = mapping.get(int(match.group(1)))
        return f"[{new}]" if new is not None else ""

    return _CITATIONS.sub(lambda run: _CITATION.sub(swap, run.group(0)), text)


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary with an ellipsis."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:") + "…"


# -- blocks: the coherent units an extractive answer quotes ------------------------------------------------------

def markdown_parser() -> MarkdownIt:
    """CommonMark with GFM tables and, when mdit-py-plugins is installed (a declared dependency), definition lists
    (`Term` then `: definition` lines) as `dl` blocks; without it a definition list reads as one paragraph."""
    parser = MarkdownIt("commonmark").enable("table")
    try:
        from mdit_py_plugins.deflist import deflist_plugin  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - depends on the environment
        return parser
    return parser.use(deflist_plugin)


_BLOCK_PARSER = markdown_parser()
_IDENTIFIER = re.compile(
    r"`([^`\n]{2,80})`"  # anything in backticks
    r"|\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b"  # UPPER_SNAKE settings: DOCBOT_LLM_MODEL
    r"|\b([a-z][a-z0-9]*(?:[_:.][a-z0-9]+)+)\b"  # snake/colon/dotted names: chat:write, role_queue_limit
)


@dataclass(frozen=True, slots=True)
class Block:
    """One top-level Markdown block of a source: `kind` is paragraph, list, table, code or quote."""

    kind: str
    text: str
    ordered: bool = False


def _kind(token_type: str) -> str:
    name = token_type.removesuffix("_open")
    return {"bullet_list": "list", "ordered_list": "list", "fence": "code", "code_block": "code",
            "blockquote": "quote", "html_block": "paragraph", "dl": "list"}.get(name, name)  # fmt: skip


def blocks(text: str) -> list[Block]:
    """The top-level blocks of a Markdown source, each as the source lines it spans (headings dropped); a
    paragraph ending in ":" joins the list or table it introduces."""
    lines = text.splitlines()
    out: list[Block] = []
    for token in _BLOCK_PARSER.parse(text):
        if token.level != 0 or token.nesting == -1 or token.map is None or token.type in ("heading_open", "hr"):
            continue
        start, stop = token.map
        body = "\n".join(line.rstrip() for line in lines[start:stop]).strip("\n")
        if not body.strip():
            continue
        kind = _kind(token.type)
        if out and kind in ("list", "table", "code") and out[-1].kind == "paragraph" and out[-1].text.endswith(":"):
            intro = out.pop()
            body = f"{intro.text}\n\n{body}"
        out.append(Block(kind, body, ordered=token.type == "ordered_list_open"))
    return out


def table_rows(block: str) -> tuple[list[str], list[str], list[str]]:
    """(lines before the table, the header and its rule, the body rows) of a block holding a pipe table."""
    rows = block.splitlines()
    for i in range(len(rows) - 1):
        if rows[i].lstrip().startswith("|") and _TABLE_RULE.match(rows[i + 1].strip()):
            return rows[:i], rows[i : i + 2], [r for r in rows[i + 2 :] if r.strip()]
    return rows, [], []


def list_item_lines(block: str) -> tuple[list[str], list[list[str]]]:
    """(lines before the list, each top-level item as the source lines it spans, marker and nested items kept) of
    a block holding a Markdown list."""
    lines = block.splitlines()
    lead: list[str] = []
    items: list[list[str]] = []
    for token in _BLOCK_PARSER.parse(block):
        if token.type in ("bullet_list_open", "ordered_list_open") and token.map is not None and not items:
            lead = [line for line in lines[: token.map[0]] if line.strip()]
        if token.type == "list_item_open" and token.level == 1 and token.map is not None:
            start, stop = token.map
            items.append([line for line in lines[start:stop] if line.strip()])
    return lead, [item for item in items if item]


def list_items(block: str) -> tuple[list[str], list[str]]:
    """(lines before the list, its top-level items as one line each, markers dropped) of a block holding a
    Markdown list."""
    lead, items = list_item_lines(block)
    out: list[str] = []
    for item in items:
        words = " ".join(item).split()
        if words and (words[0] in "-*+" or words[0].rstrip(".)").isdigit()):
            words = words[1:]  # the item's marker
        out.append(" ".join(words))
    return lead, [item for item in out if item]


def identifiers(text: str) -> set[str]:
    """Exact names a question may ask about: codes (E-2041, ZX-42), settings (DOCBOT_LLM_MODEL), backticked
    names, snake/colon names (chat:write) — case kept except codes, which are upper-cased."""
    found = {m.group(1) or m.group(2) or m.group(3) for m in _IDENTIFIER.finditer(text)}
    found |= codes(text)
    return {f for f in found if f}


_LINK = re.compile(r"https?://\S+|www\.\S+|<[^>]*>")
_CODE_SPAN = re.compile(r"`[^`]*`")


def without_identifiers(text: str) -> str:
    """`text` without links, code spans and the exact names of `identifiers` (codes, settings, snake_case names):
    the words a person wrote about something, not the names of it."""
    text = _CODE_SPAN.sub(" ", _LINK.sub(" ", text))
    for name in sorted(identifiers(text), key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", " ", text, flags=re.IGNORECASE)
    return text


# a word in Latin script, accented letters included ("Estándar", "HDMI-Anschlüsse" are one word each, not "Est")
_LATIN = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_LATIN_WORD = re.compile(f"[{_LATIN}][{_LATIN}0-9]*(?:[-+.][{_LATIN}0-9]+)*\\+?")
_LATIN_LETTER = re.compile(f"[{_LATIN}]")
_ANY_LETTER = re.compile(r"[^\W\d_]")
# a word shaped like a name whatever the language: letters with digits (PS5, 4K), a capital inside (iTunes), capitals
_NAME_SHAPED = re.compile(r"[A-Za-z]*[0-9]+[A-Za-z][A-Za-z0-9]*|[A-Za-z]+[0-9]+|[A-Za-z]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}")


def capitalises_every_noun(language: str | None) -> bool:
    """Whether `language` writes every noun with a capital (German), so that a capital does not make a name."""
    return (language or "en") == "de"


def written_in_latin_script(text: str) -> bool:
    """Whether most of `text`'s letters are Latin ones and it has no Chinese, Japanese or Korean characters."""
    letters = _ANY_LETTER.findall(text)
    latin = sum(bool(_LATIN_LETTER.match(c)) for c in letters)
    return bool(letters) and latin >= 0.5 * len(letters) and not has_cjk(text)


def written_in_another_script(text: str) -> bool:
    """Whether `text` has letters and they are not mostly Latin ones (Chinese, Russian, Japanese, Korean...)."""
    return bool(_ANY_LETTER.search(text)) and not written_in_latin_script(text)


def names(text: str, language: str | None, function_words: frozenset[str] = frozenset()) -> list[str]:
    """Names a question uses, whatever its language, once each in order: in a question not written in Latin script
    (Chinese always, whatever Latin words it holds), every Latin-script word of two letters or more ("Roku" in
    "Поддерживает ли он Roku?"); otherwise the words written like names: a capital inside ("iPhone", "AirPlay"),
    all capitals ("VESA"), letters with digits ("PS5"), or capitalised after a sentence's first word (not in German,
    where every noun is). In another language than English a word with letters outside ASCII is a word of that
    language, not a name: of a compound only the parts shaped like names count ("HDMI" of "HDMI-Anschlüsse";
    nothing of "Estándar" or "Bluetooth-Geräte"). `function_words` are never names ("Does", "Can")."""
    latin_script = written_in_latin_script(text)
    found: list[str] = []
    for sentence in SENTENCE_END.split(text):
        for position, match in enumerate(_LATIN_WORD.finditer(sentence)):
            word = match.group(0).strip(".")
            if not word.isascii() and (language or "en") != "en":
                found.extend(p for p in re.split(r"[-+.]", word) if p.isascii() and _NAME_SHAPED.fullmatch(p))
                continue
            if len(word) < 2 or word.lower() in function_words:
                continue
            inner_capital = any(c.isupper() for c in word[1:])
            digits = any(c.isdigit() for c in word)
            capitalised = word[:1].isupper() and position > 0 and not capitalises_every_noun(language)
            if not latin_script or inner_capital or digits or capitalised:
                found.append(word)
    return list(dict.fromkeys(found))


def without_names(text: str, function_words: frozenset[str] = frozenset()) -> str:
    """`text` with the words `names` finds in it (in any language) blanked out: what is left is the person's own
    language ("Come collego le cuffie  al televisore?", "接  会有问题吗？")."""
    named = set(names(text, None, function_words))
    return _LATIN_WORD.sub(lambda m: " " if m.group(0).strip(".") in named else m.group(0), text)


def mentions_identifier(text: str, name: str) -> bool:
    """Whether `name` occurs in `text` as a whole token (case-insensitive)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE) is not None


def reflow(block: str) -> str:
    """A Markdown list or paragraph with its hard-wrapped lines joined (items, table rows and code kept as lines)."""
    out: list[str] = []
    fenced = False
    for raw in block.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            out.append(line)
            continue
        starts_unit = not out or not out[-1].strip() or _ITEM.match(stripped) or _CLOSED.match(stripped)
        if fenced or not stripped or starts_unit or out[-1].strip().startswith(("|", "```")):
            out.append(line)
            continue
        out[-1] = f"{out[-1]} {stripped}"
    return "\n".join(out)


QUESTION_WORDS = frozenset({
    "what", "what's", "whats", "how", "why", "where", "when", "which", "who", "can", "could", "does", "do", "is",
    "are", "should", "will", "qué", "cómo", "cuál", "dónde", "por", "puedo", "was", "wie", "warum", "wo", "welche",
    "kann", "comment", "quel", "quelle", "pourquoi", "où", "est-ce", "что", "как", "почему", "где", "какой", "можно",
    "como", "que", "qual", "quais", "onde", "quando", "quanto", "quantos", "quantas", "porque", "posso", "pode", "quem",
    "come", "cosa", "cos'è", "com'è", "dov'è", "che", "quale", "quali", "dove", "quanti", "quante", "perché",
    "perche", "chi", "può", "puoi", "wat", "hoe", "waarom", "waar", "wanneer", "welke", "kun", "hoeveel",
    "jak", "co", "czy", "gdzie", "kiedy", "dlaczego", "który", "która", "które", "ile", "jaki", "jaka", "jakie",
    "można",
})  # fmt: skip


def looks_like_question(text: str) -> bool:
    """Ends with a question mark or opens with a question word (in a supported language)."""
    stripped = text.strip()
    words = stripped.split()
    first = words[0].lower().lstrip("¿¡") if words else ""
    return stripped.endswith(("?", "？")) or first in QUESTION_WORDS
