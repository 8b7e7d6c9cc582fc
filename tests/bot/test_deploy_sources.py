"""deploy/ shows both ways to give docbot its documentation, as written: a site URL to crawl and a mounted docs
folder, in the compose file and the Kubernetes manifests, read once at start and again on the schedule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.settings import Settings
from storage.ingest.site.scope import SiteScope

pytestmark = pytest.mark.unit

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
FOLDER = "/app/docs-source"


def env_file(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line and not line.lstrip().startswith("#"))
    return {key.strip(): value.strip() for key, value in pairs}


def commented_sources(text: str) -> list[list[str]]:
    lines = [line.lstrip("# ").strip() for line in text.splitlines() if line.lstrip().startswith("#")]
    return [json.loads(line.split("=", 1)[1]) for line in lines if line.startswith("DOCBOT_INGEST_SOURCES=")]


def check_sources(sources: list[str] | tuple[str, ...]) -> tuple[list[str], list[str]]:
    sites = [s for s in sources if s.startswith(("http://", "https://"))]
    for site in sites:
        SiteScope.of(site)  # a URL the crawler takes (a site root or its sitemap)
    return sites, [s for s in sources if s not in sites]


def test_the_env_example_shows_a_site_url_and_a_mounted_folder() -> None:
    text = (DEPLOY / ".env.example").read_text()
    values = env_file(text)
    settings = Settings(_env_file=None, ingest_sources=json.loads(values["DOCBOT_INGEST_SOURCES"]))  # type: ignore[call-arg]
    _, folders = check_sources(settings.ingest_sources)
    assert folders == [FOLDER]
    (other,) = commented_sources(text)
    sites, folders = check_sources(other)
    assert sites and folders == [FOLDER]


def service(compose: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = compose["services"][name]
    return found


def test_compose_mounts_the_docs_folder_and_ingests_once_at_start() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    ingest, bot = service(compose, "ingest"), service(compose, "bot")
    assert ingest["command"] == ["ingest"] and ingest["restart"] == "no"
    for part in (ingest, bot):
        (mount,) = [v for v in part["volumes"] if FOLDER in v]
        source, target, mode = mount.rsplit(":", 2)
        assert target == FOLDER and mode == "ro" and source == "${DOCS_FOLDER:-../docs}"
    assert (DEPLOY / "../docs").resolve().is_dir()  # the default folder is there as written


def test_kubernetes_crawls_the_site_and_mounts_the_docs_folder() -> None:
    configmap = yaml.safe_load((DEPLOY / "k8s" / "configmap.yaml").read_text())
    sites, folders = check_sources(json.loads(configmap["data"]["DOCBOT_INGEST_SOURCES"]))
    assert sites and folders == [FOLDER]
    kustomization = yaml.safe_load((DEPLOY / "k8s" / "kustomization.yaml").read_text())
    assert "job-ingest.yaml" in kustomization["resources"]
    (generated,) = [g for g in kustomization["configMapGenerator"] if g["name"] == "docbot-docs"]
    assert all((DEPLOY / "k8s" / f).is_file() for f in generated["files"])
    deployment = next(yaml.safe_load_all((DEPLOY / "k8s" / "deployment.yaml").read_text()))
    job = yaml.safe_load((DEPLOY / "k8s" / "job-ingest.yaml").read_text())
    assert job["spec"]["template"]["spec"]["containers"][0]["args"] == ["ingest"]
    for pod in (deployment["spec"]["template"]["spec"], job["spec"]["template"]["spec"]):
        (container,) = pod["containers"]
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert mounts["docs"]["mountPath"] == FOLDER and mounts["docs"]["readOnly"] is True
        assert volumes["docs"]["configMap"]["name"] == "docbot-docs"
