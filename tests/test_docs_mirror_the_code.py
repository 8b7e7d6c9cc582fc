"""The docs name the variables the code reads, and only those (issue 28, item 7: docs/slack.md named
`SLACK_SUPPORT_MENTION`, which nothing reads; `DOCBOT_DIGEST_CHANNEL`, `DOCBOT_RETENTION_DAYS` and
`DOCBOT_CLARIFICATION_TTL_HOURS` were in no doc, and without the first the digest job is never scheduled).

What the code reads: every setting's environment names (`bot.settings.Settings`, the only place below the CLI that
reads the environment), plus the names read directly with `os.environ` / `os.getenv` anywhere in the repository's
Python (found by parsing it: the tests' own switches such as `DOCBOT_SHARED_DATA`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from pydantic import AliasChoices

from bot.settings import Settings
from bot.settings_problems import env_name

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
DOCS = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
# how a variable of docbot's looks in prose; the prefixes are docbot's own and the SDKs' it reads
VARIABLE = re.compile(r"\b(?:DOCBOT|SLACK|DISCORD|OPENAI|PINECONE)_[A-Z0-9_]*[A-Z0-9]\b")


def settings_names() -> tuple[set[str], set[str]]:
    """(the name each setting is documented under, every name it is also read from)."""
    primary, every = set(), set()
    for field, info in Settings.model_fields.items():
        primary.add(env_name(Settings, field))
        alias = info.validation_alias
        every |= {str(c) for c in alias.choices} if isinstance(alias, AliasChoices) else {env_name(Settings, field)}
    return primary, every


def read_directly() -> set[str]:
    """Names passed as a literal to `os.environ[...]`, `os.environ.get(...)` or `os.getenv(...)`."""
    found: set[str] = set()
    for path in REPO.rglob("*.py"):
        if ".venv" in path.parts or "node_modules" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            target: ast.expr | None = None
            if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
                target = node.slice
            elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.environ.get", "os.getenv") and node.args:
                target = node.args[0]
            if isinstance(target, ast.Constant) and isinstance(target.value, str):
                found.add(target.value)
    return found


def test_every_setting_is_in_the_configuration_page() -> None:
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    primary, _ = settings_names()
    missing = sorted(name for name in primary if f"`{name}`" not in page and f"`{name}=" not in page)
    assert not missing, f"docs/configuration.md does not document: {missing}"


def test_no_doc_names_a_variable_nothing_reads() -> None:
    _, every = settings_names()
    known = every | read_directly()
    named = {
        (doc.relative_to(REPO).as_posix(), name)
        for doc in DOCS
        for name in VARIABLE.findall(doc.read_text(encoding="utf-8"))
    }
    unknown = sorted(f"{doc}: {name}" for doc, name in named if name not in known)
    assert not unknown, "the docs name variables docbot does not read:\n" + "\n".join(unknown)


def test_how_it_works_tells_the_path_a_question_takes() -> None:
    """It said the adapter shows progress, named Slack reactions docbot never adds, and never named the inbox or
    the outbox."""
    page = (REPO / "docs" / "how-it-works.md").read_text(encoding="utf-8")
    path = page[page.index("## One question, end to end") : page.index("## The pipeline")].lower()
    stages = [path.index(word) for word in ("inbox", "worker", "conversation service", "pipeline", "outbox")]
    assert stages == sorted(stages)
    assert "reaction" not in path
    for module in re.findall(r"`((?:bot|adapters|storage|pipeline)/[\w/]+\.py)`", page):
        assert (REPO / module).is_file(), f"how-it-works.md names {module}, which does not exist"
