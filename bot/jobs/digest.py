"""The weekly docs digest for the maintainers: the questions the docs did not serve well grouped by meaning, the
stale pages that support the most answers, the answers people rated not helpful, and the team answers awaiting
review, each linked to its thread or page; the awaiting answers follow as review messages with their buttons.

Posted to the configured channel by the scheduler (`DOCBOT_DIGEST_CHANNEL`) and shown by `docbot digest` without one.
Written in English, the maintainers' and operators' language (like the logs)."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from bot.answers.capture import channel_link
from bot.jobs.clusters import DEFAULT_MAX_DISTANCE, MAX_QUESTIONS, cluster_by_meaning, medoid
from pipeline.messages import Citation, Reply, ReplyKind, ThreadRef
from pipeline.types import Embedder
from storage.answers.model import TeamAnswer
from storage.db import Database
from storage.digest_sources import (
    STALE_AFTER,
    Gap,
    RatedDown,
    StalePage,
    collect_gaps,
    collect_rated_down,
    collect_stale_pages,
    thread_places,
)
from storage.outbox import Outbox, OutgoingReply

log = logging.getLogger(__name__)

REASON_LABELS = {"refusal": "refused", "clarification": "clarified", "not_helpful": "not helpful"}
DIGEST_REASON = "docs_gap_digest"
MAX_CLUSTERS = 10
MAX_EXAMPLES = 3  # questions quoted under a cluster besides its representative
MAX_REVIEWS = 5  # awaiting answers posted with their buttons after the digest
QUESTION_CHARS = 200


@dataclass(frozen=True, slots=True)
class Cluster:
    representative: str  # the member most like the others
    gaps: tuple[Gap, ...]

    def reasons(self) -> Counter[str]:
        return Counter(gap.reason for gap in self.gaps)


@dataclass(frozen=True, slots=True)
class Digest:
    since: datetime
    until: datetime
    clusters: tuple[Cluster, ...] = ()
    stale_pages: tuple[StalePage, ...] = ()
    rated_down: tuple[RatedDown, ...] = ()
    awaiting: tuple[TeamAnswer, ...] = ()
    awaiting_total: int = 0
    links: dict[str, str] = field(default_factory=dict)  # conversation id -> thread link

    @property
    def gaps(self) -> int:
        return sum(len(c.gaps) for c in self.clusters)

    @property
    def empty(self) -> bool:
        return not (self.clusters or self.stale_pages or self.rated_down or self.awaiting_total)


class ReviewQueue(Protocol):
    """What the digest needs of the team answers (`storage.answers.store.AnswerStore`)."""

    async def awaiting_review(self, *, limit: int = ...) -> list[TeamAnswer]: ...


class ReviewMessages(Protocol):
    """Review messages with their buttons (`bot.answers.review.ReviewDesk`)."""

    async def review_reply(self, answer: TeamAnswer) -> Reply: ...


async def cluster_gaps(gaps: list[Gap], embedder: Embedder, *, max_distance: float = DEFAULT_MAX_DISTANCE
                       ) -> list[Cluster]:  # fmt: skip
    """The gaps grouped by meaning (the most recent MAX_QUESTIONS of them), largest group first."""
    kept = gaps[-MAX_QUESTIONS:]
    if not kept:
        return []
    vectors = await embedder.embed_queries([" ".join(g.question.split()) for g in kept])
    clusters = []
    for members in cluster_by_meaning(vectors, max_distance=max_distance):
        center = medoid(members, vectors)
        ordered = [center, *(m for m in members if m != center)]
        clusters.append(Cluster(" ".join(kept[center].question.split()), tuple(kept[m] for m in ordered)))
    return clusters


async def thread_links(db: Database, conversation_ids: set[str]) -> dict[str, str]:
    return {
        place.conversation_id: link
        for place in await thread_places(db, conversation_ids)
        if (link := channel_link(place.platform, place.workspace_id, place.channel_id, place.thread_id))
    }


async def build_digest(
    db: Database,
    embedder: Embedder,
    reviews: ReviewQueue | None,
    *,
    since: datetime,
    until: datetime,
    stale_after: timedelta = STALE_AFTER,
    max_distance: float = DEFAULT_MAX_DISTANCE,
) -> Digest:
    gaps = await collect_gaps(db, since=since, until=until)
    clusters = await cluster_gaps(gaps, embedder, max_distance=max_distance)
    rated_down = await collect_rated_down(db, since=since, until=until)
    stale = await collect_stale_pages(db, since=since, until=until, stale_after=stale_after)
    awaiting = await reviews.awaiting_review(limit=1000) if reviews is not None else []
    awaiting.sort(key=lambda a: a.created_at)  # the oldest wait longest
    shown = {_latest(c).conversation_id for c in clusters[:MAX_CLUSTERS] if len(c.gaps) > 1}
    shown |= {r.conversation_id for r in rated_down}
    return Digest(
        since=since, until=until, clusters=tuple(clusters), stale_pages=tuple(stale), rated_down=tuple(rated_down),
        awaiting=tuple(awaiting[:MAX_REVIEWS]), awaiting_total=len(awaiting),
        links=await thread_links(db, shown - {""}),
    )  # fmt: skip


def _latest(cluster: Cluster) -> Gap:
    """The most recent question of a group: its thread is the one linked."""
    return max(cluster.gaps, key=lambda g: (g.asked_at is not None, g.asked_at or datetime.min))


def _one_line(text: str, limit: int = QUESTION_CHARS) -> str:
    text = " ".join(text.replace(">", " ").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_digest(digest: Digest) -> tuple[str, tuple[Citation, ...]]:
    """The digest's text (neutral markup) and its links as numbered citations."""
    citations: list[Citation] = []

    def cite(title: str, url: str) -> str:
        if not url:
            return ""
        for existing in citations:
            if existing.url == url:
                return f" [{existing.number}]"
        citations.append(Citation(len(citations) + 1, title, (), url, "", 1.0))
        return f" [{len(citations)}]"

    reasons = Counter(g.reason for c in digest.clusters for g in c.gaps)
    summary = ", ".join(f"{n} {REASON_LABELS[r]}" for r, n in reasons.most_common())
    lines = [f"**Docs digest, {digest.since:%Y-%m-%d} to {digest.until:%Y-%m-%d}**", ""]
    if digest.clusters:
        groups = [c for c in digest.clusters if len(c.gaps) > 1]
        lines.append(f"{digest.gaps} questions the docs did not serve well ({summary}), in {len(groups)} groups "
                     f"asked more than once.")  # fmt: skip
        lines += ["", "**Unanswered questions, by meaning**"]
        for cluster in groups[:MAX_CLUSTERS]:
            counts = ", ".join(f"{n} {REASON_LABELS[r]}" for r, n in cluster.reasons().most_common())
            link = cite(f"a thread asking {_one_line(cluster.representative, 60)}",
                        digest.links.get(_latest(cluster).conversation_id, ""))  # fmt: skip
            lines.append(f"- **“{_one_line(cluster.representative)}”** {len(cluster.gaps)} questions "
                         f"({counts}){link}")  # fmt: skip
            examples = list(dict.fromkeys(_one_line(g.question) for g in cluster.gaps[1:]))
            lines += [f"> {example}" for example in examples[:MAX_EXAMPLES] if example != cluster.representative]
        singles = [c for c in digest.clusters if len(c.gaps) == 1]
        if len(groups) > MAX_CLUSTERS:
            lines.append(f"…and {len(groups) - MAX_CLUSTERS} more groups.")
        if singles:
            example = _one_line(singles[0].representative)
            lines.append(f"{len(singles)} more questions were asked once, e.g. “{example}”.")
    else:
        lines.append("Every question of the period was answered, and no answer was rated not helpful.")
    lines += ["", "**Stale pages that support the most answers**"]
    if digest.stale_pages:
        for page in digest.stale_pages:
            lines.append(f"- **{page.title or page.url}**{cite(page.title, page.url)}: cited by {page.answers} "
                         f"answers; last changed {page.changed_at:%Y-%m-%d}")  # fmt: skip
    else:
        lines.append("None: the pages the answers cited changed in the last half year.")
    if digest.rated_down:
        lines += ["", "**Answers rated not helpful**"]
        for rated in digest.rated_down:
            link = cite("the thread", digest.links.get(rated.conversation_id, ""))
            votes = "1 vote" if rated.votes == 1 else f"{rated.votes} votes"
            lines.append(f"- **“{_one_line(rated.question)}”** ({votes}){link}")
            if rated.answer:
                lines.append(f"> {_one_line(rated.answer, 160)}")
    lines += ["", "**Team answers awaiting review**"]
    if digest.awaiting_total:
        shown = len(digest.awaiting)
        more = f"; the oldest {shown} follow with their buttons" if shown else ""
        lines.append(f"{digest.awaiting_total} awaiting review{more} (or `docbot answers list`).")
        for answer in digest.awaiting:
            lines.append(f"- “{_one_line(answer.question, 120)}”, answered by @{answer.author_name} on "
                         f"{answer.answered_at:%Y-%m-%d}{cite('the thread', answer.thread_url)} ({answer.id[:8]})")
    else:
        lines.append("None.")
    return "\n".join(lines), tuple(citations)


async def digest_replies(digest: Digest, reviews: ReviewMessages | None) -> list[Reply]:
    """The digest message, then (with `reviews`) one review message with its buttons per awaiting answer shown."""
    text, citations = render_digest(digest)
    replies = [Reply(ReplyKind.NOTICE, text, "en", "", citations=citations, reason=DIGEST_REASON)]
    if reviews is not None:
        replies += [await reviews.review_reply(answer) for answer in digest.awaiting]
    return replies


async def post_docs_gap_digest(
    db: Database,
    outbox: Outbox,
    target: ThreadRef,
    *,
    since: datetime,
    until: datetime,
    embedder: Embedder,
    queue: ReviewQueue | None = None,
    reviews: ReviewMessages | None = None,
) -> int:
    """Queue the digest for [since, until) to `target` once (keyed by its period); returns the questions listed."""
    key = f"job:docs-gap-digest:{target.platform}:{target.channel_id}:{until.isoformat()}"
    if await outbox.exists(key):
        return 0
    digest = await build_digest(db, embedder, queue, since=since, until=until)
    if digest.empty:
        log.info("docs digest: nothing to report")
        return 0
    replies = await digest_replies(digest, reviews)
    for number, reply in enumerate(replies):
        await outbox.add(OutgoingReply(target, reply, key if number == 0 else f"{key}:review:{number}"))
    log.info("docs digest queued", extra={"questions": digest.gaps, "clusters": len(digest.clusters),
                                          "awaiting": digest.awaiting_total})  # fmt: skip
    return digest.gaps
