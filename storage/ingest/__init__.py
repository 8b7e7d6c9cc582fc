"""Ingestion of documentation into the document store and the vector index."""

from storage.doc_tables import SessionFactory
from storage.ingest.errors import IngestError
from storage.ingest.ingestor import Ingestor, corpus_version
from storage.ingest.model import IngestReport, SkippedSource, SourceChunk, SourceDoc

__all__ = [
    "IngestError",
    "IngestReport",
    "Ingestor",
    "SessionFactory",
    "SkippedSource",
    "SourceChunk",
    "SourceDoc",
    "corpus_version",
]
