"""The dependency direction of the shipped packages, read from their import statements (ast, no imports run):
the neutral messages sit at the bottom (`pipeline.messages`), `storage/` never imports `bot/` or `adapters/`,
`pipeline/` imports neither, and shipped code never imports `tests/` or `bench/`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "pipeline": ("bot", "adapters", "storage", "tests", "bench"),
    "storage": ("bot", "adapters", "tests", "bench"),
    "adapters": ("storage", "tests", "bench"),
    "bot": ("tests", "bench"),
}
# Known exceptions, listed rather than hidden: the Slack demo is a small composition of its own (app, delivery on
# the app's database) run against the recording fake Web API that lives with the tests.
KNOWN = {
    ("adapters/slack/demo.py", "tests"),
    ("adapters/slack/demo.py", "storage"),
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_packages_import_only_downwards(package: str) -> None:
    wrong = []
    for path in sorted((ROOT / package).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        for target in imported_packages(path) & set(FORBIDDEN[package]):
            if (relative, target) not in KNOWN:
                wrong.append(f"{relative} imports {target}")
    assert wrong == []


def test_the_neutral_messages_import_nothing_above_them() -> None:
    assert imported_packages(ROOT / "pipeline" / "messages.py") <= {"__future__", "dataclasses", "datetime", "enum",
                                                                    "typing", "pipeline"}  # fmt: skip


def test_the_image_holds_what_the_known_exceptions_import() -> None:
    """`docbot eval` and the Slack demo are documented commands: the image must carry bench/ and the fake Web API."""
    copied = {line.split()[-1] for line in (ROOT / "deploy" / "Dockerfile").read_text().splitlines()
              if line.startswith("COPY") and "--from" not in line}  # fmt: skip
    assert {"bench", "tests/fakes", "tests/__init__.py", "tests/fixtures/manual", "storage"} <= copied
