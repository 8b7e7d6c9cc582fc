"""Expire clarifying questions nobody answered: the conversation stops waiting and the thread gets a polite note."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import Table, select, update

from pipeline.locales import texts
from pipeline.messages import Reply, ReplyKind, ThreadRef
from storage.db import Database
from storage.outbox import OutgoingReply, insert_replies
from storage.tables import ConversationRow, ConversationState

log = logging.getLogger(__name__)

CONVERSATIONS: Table = ConversationRow.__table__  # type: ignore[assignment]


async def expire_clarifications(db: Database, *, older_than: timedelta, now: datetime, limit: int = 500) -> int:
    """Close clarifications pending since before `now - older_than`; returns how many were expired.

    Each conversation is switched back to idle and its note queued in the outbox in one transaction, and only if it
    is still waiting as seen (a reply that arrived meanwhile wins), so running this twice never sends two notes."""
    cutoff = now - older_than
    waiting = CONVERSATIONS.c.state == ConversationState.AWAITING_CLARIFICATION.value
    query = (
        select(
            CONVERSATIONS.c.id,
            CONVERSATIONS.c.platform,
            CONVERSATIONS.c.workspace_id,
            CONVERSATIONS.c.channel_id,
            CONVERSATIONS.c.thread_id,
            CONVERSATIONS.c.language,
            CONVERSATIONS.c.updated_at,
        )
        .where(waiting, CONVERSATIONS.c.updated_at < cutoff)
        .order_by(CONVERSATIONS.c.updated_at)
        .limit(limit)
    )
    async with db.session() as session:
        stale = (await session.execute(query)).all()
    expired = 0
    for row in stale:
        language = row.language or "en"
        note = Reply(
            kind=ReplyKind.NOTICE,
            text=texts(language).button_expired,
            language=language,
            conversation_id=row.id,
            reason="clarification_expired",
        )
        ref = ThreadRef(row.platform, row.workspace_id, row.channel_id, row.thread_id)
        close = (
            update(CONVERSATIONS)
            .where(CONVERSATIONS.c.id == row.id, waiting, CONVERSATIONS.c.updated_at == row.updated_at)
            .values(state=ConversationState.IDLE.value, pending_envelope=None, updated_at=now)
        )
        async with db.session() as session:
            if not (await session.execute(close)).rowcount:  # type: ignore[attr-defined]
                continue
            key = f"job:clarification-expired:{row.id}:{row.updated_at.isoformat()}"
            await insert_replies(session, [OutgoingReply(ref, note, key)], now)
        expired += 1
    if expired:
        log.info("clarifications expired", extra={"count": expired})
    return expired
