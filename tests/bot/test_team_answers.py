"""Team answers through the app as `build_app` wires it (the fixture manual, the bundled e5, the real service):
nothing unapproved is ever quoted, an approved answer answers the question it was given for, cited by who gave it,
where and when, and goes away again when withdrawn or when the section it relies on changes; every citation says
when its source last changed."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bench.emanual_data import session_embedder
from bot.app import App, build_app
from bot.settings import ChannelPolicy, Settings
from pipeline.messages import Reply, ReplyKind
from storage.answers.model import AnswerDraft, AnswerStatus, DocMention, ExpiryCause, Reviewer, TeamAnswer
from storage.doc_tables import DocumentRow
from tests.bot.conftest import MANUAL, inbound

pytestmark = pytest.mark.integration

BASE = "https://docs.example.com/"
ANSWERED = datetime(2026, 11, 20, 15, 30, tzinfo=UTC)
CEC = "Does the hub work with HDMI-CEC on 2024 Samsung TVs?"
CEC_ANSWER = ("Yes, the 2024 models do: turn on Anynet+ (HDMI-CEC) under Settings, General, External Device "
              "Manager first, then restart the hub.")  # fmt: skip
KETTLE = "Can the hub switch off my smart kettle when the film ends?"
KETTLE_ANSWER = "Only through the Home Assistant bridge: add the kettle there and pick the routine KETTLE-OFF-5521."
BOB = Reviewer("slack:U-BOB", "bob")


def draft(question: str, answer: str, message: str, *, mentions: tuple[DocMention, ...] = (),
          collection: str = "default") -> AnswerDraft:  # fmt: skip
    return AnswerDraft(
        question=question, answer=answer, platform="slack", workspace_id="T1", channel_id="C-help",
        channel_name="help", thread_key=f"slack:T1:C-help:{message}", answer_message_id=message, author_id="U-ALICE",
        author_name="alice", answered_at=ANSWERED, collection=collection,
        thread_url=f"https://example.slack.com/archives/C-help/p{message}", mentions=mentions,
    )  # fmt: skip


def visible(reply: Reply | None) -> str:
    """Everything a person would see of a reply: text, note, citations and button labels."""
    assert reply is not None
    parts = [reply.text, reply.note or ""]
    parts += [f"{c.title} {' '.join(c.crumbs)} {c.url} {c.text}" for c in reply.citations]
    parts += [a.label for a in reply.actions]
    return "\n".join(parts)


_askers = count(1)


async def ask(app: App, question: str, *, channel: str = "C1") -> Reply:
    """A new thread by a new person (the per-person rate limit is not under test)."""
    reply = await app.service.handle_message(inbound(question, channel=channel, user=f"U{next(_askers)}"))
    assert reply is not None
    return reply


async def test_unapproved_and_rejected_candidates_never_appear_in_any_answer(make_app: Callable[..., Any]) -> None:
    app: App = await make_app()
    unapproved, _ = await app.team.answers.draft(draft(CEC, CEC_ANSWER, "m1"))
    rejected, _ = await app.team.answers.draft(draft(KETTLE, KETTLE_ANSWER, "m2"))
    assert (await app.team.answers.reject(rejected.id, BOB, "not something we support")).transition.done

    for question in (CEC, KETTLE, "HDMI-CEC 2024", "KETTLE-OFF-5521", f"{CEC} {KETTLE}"):
        for channel in ("C1", "C-help"):
            seen = visible(await ask(app, question, channel=channel))
            assert "Anynet+" not in seen and "KETTLE-OFF-5521" not in seen and "alice" not in seen, seen

    # the control: once approved, the same question is answered from it, cited by who gave it, where and when
    assert (await app.team.answers.approve(unapproved.id, BOB)).indexed is True
    reply = await ask(app, CEC)
    assert reply.kind is ReplyKind.ANSWER and "Anynet+" in reply.text
    cited = [c for c in reply.citations if c.url == "https://example.slack.com/archives/C-help/pm1"]
    assert [c.title for c in cited] == ["answered by @alice in #help on 2026-11-20"] and cited[0].crumbs == ()

    # withdrawn again: gone, also for a question the semantic cache answered from it a moment ago
    assert (await app.team.answers.reject(unapproved.id, BOB, "superseded")).transition.done
    assert "Anynet+" not in visible(await ask(app, CEC))


async def test_an_approved_answer_is_cited_in_the_askers_language(make_app: Callable[..., Any]) -> None:
    app: App = await make_app()
    answer, _ = await app.team.answers.draft(draft(CEC, CEC_ANSWER, "m1"))
    await app.team.answers.approve(answer.id, BOB)
    reply = await ask(app, "¿Funciona el hub con HDMI-CEC en los televisores Samsung de 2024?")
    titles = [c.title for c in reply.citations if "example.slack.com" in c.url]
    assert titles == ["respondido por @alice en #help el 2026-11-20"], (reply.language, titles)


async def test_an_answer_only_channels_that_see_its_collection_are_answered_from(
    make_app: Callable[..., Any],
) -> None:
    policies = (ChannelPolicy(collections=("default",)),
                ChannelPolicy(platform="slack", channel_id="C-staff", collections=("staff", "default")))  # fmt: skip
    app: App = await make_app(channel_policies=policies)
    answer, _ = await app.team.answers.draft(draft(CEC, CEC_ANSWER, "m1", collection="staff"))
    await app.team.answers.approve(answer.id, BOB)
    assert "Anynet+" in visible(await ask(app, CEC, channel="C-staff"))
    assert "Anynet+" not in visible(await ask(app, CEC, channel="C1"))


async def test_every_citation_says_when_its_source_last_changed(make_app: Callable[..., Any]) -> None:
    app: App = await make_app()
    reply = await ask(app, "How do I connect Bluetooth headphones?")
    assert reply.kind is ReplyKind.ANSWER and reply.citations
    async with app.db.session() as session:
        rows = (await session.execute(select(DocumentRow.source, DocumentRow.updated_at))).all()
    changed = {url: f"{when:%Y-%m-%d}" for url, when in rows}
    for citation in reply.citations:
        assert citation.changed_on == changed[citation.url.split("#", 1)[0]], citation


@pytest.fixture
async def editable(tmp_path: Path) -> AsyncIterator[tuple[Path, list[App]]]:
    folder = tmp_path / "manual"
    shutil.copytree(MANUAL, folder)
    apps: list[App] = []
    yield folder, apps
    for app in apps:
        await app.close()


async def test_an_edited_document_expires_an_answer_that_mentions_it(editable: tuple[Path, list[App]]) -> None:
    folder, apps = editable
    app = await build_app(Settings(_env_file=None, data_dir=folder.parent / "data"), embedder=session_embedder())
    apps.append(app)
    await app.ingest([str(folder)], base_url=BASE)
    section = f"{BASE}getting-started/remote.md#pairing-the-remote-with-the-hub"
    question = "Does pairing the remote also pair my second remote from the old TV?"
    text = f"No, only one at a time: pair the second one later as described in <{section}|Pairing the remote>."
    mentions = await app.team.answers.mentions.resolve(text=text)
    assert [m.url for m in mentions] == [section]
    answer, _ = await app.team.answers.draft(draft(question, text, "m1", mentions=mentions))
    await app.team.answers.approve(answer.id, BOB)
    assert "only one at a time" in visible(await ask(app, question))

    remote = folder / "getting-started" / "remote.md"
    original = remote.read_text()
    marker = "## Replacing the remote batteries"
    assert marker in original
    remote.write_text(original.replace(marker, f"Two remotes can be paired at once since firmware 4.1.\n\n{marker}"))
    report = await app.ingest([str(folder)], base_url=BASE)
    assert report.updated == 1

    expired: TeamAnswer | None = await app.team.answers.store.get(answer.id)
    assert expired is not None and expired.status is AnswerStatus.EXPIRED
    assert expired.expired_by is ExpiryCause.DOCUMENT_CHANGED
    assert expired.diff is not None and "+Two remotes can be paired at once since firmware 4.1." in expired.diff
    assert "only one at a time" not in visible(await ask(app, question))
    assert [a.id for a in await app.team.answers.store.awaiting_review()] == [answer.id]
