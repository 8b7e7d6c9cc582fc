"""The scheduled jobs on SQLite and PostgreSQL: re-ingest, clarification expiry, retention, docs-gap digest."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from bot.delivery import Delivery
from bot.jobs import standard_jobs
from bot.jobs.digest import collect_gaps, post_docs_gap_digest
from bot.jobs.refresh import CorpusWatcher
from bot.jobs.reingest import reingest_sources
from pipeline.locales import texts
from pipeline.messages import ActionOutcome, Inbound, Reply, ReplyKind, ThreadFetcher, ThreadRef
from storage.clarifications import expire_clarifications
from storage.db import Database
from storage.embedder import HashingEmbedder
from storage.outbox import Outbox
from storage.retention import RetentionPolicy, purge_expired
from storage.tables import (
    ConversationRow,
    ConversationState,
    FeedbackRow,
    InboxRow,
    MessageRow,
    OutboxRow,
    RunRow,
    UsageCounterRow,
)
from tests.integration.dbfixtures import database_fixtures

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
MAINTAINERS = ThreadRef("slack", "T1", "C-maint", "")


pg_url, db = database_fixtures()


def conversation(
    cid: str, *, state: ConversationState, updated: datetime, language: str | None = "en"
) -> ConversationRow:
    return ConversationRow(
        id=cid, thread_key=f"slack:T1:C1:{cid}", platform="slack", workspace_id="T1", channel_id="C1",
        thread_id=f"ts-{cid}", created_at=updated, updated_at=updated, history_fetched=False, state=state.value,
        pending_envelope={"x": 1} if state is ConversationState.AWAITING_CLARIFICATION else None, language=language,
    )


async def add(db: Database, *rows: object) -> None:
    async with db.session() as session:
        session.add_all(rows)


@pytest.mark.unit
async def test_reingest_keeps_going_when_one_source_fails() -> None:
    seen: list[str] = []

    async def ingest(source: str) -> None:
        seen.append(source)
        if "broken" in source:
            raise ConnectionError("unreachable")

    report = await reingest_sources(ingest, ["docs/", "https://broken.example/", "manual.jsonl"])
    assert seen == ["docs/", "https://broken.example/", "manual.jsonl"]
    assert report.refreshed == ("docs/", "manual.jsonl")
    assert report.failed == (("https://broken.example/", "ConnectionError"),)


@pytest.mark.integration
async def test_stale_clarifications_expire_once_with_a_localized_note(db: Database) -> None:
    await add(
        db,
        conversation("old", state=ConversationState.AWAITING_CLARIFICATION, updated=NOW - timedelta(days=3),
                     language="de"),
        conversation("fresh", state=ConversationState.AWAITING_CLARIFICATION, updated=NOW - timedelta(hours=1)),
        conversation("idle", state=ConversationState.IDLE, updated=NOW - timedelta(days=9)),
    )
    assert await expire_clarifications(db, older_than=timedelta(days=2), now=NOW) == 1
    assert await expire_clarifications(db, older_than=timedelta(days=2), now=NOW) == 0
    async with db.session() as session:
        old = await session.get(ConversationRow, "old")
        fresh = await session.get(ConversationRow, "fresh")
    assert old is not None and old.state == "idle" and old.pending_envelope is None
    assert fresh is not None and fresh.state == "awaiting_clarification"
    (item,) = await Outbox(db, now=lambda: NOW).claim(lease_s=30)
    assert item.ref == ThreadRef("slack", "T1", "C1", "ts-old")
    assert item.reply.text == texts("de").button_expired and item.reply.language == "de"
    assert item.reply.kind is ReplyKind.NOTICE


@pytest.mark.integration
async def test_retention_purges_only_what_the_policy_no_longer_keeps(db: Database) -> None:
    old, recent = NOW - timedelta(days=400), NOW - timedelta(days=1)
    old_message = MessageRow(conversation_id="c-old", platform_message_id="m1", author_id="u", author_name="u",
                             from_bot=False, text="hi", ts=old)
    rows: list[object] = [
        conversation("c-old", state=ConversationState.IDLE, updated=old),
        conversation("c-new", state=ConversationState.IDLE, updated=recent),
        old_message,
        UsageCounterRow(scope="global", day=date(2025, 1, 1), tokens=5),
        UsageCounterRow(scope="global", day=NOW.date(), tokens=5),
    ]
    for n, when in enumerate((old, recent)):
        rows.append(RunRow(id=f"r{n}", conversation_id="c-new", message_id="m", started_at=when, finished_at=when,
                           status="answer", total_ms=1.0, errors=[]))
        for status in ("done", "pending"):
            rows.append(InboxRow(dedup_key=f"k{n}{status}", platform="slack", payload={}, status=status,
                                 attempts=1, created_at=when))
        for status in ("sent", "pending"):
            rows.append(OutboxRow(platform="slack", target={}, reply={}, status=status, attempts=1,
                                  next_attempt_at=when, created_at=when))
    await add(db, *rows)
    deleted = await purge_expired(db, RetentionPolicy(), now=NOW)
    assert deleted == {"inbox": 1, "outbox": 1, "runs": 1, "conversations": 1, "semantic_cache": 0,
                       "usage_counters": 1}
    async with db.session() as session:
        assert await session.get(MessageRow, old_message.id) is None  # went with its conversation
        assert await session.get(InboxRow, "k0pending") is not None  # never purge unhandled events
    assert await purge_expired(db, RetentionPolicy(), now=NOW) == dict.fromkeys(deleted, 0)


@pytest.mark.integration
async def test_weekly_digest_lists_refused_clarified_and_downvoted_questions_once(db: Database) -> None:
    week_ago = NOW - timedelta(days=7)
    inside, outside = NOW - timedelta(days=2), NOW - timedelta(days=10)
    rows: list[object] = [conversation("c", state=ConversationState.IDLE, updated=inside)]
    questions = {
        "m1": ("How do I reset the remote?", "refusal", inside),
        "m2": ("remote reset does not work", "clarification", inside),
        "m3": ("What is the warranty period?", "answer", inside),  # answered, then rated not helpful
        "m4": ("How do I mount it on the wall?", "answer", inside),  # answered and fine
        "m5": ("remote battery?", "refusal", outside),  # last week's
    }
    for mid, (text, kind, when) in questions.items():
        rows.append(MessageRow(conversation_id="c", platform_message_id=mid, author_id="u", author_name="u",
                               from_bot=False, text=text, ts=when))
        rows.append(RunRow(id=f"run-{mid}", conversation_id="c", message_id=mid, started_at=when, finished_at=when,
                           status=kind, reply_kind=kind, total_ms=1.0, errors=[]))
    rows.append(FeedbackRow(conversation_id="c", run_id="run-m3", user_id="u", helpful=False, created_at=inside))
    rows.append(FeedbackRow(conversation_id="c", run_id="run-m4", user_id="u", helpful=True, created_at=inside))
    await add(db, *rows)

    gaps = await collect_gaps(db, since=week_ago, until=NOW)
    assert sorted((g.question, g.reason) for g in gaps) == [
        ("How do I reset the remote?", "refusal"),
        ("What is the warranty period?", "not_helpful"),
        ("remote reset does not work", "clarification"),
    ]
    outbox = Outbox(db, now=lambda: NOW)
    embedder = HashingEmbedder()
    assert await post_docs_gap_digest(db, outbox, MAINTAINERS, since=week_ago, until=NOW, embedder=embedder) == 3
    assert await post_docs_gap_digest(db, outbox, MAINTAINERS, since=week_ago, until=NOW, embedder=embedder) == 0
    (item,) = await outbox.claim(lease_s=30)
    assert item.ref == MAINTAINERS
    assert "3 questions the docs did not serve well (" in item.reply.text
    assert all(f"1 {label}" in item.reply.text for label in ("refused", "clarified", "not helpful"))
    assert "**“What is the warranty period?”** (1 vote)" in item.reply.text  # under "Answers rated not helpful"
    assert "mount" not in item.reply.text and "battery" not in item.reply.text


class _NoHandler:
    async def handle_message(self, inbound: Inbound, fetcher: ThreadFetcher | None = None) -> Reply | None:
        raise AssertionError("not used")

    async def handle_action(self, inbound: Inbound) -> ActionOutcome:
        raise AssertionError("not used")


@pytest.mark.unit
def test_standard_jobs_leave_out_what_is_not_configured(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    delivery = Delivery(db, _NoHandler(), {}, "w")
    base = {job.job_id for job in standard_jobs(db=db, delivery=delivery)}
    assert base == {"outbox-sweep", "expire-clarifications", "retention-purge"}

    async def ingest(source: str) -> None:
        return None

    full = standard_jobs(db=db, delivery=delivery, ingest=ingest, sources=["docs/"], reingest_every=timedelta(hours=6),
                         digest_target=MAINTAINERS, embedder=HashingEmbedder())
    by_id = {job.job_id: job for job in full}
    assert set(by_id) == base | {"reingest-sources", "docs-gap-digest"}
    no_embedder = standard_jobs(db=db, delivery=delivery, digest_target=MAINTAINERS)
    assert {job.job_id for job in no_embedder} == base  # the digest groups by meaning: it needs the embedder
    digest_due = by_id["docs-gap-digest"].due_time(NOW + timedelta(days=3))
    assert (digest_due.weekday(), digest_due.hour) == (0, 9)


@pytest.mark.unit
async def test_a_replica_reloads_search_when_another_one_changed_the_corpus() -> None:
    version = 3
    reloads: list[int] = []

    async def current() -> int:
        return version

    async def reload() -> None:
        reloads.append(version)

    watcher = CorpusWatcher(current, reload)
    assert await watcher.check() is False  # the version it started with
    assert await watcher.check() is False
    version = 4  # a re-ingest on another replica
    assert await watcher.check() is True
    assert await watcher.check() is False
    assert reloads == [4]


@pytest.mark.unit
def test_the_refresh_job_is_added_for_every_replica(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")

    async def version() -> int:
        return 1

    async def reload() -> None:
        return None

    jobs = standard_jobs(db=db, delivery=Delivery(db, _NoHandler(), {}, "w"), corpus_version=version,
                         reload_search=reload)
    (refresh,) = [job for job in jobs if job.job_id == "refresh-search"]
    assert refresh.leased is False and all(job.leased for job in jobs if job is not refresh)
