"""The scheduled jobs and the one call that builds them for `bot.scheduler.LeasedScheduler`.

    jobs = standard_jobs(db=db, delivery=delivery, ingest=..., sources=settings.ingest_sources, ...)
    scheduler = LeasedScheduler(JobLeases(db), owner=worker_id, jobs=jobs)
    scheduler.start()

Every job takes its collaborators as arguments and is safe to run twice (each run is also leased per due time).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta

from bot.answers.wiring import TeamAnswerParts
from bot.delivery import Delivery
from bot.jobs.answers import tend_team_answers
from bot.jobs.digest import post_docs_gap_digest
from bot.jobs.refresh import CorpusWatcher
from bot.jobs.reingest import IngestSource, reingest_sources
from bot.scheduler import EPOCH, JobSpec
from pipeline.messages import ThreadRef
from pipeline.types import Embedder
from storage.clarifications import expire_clarifications
from storage.db import Database
from storage.retention import RetentionPolicy, purge_expired

WEEK = timedelta(days=7)
DIGEST_ANCHOR = EPOCH + timedelta(hours=9)  # Mondays 09:00 UTC

__all__ = ["RetentionPolicy", "standard_jobs"]


def standard_jobs(
    *,
    db: Database,
    delivery: Delivery,
    ingest: IngestSource | None = None,
    sources: Sequence[str] = (),
    reingest_every: timedelta | None = None,
    clarification_ttl: timedelta = timedelta(days=2),
    retention: RetentionPolicy | None = None,
    digest_target: ThreadRef | None = None,
    embedder: Embedder | None = None,
    team: TeamAnswerParts | None = None,
    sweep_every: timedelta = timedelta(minutes=1),
    corpus_version: Callable[[], Awaitable[int]] | None = None,
    reload_search: Callable[[], Awaitable[object]] | None = None,
    refresh_every: timedelta = timedelta(seconds=30),
) -> list[JobSpec]:
    """The jobs this deployment needs; a job whose configuration is missing is left out. The digest needs
    `embedder` (its questions are grouped by meaning); `team` adds the team answers' upkeep and their reviews to it.

    `corpus_version` and `reload_search` (e.g. the sum of the collections' versions, and reloading the retriever and
    the local vector index) add a job every replica runs, so replicas that did not re-ingest pick the changes up."""

    async def sweep(_due: datetime) -> object:
        return await delivery.sweep()

    async def expire(due: datetime) -> object:
        return await expire_clarifications(db, older_than=clarification_ttl, now=due)

    async def purge(due: datetime) -> object:
        return await purge_expired(db, retention or RetentionPolicy(), now=due)

    jobs = [
        JobSpec("outbox-sweep", sweep_every, sweep, lease=timedelta(minutes=5)),
        JobSpec("expire-clarifications", timedelta(hours=1), expire),
        JobSpec("retention-purge", timedelta(days=1), purge, anchor=EPOCH + timedelta(hours=3)),
    ]
    if ingest is not None and sources and reingest_every:
        ingest_source = ingest

        async def reingest(_due: datetime) -> object:
            return await reingest_sources(ingest_source, sources)

        jobs.append(JobSpec("reingest-sources", reingest_every, reingest, lease=timedelta(hours=1)))
    if digest_target is not None and embedder is not None:
        target, meaning = digest_target, embedder

        async def digest(due: datetime) -> object:
            return await post_docs_gap_digest(
                db, delivery.outbox, target, since=due - WEEK, until=due, embedder=meaning,
                queue=team.answers.store if team else None, reviews=team.desk if team else None,
            )  # fmt: skip

        jobs.append(JobSpec("docs-gap-digest", WEEK, digest, anchor=DIGEST_ANCHOR))
    if team is not None:
        answers = team.answers

        async def tend(due: datetime) -> object:
            return await tend_team_answers(answers, due)

        jobs.append(JobSpec("team-answers", timedelta(hours=1), tend, lease=timedelta(minutes=30)))
    if corpus_version is not None and reload_search is not None:
        watcher = CorpusWatcher(corpus_version, reload_search)

        async def refresh(_due: datetime) -> object:
            return await watcher.check()

        jobs.append(JobSpec("refresh-search", refresh_every, refresh, leased=False))
    return jobs
