"""The files in deploy/ start the bot as written (issue 28: the shipped Secret and `.env.example` crashed it).

Each file is read the way its runtime reads it: `.env.example` copied to `.env` in the working directory (what the
README and the compose file tell the operator to do), the compose service's `env_file` plus its interpolated
`environment`, the Kubernetes ConfigMap and Secret as `envFrom` environment variables. The settings load from them
unchanged; empty values are unset (no LLM, Discord or Pinecone with an empty key); `doctor` shows them as unset; and
the app builds and serves from those settings offline. Only the database is swapped for a local SQLite file, because
the host the files name is the operator's (postgres, postgres.example.internal), and the HTTP port for a free one.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from dotenv import dotenv_values
from rich.console import Console

from bot.app import App
from bot.doctor import configuration_table
from bot.settings import Settings, load_settings
from pipeline.messages import ReplyKind
from tests.bot.conftest import inbound
from tests.helpers.app_template import AppTemplate

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
pytestmark = [pytest.mark.integration, pytest.mark.slow]


def compose_interpolate(value: str, variables: dict[str, str]) -> str:
    """Compose's `${NAME}`, `${NAME:-default}` and `${NAME:?message}` (the forms deploy/compose.yaml uses)."""
    out, rest = [], value
    while "${" in rest:
        before, _, tail = rest.partition("${")
        expression, _, rest = tail.partition("}")
        name, default = expression, ""
        for separator in (":-", ":?"):
            if separator in expression:
                name, default = expression.split(separator, 1)
                if separator == ":?" and not variables.get(name):
                    raise AssertionError(f"compose would refuse to start: {default}")
                default = default if separator == ":-" else ""
        out += [before, variables.get(name) or default]
    return "".join(out) + rest


def env_example() -> dict[str, str]:
    return {k: v or "" for k, v in dotenv_values(DEPLOY / ".env.example").items()}


def compose_environment() -> dict[str, str]:
    """The bot container's environment: its env_file (the operator's copy of .env.example), then `environment`,
    interpolated with the project's .env (the same file)."""
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    project = env_example()
    by_service = {}
    for name, service in compose["services"].items():
        if "env_file" not in service:
            continue  # postgres
        assert service["env_file"] == ".env"
        environment = dict(project)
        environment.update({k: compose_interpolate(str(v), project) for k, v in service["environment"].items()})
        by_service[name] = environment
    assert by_service["bot"] == by_service["ingest"]  # the one-off ingest runs with the bot's settings
    return by_service["bot"]


def kubernetes_environment() -> dict[str, str]:
    """envFrom the ConfigMap and the Secret, as the Deployment says."""
    for manifest in ("deployment.yaml", "job-ingest.yaml"):  # the bot and its one-off ingest read the same two
        workload = next(yaml.safe_load_all((DEPLOY / "k8s" / manifest).read_text()))
        [container] = workload["spec"]["template"]["spec"]["containers"]
        sources = [(next(iter(ref)), next(iter(ref.values()))["name"]) for ref in container["envFrom"]]
        assert sources == [("configMapRef", "docbot"), ("secretRef", "docbot")], manifest
    configmap = yaml.safe_load((DEPLOY / "k8s" / "configmap.yaml").read_text())
    secret = yaml.safe_load((DEPLOY / "k8s" / "secret.yaml").read_text())
    return {**configmap["data"], **secret["stringData"]}


DOCBOT_PREFIXES = ("DOCBOT_", "SLACK_", "DISCORD_", "OPENAI_", "PINECONE_")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[[dict[str, str]], None]]:
    """An environment with none of docbot's variables, in an empty working directory (no stray .env)."""
    import os

    for name in list(os.environ):
        if name.startswith(DOCBOT_PREFIXES):
            monkeypatch.delenv(name)
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)

    def apply(environment: dict[str, str]) -> None:
        for name, value in environment.items():
            monkeypatch.setenv(name, value)

    yield apply


def settings_from(source: str, apply: Callable[[dict[str, str]], None]) -> Settings:
    if source == "env example":
        shutil.copy(DEPLOY / ".env.example", Path.cwd() / ".env")  # `cp deploy/.env.example .env`
    elif source == "compose":
        apply(compose_environment())
    else:
        apply(kubernetes_environment())
    return load_settings()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def signed(body: str, secret: str) -> dict[str, str]:
    ts = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}", "Content-Type": "application/json"}


@pytest.mark.parametrize("source", ["env example", "compose", "kubernetes"])
async def test_the_deploy_files_start_the_bot_as_written(
    source: str, clean_env: Callable[[dict[str, str]], None], manual_template: AppTemplate, tmp_path: Path
) -> None:
    settings = settings_from(source, clean_env)

    # empty keys are unset: the bot answers offline, with the local index, and without Discord
    assert not settings.llm_enabled and not settings.pinecone_enabled and not settings.discord_enabled
    assert settings.openai_api_key is None and settings.discord_bot_token is None
    console = Console(record=True, width=200)
    console.print(configuration_table(settings))
    shown = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in console.export_text().splitlines()
             if line.count("│") >= 3}  # fmt: skip
    for empty in ("openai_api_key", "discord_bot_token", "pinecone_api_key"):
        assert shown[empty] == "-", f"doctor shows {empty} as {shown[empty]!r}"
    if source != "env example":
        assert settings.effective_database_url.startswith("postgresql+asyncpg://docbot:")

    port = free_port()
    local = settings.model_copy(
        update={"data_dir": tmp_path / "data", "database_url": None, "http_host": "127.0.0.1", "http_port": port}
    )
    app = await manual_template.build_app(local)
    try:
        if not (local.slack_enabled or local.discord_enabled):  # `docbot run` opens the terminal chat
            reply = await app.service.handle_message(inbound("what does error E-2041 mean?", platform="console"))
            assert reply is not None and reply.kind is ReplyKind.ANSWER
            return
        await serve_briefly(app, local, port)
    finally:
        await app.close()


async def serve_briefly(app: App, settings: Settings, port: int) -> None:
    """`docbot run` with the files' Slack settings: health, readiness and a signed Events API request answer."""
    assert settings.slack_signing_secret is not None
    stop = asyncio.Event()
    serving = asyncio.create_task(app.serve(stop))
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            async with asyncio.timeout(60):
                while True:
                    try:
                        async with http.get(f"{base}/readyz") as response:
                            if response.status == 200:
                                break
                    except aiohttp.ClientConnectionError:
                        await asyncio.sleep(0.1)
            body = json.dumps({"type": "url_verification", "challenge": "deploy-check", "token": "legacy"})
            secret = settings.slack_signing_secret.get_secret_value()
            async with http.post(f"{base}/slack/events", data=body, headers=signed(body, secret)) as response:
                assert response.status == 200
                answer: Any = await response.json(content_type=None)
                assert answer == {"challenge": "deploy-check"}
    finally:
        stop.set()
        await asyncio.wait_for(serving, timeout=60)
