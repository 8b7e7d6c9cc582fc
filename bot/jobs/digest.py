"""The weekly docs-gap digest: questions the bot refused, had to clarify, or that people rated not helpful,
grouped by topic and posted to the maintainers' channel, so the team knows which pages to write next.

The digest is addressed to the maintainers and written in English (operators' language, like the logs)."""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Table, and_, select

from pipeline.locales import content_words
from pipeline.messages import Reply, ReplyKind, ThreadRef
from storage.db import Database
from storage.outbox import Outbox, OutgoingReply
from storage.tables import FeedbackRow, MessageRow, RunRow

log = logging.getLogger(__name__)

RUNS: Table = RunRow.__table__  # type: ignore[assignment]
MESSAGES: Table = MessageRow.__table__  # type: ignore[assignment]
FEEDBACK: Table = FeedbackRow.__table__  # type: ignore[assignment]
GAP_KINDS = ("refusal", "clarification")
REASON_LABELS = {"refusal": "refused", "clarification": "clarified", "not_helpful": "not helpful"}
MAX_TOPICS = 10
MAX_QUESTIONS_PER_TOPIC = 5
QUESTION_CHARS = 200


@dataclass(frozen=True, slots=True)
class Gap:
    question: str
    reason: str  # refusal | clarification | not_helpful


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    gaps: tuple[Gap, ...]


async def collect_gaps(db: Database, *, since: datetime, until: datetime) -> list[Gap]:
    """The week's gaps, one per question (a question both clarified and rated down counts once, as not helpful)."""
    question = (
        select(MESSAGES.c.text)
        .where(
            and_(
                MESSAGES.c.conversation_id == RUNS.c.conversation_id,
                MESSAGES.c.platform_message_id == RUNS.c.message_id,
            )
        )
        .limit(1)
        .scalar_subquery()
    )
    gap_runs = select(RUNS.c.id, RUNS.c.reply_kind, question.label("question")).where(
        RUNS.c.started_at >= since, RUNS.c.started_at < until, RUNS.c.reply_kind.in_(GAP_KINDS)
    )
    rated_down = (
        select(RUNS.c.id, question.label("question"))
        .join(FEEDBACK, FEEDBACK.c.run_id == RUNS.c.id)
        .where(FEEDBACK.c.created_at >= since, FEEDBACK.c.created_at < until, FEEDBACK.c.helpful.is_(False))
    )
    by_run: dict[str, Gap] = {}
    async with db.session() as session:
        for row in (await session.execute(gap_runs)).all():
            if row.question:
                by_run[row.id] = Gap(row.question, row.reply_kind)
        for rated in (await session.execute(rated_down)).all():
            if rated.question:
                by_run[rated.id] = Gap(rated.question, "not_helpful")
    return list(by_run.values())


def group_by_topic(gaps: list[Gap]) -> list[Topic]:
    """Each question goes under its content word that the most questions share; biggest topics first."""
    words = [list(dict.fromkeys(content_words(gap.question))) for gap in gaps]
    frequency = Counter(word for each in words for word in each)
    groups: dict[str, list[Gap]] = defaultdict(list)
    for gap, each in zip(gaps, words, strict=True):
        topic = max(each, key=lambda word: (frequency[word], -each.index(word))) if each else "other"
        groups[topic].append(gap)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return [Topic(name, tuple(items)) for name, items in ordered]


def render_digest(topics: list[Topic], *, since: datetime, until: datetime) -> str:
    total = sum(len(t.gaps) for t in topics)
    lines = [
        f"**Documentation gaps, {since:%Y-%m-%d} to {until:%Y-%m-%d}**: {total} questions the docs did not serve well.",
    ]
    for topic in topics[:MAX_TOPICS]:
        counts = Counter(gap.reason for gap in topic.gaps)
        summary = ", ".join(f"{n} {REASON_LABELS[reason]}" for reason, n in counts.most_common())
        lines += ["", f"**{topic.name}** ({summary})"]
        for gap in topic.gaps[:MAX_QUESTIONS_PER_TOPIC]:
            text = " ".join(gap.question.split())
            text = text if len(text) <= QUESTION_CHARS else text[: QUESTION_CHARS - 1] + "…"
            lines.append(f"> {text}")
    if len(topics) > MAX_TOPICS:
        lines += ["", f"…and {len(topics) - MAX_TOPICS} more topics."]
    return "\n".join(lines)


async def post_docs_gap_digest(
    db: Database, outbox: Outbox, target: ThreadRef, *, since: datetime, until: datetime
) -> int:
    """Queue the digest for [since, until) to `target` once (keyed by its period); returns the questions listed."""
    key = f"job:docs-gap-digest:{target.platform}:{target.channel_id}:{until.isoformat()}"
    if await outbox.exists(key):
        return 0
    gaps = await collect_gaps(db, since=since, until=until)
    if not gaps:
        log.info("docs-gap digest: nothing to report")
        return 0
    topics = group_by_topic(gaps)
    text = render_digest(topics, since=since, until=until)
    reply = Reply(ReplyKind.NOTICE, text, "en", "", reason="docs_gap_digest")
    await outbox.add(OutgoingReply(target, reply, key))
    log.info("docs-gap digest queued", extra={"questions": len(gaps), "topics": len(topics)})
    return len(gaps)
