"""What readers produce and the ingestor stores: documents in the seed structure, with their chunks."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class SourceChunk:
    section: str  # anchor, "" for the whole document
    title: str
    crumbs: tuple[str, ...]
    text: str


@dataclass(slots=True)
class SourceDoc:
    """One document in the seed structure; empty derived fields are filled in before storing."""

    id: str
    source: str  # citation URL
    title: str
    crumbs: tuple[str, ...]
    content: str
    description: str = ""
    summary: str = ""
    keypoints: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    chunks: list[SourceChunk] = field(default_factory=list)
    # when the source says it last changed (file time, Last-Modified, a seed's `updated_at`); None: when the ingest
    # saw it change. Not part of the hash: a touched file with the same text is unchanged.
    changed_at: datetime | None = None

    def content_hash(self) -> str:
        """Changes whenever anything a reader or a citation would see changes."""
        blob = json.dumps(
            [
                self.source,
                self.title,
                list(self.crumbs),
                self.description,
                self.content,
                self.summary,
                self.keypoints,
                self.keywords,
                [[c.section, c.title, list(c.crumbs), c.text] for c in self.chunks],
            ],
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class SkippedSource:
    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class IngestReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: tuple[SkippedSource, ...] = ()
    # documents not stored because the embedder failed (endpoint down, wrong dimension): nothing of them was
    # written, an updated one keeps its previous version, and the next ingest tries them again
    failed: tuple[SkippedSource, ...] = ()
    chunks: int = 0  # chunks stored by this run (new or replaced documents)
    embedded: int = 0  # passages embedded by this run
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(f"{s.name}: {s.reason}" for s in self.skipped)

    def summary(self) -> str:
        return (
            f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, {self.removed} removed, "
            f"{len(self.skipped)} skipped; {self.chunks} chunks embedded in {self.seconds:.1f} s"
            + (f"; {len(self.failed)} not ingested (embedder failed), run the same ingest again" if self.failed else "")
        )
