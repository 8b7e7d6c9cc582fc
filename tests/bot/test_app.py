"""The composition root's shutdown: closing the app stops the search's background embedding before it closes the
embedder, the index and the database the embedding would otherwise still be using."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.app import build_app, snapshot_dir
from bot.settings import Settings
from storage.embedder import HashingEmbedder
from tests.helpers.held_embedder import HeldPassages

MANUAL = Path(__file__).resolve().parent.parent / "fixtures" / "manual"


@pytest.mark.integration
async def test_closing_the_app_stops_the_background_title_and_unit_embedding(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)
    first = await build_app(settings, embedder=HashingEmbedder())
    try:
        report = await first.ingest([str(MANUAL)], base_url="https://docs.example.com/")
        assert report.added > 5, report.summary()
        await first.retriever.wait_for_levels()
    finally:
        await first.close()
    # a restart that finds the snapshot but not its levels (as after a stop before they were saved) embeds them
    folder = snapshot_dir(settings, HashingEmbedder())
    assert folder is not None
    levels = [*folder.glob("titles-*.npz"), *folder.glob("units-*.npz")]
    assert levels
    for saved in levels:
        saved.unlink()

    embedder = HeldPassages()
    app = await build_app(settings, embedder=embedder)
    try:
        await asyncio.wait_for(embedder.held.wait(), timeout=60)  # the levels are being embedded
    finally:
        await app.close()
    assert embedder.cancelled.is_set()  # stopped by close, not left running against a disposed database
    assert not [*folder.glob("titles-*.npz"), *folder.glob("units-*.npz")]
