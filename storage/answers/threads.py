"""A stored thread as capture reads it: people's messages and the bot's replies, each reply with its kind, whether
someone rated it not helpful, and the chunks it cited."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from storage.db import Database
from storage.tables import ConversationRow, FeedbackRow, MessageRow, RunRow

BOT_MESSAGE_PREFIX = "bot:"  # the service stores its replies as `bot:<run id>` (bot.service)


@dataclass(frozen=True, slots=True)
class ThreadMessage:
    message_id: str
    author_id: str
    author_name: str
    text: str
    ts: datetime
    from_bot: bool = False
    reply_kind: str | None = None  # the bot's replies: answer, refusal, clarification, notice
    rated_down: bool = False  # someone pressed "not helpful" on this reply
    cited_chunks: tuple[str, ...] = ()  # the chunks this reply cited
    in_reply_to: str | None = None  # the bot's replies: the message they answered


async def read_thread(db: Database, thread_key: str) -> list[ThreadMessage]:
    """The thread's stored messages in time order ([] for a thread the bot never took part in)."""
    async with db.session() as session:
        conversation_id = await session.scalar(
            select(ConversationRow.id).where(ConversationRow.thread_key == thread_key)
        )
        if conversation_id is None:
            return []
        rows = list(
            await session.scalars(
                select(MessageRow).where(MessageRow.conversation_id == conversation_id).order_by(MessageRow.ts,
                                                                                                 MessageRow.id)
            )
        )  # fmt: skip
        runs = {
            run.id: run
            for run in await session.scalars(select(RunRow).where(RunRow.conversation_id == conversation_id))
        }
        rated_down = set(
            await session.scalars(
                select(FeedbackRow.run_id).where(
                    FeedbackRow.conversation_id == conversation_id, FeedbackRow.helpful.is_(False)
                )
            )
        )
    messages: list[ThreadMessage] = []
    for row in rows:
        run_id = row.platform_message_id.removeprefix(BOT_MESSAGE_PREFIX) if row.from_bot else None
        run = runs.get(run_id) if run_id else None
        cited: tuple[str, ...] = ()
        if run is not None and run.reply:
            cited = tuple(str(c.get("chunk_id", "")) for c in run.reply.get("citations", ()) if c.get("chunk_id"))
        messages.append(
            ThreadMessage(
                message_id=row.platform_message_id,
                author_id=row.author_id,
                author_name=row.author_name,
                text=row.text,
                ts=row.ts,
                from_bot=row.from_bot,
                reply_kind=run.reply_kind if run is not None else None,
                rated_down=run_id in rated_down if run_id else False,
                cited_chunks=cited,
                in_reply_to=run.message_id if run is not None else None,
            )
        )
    return messages
