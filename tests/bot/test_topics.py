"""The docs' top sections for Slack's suggested prompts (bot/topics.py), on the fixture manual's database."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select

from bot.app import App
from bot.topics import DocsTopics, top_sections
from storage.doc_tables import ChunkRow

pytestmark = pytest.mark.integration


def test_the_first_level_where_the_documents_differ_ranked_by_sections() -> None:
    manual = [(["Manual", "Setup", "Pairing"], 5), (["Manual", "Setup", "Batteries"], 2),
              (["Manual", "Troubleshooting"], 4), (["Manual", "Accessibility"], 9)]  # fmt: skip
    assert top_sections(manual) == ["Accessibility", "Setup", "Troubleshooting"]  # "Manual" says nothing
    assert top_sections([(["Slack"], 3), (["Discord"], 3), (["Reliability"], 9)]) == ["Reliability", "Discord",
                                                                                        "Slack"]  # fmt: skip
    assert top_sections([]) == []


async def test_the_manuals_top_sections_biggest_first_and_cached(make_app: Callable[..., Any]) -> None:
    app: App = await make_app()
    now = [0.0]
    topics = DocsTopics(app.db, ttl_s=60, clock=lambda: now[0])
    labels = await topics(["default"], 4)
    assert len(labels) == 4 == len(set(labels))
    async with app.db.session() as session:
        chunks = [(list(c or []), t) for c, t in (await session.execute(select(ChunkRow.crumbs, ChunkRow.title))).all()]
    sizes = [sum(1 for crumbs, title in chunks if label in (*crumbs, title)) for label in labels]
    assert all(size > 0 for size in sizes) and sizes == sorted(sizes, reverse=True), (labels, sizes)
    assert await topics(["default"], 2) == labels[:2]  # from the cache
    assert await topics(["nothing-here"], 4) == []
