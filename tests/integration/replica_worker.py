"""One bot replica for the replica tests: the real Delivery (inbox, outbox, leases) and scheduler around a fast fake
handler, posting to a fake Slack Web API over HTTP.

    python -m tests.integration.replica_worker --name r1 --slack http://127.0.0.1:PORT/api/ [--hang] [--scheduler]

The database URL comes from the environment (`DOCBOT_REPLICA_DB`). The replica serves `POST /events` (a batch of
events to accept, as an adapter would before acknowledging) on an ephemeral port and prints `READY <port>` once up.
SIGTERM stops it cleanly; the tests also kill it with SIGKILL.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
from aiohttp import web

from bot.delivery import Delivery, DeliveryConfig
from bot.scheduler import JobSpec, LeasedScheduler
from pipeline.codec import from_json
from pipeline.messages import ActionOutcome, Inbound, Reply, ReplyKind, ThreadFetcher, ThreadRef
from storage.db import Database
from storage.inbox import Inbox
from storage.leases import JobLeases
from storage.outbox import Outbox

FLAKY_EVERY = 10  # every 10th question fails the first time each replica sees it (a transient pipeline error)


class FastHandler:
    """Answers in 5-20 ms; `hang` never answers (a replica stuck mid-answer, to be killed)."""

    def __init__(self, name: str, hang: bool) -> None:
        self.name = name
        self.hang = hang
        self._seen: set[str] = set()

    async def handle_message(self, inbound: Inbound, fetcher: ThreadFetcher | None = None) -> Reply | None:
        if self.hang:
            await asyncio.Event().wait()
        await asyncio.sleep(random.uniform(0.005, 0.02))
        number = int(inbound.message_id.rsplit(".", 1)[-1])
        if number % FLAKY_EVERY == 3 and inbound.dedup_key not in self._seen:
            self._seen.add(inbound.dedup_key)
            raise RuntimeError("transient pipeline failure")
        return Reply(ReplyKind.ANSWER, f"answer to {inbound.dedup_key}", "en", "conv", note=self.name)

    async def handle_action(self, inbound: Inbound) -> ActionOutcome:
        await asyncio.sleep(random.uniform(0.005, 0.02))
        reply = Reply(ReplyKind.ANSWER, f"answer to {inbound.dedup_key}", "en", "conv", note=self.name)
        return ActionOutcome(accepted=True, chosen_label="ok", reply=reply)


class SlackHttpSink:
    """Posts like chat.postMessage; a non-ok answer raises, so the outbox retries."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, name: str) -> None:
        self._session = session
        self._base = base_url
        self._name = name

    async def post(self, ref: ThreadRef, reply: Reply) -> str:
        body = {"channel": ref.channel_id, "thread_ts": ref.thread_id, "text": reply.text, "replica": self._name}
        async with self._session.post(self._base + "chat.postMessage", json=body) as response:
            data: dict[str, Any] = await response.json()
        if not data.get("ok"):
            raise RuntimeError(f"slack error {data.get('error')}")
        return str(data["ts"])


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--slack", required=True)
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--scheduler", action="store_true")
    parser.add_argument("--lease", type=float, default=3.0)
    args = parser.parse_args()

    db = Database(os.environ["DOCBOT_REPLICA_DB"], pool_size=10)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http:
        delivery = Delivery(
            db,
            FastHandler(args.name, args.hang),
            {"slack": SlackHttpSink(http, args.slack, args.name)},
            args.name,
            config=DeliveryConfig(
                lease_s=args.lease, heartbeat_s=args.lease / 3, poll_s=0.1, concurrency=8, sweep_s=0.5,
                outbox_lease_s=args.lease,
            ),
            inbox=Inbox(db, max_attempts=5, base_backoff_s=0.2, max_backoff_s=1.0),
            outbox=Outbox(db, base_backoff_s=0.2, max_backoff_s=1.0),
        )

        async def events(request: web.Request) -> web.Response:
            batch = await request.json()
            accepted = 0
            for event in batch["events"]:
                inbound, ref = from_json(Inbound, event["inbound"]), from_json(ThreadRef, event["ref"])
                accepted += await delivery.accept(inbound, ref)
            return web.json_response({"accepted": accepted})

        app = web.Application()
        app.router.add_post("/events", events)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]

        scheduler: LeasedScheduler | None = None
        if args.scheduler:

            async def tick(due: datetime) -> None:
                body = {"owner": args.name, "due": due.isoformat()}
                async with http.post(args.slack + "job.ran", json=body) as response:
                    await response.read()

            spec = JobSpec("tick", timedelta(seconds=0.5), tick, anchor=datetime(2026, 1, 1, tzinfo=UTC),
                           lease=timedelta(seconds=5))
            scheduler = LeasedScheduler(JobLeases(db), args.name, [spec])
            scheduler.start()

        print(f"READY {port}", flush=True)
        await delivery.run_worker(stop)
        if scheduler is not None:
            await scheduler.stop()
        await runner.cleanup()
    await db.dispose()


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
