"""The site crawl benchmark's question set: 30 questions, each with a gold page of the sections it ingests."""

from __future__ import annotations

import pytest

from bench.site_crawl import QA, SECTIONS
from bench.sites import python_docs
from bot.evaluation import load_qa

pytestmark = pytest.mark.unit


def test_thirty_questions_each_with_a_gold_page_in_the_ingested_sections() -> None:
    pairs = load_qa(QA)
    assert len(pairs) == 30 and len({p.question for p in pairs}) == 30
    assert all(p.gold_source and p.gold_source.split("/", 1)[0] in SECTIONS and p.answers for p in pairs)
    docs = python_docs()
    if docs is None:
        pytest.skip("python3-doc is not installed: the gold pages cannot be checked on disk")
    missing = [p.gold_source for p in pairs if p.gold_source and not (docs / p.gold_source).is_file()]
    assert not missing
