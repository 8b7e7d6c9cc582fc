"""Per-channel collections through the real service: a channel never gets answers from documents it may not see,
across channels, workspaces, the semantic cache and follow-ups in a thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.app import App
from pipeline.messages import Reply
from tests.security.conftest import ask

pytestmark = pytest.mark.integration

SECRET_MARKERS = ("ZEPHYR-ORCHID-42", "QUARTZ-LANTERN-77", "falcon.md", "Project Falcon")
ACME_MARKERS = ("PAYROLL-MARKER-9931", "payroll.md", "Payroll at Acme")
PUBLIC_MARKERS = ("remote.md", "network.md", "Remote control")


def visible(reply: Reply | None) -> str:
    """Everything a person would see of the reply: text, citations (titles, links, passages) and button labels."""
    assert reply is not None
    parts = [reply.text, reply.note or ""]
    parts += [f"{c.title} {' '.join(c.crumbs)} {c.url} {c.text}" for c in reply.citations]
    parts += [a.label for a in reply.actions]
    return "\n".join(parts)


@pytest.fixture
async def app(make_secure_app: Callable[..., Any]) -> App:
    built: App = await make_secure_app()
    return built


async def test_the_secret_channel_is_answered_from_its_documents(app: App) -> None:
    # the control: these questions do reach the secret documents where that is allowed
    seen = visible(await app.service.handle_message(ask("What is the Falcon launch checklist?", channel="C-sec")))
    assert "falcon.md#falcon-launch-checklist" in seen and "release manager reads the codename" in seen


@pytest.mark.parametrize(
    "question",
    [
        "What is the Falcon launch checklist?",
        "Which codename does the release manager read aloud before the Falcon launch?",
        "What is the Falcon pricing tier?",
        "ZEPHYR-ORCHID-42",
    ],
)
async def test_another_channel_never_sees_the_secret_documents(app: App, question: str) -> None:
    seen = visible(await app.service.handle_message(ask(question, channel="C-pub")))
    assert not any(marker in seen for marker in SECRET_MARKERS), seen


async def test_workspaces_are_isolated_even_with_the_same_channel_id(app: App) -> None:
    inside = visible(await app.service.handle_message(ask("When does payroll run?", workspace="T2", channel="C-pub")))
    assert "payroll.md#payroll-dates" in inside  # the control
    outside = visible(await app.service.handle_message(ask("When does payroll run?", workspace="T1", channel="C-pub")))
    assert not any(marker in outside for marker in ACME_MARKERS), outside
    other = visible(await app.service.handle_message(ask("How do I pair the remote?", workspace="T2", channel="C-pub")))
    assert not any(marker in other for marker in PUBLIC_MARKERS), other


async def test_the_semantic_cache_does_not_carry_answers_across_channels(app: App) -> None:
    question = "What is the Falcon launch checklist?"
    first = visible(await app.service.handle_message(ask(question, channel="C-sec")))
    again = visible(await app.service.handle_message(ask(question, channel="C-sec")))
    assert "falcon.md" in first and "falcon.md" in again
    elsewhere = visible(await app.service.handle_message(ask(question, channel="C-pub")))
    assert not any(marker in elsewhere for marker in SECRET_MARKERS), elsewhere


async def test_a_follow_up_in_a_public_thread_stays_in_its_collections(app: App) -> None:
    first = ask("How do I pair the remote?", channel="C-pub")
    await app.service.handle_message(first)
    follow = ask("And what about the Falcon launch codename?", channel="C-pub", thread=first.message_id)
    seen = visible(await app.service.handle_message(follow))
    assert not any(marker in seen for marker in SECRET_MARKERS), seen
