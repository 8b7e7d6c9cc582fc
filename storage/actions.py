"""Buttons offered in a thread, stored behind opaque ids and consumed exactly once.

The buttons are stored with the reply that offers them (`storage.settlement`, ids minted by the service). A button's
value carries only the id. Pressing it goes through `consume`, a single conditional UPDATE, so among concurrent
presses (in one process or several replicas) exactly one wins. The choices of one clarification (search, rephrase,
ask a human) are one question: consuming any of them consumes its siblings created in the same batch. Feedback
buttons stand alone; many people may press them, so the service checks them with `resolve`. A press is consumed on
behalf of its inbox event (`event_key`): a retry of that event (its first attempt consumed the choice and died
before answering) gets the same outcome, while any other press finds it already used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from pipeline.types import ActionKind
from storage.db import Database, utc_now
from storage.tables import ActionRow, ConversationRow

CHOICE_KINDS = frozenset({ActionKind.SEARCH, ActionKind.REPHRASE, ActionKind.HUMAN})
"""Kinds that answer one clarifying question: one choice per batch."""


class ConsumeRefusal(StrEnum):
    UNKNOWN = "unknown"
    OTHER_THREAD = "other_thread"
    ALREADY_USED = "already_used"
    EXPIRED = "expired"


@dataclass(frozen=True, slots=True)
class StoredAction:
    id: str
    conversation_id: str
    batch_id: str
    kind: ActionKind
    label: str
    value: str
    created_at: datetime
    expires_at: datetime | None
    consumed_at: datetime | None
    consumed_by: str | None
    consumed_event: str | None = None


@dataclass(frozen=True, slots=True)
class ConsumeResult:
    """The action when accepted; otherwise the reason (and the action, unless it belongs to another thread)."""

    action: StoredAction | None
    reason: ConsumeRefusal | None = None

    @property
    def accepted(self) -> bool:
        return self.reason is None


def _stored(row: ActionRow) -> StoredAction:
    return StoredAction(
        id=row.id,
        conversation_id=row.conversation_id,
        batch_id=row.batch_id,
        kind=ActionKind(row.kind),
        label=row.label,
        value=row.value,
        created_at=row.created_at,
        expires_at=row.expires_at,
        consumed_at=row.consumed_at,
        consumed_by=row.consumed_by,
        consumed_event=row.consumed_event,
    )


class ActionStore:
    def __init__(self, db: Database, clock: Callable[[], datetime] = utc_now) -> None:
        self._db = db
        self._now = clock

    async def get(self, action_id: str) -> StoredAction | None:
        async with self._db.session() as session:
            row = await session.get(ActionRow, action_id)
            return _stored(row) if row is not None else None

    async def resolve(self, action_id: str, thread_key: str) -> ConsumeResult:
        """Check an action without consuming it (unknown, other thread, expired); for feedback buttons."""
        async with self._db.session() as session:
            found = await self._load(session, action_id)
        if found is None:
            return ConsumeResult(None, ConsumeRefusal.UNKNOWN)
        row, row_thread = found
        if row_thread != thread_key:
            return ConsumeResult(None, ConsumeRefusal.OTHER_THREAD)
        action = _stored(row)
        if self._expired(action):
            return ConsumeResult(action, ConsumeRefusal.EXPIRED)
        return ConsumeResult(action)

    async def consume(
        self, action_id: str, thread_key: str, user_id: str, *, event_key: str | None = None
    ) -> ConsumeResult:
        """Accept a button press at most once across concurrent callers and processes. With `event_key` (the
        press's inbox key) the same event consuming again is accepted again: a retry gets its first outcome."""
        now = self._now()
        async with self._db.session() as session:
            found = await self._load(session, action_id)
            if found is None:
                return ConsumeResult(None, ConsumeRefusal.UNKNOWN)
            row, row_thread = found
            if row_thread != thread_key:
                return ConsumeResult(None, ConsumeRefusal.OTHER_THREAD)
            kind = ActionKind(row.kind)
            targets = (
                (ActionRow.batch_id == row.batch_id) & ActionRow.kind.in_([k.value for k in CHOICE_KINDS])
                if kind in CHOICE_KINDS
                else ActionRow.id == action_id
            )
            # The one decisive statement: only rows still unconsumed and unexpired change, and a concurrent
            # press of any sibling either happened before (nothing changes) or waits and then finds nothing.
            consumed = (
                (
                    await session.execute(
                        update(ActionRow)
                        .where(
                            targets,
                            ActionRow.consumed_at.is_(None),
                            or_(ActionRow.expires_at.is_(None), ActionRow.expires_at > now),
                        )
                        .values(consumed_at=now, consumed_by=user_id, consumed_event=event_key)
                        .returning(ActionRow.id)
                        .execution_options(synchronize_session=False)
                    )
                )
                .scalars()
                .all()
            )
            await session.refresh(row)
        action = _stored(row)
        if action_id in consumed:
            return ConsumeResult(action)
        if event_key is not None and action.consumed_event == event_key:  # this very press, retried
            return ConsumeResult(action)
        if action.consumed_at is not None or (kind in CHOICE_KINDS and not self._expired(action)):
            return ConsumeResult(action, ConsumeRefusal.ALREADY_USED)
        return ConsumeResult(action, ConsumeRefusal.EXPIRED)

    def _expired(self, action: StoredAction) -> bool:
        return action.expires_at is not None and action.expires_at <= self._now()

    @staticmethod
    async def _load(session: AsyncSession, action_id: str) -> tuple[ActionRow, str] | None:
        result = await session.execute(
            select(ActionRow, ConversationRow.thread_key)
            .join(ConversationRow, ConversationRow.id == ActionRow.conversation_id)
            .where(ActionRow.id == action_id)
        )
        found = result.first()
        return (found[0], found[1]) if found is not None else None
