"""Multi-level search over the documentation: keywords, embeddings, crumbs, summaries, fused adaptively."""

from storage.search.quality import FITTED, QualityThresholds, grade
from storage.search.retriever import HybridRetriever

__all__ = ["FITTED", "HybridRetriever", "QualityThresholds", "grade"]
