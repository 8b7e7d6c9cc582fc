"""An ingested data folder made once per test session and copied for each test's app, search snapshot included.

A copy restores the template's snapshot the way a restarted bot restores its own (`HybridRetriever.load`): the keyword
and vector levels, and the title and unit vectors, are read from disk instead of being rebuilt and re-embedded with
e5 for every test (that was about a second of CPU per app on the 30-chunk fixture manual). The templates embed with
the disk-cached session embedder (`bench.emanual_data.session_embedder`): the same e5 vectors, computed once.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from bench.emanual_data import session_embedder
from bot.app import App, build_app, snapshot_dir
from bot.settings import Settings

DATABASE_FILE = "docbot.db"


@dataclass(frozen=True)
class AppTemplate:
    """The template's folder and the embedder its snapshot belongs to (the snapshot folder's key names both)."""

    folder: Path
    model_name: str
    dim: int

    @property
    def database(self) -> Path:
        return self.folder / DATABASE_FILE

    async def build_app(self, settings: Settings) -> App:
        """An app on a private copy of the template (`copy_into`), built as production builds one."""
        self.copy_into(settings)
        return await build_app(settings)

    def copy_into(self, settings: Settings) -> None:
        """The database, and the snapshot where an app with `settings` looks for it. An app whose settings pick
        another embedder (or database) looks elsewhere, finds nothing and rebuilds, as it would in production."""
        data = settings.data_dir
        data.mkdir(parents=True, exist_ok=True)
        shutil.copy(self.database, data / DATABASE_FILE)
        embedder = SimpleNamespace(model_name=self.model_name, dim=self.dim)
        source = snapshot_dir(Settings(data_dir=self.folder), embedder)
        target = snapshot_dir(settings, embedder)
        if source is not None and target is not None and source.is_dir():
            shutil.copytree(source, target)


async def make_template(folder: Path, fill: Callable[[App], Awaitable[None]]) -> AppTemplate:
    """An app on `folder` embedding with the disk-cached session e5; `fill(app)` ingests (and asserts what it
    ingested). Then the background title and unit levels are awaited, so they are saved beside the snapshot, and the
    app is closed, whatever happened."""
    app = await build_app(Settings(data_dir=folder), embedder=session_embedder())
    try:
        await fill(app)
        await app.retriever.wait_for_levels()
        return AppTemplate(folder, str(getattr(app.embedder, "model_name", "")), app.embedder.dim)
    finally:
        await app.close()
