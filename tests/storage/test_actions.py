"""ActionStore on both backends: opaque ids, exactly-once presses, thread checks, expiry, one choice per question
(the buttons are stored the way an answer stores them: `tests/helpers/stored.py`)."""

from __future__ import annotations

import asyncio
import re
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from pipeline.types import ActionKind
from storage.actions import ActionStore, ConsumeRefusal
from storage.db import Database, utc_now
from tests.conftest import REPO
from tests.helpers.stored import stored_actions, stored_conversation

pytestmark = pytest.mark.integration

THREAD = "slack:T1:C1:100.1"
OTHER_THREAD = "slack:T1:C1:200.2"
CHOICES = [
    (ActionKind.SEARCH, "Pairing the remote", "pair remote"),
    (ActionKind.SEARCH, "Resetting the remote", "reset remote"),
    (ActionKind.HUMAN, "Ask a person", ""),
]


async def _conversation(db: Database, key: str = THREAD) -> str:
    return (await stored_conversation(db, key)).id


async def test_stored_buttons_keep_their_opaque_ids_in_order(db: Database):
    store = ActionStore(db)
    conversation_id = await _conversation(db)
    actions = await stored_actions(db, conversation_id, CHOICES)
    assert [(a.kind, a.label, a.value) for a in actions] == CHOICES
    assert len({a.id for a in actions}) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{16}", a.id) for a in actions)
    assert len({a.batch_id for a in actions}) == 1
    assert all(a.consumed_at is None for a in actions)
    assert [await store.get(a.id) for a in actions] == actions  # read back as settled


async def test_twenty_concurrent_presses_consume_once(db: Database):
    conversation_id = await _conversation(db)
    actions = await stored_actions(db, conversation_id, CHOICES[:1])
    other = Database(db.engine.url.render_as_string(hide_password=False))  # a second replica
    try:
        stores = [ActionStore(db), ActionStore(other)]
        results = await asyncio.gather(*(stores[i % 2].consume(actions[0].id, THREAD, f"U{i}") for i in range(20)))
    finally:
        await other.dispose()
    assert Counter(r.reason for r in results) == {None: 1, ConsumeRefusal.ALREADY_USED: 19}
    (winner,) = [r for r in results if r.accepted]
    assert winner.action is not None and winner.action.consumed_by is not None
    stored = await ActionStore(db).get(actions[0].id)
    assert stored is not None and stored.consumed_by == winner.action.consumed_by


async def test_pressing_different_choices_at_once_accepts_one_choice(db: Database):
    conversation_id = await _conversation(db)
    store = ActionStore(db)
    actions = await stored_actions(db, conversation_id, CHOICES)
    results = await asyncio.gather(*(store.consume(actions[i % 3].id, THREAD, f"U{i}") for i in range(21)))
    assert sum(r.accepted for r in results) == 1
    assert {r.reason for r in results if not r.accepted} == {ConsumeRefusal.ALREADY_USED}
    siblings = [await store.get(a.id) for a in actions]
    assert all(s is not None and s.consumed_at is not None for s in siblings)


async def test_a_choice_consumes_its_siblings_but_not_feedback_buttons(db: Database):
    conversation_id = await _conversation(db)
    store = ActionStore(db)
    first, second, _human = await stored_actions(db, conversation_id, CHOICES)
    later = await stored_actions(db, conversation_id, CHOICES[:1])  # the next question's buttons
    helpful, not_helpful = await stored_actions(
        db, conversation_id, [(ActionKind.HELPFUL, "Helpful", ""), (ActionKind.NOT_HELPFUL, "Not helpful", "")]
    )
    assert (await store.consume(second.id, THREAD, "U1")).accepted
    refused = await store.consume(first.id, THREAD, "U2")
    assert refused.reason is ConsumeRefusal.ALREADY_USED
    assert refused.action is not None and refused.action.consumed_by == "U1"
    assert (await store.consume(later[0].id, THREAD, "U2")).accepted
    assert (await store.consume(helpful.id, THREAD, "U1")).accepted
    assert (await store.consume(not_helpful.id, THREAD, "U1")).accepted  # feedback buttons stand alone


async def test_the_same_press_event_consuming_again_gets_the_same_outcome(db: Database):
    """A retried press (its first attempt consumed the choice and died) is accepted again; any other press, even
    by the same person or of a sibling choice, is refused; a press without an event key stays once-only."""
    conversation_id = await _conversation(db)
    store = ActionStore(db)
    first, second, _human = await stored_actions(db, conversation_id, CHOICES)
    assert (await store.consume(second.id, THREAD, "U1", event_key="press-1")).accepted
    again = await store.consume(second.id, THREAD, "U1", event_key="press-1")
    assert again.accepted and again.action is not None and again.action.consumed_event == "press-1"
    assert (await store.consume(second.id, THREAD, "U1", event_key="press-2")).reason is ConsumeRefusal.ALREADY_USED
    assert (await store.consume(first.id, THREAD, "U1", event_key="press-3")).reason is ConsumeRefusal.ALREADY_USED
    assert (await store.consume(second.id, THREAD, "U1")).reason is ConsumeRefusal.ALREADY_USED
    assert (await store.consume(second.id, OTHER_THREAD, "U1", event_key="press-1")).reason is (
        ConsumeRefusal.OTHER_THREAD
    )


async def test_presses_from_another_thread_are_refused(db: Database):
    conversation_id = await _conversation(db)
    await _conversation(db, OTHER_THREAD)
    store = ActionStore(db)
    (action,) = await stored_actions(db, conversation_id, CHOICES[:1])
    refused = await store.consume(action.id, OTHER_THREAD, "U1")
    assert refused.reason is ConsumeRefusal.OTHER_THREAD
    assert refused.action is None  # nothing about another thread's button leaks
    assert (await store.resolve(action.id, OTHER_THREAD)).reason is ConsumeRefusal.OTHER_THREAD
    assert (await store.consume(action.id, THREAD, "U1")).accepted


async def test_unknown_ids_are_refused(db: Database):
    store = ActionStore(db)
    assert (await store.consume("forged-id", THREAD, "U1")).reason is ConsumeRefusal.UNKNOWN
    assert (await store.resolve("forged-id", THREAD)).reason is ConsumeRefusal.UNKNOWN
    assert await store.get("forged-id") is None


async def test_expired_actions_are_refused(db: Database):
    conversation_id = await _conversation(db)
    store = ActionStore(db)
    (past,) = await stored_actions(db, conversation_id, CHOICES[:1], expires_at=utc_now() - timedelta(seconds=1))
    result = await store.consume(past.id, THREAD, "U1")
    assert result.reason is ConsumeRefusal.EXPIRED
    assert (await store.get(past.id)).consumed_at is None  # type: ignore[union-attr]

    expires = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)
    (fresh,) = await stored_actions(db, conversation_id, CHOICES[:1], expires_at=expires)
    late = ActionStore(db, clock=lambda: expires + timedelta(seconds=1))
    assert (await late.resolve(fresh.id, THREAD)).reason is ConsumeRefusal.EXPIRED
    assert (await late.consume(fresh.id, THREAD, "U1")).reason is ConsumeRefusal.EXPIRED
    early = ActionStore(db, clock=lambda: expires - timedelta(seconds=1))
    assert (await early.consume(fresh.id, THREAD, "U1")).accepted


async def test_resolve_does_not_consume(db: Database):
    conversation_id = await _conversation(db)
    store = ActionStore(db)
    (helpful,) = await stored_actions(db, conversation_id, [(ActionKind.HELPFUL, "Helpful", "")])
    for _ in range(2):
        checked = await store.resolve(helpful.id, THREAD)
        assert checked.accepted and checked.action is not None and checked.action.kind is ActionKind.HELPFUL
    assert (await store.get(helpful.id)).consumed_at is None  # type: ignore[union-attr]


CONSUMER = """
import asyncio, sys
from storage.actions import ActionStore
from storage.db import Database

async def main(url, action_id, thread_key, presses):
    db = Database(url)
    try:
        store = ActionStore(db)
        results = await asyncio.gather(*(store.consume(action_id, thread_key, f"U{i}") for i in range(presses)))
    finally:
        await db.dispose()
    print(sum(r.accepted for r in results), sum(r.reason is not None for r in results))

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
"""


@pytest.mark.slow
async def test_presses_from_two_processes_consume_once(db: Database):
    """Two processes press two choices of one question ten times each: one press wins."""
    conversation_id = await _conversation(db)
    first, second = await stored_actions(db, conversation_id, CHOICES[:2])
    url = db.engine.url.render_as_string(hide_password=False)
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CONSUMER,
            url,
            action.id,
            THREAD,
            "10",
            cwd=REPO,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for action in (first, second)
    ]
    outputs = await asyncio.gather(*(p.communicate() for p in processes))
    assert all(p.returncode == 0 for p in processes), [err.decode()[-500:] for _, err in outputs]
    accepted, refused = (sum(int(out.split()[i]) for out, _ in outputs) for i in (0, 1))
    assert (accepted, refused) == (1, 19)
