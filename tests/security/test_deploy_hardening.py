"""deploy/ stays in step with the settings and keeps its hardening: non-root image with a health check, probes on
/healthz and /readyz, credentials only in the Secret, every variable one docbot actually reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import AliasChoices

from bot.settings import Settings

pytestmark = pytest.mark.unit

DEPLOY = Path(__file__).resolve().parent.parent.parent / "deploy"
COMPOSE_ONLY = {"POSTGRES_PASSWORD", "DOCS_FOLDER"}  # compose fills these in; docbot never reads them


def known_variables() -> dict[str, bool]:
    """Environment name -> whether it holds a secret."""
    names: dict[str, bool] = {}
    for name, field in Settings.model_fields.items():
        secret = "SecretStr" in str(field.annotation)
        alias = field.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [f"DOCBOT_{name.upper()}"]
        for choice in choices:
            names[str(choice)] = secret
    names["DOCBOT_DATABASE_URL"] = True  # may carry the database password
    return names


def assignments(text: str) -> dict[str, str]:
    return dict(re.findall(r"^\s*([A-Z][A-Z0-9_]+)\s*[:=]\s*\"?([^\"\n#]*)", text, re.M))


def test_the_image_runs_as_a_user_with_a_health_check() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    users = re.findall(r"^USER\s+(\S+)", dockerfile, re.M)
    assert users and users[-1] not in ("root", "0")
    assert re.search(r"^HEALTHCHECK .*\n?.*/healthz", dockerfile, re.M)
    assert "FROM python:3.11-slim" in dockerfile


def test_every_configured_variable_is_one_docbot_reads() -> None:
    known = known_variables()
    for path in (DEPLOY / ".env.example", DEPLOY / "k8s" / "configmap.yaml", DEPLOY / "k8s" / "secret.yaml"):
        for name in assignments(path.read_text()):
            assert name in known or name in COMPOSE_ONLY, f"{path.name}: {name} is not a docbot setting"


def test_credentials_live_in_the_secret_never_in_the_configmap() -> None:
    known = known_variables()
    configmap = assignments((DEPLOY / "k8s" / "configmap.yaml").read_text())
    secret = assignments((DEPLOY / "k8s" / "secret.yaml").read_text())
    assert not [name for name in configmap if known.get(name)], "a secret in the ConfigMap"
    assert all(known.get(name) for name in secret)
    assert "DOCBOT_DATABASE_URL" in secret


def test_the_deployment_has_replicas_and_probes_on_health_and_readiness() -> None:
    deployment = (DEPLOY / "k8s" / "deployment.yaml").read_text()
    replicas = int(re.search(r"^\s+replicas:\s*(\d+)", deployment, re.M).group(1))  # type: ignore[union-attr]
    assert replicas >= 2
    assert re.search(r"livenessProbe:\s*\n\s*httpGet:\s*\n\s*path: /healthz", deployment)
    assert re.search(r"readinessProbe:\s*\n\s*httpGet:\s*\n\s*path: /readyz", deployment)
    assert "runAsNonRoot: true" in deployment and "readOnlyRootFilesystem: true" in deployment


def test_compose_runs_the_bot_with_postgres() -> None:
    compose = (DEPLOY / "compose.yaml").read_text()
    assert re.search(r"^  postgres:\n", compose, re.M) and re.search(r"^  bot:\n", compose, re.M)
    assert "postgresql+asyncpg://" in compose and "condition: service_healthy" in compose
