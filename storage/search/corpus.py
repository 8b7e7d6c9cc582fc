"""An immutable snapshot of the searchable corpus: chunk metadata plus the three keyword levels.

A snapshot knows the content hash of every document it holds, so bringing it up to date is a diff against the
`documents` table: only added, changed and removed documents are read and re-tokenised (`updated`). It is saved to
a folder (`save`) and loaded from one (`load`) without reading the database or re-tokenising anything; chunk texts
stay on disk (memory-mapped) and are read for the hits only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from storage.doc_tables import ChunkRow, DocumentRow, SessionFactory
from storage.search.keyword import KeywordLevel, build_levels, gather_rows

FORMAT = 2  # 2: words keep their combining marks (storage.search.tokenize): older token tables are rebuilt
_V = TypeVar("_V")
_FETCH_BATCH = 500  # documents per SELECT when reading changed documents (each batch yields to the event loop)


@dataclass(frozen=True, slots=True)
class ChunkInfo:
    id: str
    doc_id: str
    collection: str
    section: str
    title: str
    crumbs: tuple[str, ...]
    url: str


@dataclass(frozen=True, slots=True)
class DocInfo:
    id: str
    content_hash: str
    title: str = ""
    summary: str = ""
    keypoints: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchedDocuments:
    """Rows read for changed documents: their chunks (with texts, in document order) and the documents."""

    chunks: list[tuple[ChunkInfo, str]] = field(default_factory=list)
    docs: list[DocInfo] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CorpusDiff:
    """What differs between a snapshot and the database: documents to drop and documents to (re-)read."""

    removed: frozenset[str]  # vanished or changed documents (their old rows go)
    fetch: tuple[str, ...]  # added or changed documents (their new rows are read)

    @property
    def empty(self) -> bool:
        return not self.removed and not self.fetch


class _Pool:
    """Returns the first object equal to each value it is given, so equal values loaded many times share one."""

    def __init__(self) -> None:
        self._seen: dict[object, object] = {}

    def __call__(self, value: _V) -> _V:
        return self._seen.setdefault(value, value)  # type: ignore[return-value]


class _Texts:
    """Chunk texts as one UTF-8 blob with offsets (memory-mapped when loaded from a snapshot)."""

    def __init__(self, blob: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> None:
        self.blob = blob
        self.offsets = offsets

    @classmethod
    def of(cls, texts: Iterable[str]) -> _Texts:
        encoded = [t.encode("utf-8") for t in texts]
        offsets = np.concatenate(([0], np.cumsum([len(e) for e in encoded], dtype=np.int64))).astype(np.int64)
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)

    def __getitem__(self, row: int) -> str:
        return bytes(self.blob[self.offsets[row] : self.offsets[row + 1]]).decode("utf-8")

    def spliced(self, keep: npt.NDArray[np.int64], added: Sequence[str]) -> _Texts:
        kept, offsets = gather_rows(self.blob, self.offsets, keep)
        fresh = _Texts.of(added)
        return _Texts(np.concatenate((kept, fresh.blob)), np.concatenate((offsets[:-1], offsets[-1] + fresh.offsets)))


def _chunk_keyword_texts(chunk: ChunkInfo, text: str) -> tuple[str, str]:
    return f"{chunk.title}\n{text}", " ".join((*chunk.crumbs, chunk.title))


def _doc_keyword_text(doc: DocInfo) -> str:
    return " ".join((doc.title, doc.summary, *doc.keypoints, *doc.keywords))


class SearchCorpus:
    """Keyword levels: chunk text (+ title), crumbs/title path, and the document's summary/keypoints/keywords."""

    def __init__(
        self,
        chunks: list[ChunkInfo],
        docs: list[DocInfo],
        texts: _Texts,
        text_level: KeywordLevel,
        crumbs_level: KeywordLevel,
        summary_level: KeywordLevel,
    ) -> None:
        self.chunks = chunks
        self.docs = docs
        self.texts = texts
        self.text_level = text_level
        self.crumbs_level = crumbs_level
        self.summary_level = summary_level
        self.row_of = {c.id: i for i, c in enumerate(chunks)}
        self.doc_hashes = {d.id: d.content_hash for d in docs}
        doc_row = {d.id: i for i, d in enumerate(docs)}
        self.collection_names = sorted({c.collection for c in chunks})
        code = {name: i for i, name in enumerate(self.collection_names)}
        self.collection_codes: npt.NDArray[np.int32] = np.array([code[c.collection] for c in chunks], dtype=np.int32)
        self.chunk_doc: npt.NDArray[np.int64] = np.array([doc_row.get(c.doc_id, -1) for c in chunks], dtype=np.int64)

    @classmethod
    def empty(cls) -> SearchCorpus:
        return cls.build([], [])

    @classmethod
    def build(cls, chunks: Sequence[tuple[ChunkInfo, str]], docs: Sequence[DocInfo]) -> SearchCorpus:
        """Everything from scratch (blocking: run it in a thread)."""
        return cls.empty_levels().updated(frozenset(), FetchedDocuments(list(chunks), list(docs)))

    @classmethod
    def empty_levels(cls) -> SearchCorpus:
        empty = KeywordLevel([])
        return cls([], [], _Texts.of([]), empty, empty, empty)

    def __len__(self) -> int:
        return len(self.chunks)

    def text(self, row: int) -> str:
        return self.texts[row]

    def token_counts(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """How many keyword tokens (title and text) each of `rows` has."""
        offsets = self.text_level.table.offsets
        counts: npt.NDArray[np.int64] = (offsets[rows + 1] - offsets[rows]).astype(np.int64)
        return counts

    def mask(self, collections: tuple[str, ...]) -> npt.NDArray[np.bool_]:
        codes = [i for i, name in enumerate(self.collection_names) if name in collections]
        return np.isin(self.collection_codes, codes)

    def doc_mask(self, chunks: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """The documents (rows of the summary level) that own a chunk `chunks` marks."""
        docs = np.zeros(len(self.docs), dtype=np.bool_)
        owners = self.chunk_doc[chunks]
        docs[owners[owners >= 0]] = True
        return docs

    def diff(self, hashes: dict[str, str]) -> CorpusDiff:
        """Documents to drop and to read so that this snapshot matches `hashes` (the database's doc -> hash)."""
        removed = {d for d, h in self.doc_hashes.items() if hashes.get(d) != h}
        fetch = tuple(sorted(d for d, h in hashes.items() if self.doc_hashes.get(d) != h))
        return CorpusDiff(frozenset(removed), fetch)

    def chunk_ids_of(self, doc_ids: frozenset[str]) -> list[str]:
        return [c.id for c in self.chunks if c.doc_id in doc_ids]

    def updated(self, removed: frozenset[str], fetched: FetchedDocuments) -> SearchCorpus:
        """A new snapshot without the documents `removed`, with `fetched` appended (blocking: run it in a thread).
        Kept rows reuse their token ids; only the fetched texts are tokenised."""
        fresh_doc_ids = {d.id for d in fetched.docs}
        drop = removed | fresh_doc_ids
        keep_chunks = np.array([i for i, c in enumerate(self.chunks) if c.doc_id not in drop], dtype=np.int64)
        keep_docs = np.array([i for i, d in enumerate(self.docs) if d.id not in drop], dtype=np.int64)
        new_chunks = [c for c, _ in fetched.chunks]
        keyword_texts = [_chunk_keyword_texts(c, t) for c, t in fetched.chunks]
        text, crumbs, summary = build_levels(
            [
                self.text_level.table.splice(keep_chunks, [k[0] for k in keyword_texts]),
                self.crumbs_level.table.splice(keep_chunks, [k[1] for k in keyword_texts]),
                self.summary_level.table.splice(keep_docs, [_doc_keyword_text(d) for d in fetched.docs]),
            ]
        )
        return SearchCorpus(
            [self.chunks[int(i)] for i in keep_chunks] + new_chunks,
            [self.docs[int(i)] for i in keep_docs] + list(fetched.docs),
            self.texts.spliced(keep_chunks, [t for _, t in fetched.chunks]),
            text,
            crumbs,
            summary,
        )

    # ---- persistence -------------------------------------------------------------------------------------

    def save(self, folder: Path) -> None:
        """Write the snapshot into `folder` (blocking)."""
        folder.mkdir(parents=True, exist_ok=True)
        # one small dumps per row: a single dumps of 100k rows would hold the GIL (and stall the loop) for a second
        chunks = ",".join(
            json.dumps([c.id, c.doc_id, c.collection, c.section, c.title, list(c.crumbs), c.url], ensure_ascii=False)
            for c in self.chunks
        )
        docs = ",".join(json.dumps([d.id, d.content_hash]) for d in self.docs)
        meta = f'{{"format": {FORMAT}, "chunks": [{chunks}], "docs": [{docs}]}}'
        (folder / "meta.json").write_text(meta, encoding="utf-8")
        np.save(folder / "texts.npy", np.asarray(self.texts.blob))
        np.save(folder / "text_offsets.npy", np.asarray(self.texts.offsets))
        self.text_level.save(folder / "text")
        self.crumbs_level.save(folder / "crumbs")
        self.summary_level.save(folder / "summary")

    @classmethod
    def load(cls, folder: Path) -> SearchCorpus:
        """The snapshot saved in `folder` (blocking; a few file reads and memory maps). Raises ValueError for a
        folder written in another format."""
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise ValueError(f"snapshot format {meta.get('format')!r}, expected {FORMAT}")
        # one object per distinct value: a document's id, crumbs and titles repeat on each of its chunks, the
        # collection and section names on many (at 100k chunks ~35 MB less than a string per field and row)
        pool = _Pool()
        chunks = [
            ChunkInfo(i, pool(d), pool(col), pool(sec), pool(t), pool(tuple(pool(c) for c in cr)), u)
            for i, d, col, sec, t, cr, u in meta["chunks"]
        ]
        docs = [DocInfo(pool(i), h) for i, h in meta["docs"]]  # summary texts live in the summary level's token ids
        del meta, pool
        texts = _Texts(np.load(folder / "texts.npy", mmap_mode="r"), np.load(folder / "text_offsets.npy"))
        return cls(
            chunks,
            docs,
            texts,
            KeywordLevel.load(folder / "text"),
            KeywordLevel.load(folder / "crumbs"),
            KeywordLevel.load(folder / "summary"),
        )


# ---- reading the database (async; plain rows, no ORM objects; one batch at a time) -----------------------------


async def document_hashes(db: SessionFactory) -> dict[str, str]:
    """Every document's content hash: what a snapshot is compared against."""
    async with db.session() as session:
        rows = await session.execute(select(DocumentRow.id, DocumentRow.content_hash))
        return {doc_id: digest for doc_id, digest in rows.all()}


async def fetch_documents(db: SessionFactory, doc_ids: Sequence[str]) -> FetchedDocuments:
    """The chunks and documents of `doc_ids`, read in batches so no single step holds the event loop long."""
    out = FetchedDocuments()
    for start in range(0, len(doc_ids), _FETCH_BATCH):
        batch = list(doc_ids[start : start + _FETCH_BATCH])
        async with db.session() as session:
            docs = await session.execute(
                select(
                    DocumentRow.id,
                    DocumentRow.content_hash,
                    DocumentRow.title,
                    DocumentRow.summary,
                    DocumentRow.keypoints,
                    DocumentRow.keywords,
                ).where(DocumentRow.id.in_(batch))
            )
            out.docs.extend(DocInfo(i, h, t, s, tuple(kp), tuple(kw)) for i, h, t, s, kp, kw in docs.all())
            chunks = await session.execute(
                select(
                    ChunkRow.id,
                    ChunkRow.doc_id,
                    ChunkRow.collection,
                    ChunkRow.section,
                    ChunkRow.title,
                    ChunkRow.crumbs,
                    ChunkRow.url,
                    ChunkRow.text,
                )
                .where(ChunkRow.doc_id.in_(batch))
                .order_by(ChunkRow.doc_id, ChunkRow.ord)
            )
            out.chunks.extend(
                (ChunkInfo(i, d, col, s, t, tuple(cr), u), text) for i, d, col, s, t, cr, u, text in chunks.all()
            )
    return out
