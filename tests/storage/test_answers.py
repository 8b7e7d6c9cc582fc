"""The team-answer store on SQLite and PostgreSQL: the migration, idempotent drafting, every review step as one
conditional update (concurrent presses settle on one outcome), review buttons per revision."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

import storage.answer_tables
from storage.answers.model import AnswerDraft, AnswerStatus, DocMention, ExpiryCause, Outcome, Reviewer, ReviewKind
from storage.answers.store import AnswerStore
from storage.base import Base
from storage.db import Database

pytestmark = pytest.mark.integration

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
BOB = Reviewer("slack:U-BOB", "bob")
ANSWER_TABLES = {table.name for table in storage.answer_tables.ANSWER_TABLES}


def draft(message: str = "1700000000.000200", **overrides: Any) -> AnswerDraft:
    values: dict[str, Any] = {
        "question": "Do the 2024 models support HDMI-CEC?",
        "answer": "Yes, the 2024 models do; turn on Anynet+ (HDMI-CEC) under Settings > General first.",
        "platform": "slack",
        "workspace_id": "T1",
        "channel_id": "C-help",
        "channel_name": "help",
        "thread_key": "slack:T1:C-help:1700000000.000100",
        "thread_url": "https://example.slack.com/archives/C-help/p1700000000000100",
        "answer_message_id": message,
        "author_id": "U-ALICE",
        "author_name": "alice",
        "answered_at": T0,
        "collection": "default",
    }
    values.update(overrides)
    return AnswerDraft(**values)


def _drift(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    names = set(inspect(connection).get_table_names())
    assert names >= ANSWER_TABLES
    return [d for d in compare_metadata(context, Base.metadata) if any(t in str(d) for t in ANSWER_TABLES)]


async def test_the_migration_matches_the_tables(db: Database) -> None:
    async with db.engine.connect() as connection:
        assert await connection.run_sync(_drift) == []


async def test_drafting_the_same_message_twice_keeps_one_candidate(db: Database) -> None:
    times = iter(T0 + timedelta(minutes=i) for i in range(10))
    store = AnswerStore(db, clock=lambda: next(times))
    mention = DocMention("d1", "default", "cec", "HDMI-CEC", "https://docs/x#cec", "h1", "Turn on Anynet+.")
    first, created = await store.draft(draft(mentions=(mention,)))
    again, created_again = await store.draft(draft(answer="a different capture of the same message"))
    assert created and not created_again
    assert again.id == first.id and again.answer == first.answer and again.status is AnswerStatus.DRAFT
    assert first.mentions == (mention,) and first.answered_at == T0
    other, created_other = await store.draft(draft("1700000000.000300"))
    assert created_other and other.id != first.id
    assert [a.id for a in await store.awaiting_review()] == [other.id, first.id]  # newest first


async def test_approve_then_reject_then_approve_again_each_bumps_the_revision(db: Database) -> None:
    store = AnswerStore(db, clock=lambda: T0)
    answer, _ = await store.draft(draft())
    approved = await store.approve(answer.id, BOB, expires_at=T0 + timedelta(days=180))
    assert approved.outcome is Outcome.DONE and approved.previous is AnswerStatus.DRAFT
    assert approved.answer is not None and approved.answer.status is AnswerStatus.APPROVED
    assert approved.answer.revision == 2 and approved.answer.reviewer_name == "bob"
    assert approved.answer.expires_at == T0 + timedelta(days=180)
    assert (await store.approve(answer.id, BOB, expires_at=None)).outcome is Outcome.UNCHANGED
    rejected = await store.reject(answer.id, BOB, "wrong for the 2023 models")
    assert rejected.outcome is Outcome.DONE and rejected.answer is not None
    assert rejected.answer.status is AnswerStatus.REJECTED and rejected.answer.reason == "wrong for the 2023 models"
    assert (await store.reject(answer.id, BOB)).outcome is Outcome.UNCHANGED
    again = await store.approve(answer.id, BOB, expires_at=None, collection="tv")
    assert again.outcome is Outcome.DONE and again.answer is not None
    assert again.answer.collection == "tv" and again.answer.reason is None and again.answer.revision == 4
    assert (await store.approve("no-such-id", BOB, expires_at=None)).outcome is Outcome.UNKNOWN


async def test_only_an_approved_answer_expires_and_an_expired_one_awaits_review_again(db: Database) -> None:
    store = AnswerStore(db)
    answer, _ = await store.draft(draft())
    assert (await store.expire(answer.id, ExpiryCause.AGE, "old")).outcome is Outcome.NOT_ALLOWED
    await store.approve(answer.id, BOB, expires_at=T0)
    assert [a.id for a in await store.due_for_expiry(T0 + timedelta(seconds=1))] == [answer.id]
    assert await store.due_for_expiry(T0 - timedelta(seconds=1)) == []
    expired = await store.expire(answer.id, ExpiryCause.DOCUMENT_CHANGED, "changed: HDMI-CEC", diff="-a\n+b\n")
    assert expired.outcome is Outcome.DONE and expired.answer is not None
    assert expired.answer.expired_by is ExpiryCause.DOCUMENT_CHANGED and expired.answer.diff == "-a\n+b\n"
    assert [a.id for a in await store.awaiting_review()] == [answer.id]
    assert await store.approved() == []
    reapproved = await store.approve(answer.id, BOB, expires_at=None)
    assert reapproved.answer is not None and reapproved.answer.diff is None and reapproved.answer.expired_by is None


async def test_an_edit_keeps_the_captured_text_and_the_status(db: Database) -> None:
    store = AnswerStore(db)
    answer, _ = await store.draft(draft())
    edited = await store.edit(answer.id, BOB, answer="Yes: Settings > General > External Device Manager > Anynet+.")
    assert edited.outcome is Outcome.DONE and edited.answer is not None
    assert edited.answer.status is AnswerStatus.DRAFT and edited.answer.captured_answer == answer.answer
    twice = await store.edit(answer.id, BOB, answer="Third wording.", question="Does my 2024 TV do HDMI-CEC?")
    assert twice.answer is not None and twice.answer.captured_answer == answer.answer  # the first capture stays
    assert twice.answer.question == "Does my 2024 TV do HDMI-CEC?"
    assert (await store.edit(answer.id, BOB, answer="Third wording.")).outcome is Outcome.UNCHANGED
    await store.reject(answer.id, BOB)
    assert (await store.edit(answer.id, BOB, answer="again")).outcome is Outcome.NOT_ALLOWED


async def test_two_maintainers_pressing_at_once_settle_on_one_outcome(db: Database) -> None:
    store = AnswerStore(db)
    answer, _ = await store.draft(draft())
    approve, reject = await asyncio.gather(
        store.approve(answer.id, BOB, expires_at=None, revision=answer.revision),
        store.reject(answer.id, Reviewer("slack:U-CAROL", "carol"), revision=answer.revision),
    )
    outcomes = sorted([approve.outcome.value, reject.outcome.value])
    assert outcomes == sorted([Outcome.DONE.value, Outcome.STALE.value]), outcomes
    final = await store.get(answer.id)
    assert final is not None and final.revision == 2
    winner = approve if approve.outcome is Outcome.DONE else reject
    assert winner.answer is not None and final.status is winner.answer.status


async def test_review_buttons_stand_for_one_revision(db: Database) -> None:
    store = AnswerStore(db)
    answer, _ = await store.draft(draft())
    buttons = await store.review_buttons(answer)
    assert [b.kind for b in buttons] == [ReviewKind.APPROVE, ReviewKind.EDIT, ReviewKind.REJECT]
    assert len({b.id for b in buttons}) == 3
    press = await store.review_press(buttons[0].id)
    assert press is not None and (press.answer_id, press.kind, press.revision) == (answer.id, ReviewKind.APPROVE, 1)
    assert await store.review_press("not-a-review-button") is None
    await store.edit(answer.id, BOB, answer="A better wording of the answer.")
    stale = await store.approve(answer.id, BOB, expires_at=None, revision=press.revision)
    assert stale.outcome is Outcome.STALE and stale.answer is not None and stale.answer.status is AnswerStatus.DRAFT


async def test_approved_for_collections_follows_status_and_collection(db: Database) -> None:
    store = AnswerStore(db)
    public, _ = await store.draft(draft("m1"))
    secret, _ = await store.draft(draft("m2", collection="secret"))
    draft_only, _ = await store.draft(draft("m3"))
    for answer in (public, secret):
        await store.approve(answer.id, BOB, expires_at=None)
    assert [a.id for a in await store.approved_for_collections(["default"])] == [public.id]
    assert {a.id for a in await store.approved_for_collections(["default", "secret"])} == {public.id, secret.id}
    assert draft_only.id not in {a.id for a in await store.approved()}
    counts = await store.counts()
    assert counts[AnswerStatus.APPROVED] == 2 and counts[AnswerStatus.DRAFT] == 1
    assert [a.id for a in await store.find(public.id[:8])] == [public.id]
