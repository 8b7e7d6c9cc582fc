"""SQuAD in the shared layout, as a paragraph-retrieval benchmark (v1.1) and a refusal benchmark (v2.0, bench/eval.py).

    DATA/squad/dev-v1.1.json    48 articles, 2067 paragraphs, 10570 questions (all answerable)
    DATA/squad/dev-v2.0.json    16 articles, 646 paragraphs, 6078 questions (3168 unanswerable)

The bundled embedder indexes about 7-15 paragraphs a second on 2 cores, so the full run takes a fixed sample: the
first `ARTICLES` articles in file order (every paragraph of each is a document; a question's gold is the paragraph it
was written on) and a seeded sample of their questions (`bot.evaluation.load_squad`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.evaluation import load_squad

V1 = Path("squad") / "dev-v1.1.json"
V2 = Path("squad") / "dev-v2.0.json"
ARTICLES = 8


def retrieval_sample(
    path: Path, *, articles: int | None = ARTICLES, questions: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(seed records, one per paragraph; questions with `gold` = their paragraph's source)."""
    docs, pairs = load_squad(path, articles=articles, questions=questions)
    return docs, [{"question": p.question, "gold": p.gold_source, "lang": "en"} for p in pairs]
