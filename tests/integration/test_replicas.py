"""Replicas as real processes sharing one PostgreSQL database: every event answered once, a killed replica's work
taken over within the lease, unsent replies delivered once after a restart, each scheduled due time run once.

The replicas (`tests/integration/replica_worker.py`) run the real Delivery, inbox, outbox and scheduler around a fast
fake handler and post to a fake Slack Web API served here. Run with `-s` to see the figures (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import statistics
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from sqlalchemy import text

from pipeline.codec import to_json
from pipeline.messages import Inbound, InboundKind, ThreadRef
from storage.db import Database
from tests.conftest import REPO
from tests.storage.dbutil import create_postgres_database, drop_postgres_database

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(150)]

LEASE_S = 3.0
T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def event(n: int) -> Inbound:
    return Inbound(
        platform="slack", workspace_id="T1", channel_id=f"C{n % 5}", thread_id=None,
        message_id=f"1700000000.{n:06d}", user_id=f"U{n % 17}", user_name="someone", text=f"question {n}",
        ts=T0,
    )


def press(n: int) -> Inbound:
    """A button press under the answer to event `n`."""
    return replace(event(n), kind=InboundKind.ACTION, action_id=f"act{n}", thread_id=event(n).message_id,
                   message_id=f"1700000001.{n:06d}")


def wire(inbound: Inbound) -> dict[str, Any]:
    ref = ThreadRef(inbound.platform, inbound.workspace_id, inbound.channel_id, inbound.message_id)
    return {"inbound": to_json(inbound), "ref": to_json(ref)}


@dataclass
class FakeSlack:
    """chat.postMessage that records each post; `down` answers 503 to everything, `fail_first` to a key's first."""

    posts: list[tuple[str, float, str]] = field(default_factory=list)  # (dedup key, monotonic time, replica)
    failed: int = 0
    jobs: list[tuple[str, str]] = field(default_factory=list)  # (owner, due)
    down: bool = False
    fail_first: set[str] = field(default_factory=set)
    url: str = ""

    async def post_message(self, request: web.Request) -> web.Response:
        body = await request.json()
        key = body["text"].removeprefix("answer to ")
        if self.down or key in self.fail_first:
            self.fail_first.discard(key)
            self.failed += 1
            return web.json_response({"ok": False, "error": "service_unavailable"}, status=503)
        self.posts.append((key, time.monotonic(), body["replica"]))
        return web.json_response({"ok": True, "ts": f"{len(self.posts)}.000"})

    async def job_ran(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.jobs.append((body["owner"], body["due"]))
        return web.json_response({"ok": True})

    def delivered(self, keys: set[str]) -> Counter[str]:
        return Counter(key for key, _, _ in self.posts if key in keys)


class Replica:
    def __init__(self, name: str, process: asyncio.subprocess.Process, port: int) -> None:
        self.name = name
        self.process = process
        self.port = port

    @classmethod
    async def start(cls, name: str, slack: FakeSlack, db_url: str, logs: Path, *flags: str) -> Replica:
        env = {**os.environ, "DOCBOT_REPLICA_DB": db_url, "PYTHONPATH": str(REPO)}
        log_file = (logs / f"{name}.log").open("wb")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.integration.replica_worker", "--name", name, "--slack", slack.url,
            "--lease", str(LEASE_S), *flags,
            cwd=REPO, env=env, stdout=asyncio.subprocess.PIPE, stderr=log_file,
        )
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
        if not line.startswith(b"READY "):
            raise RuntimeError(f"replica {name} did not start: {(logs / f'{name}.log').read_text()[-2000:]}")
        return cls(name, process, int(line.split()[1]))

    async def send(self, http: aiohttp.ClientSession, events: list[Inbound]) -> int:
        url = f"http://127.0.0.1:{self.port}/events"
        async with http.post(url, json={"events": [wire(e) for e in events]}) as response:
            accepted: int = (await response.json())["accepted"]
            return accepted

    def kill9(self) -> None:
        self.process.send_signal(signal.SIGKILL)

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), timeout=15)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


async def wait_until(condition: Any, timeout: float, what: str) -> float:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)
    return time.monotonic() - started


async def scalar(db: Database, sql: str, **params: Any) -> Any:
    async with db.session() as session:
        return (await session.execute(text(sql), params)).scalar_one()


@pytest.fixture
async def stack(postgres_url: str, tmp_path: Path) -> AsyncIterator[tuple[FakeSlack, str, Database]]:
    slack = FakeSlack()
    app = web.Application()
    app.router.add_post("/api/chat.postMessage", slack.post_message)
    app.router.add_post("/api/job.ran", slack.job_ran)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    slack.url = f"http://127.0.0.1:{runner.addresses[0][1]}/api/"
    db_url = await create_postgres_database(postgres_url)
    db = Database(db_url)
    await db.migrate()
    try:
        yield slack, db_url, db
    finally:
        await db.dispose()
        await runner.cleanup()
        await drop_postgres_database(db_url)


async def test_replicas_answer_once_survive_kills_and_run_jobs_once(
    stack: tuple[FakeSlack, str, Database], tmp_path: Path
) -> None:
    slack, db_url, db = stack
    figures: dict[str, str] = {}
    replicas: list[Replica] = []
    rng = random.Random(6)
    async with aiohttp.ClientSession() as http:
        try:
            # -- 1. 300 messages and 30 button presses, with Slack retries and twins, spread over 3 replicas -------
            started = time.monotonic()
            replicas = list(await asyncio.gather(*(Replica.start(f"r{i}", slack, db_url, tmp_path) for i in range(3))))
            figures["replica start (3 in parallel)"] = f"{time.monotonic() - started:.1f} s"
            events = [event(n) for n in range(300)]
            presses = [press(n) for n in range(0, 300, 10)]
            keys = {e.dedup_key for e in events + presses}
            slack.fail_first = {e.dedup_key for e in events[::7]}  # the first post of these hits a 503
            deliveries = [(e, n % 3) for n, e in enumerate(events)]
            deliveries += [(e, (n + 1) % 3) for n, e in enumerate(events) if n % 5 == 0]  # Slack retries
            deliveries += [(e, (n + 2) % 3) for n, e in enumerate(events) if n % 10 == 0]  # mention + message twins
            deliveries += [(p, r) for p in presses for r in (0, 1)]  # each press delivered twice
            rng.shuffle(deliveries)
            sent_at: dict[str, float] = {}
            started = time.monotonic()
            accepted = 0
            for start in range(0, len(deliveries), 30):
                batch = deliveries[start : start + 30]
                for e, _ in batch:
                    sent_at.setdefault(e.dedup_key, time.monotonic())
                per_replica = [[e for e, r in batch if r == i] for i in range(3)]
                sends = (rep.send(http, evs) for rep, evs in zip(replicas, per_replica, strict=True))
                counts = await asyncio.gather(*sends)
                accepted += sum(counts)
            await wait_until(lambda: len(slack.delivered(keys)) == 330, 60, "330 replies")
            elapsed = time.monotonic() - started
            await asyncio.sleep(1.5)  # anything delivered twice would show up now
            delivered = slack.delivered(keys)
            assert accepted == 330, f"{accepted} events accepted from {len(deliveries)} deliveries"
            assert len(delivered) == 330 and set(delivered.values()) == {1}
            latencies = sorted(t - sent_at[k] for k, t, _ in slack.posts if k in keys)
            by_replica = Counter(r for k, _, r in slack.posts if k in keys)
            handler_retries = await scalar(db, "SELECT count(*) FROM inbox WHERE attempts > 1")
            outbox_retries = await scalar(db, "SELECT count(*) FROM outbox WHERE attempts > 1")
            figures["deliveries sent (300 messages + 30 presses + duplicates)"] = str(len(deliveries))
            figures["replies posted"] = f"{sum(delivered.values())} (each message and press once)"
            figures["events retried after a handler failure"] = str(handler_retries)
            figures["replies retried after a 503"] = str(outbox_retries)
            figures["answers per replica"] = ", ".join(f"{r}: {n}" for r, n in sorted(by_replica.items()))
            figures["330 events: wall time"] = f"{elapsed:.2f} s ({330 / elapsed:.0f} replies/s)"
            figures["accept -> posted, p50 / p95 / max"] = (
                f"{statistics.median(latencies) * 1000:.0f} / {latencies[int(0.95 * len(latencies))] * 1000:.0f}"
                f" / {latencies[-1] * 1000:.0f} ms"
            )

            # -- 2. kill -9 a replica mid-answer -------------------------------------------------------------------
            hung = await Replica.start("hung", slack, db_url, tmp_path, "--hang")
            replicas.append(hung)
            stuck = [event(n) for n in range(1000, 1024)]
            stuck_keys = {e.dedup_key for e in stuck}
            assert await hung.send(http, stuck) == 24
            held_sql = "SELECT count(*) FROM inbox WHERE claimed_by = 'hung' AND status = 'claimed'"
            deadline = time.monotonic() + 10
            while await scalar(db, held_sql) == 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)
            async with db.session() as session:
                held = set(
                    (await session.execute(text(
                        "SELECT dedup_key FROM inbox WHERE claimed_by = 'hung' AND status = 'claimed'"
                    ))).scalars()
                )
            assert held, "the hanging replica claimed nothing"
            hung.kill9()
            killed_at = time.monotonic()
            await wait_until(lambda: len(slack.delivered(stuck_keys)) == 24, 30, "the stuck events")
            await asyncio.sleep(0.5)
            recovered = [t - killed_at for k, t, _ in slack.posts if k in held]
            assert set(slack.delivered(stuck_keys).values()) == {1}
            assert len(recovered) == len(held) and min(recovered) > 0  # answered by others, after the kill
            figures["kill -9 mid-answer: events held by the killed replica"] = f"{len(held)} of 24"
            figures["kill -9 -> last held event answered elsewhere"] = (
                f"{max(recovered):.2f} s (lease {LEASE_S:.0f} s)"
            )

            # -- 3. unsent outbox rows survive the death of every replica ------------------------------------------
            slack.down = True
            unsent = [event(n) for n in range(2000, 2030)]
            unsent_keys = {e.dedup_key for e in unsent}
            await asyncio.gather(*(rep.send(http, unsent[i::3]) for i, rep in enumerate(replicas[:3])))
            pending_sql = (
                "SELECT count(*) FROM outbox WHERE status = 'pending' AND attempts >= 1"
                " AND inbox_key LIKE 'slack:T1:%.0020%'"
            )
            deadline = time.monotonic() + 20
            while await scalar(db, pending_sql) < 30 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            pending = await scalar(db, pending_sql)
            for rep in replicas[:3]:
                rep.kill9()
            await asyncio.gather(*(rep.process.wait() for rep in replicas[:3]))
            assert pending == 30 and not slack.delivered(unsent_keys)
            slack.down = False
            started = time.monotonic()
            fresh = list(await asyncio.gather(
                *(Replica.start(name, slack, db_url, tmp_path, "--scheduler") for name in ("s1", "s2"))
            ))
            replicas += fresh
            await wait_until(lambda: len(slack.delivered(unsent_keys)) == 30, 30, "the unsent replies")
            restart_to_sent = time.monotonic() - started
            await asyncio.sleep(1.0)
            assert set(slack.delivered(unsent_keys).values()) == {1}
            figures["unsent replies left when all replicas were killed"] = str(pending)
            figures["restart -> all unsent replies posted (once each)"] = f"{restart_to_sent:.2f} s incl. start-up"

            # -- 4. two schedulers: each due time once -------------------------------------------------------------
            slack.jobs.clear()
            await wait_until(lambda: len({due for _, due in slack.jobs}) >= 6, 60, "six due times of the job")
            await asyncio.gather(*(rep.stop() for rep in fresh))
            dues = Counter(due for _, due in slack.jobs)
            owners = Counter(owner for owner, _ in slack.jobs)
            assert dues and set(dues.values()) == {1}, f"due times run more than once: {dues}"
            figures["two schedulers, 0.5 s job: due times run"] = (
                f"{len(dues)}, each once ({', '.join(f'{o}: {n}' for o, n in sorted(owners.items()))})"
            )
            twice = sum(n - 1 for n in Counter(k for k, _, _ in slack.posts).values())
            figures["replies posted twice, all phases"] = str(twice)
            assert twice == 0
        finally:
            for rep in replicas:
                if rep.process.returncode is None:
                    rep.kill9()
                    await rep.process.wait()
    print("\n-- replica figures --")
    for name, value in figures.items():
        print(f"{name}: {value}")
