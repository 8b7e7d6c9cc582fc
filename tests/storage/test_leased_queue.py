"""The leased queue both the inbox and the outbox are built on: its own rules, apart from theirs (their claims,
guards, counts and purges are exercised on both backends in test_inbox.py and test_outbox.py)."""

from __future__ import annotations

import pytest

from storage.db import Database
from storage.inbox import INBOX, Inbox
from storage.leased_queue import LeasedQueue
from storage.outbox import Outbox
from tests.integration.dbfixtures import database_fixtures

pg_url, db = database_fixtures()


@pytest.mark.unit
def test_backoff_doubles_from_the_base_up_to_the_cap_however_many_attempts() -> None:
    queue = LeasedQueue(Database("sqlite+aiosqlite://"), INBOX, key=INBOX.c.dedup_key,
                        not_before=INBOX.c.lease_until, base_backoff_s=2.0, max_backoff_s=120.0)  # fmt: skip
    assert [queue.backoff_s(n) for n in (0, 1, 2, 3, 7, 8)] == [2.0, 2.0, 4.0, 8.0, 120.0, 120.0]
    assert queue.backoff_s(10**6) == 120.0  # no overflow after a day of retries


@pytest.mark.integration
async def test_the_inbox_and_the_outbox_keep_their_own_backoff_on_the_one_queue(db: Database) -> None:
    inbox, outbox = Inbox(db, base_backoff_s=3.0, max_backoff_s=10.0), Outbox(db, base_backoff_s=1.0)
    assert [inbox.backoff_s(n) for n in (1, 2, 3)] == [3.0, 6.0, 10.0]
    assert [outbox.backoff_s(n) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]
    assert await outbox.undelivered() == {"pending": 0, "failed": 0}  # the statuses asked for, 0 when absent
    assert await inbox.counts() == {}
