"""The dependency direction of the shipped packages, read from their import statements (ast, no imports run):
the neutral messages sit at the bottom (`pipeline/messages/`, standard library only), `storage/` never imports `bot/`
or `adapters/`, `pipeline/` imports neither, `adapters/` never import `bot/` (they get what they need from it as
arguments), shipped code and the benchmarks never import `tests/`, and `bench/` has no import circle."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "pipeline": ("bot", "adapters", "storage", "tests", "bench"),
    "storage": ("bot", "adapters", "tests", "bench"),
    "adapters": ("bot", "storage", "tests", "bench"),
    "bot": ("tests", "bench"),
    "bench": ("tests",),
}
# Known exceptions, listed rather than hidden (none at present).
KNOWN: set[tuple[str, str]] = set()


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


def test_the_neutral_messages_import_only_the_standard_library() -> None:
    for path in sorted((ROOT / "pipeline" / "messages").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module != "__future__":
                top = node.module.split(".")[0]
                inside = node.module.startswith("pipeline.messages")
                assert inside or top in sys.stdlib_module_names, f"{path.name} imports {node.module}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name.split(".")[0] in sys.stdlib_module_names, f"{path.name} imports {alias.name}"


def test_bench_has_no_import_circle() -> None:
    graph = {
        f"bench.{path.stem}": {m for m in _imported_modules(path) if m.startswith("bench.")}
        for path in sorted((ROOT / "bench").glob("*.py"))
    }

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == target or (nxt not in seen and reaches(nxt, target, seen | {nxt})):
                return True
        return False

    circles = sorted(module for module in graph if reaches(module, module, {module}))
    assert circles == []


def test_the_image_holds_every_module_the_documented_commands_import() -> None:
    """The image runs `docbot` (every subcommand, `docbot eval` included) and the Slack demo (`python -m
    bot.slack_demo`): every module they import, followed transitively through the project's own packages, is under
    a path the Dockerfile copies, and so is the data the demo reads (the fixture manual)."""
    copied = {line.split()[-2] for line in (ROOT / "deploy" / "Dockerfile").read_text().splitlines()
              if line.startswith("COPY") and "--from" not in line}  # fmt: skip
    project = {path.name for path in ROOT.iterdir() if (path / "__init__.py").is_file()}
    seen: set[str] = set()
    todo = ["bot.cli", "bot.slack_demo"]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = _module_path(module)
        assert path is not None, f"{module} imported but not found"
        assert any(_under(path.relative_to(ROOT).as_posix(), c) for c in copied), f"{path} is not in the image"
        for name in _imported_modules(path):
            if name.split(".")[0] in project:
                todo.append(name)
    assert "bench.answers_eval" not in seen or any(_under("bench/answers_eval.py", c) for c in copied)
    assert any(_under("tests/fixtures/manual/getting-started", c) for c in copied)  # the demo's documents
    assert not any(m.startswith("tests.") for m in seen), sorted(m for m in seen if m.startswith("tests."))


def _under(relative: str, copied: str) -> bool:
    return relative == copied or relative.startswith(copied.rstrip("/") + "/")


def _module_path(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_modules(path: Path) -> set[str]:
    """Modules named by `import a.b` and `from a.b import c` (also `a.b.c`, when c is a module), at any depth
    (function-level imports included: the CLI imports its subcommands' modules lazily)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names
                         if _module_path(f"{node.module}.{alias.name}") is not None)  # fmt: skip
    return {name for name in found if _module_path(name) is not None or "." not in name}


def test_bot_runs_no_sql() -> None:
    """Reads and writes go through `storage/` (corpus versions, the token budget, the jobs, doctor); `bot/settings.py`
    only parses database URLs with SQLAlchemy."""
    using = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "bot").rglob("*.py")
        if "sqlalchemy" in imported_packages(path)
    )
    assert using == ["bot/settings.py"]
