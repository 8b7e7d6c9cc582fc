"""reading: which passage of the sections found answers the question, read for meaning in any language.

The augmentation role reads the numbered sources before anything is written. Each source is cut into passages (its
Markdown blocks, `pipeline.text.blocks`): a short paragraph whole, a long one as windows of consecutive sentences,
a list or code block whole, a table as its header with the rows that match the question (or whole when small and
none does). A bullet list is ranked whole, then quoted as the items that alone hold one of the question's words
(`answering_items`). Each passage is scored against the question by

- meaning: the bundled multilingual model's cosine between the question (as a query) and the passage, so a
  question in Russian reads an English passage the way its English twin does, as far as the model aligns them;
- words: the share of the question's content words found in the passage and its section's headings (stems, in the
  docs' language; a question in another language has none to share and is read by meaning alone);
- the search's rank of its section; a numbered list for a question asking how to do something (in its own
  language: `locales.asks_how_to`) and a row or item defining a name the question asks about ("DOCBOT_LLM_MODEL")
  count extra;
- what the thread was already told: for a follow-up asking what else there is ("what else could it be?", "I already
  checked the sleep timer"), a passage whose sentences an earlier reply quoted counts less by the share of them, so
  the rest of the answer leads (a table row holding the quoted remedy and another stays, behind new ones);
- an example: a passage putting the question itself in quotation marks is about such questions, not their answer.

An exact identifier the question names (DOCBOT_LLM_MODEL, E-2041) narrows the passages to those that contain it,
when any does. The result (`Reading`) keeps the passages best first: the response quotes the first one first, the
augmented prompt of LLM mode lists the sources in that order, and the answerability decision weighs how well the
quoted passage answers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import re
from collections import Counter, OrderedDict
from collections.abc import Callable

import numpy as np

from pipeline import text as textutil
from pipeline.agents.guardrails import beyond_capability
from pipeline.intent import IntentReader
from pipeline.locales import asks_how_to, lexicon
from pipeline.types import Embedder, Passage, PassageKind, QuestionIntent, Reading, SourceReference, Vector

MIN_SENTENCE_WORDS = 3
MAX_WHOLE_PARAGRAPH = 700
MAX_WINDOW_CHARS = 450
MAX_WHOLE_BLOCK = 2400
MAX_TABLE_ROWS = 14
LONG_PASSAGE = 500
MAX_EMBEDDED = 24  # passages embedded per question (the first sources' first): the rest are read by words
EMBED_CHARS = 600
READ_DEADLINE_S = 10.0  # the embeddings of one reading; past it the passages are read by words and rank only
MEANING_SPAN = 0.15  # a passage this far below the best cosine counts as not about the question at all
# weights of the ranking (chosen on the tune halves of the e-manual and the labelled shoppers' questions)
W_MEANING, W_WORDS, W_RANK = 0.25, 0.4, 1.0
# a row defining the named setting leads over a source ranked up to a third higher (the table of wrong values; stop 43)
HOW_TO_BONUS, DEFINES_BONUS = 0.08, 0.4
# a passage the thread was already given counts this much less (by the share of its sentences given): a passage as
# relevant that was not said yet leads, one from an unrelated section does not (it would answer "what else?" with noise)
SAID_PENALTY = 0.3
MIN_QUOTED_CHARS = 30  # a sentence this long found in an earlier reply was quoted there, not merely said alike
# a passage putting the question itself in quotation marks shows it as an example ("a symptom stated rather than asked,
# "the bot doesn't answer in my channel", needs none"): it is about such questions, not their answer
EXAMPLE_PENALTY = 0.5
EXAMPLE_SHARE = 0.8  # of the question's words in the quoted words, and of those in the question: the same message
MIN_EXAMPLE_WORDS = 4  # a shorter question is quoted as a name or a label ("Sleep Timer"), not as an example
# from each quotation mark to the next (overlapping: a passage cut inside a quote leaves its marks unpaired)
_QUOTED = re.compile(r'(?=["“«„「]([^"“”«»„「」\n]+)["”»“」])')


def plain_words(text: str) -> str:
    """`text` as `textutil.comparable` reads a quote (words only, case-folded), a platform's escapes (`&amp;`) undone
    first: what an earlier reply is compared in."""
    return textutil.comparable(html.unescape(text))


def quotes_the_question(text: str, question: str) -> bool:
    """Whether `text` puts the question in quotation marks: quoted words that are the question's words (all of them,
    function words too) and hardly any others."""
    asked = set(textutil.comparable(question).split())
    if len(asked) < MIN_EXAMPLE_WORDS:
        return False
    for match in _QUOTED.finditer(text):
        quoted = set(textutil.comparable(match.group(1)).split())
        if textutil.overlap(asked, quoted) >= EXAMPLE_SHARE and textutil.overlap(quoted, asked) >= EXAMPLE_SHARE:
            return True
    return False


def share_said(passage: Passage, said: str) -> float:
    """The share of `passage`'s sentences found in `said` (`plain_words` of the thread's earlier replies)."""
    if not said:
        return 0.0  # most readings: nothing was said before, and every passage is read
    quotable = [s for s in textutil.sentences(passage.text) if len(s) >= MIN_QUOTED_CHARS]
    if not quotable:
        return 0.0
    return sum(plain_words(s) in said for s in quotable) / len(quotable)


def _defines(passage: Passage, name: str) -> bool:
    """Whether `passage` defines `name`: a table row or list item that opens with it (`| `NAME` | ...`), not with an
    example of setting it (`| `NAME=search=4` | ...`, a row of the table of wrong values) or a longer name."""
    for line in passage.text.splitlines():
        head = line.strip().lstrip("|-*+0123456789.) ").lstrip("`*").lower()
        after = head[len(name) : len(name) + 1]
        if head.startswith(name.lower()) and not (after == "=" or after.isalnum() or after == "_"):
            return True
    return False


def _bullets_kept(passage: Passage, keep: Callable[[list[list[str]]], list[list[str]]]) -> Passage:
    """A bullet list cut to its intro and the items `keep` chooses (each item its source lines); whole when it
    chooses none or all of them, and numbered steps always whole."""
    if passage.kind is not PassageKind.LIST or passage.ordered:
        return passage
    intro, items = textutil.list_item_lines(passage.text)
    kept = keep(items)
    if not kept or len(kept) == len(items):
        return passage
    return dataclasses.replace(passage, text="\n".join([*intro, *(line for item in kept for line in item)]))


def items_naming(passage: Passage, names: set[str]) -> Passage:
    """A bullet list cut to its intro and the items that mention one of `names` ("what does ZX-42 mean?" quotes the
    ZX-42 item, not ZX-17 before it); a table to its header and the rows naming it. Numbered steps stay whole."""
    if passage.kind is PassageKind.TABLE:
        lead, header, rows = textutil.table_rows(passage.text)
        named = [r for r in rows if any(textutil.mentions_identifier(r, n) for n in names)]
        if not header or not named or len(named) == len(rows):
            return passage
        return dataclasses.replace(passage, text="\n".join([*lead, *header, *named]))
    return _bullets_kept(passage, lambda items: [
        item for item in items if any(textutil.mentions_identifier("\n".join(item), n) for n in names)
    ])  # fmt: skip


def answering_items(passage: Passage, wanted: set[str], stop: frozenset[str], language: str) -> Passage:
    """A bullet list cut to its intro and the items that alone have one of the question's words: "can I use
    ollama?" quotes the Ollama item of a list of providers, not the five before and after it. A word several items
    share ("can it read PDFs?" over a list of formats, each read its own way) makes the list the answer, and it stays
    whole; so do numbered steps."""

    def alone(items: list[list[str]]) -> list[list[str]]:
        found = [wanted & textutil.features("\n".join(item), stop, language) for item in items]
        spread = Counter(word for words in found for word in words)
        return [item for item, words in zip(items, found, strict=True) if any(spread[word] == 1 for word in words)]

    return _bullets_kept(passage, alone)


def matching_rows(rows: list[str], wanted: set[str], stop: frozenset[str], language: str) -> list[str]:
    """The rows of a table that share the question's words, in the table's order, each sharing at least one word
    fewer than the best row: a long table has one of the question's words in many rows ("busy", "try", "again"),
    and the rows that hold three of them were buried among those that hold one."""
    counts = [len(wanted & textutil.features(row, stop, language)) for row in rows]
    least = max(1, max(counts, default=0) - 1)
    return [row for row, count in zip(rows, counts, strict=True) if count >= least]


def within_length(text: str) -> str:
    """`text` cut at a line end to at most `MAX_WHOLE_BLOCK` characters."""
    return text if len(text) <= MAX_WHOLE_BLOCK else text[:MAX_WHOLE_BLOCK].rsplit("\n", 1)[0]


def passages_of(source: SourceReference, wanted: set[str], stop: frozenset[str], language: str) -> list[Passage]:
    """The quotable passages of one source, in order."""
    out: list[Passage] = []
    for position, block in enumerate(textutil.blocks(source.text)):
        base = position * 1000
        if block.kind in ("paragraph", "quote"):
            body = "\n".join(line.lstrip("> ").rstrip() for line in block.text.splitlines())
            flat = textutil.one_line(body)
            if textutil.word_count(flat) < MIN_SENTENCE_WORDS or flat.strip() == source.title.strip():
                continue
            said = textutil.sentences(body)
            planted = [s for s in said if beyond_capability(s) == "injection"]
            if planted:  # a paragraph carrying instructions to an assistant: only its other sentences are quotable
                out.extend(
                    Passage(source.number, base + i, PassageKind.PARAGRAPH, sentence)
                    for i, sentence in enumerate(said)
                    if sentence not in planted and textutil.word_count(sentence) >= MIN_SENTENCE_WORDS
                )
                continue
            if len(flat) <= MAX_WHOLE_PARAGRAPH:
                out.append(Passage(source.number, base, PassageKind.PARAGRAPH, flat))
                continue
            for i in range(len(said)):
                window = said[i]
                for following in said[i + 1 :]:
                    if len(window) + len(following) + 1 > MAX_WINDOW_CHARS:
                        break
                    window = f"{window} {following}"
                if textutil.word_count(window) >= MIN_SENTENCE_WORDS:
                    out.append(Passage(source.number, base + i, PassageKind.PARAGRAPH, window))
        elif block.kind == "table":
            intro, header, rows = textutil.table_rows(block.text)
            if not header:
                continue
            matching = matching_rows(rows, wanted, stop, language)
            chosen = (matching if matching and len(matching) < len(rows) else rows)[:MAX_TABLE_ROWS]
            lead = textutil.reflow("\n".join(line for line in intro if line.strip())).splitlines()
            out.append(Passage(source.number, base, PassageKind.TABLE, "\n".join([*lead, *header, *chosen])))
        elif block.kind in ("list", "code"):
            text = textutil.reflow(block.text) if block.kind == "list" else block.text
            text = "\n".join(line for line in text.splitlines() if line.strip())
            if block.kind == "code":  # a list is cut to length once its answering items are chosen (`Reader.read`)
                text = within_length(text)
            kind = PassageKind.LIST if block.kind == "list" else PassageKind.CODE
            out.append(Passage(source.number, base, kind, text, ordered=block.ordered))
    return out


def within(passage: Passage) -> Passage:
    """`passage` cut to `MAX_WHOLE_BLOCK` characters (only a list can be longer: the other kinds are cut when made)."""
    if len(passage.text) <= MAX_WHOLE_BLOCK:
        return passage
    return dataclasses.replace(passage, text=within_length(passage.text))


class PassageMemo:
    """Passage vectors by text, the most recent `size` kept: the sections people ask about repeat, and a research
    or regenerate round reads the same sources again."""

    def __init__(self, embedder: Embedder, size: int = 4096) -> None:
        self._embedder = embedder
        self._size = size
        self._vectors: OrderedDict[str, Vector] = OrderedDict()

    async def vectors(self, texts: list[str]) -> Vector:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, await self._embedder.embed_passages(missing), strict=True):
                self._vectors[text] = vector
        for text in texts:
            self._vectors.move_to_end(text)
        while len(self._vectors) > self._size:
            self._vectors.popitem(last=False)
        return np.vstack([self._vectors[t] for t in texts])


class Reader:
    """Reads the sources against a question (see the module's doc). Without an embedder, by words and rank only."""

    def __init__(self, embedder: Embedder | None = None, *, max_embedded: int = MAX_EMBEDDED) -> None:
        self._embedder = embedder
        self._memo = PassageMemo(embedder) if embedder is not None else None
        self._intent = IntentReader(embedder) if embedder is not None else None
        self._max_embedded = max_embedded

    async def read(
        self,
        question: str,
        language: str | None,
        docs_language: str,
        sources: tuple[SourceReference, ...],
        *,
        said: str = "",
    ) -> Reading:
        """The passages of `sources` best first for `question`; `said` is what the thread was already told
        (`plain_words`), for a follow-up asking what else there is."""
        codes = textutil.codes(question)
        if codes and any(codes & textutil.codes(s.text) for s in sources):
            # the question names a code the docs have: sources about other codes are not the answer
            sources = tuple(s for s in sources if codes & textutil.codes(s.text))
        stop = lexicon(language).stopwords | lexicon(docs_language).stopwords
        wanted = textutil.features(question, stop, docs_language, asked=True)
        passages = [p for s in sources for p in passages_of(s, wanted, stop, docs_language)]
        names = textutil.identifiers(question)
        named = [p for p in passages if any(textutil.mentions_identifier(p.text, n) for n in names)]
        if named:
            passages = [items_naming(p, names) for p in named]  # an exact name the docs have: only what has it
        by_number = {s.number: s for s in sources}
        # ranked as the list a reader sees at first: its opening `MAX_WHOLE_BLOCK` characters
        words = [self._words(within(p), by_number[p.source], wanted, stop, docs_language) for p in passages]
        intent, margin, meaning, failed = QuestionIntent.DOCS, 0.0, [0.0] * len(passages), None
        try:
            # bounded: a remote embedder that hangs costs this reading its meaning, never the answer
            async with asyncio.timeout(READ_DEADLINE_S):
                question_vector = await self._question_vector(question)
                if question_vector is not None and self._intent is not None:
                    intent, margin = await self._intent.read(question_vector)
                meaning = await self._meaning(question_vector, passages)
        except Exception as exc:  # any embedder failure (a timeout, an endpoint's error): read by words and rank
            failed = type(exc).__name__
        examples = [quotes_the_question(p.text, question) for p in passages]
        scored = self._ranked(question, language, passages, words, meaning, by_number, names, said, examples)
        # ranked as whole lists, quoted as the items that answer (from all of a long list's items, so the one that
        # answers is found wherever it stands): cutting a list does not make it rank higher
        quoted = [within(answering_items(p, wanted, stop, docs_language)) for p in scored]
        return Reading(tuple(quoted), intent, margin, unread=failed)

    async def _question_vector(self, question: str) -> Vector | None:
        if self._embedder is None:
            return None
        vectors: Vector = await self._embedder.embed_queries([question])
        first: Vector = vectors[0]
        return first

    @staticmethod
    def _words(
        passage: Passage, source: SourceReference, wanted: set[str], stop: frozenset[str], language: str
    ) -> float:
        own = textutil.features(passage.text, stop, language)
        context = own | textutil.features(" ".join((*source.crumbs, source.title)), stop, language)
        share = 0.6 * textutil.overlap(wanted, own) + 0.4 * textutil.overlap(wanted, context)
        return float(share * min(1.0, (LONG_PASSAGE / max(len(passage.text), 1)) ** 0.35))  # long blocks match by size

    async def _meaning(self, question_vector: Vector | None, passages: list[Passage]) -> list[float]:
        """Cosines of the question with the first `max_embedded` passages (in source order: the search's best
        sections first); 0.0 for the rest."""
        if question_vector is None or self._memo is None or not passages:
            return [0.0] * len(passages)
        head = [p.text[:EMBED_CHARS] for p in passages[: self._max_embedded]]
        cosine = (await self._memo.vectors(head)) @ question_vector
        return [round(float(v), 4) for v in cosine] + [0.0] * (len(passages) - len(head))

    @staticmethod
    def _ranked(
        question: str,
        language: str | None,
        passages: list[Passage],
        words: list[float],
        meaning: list[float],
        sources: dict[int, SourceReference],
        names: set[str],
        said: str,
        examples: list[bool],
    ) -> list[Passage]:
        top_confidence = max(s.confidence for s in sources.values()) or 1.0
        best_words = max(words, default=0.0)
        best_meaning = max(meaning, default=0.0)
        how_to = asks_how_to(question, language)
        out: list[Passage] = []
        for passage, share, cosine, example in zip(passages, words, meaning, examples, strict=True):
            relevance = max(0.0, 1.0 - (best_meaning - cosine) / MEANING_SPAN) if best_meaning > 0 else 0.0
            if best_meaning > 0 and cosine == 0.0:
                relevance = 0.0  # not embedded: read by its words and rank only
            if relevance == 0.0 and share < 0.5 * best_words:
                continue  # far less about the question than the best passage by meaning and by words: noise
            rank = sources[passage.source].confidence / top_confidence
            bonus = (HOW_TO_BONUS if how_to and passage.ordered else 0.0) + (
                DEFINES_BONUS if any(_defines(passage, n) for n in names) else 0.0
            )
            score = W_MEANING * relevance + W_WORDS * share + W_RANK * rank + bonus
            score -= SAID_PENALTY * share_said(passage, said) + (EXAMPLE_PENALTY if example else 0.0)
            out.append(dataclasses.replace(passage, meaning=cosine, words=round(share, 4), score=round(score, 4)))
        return sorted(out, key=lambda p: p.score, reverse=True)
