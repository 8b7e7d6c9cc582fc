"""An ingested data folder made once per test session and copied for each test's app, search snapshot included.

A copy restores the template's snapshot the way a restarted bot restores its own (`HybridRetriever.load`): the keyword
and vector levels, and the title and unit vectors, are read from disk instead of being rebuilt and re-embedded with
e5 for every test (that was about a second of CPU per app on the 30-chunk fixture manual). The templates embed with
the disk-cached session embedder (`tests.helpers.emanual.session_embedder`): the same e5 vectors, computed once.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from bot.app import App, snapshot_dir
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


async def finish_template(app: App, folder: Path) -> AppTemplate:
    """Wait for the background title and unit levels (so they are saved beside the snapshot), then close `app`."""
    try:
        await app.retriever.wait_for_levels()
        return AppTemplate(folder, str(getattr(app.embedder, "model_name", "")), app.embedder.dim)
    finally:
        await app.close()
