"""The app hands the GIL over every millisecond (bot/latency.py): what keeps the loop's stalls during a search
update at 100k chunks in tens of milliseconds (bench.scale, docs/benchmarks.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bot.app import build_app
from bot.latency import SWITCH_INTERVAL_S
from bot.settings import Settings
from storage.embedder import HashingEmbedder


@pytest.mark.integration
async def test_building_the_app_sets_the_thread_switch_interval(tmp_path: Path) -> None:
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # the interpreter's default
    try:
        app = await build_app(Settings(_env_file=None, data_dir=tmp_path), embedder=HashingEmbedder(64))
        try:
            assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)
        finally:
            await app.close()
    finally:
        sys.setswitchinterval(before)
