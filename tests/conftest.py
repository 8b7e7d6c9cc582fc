"""Shared fixtures: the shared test data, a guard against real network calls, PostgreSQL when reachable."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from sqlalchemy.engine import make_url

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("DOCBOT_SHARED_DATA", REPO.parent / "shared" / "data"))
POSTGRES_URL = os.environ.get("DOCBOT_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data, or a skip that says what is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared test data not present: {path} (set DOCBOT_SHARED_DATA to its folder)")
    return path


@pytest.fixture
def shared_data() -> Path:
    return shared_path()


def _is_local(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _is_local(address):
        raise RuntimeError(f"test tried to reach the network: {address!r}; only loopback is allowed")
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if not _is_local(address):
        raise RuntimeError(f"test tried to reach the network: {address!r}; only loopback is allowed")
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def no_real_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any connection to a non-loopback address (Slack, Discord, OpenAI, Pinecone are never reached)."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    yield


@pytest.fixture(autouse=True)
def structlog_restored() -> Iterator[None]:
    """structlog's configuration as it was before the test: a test that runs `configure_logging` (the CLI, the log
    fixtures) leaves loggers cached on first use otherwise, and a later `capture_logs` then captures nothing."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def _postgres_address() -> tuple[str, int]:
    url = make_url(POSTGRES_URL)
    return url.host or "127.0.0.1", url.port or 5432


POSTGRES_UNREACHABLE = "PostgreSQL is not reachable at {}:{} (start one, see README, or set DOCBOT_TEST_POSTGRES_URL)"


def postgres_reachable() -> bool:
    try:
        with socket.create_connection(_postgres_address(), timeout=0.5):
            return True
    except OSError:
        return False


def postgres_skip_reason() -> str:
    return POSTGRES_UNREACHABLE.format(*_postgres_address())


@pytest.fixture(scope="session")
def postgres_url() -> str:
    if not postgres_reachable():
        pytest.skip(postgres_skip_reason())
    return POSTGRES_URL


# --- scheduling under pytest-xdist (make test: -n auto --dist loadgroup) -------------------------------------------


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` run first (otherwise in collection order): a 45-second test handed out last leaves the
    other workers idle at the end of the run. Every worker collects the same order, as xdist requires."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.hookimpl(optionalhook=True)  # a run with -p no:xdist does not know the hook
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores. The slowest tests mostly wait (on a throttled model server, a held
    database lock, a deadline), and a worker waiting leaves its core idle unless another worker can take it. Two
    more than the cores was no faster on 2 cores (fresh clones, e5 cache empty, two e5 engines, 2026-11-26: 299 s
    and 311 s in all with 4 workers, 305 s and 304 s with 3): the fourth takes CPU from the worker embedding the
    e-manual, the critical path."""
    return (os.cpu_count() or 1) + 1
