"""An immutable snapshot of the searchable corpus: chunk metadata plus the three keyword levels."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from sqlalchemy import select

from storage.doc_tables import ChunkRow, DocumentRow, SessionFactory
from storage.search.keyword import KeywordLevel


@dataclass(frozen=True, slots=True)
class ChunkInfo:
    id: str
    doc_id: str
    collection: str
    section: str
    title: str
    crumbs: tuple[str, ...]
    url: str
    text: str


@dataclass(frozen=True, slots=True)
class DocInfo:
    id: str
    title: str
    crumbs: tuple[str, ...]
    summary: str
    keypoints: tuple[str, ...]
    keywords: tuple[str, ...]


class SearchCorpus:
    """Keyword levels: chunk text (+ title), crumbs/title path, and the document's summary/keypoints/keywords."""

    def __init__(self, chunks: list[ChunkInfo], docs: list[DocInfo]) -> None:
        self.chunks = chunks
        self.row_of = {c.id: i for i, c in enumerate(chunks)}
        doc_row = {d.id: i for i, d in enumerate(docs)}
        self.collection_names = sorted({c.collection for c in chunks})
        code = {name: i for i, name in enumerate(self.collection_names)}
        self.collection_codes: npt.NDArray[np.int32] = np.array([code[c.collection] for c in chunks], dtype=np.int32)
        self.chunk_doc: npt.NDArray[np.int64] = np.array([doc_row.get(c.doc_id, -1) for c in chunks], dtype=np.int64)
        self.text_level = KeywordLevel([f"{c.title}\n{c.text}" for c in chunks])
        self.crumbs_level = KeywordLevel([" ".join((*c.crumbs, c.title)) for c in chunks])
        self.summary_level = KeywordLevel(
            [" ".join((d.title, d.summary, *d.keypoints, *d.keywords)) for d in docs]
        )

    def __len__(self) -> int:
        return len(self.chunks)

    def mask(self, collections: tuple[str, ...]) -> npt.NDArray[np.bool_]:
        codes = [i for i, name in enumerate(self.collection_names) if name in collections]
        return np.isin(self.collection_codes, codes)

    @classmethod
    async def fetch(cls, db: SessionFactory) -> tuple[list[ChunkInfo], list[DocInfo]]:
        async with db.session() as session:
            chunk_rows = (await session.execute(select(ChunkRow).order_by(ChunkRow.doc_id, ChunkRow.ord))).scalars()
            chunks = [
                ChunkInfo(r.id, r.doc_id, r.collection, r.section, r.title, tuple(r.crumbs), r.url, r.text)
                for r in chunk_rows
            ]
            doc_rows = (await session.execute(select(DocumentRow))).scalars()
            docs = [
                DocInfo(r.id, r.title, tuple(r.crumbs), r.summary, tuple(r.keypoints), tuple(r.keywords))
                for r in doc_rows
            ]
        return chunks, docs
