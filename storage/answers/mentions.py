"""The documentation an answer relies on: the sections it links to and those the bot cited in its thread, each kept
with the text it had, so that a change of that text sends the answer back to review with the difference.

A document's content hash moving is only the trigger: an answer is sent back when the text of the section it relies
on changed (or the document is gone), not when another section of the same page did.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import select

from pipeline.types import TEAM_ANSWER_DOC_PREFIX
from storage.answers.model import DocMention
from storage.doc_tables import ChunkRow, DocumentRow, SessionFactory

MAX_MENTIONS = 8  # sections one answer is checked against
MAX_EXCERPT_CHARS = 20_000  # of a section's (or a whole document's) text kept to diff against
MAX_DIFF_LINES = 60
_SEPARATORS = str.maketrans({c: " " for c in "<>|()[]{}\"'`"})  # what wraps links in Slack, Discord and Markdown
_TRAILING = ".,;:!?*_~"


def links_in(text: str) -> list[str]:
    """The http(s) links in a message, in order, without duplicates: Slack's `<url|label>`, Markdown's
    `[label](url)` and `<url>`, and bare links, with sentence punctuation after them left out."""
    found: list[str] = []
    for token in text.translate(_SEPARATORS).split():
        token = token.rstrip(_TRAILING)
        parts = urlsplit(token)
        if parts.scheme in ("http", "https") and parts.netloc:
            found.append(token)
    return list(dict.fromkeys(found))


def _without_fragment(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


@dataclass(frozen=True, slots=True)
class MentionChange:
    """A mentioned section whose text changed (`now` is its current state) or that is gone (`now` None)."""

    before: DocMention
    now: DocMention | None
    diff: str


def describe_changes(changes: Sequence[MentionChange]) -> str:
    """The unified diffs of the changed sections, one after another, for the reviewer."""
    return "\n".join(change.diff for change in changes)


def _diff(before: DocMention, now: DocMention | None) -> str:
    label = f"{before.title or before.url}"
    if now is None:
        return f"--- {label} (was at {before.url})\n+++ (removed from the documentation)\n"
    lines = list(
        difflib.unified_diff(
            before.excerpt.splitlines(), now.excerpt.splitlines(), fromfile=f"{label} (before)",
            tofile=f"{label} (now)", lineterm="", n=1,
        )
    )  # fmt: skip
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more lines"]
    return "\n".join(lines) + "\n"


def compare(
    mentions: Sequence[DocMention], current: dict[tuple[str, str], DocMention]
) -> tuple[list[MentionChange], tuple[DocMention, ...]]:
    changed: list[MentionChange] = []
    kept: list[DocMention] = []
    for before in mentions:
        now = current.get((before.doc_id, before.section))
        if now is None or now.excerpt != before.excerpt:
            changed.append(MentionChange(before, now, _diff(before, now)))
            kept.append(before)
        else:
            kept.append(now)
    return changed, tuple(kept)


class MentionReader:
    """Reads the documents' current state for the answers' mentions."""

    def __init__(self, db: SessionFactory) -> None:
        self._db = db

    async def resolve(
        self, *, text: str, near_chunk_ids: Sequence[str] = (), collections: Sequence[str] | None = None
    ) -> tuple[DocMention, ...]:
        """The sections an answer links to (by its links: a section's URL, or a document's for the whole of it) and
        the chunks it was given near (what the bot cited in the thread), as they are now; at most MAX_MENTIONS.
        With `collections`, only documents of those collections (the answer may not rely on what its channel
        cannot see)."""
        keys: list[tuple[str, str]] = []
        links = links_in(text)
        async with self._db.session() as session:
            if near_chunk_ids:
                rows = await session.execute(
                    select(ChunkRow.id, ChunkRow.doc_id, ChunkRow.section).where(ChunkRow.id.in_(list(near_chunk_ids)))
                )
                by_id = {chunk_id: (doc_id, section) for chunk_id, doc_id, section in rows.all()}
                keys += [by_id[c] for c in near_chunk_ids if c in by_id]
            if links:
                rows = await session.execute(
                    select(ChunkRow.doc_id, ChunkRow.section, ChunkRow.url).where(ChunkRow.url.in_(links))
                )
                sections = {url: (doc_id, section) for doc_id, section, url in rows.all()}
                pages = [_without_fragment(u) for u in links if u not in sections]
                docs = await session.execute(
                    select(DocumentRow.id, DocumentRow.source).where(DocumentRow.source.in_(pages))
                ) if pages else None  # fmt: skip
                by_source = {source: doc_id for doc_id, source in (docs.all() if docs is not None else ())}
                for url in links:
                    if url in sections:
                        keys.append(sections[url])
                    elif _without_fragment(url) in by_source:
                        keys.append((by_source[_without_fragment(url)], ""))
        wanted = [k for k in dict.fromkeys(keys) if not k[0].startswith(TEAM_ANSWER_DOC_PREFIX)][:MAX_MENTIONS]
        current = await self._current(wanted)
        found = [current[k] for k in wanted if k in current]
        if collections is not None:
            found = [m for m in found if m.collection in collections]
        return tuple(found)

    async def refresh(self, mentions: Sequence[DocMention]) -> tuple[DocMention, ...]:
        """The same sections as they are now (those gone are left out): what a reviewer approves against."""
        keys = [(m.doc_id, m.section) for m in mentions]
        current = await self._current(keys)
        return tuple(current[k] for k in keys if k in current)

    async def changes(
        self, answers: Sequence[Sequence[DocMention]]
    ) -> list[tuple[list[MentionChange], tuple[DocMention, ...]]]:
        """For each answer's mentions (one read for all of them): the sections whose text changed or that are gone,
        with their diffs, and the mentions as they should be stored now (unchanged sections with their documents'
        new hashes)."""
        current = await self._current([(m.doc_id, m.section) for mentions in answers for m in mentions])
        return [compare(mentions, current) for mentions in answers]

    async def _current(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], DocMention]:
        wanted = list(dict.fromkeys(keys))
        doc_ids = list({doc_id for doc_id, _ in wanted})
        if not doc_ids:
            return {}
        async with self._db.session() as session:
            docs = {
                row.id: row
                for row in await session.scalars(select(DocumentRow).where(DocumentRow.id.in_(doc_ids)))
            }
            chunk_rows = (
                await session.execute(
                    select(ChunkRow.doc_id, ChunkRow.section, ChunkRow.title, ChunkRow.url, ChunkRow.text)
                    .where(ChunkRow.doc_id.in_(doc_ids))
                    .order_by(ChunkRow.doc_id, ChunkRow.ord)
                )
            ).all()
        texts: dict[tuple[str, str], list[str]] = {}
        heads: dict[tuple[str, str], tuple[str, str]] = {}
        for doc_id, section, title, url, text in chunk_rows:
            texts.setdefault((doc_id, section), []).append(text)
            heads.setdefault((doc_id, section), (title, url))
        found: dict[tuple[str, str], DocMention] = {}
        for doc_id, section in wanted:
            doc = docs.get(doc_id)
            if doc is None:
                continue
            if section:
                if (doc_id, section) not in texts:
                    continue  # the section is gone from the page
                title, url = heads[(doc_id, section)]
                excerpt = "\n\n".join(texts[(doc_id, section)])
            else:
                title, url, excerpt = doc.title, doc.source, doc.content
            found[(doc_id, section)] = DocMention(
                doc_id=doc_id, collection=doc.collection, section=section, title=title, url=url,
                content_hash=doc.content_hash, excerpt=excerpt[:MAX_EXCERPT_CHARS],
            )  # fmt: skip
        return found
