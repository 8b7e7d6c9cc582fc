"""LLM mode through any OpenAI-compatible endpoint: the client, per-role strategies, the fast "understand"
strategy and answer streaming. Every strategy falls back to the role's offline strategy on failure."""

from pipeline.llm.client import OpenAIChat, StreamStats
from pipeline.llm.strategies import build_strategies
from pipeline.llm.streaming import coalesce, stream_answer

__all__ = ["OpenAIChat", "StreamStats", "build_strategies", "coalesce", "stream_answer"]
