"""Slack ack latency in HTTP mode: p50/p99 under 50 concurrent signed requests while the pipeline is slow.

The adapter's aiohttp server (its `/slack/events` route: bolt's signature check, the `StoreThenAck` middleware and
the inbox write to SQLite before the 200 — the path production takes — and, on the same server, a bare baseline
handler that reads the body and returns 200) runs in this process; the load generator and the fake Slack Web API the
adapter posts its answers to run in a second process, as Slack does on the other side of the wire. A conversation
handler that takes `--pipeline-s` per message stands in for a slow pipeline, so answers pile up in the background
while later requests are being acknowledged. The ratio compares the adapter with the baseline measured in this run.

    .venv/bin/python -m bench.slack_ack                 # 10 rounds of 50 concurrent requests
    .venv/bin/python -m bench.slack_ack --quick         # 3 rounds
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import itertools
import json
import multiprocessing
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

import aiohttp
from aiohttp import web

from adapters.slack.app import SlackAdapter
from adapters.slack.fake_web_api import FakeSlackAPI
from bot.adapter_options import slack_options
from bot.delivery import Delivery, DeliveryConfig
from bot.settings import Settings
from pipeline.messages import ActionOutcome, Inbound, Reply, ReplyKind, ThreadFetcher
from storage.db import Database

SECRET = "bench-signing-secret"


class SlowHandler:
    """Answers every message after `delay_s` (a stand-in for a busy pipeline)."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.answered = 0

    async def handle_message(self, inbound: Inbound, fetcher: ThreadFetcher | None = None) -> Reply | None:
        await asyncio.sleep(self.delay_s)
        self.answered += 1
        return Reply(kind=ReplyKind.ANSWER, text="An answer [1].", language="en", conversation_id=inbound.thread_key)

    async def handle_action(self, inbound: Inbound) -> ActionOutcome:
        return ActionOutcome(accepted=False, chosen_label="")


@dataclass(frozen=True)
class Latencies:
    p50_ms: float
    p99_ms: float
    count: int

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Latencies:
        ms = sorted(s * 1000 for s in seconds)
        p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
        return cls(statistics.median(ms), p99, len(ms))


@dataclass(frozen=True)
class AckResult:
    adapter: Latencies
    baseline: Latencies
    non_200: int
    answered: int
    stored: int  # events in the inbox after the run: every acknowledged event was written before its ack

    @property
    def ratio_p50(self) -> float:
        return self.adapter.p50_ms / self.baseline.p50_ms

    @property
    def ratio_p99(self) -> float:
        return self.adapter.p99_ms / self.baseline.p99_ms


def _signed(body: str) -> dict[str, str]:
    ts = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}", "Content-Type": "application/json"}


def _mention(n: int) -> str:
    ts = f"{1_790_000_000 + n}.000100"
    event = {"type": "app_mention", "user": "UALICE", "text": f"<@UBOT0001> question {n}", "ts": ts,
             "channel": "C1", "event_ts": ts}  # fmt: skip
    return json.dumps({"team_id": "T0001", "api_app_id": "A1", "type": "event_callback", "event_id": f"Ev{n}",
                       "event_time": int(time.time()), "event": event})  # fmt: skip


async def _baseline(request: web.Request) -> web.Response:
    await request.read()
    return web.Response(status=200)


def _load_process(concurrency: int, rounds: int, to_parent: Connection, from_parent: Connection) -> None:
    """The other side of the wire, in its own process (its own core): the fake Slack Web API the adapter posts to,
    and the load generator. Sends the API's URL, waits for the server's port, runs the rounds, sends the timings."""
    asyncio.run(_load(concurrency, rounds, to_parent, from_parent))


async def _load(concurrency: int, rounds: int, to_parent: Connection, from_parent: Connection) -> None:
    api = FakeSlackAPI(users={"UALICE": {"name": "alice", "profile": {"display_name": "Alice"}}})
    await api.start()
    to_parent.send(api.base_url)
    port: int = await asyncio.to_thread(from_parent.recv)
    numbers = itertools.count()
    timings: dict[str, list[float]] = {"adapter": [], "baseline": []}
    statuses: list[int] = []
    connector = aiohttp.TCPConnector(limit=concurrency * 2)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(path: str) -> None:
            body = _mention(next(numbers))
            headers = _signed(body)
            started = time.perf_counter()
            async with session.post(f"http://127.0.0.1:{port}{path}", data=body, headers=headers) as response:
                await response.read()
            timings["adapter" if path == "/slack/events" else "baseline"].append(time.perf_counter() - started)
            statuses.append(response.status)

        await asyncio.gather(*(one("/baseline") for _ in range(concurrency)))  # warm up connections
        await asyncio.gather(*(one("/slack/events") for _ in range(concurrency)))
        timings = {"adapter": [], "baseline": []}
        statuses.clear()
        for number in range(rounds):  # interleaved, first one then the other, so both see the same background load
            order = ("/slack/events", "/baseline") if number % 2 == 0 else ("/baseline", "/slack/events")
            for path in order:
                await asyncio.gather(*(one(path) for _ in range(concurrency)))
    to_parent.send((timings, sum(1 for status in statuses if status != 200)))
    await asyncio.to_thread(from_parent.recv)  # keep the fake API up until the adapter has posted every answer
    await api.close()


async def run(concurrency: int = 50, rounds: int = 10, pipeline_s: float = 2.0) -> AckResult:
    """The adapter's server in this process; the load generator and the fake Web API in another one, so the
    measurement is the adapter's own cost, not a client sharing its core."""
    context = multiprocessing.get_context("spawn")
    from_child, child_end = context.Pipe(duplex=False)
    child_start, to_child = context.Pipe(duplex=False)
    child = context.Process(target=_load_process, args=(concurrency, rounds, child_end, child_start), daemon=True)
    child.start()
    api_url: str = await asyncio.to_thread(from_child.recv)
    settings = Settings(_env_file=None, slack_bot_token="xoxb-bench", slack_signing_secret=SECRET,
                        slack_api_url=api_url)  # fmt: skip
    handler = SlowHandler(pipeline_s)
    adapter = SlackAdapter(slack_options(settings))
    # the production path: every ack waits for the inbox write (SQLite, the default database); the worker answers
    folder = tempfile.TemporaryDirectory(prefix="docbot-ack-bench-")
    db = Database(f"sqlite+aiosqlite:///{Path(folder.name) / 'bench.db'}")
    await db.migrate()
    delivery = Delivery(db, handler, {"slack": adapter.sink}, "bench", config=DeliveryConfig(concurrency=concurrency))
    adapter.intake = delivery
    stop = asyncio.Event()
    worker = asyncio.create_task(delivery.run_worker(stop))
    web_app = web.Application()
    adapter.add_routes(web_app)
    web_app.router.add_post("/baseline", _baseline)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        to_child.send(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        timings, non_200 = await asyncio.to_thread(from_child.recv)
        stored = sum((await delivery.inbox.counts()).values())
    finally:
        stop.set()
        await asyncio.wait({worker}, timeout=pipeline_s * 2 + 10)
        to_child.send(None)
        await adapter.close()
        await runner.cleanup()
        await db.dispose()
        folder.cleanup()
        await asyncio.to_thread(child.join, 10)
    return AckResult(
        Latencies.of(timings["adapter"]), Latencies.of(timings["baseline"]), non_200, handler.answered, stored
    )


async def main(argv: Sequence[str] | None = None) -> AckResult:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--pipeline-s", type=float, default=2.0)
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else args.rounds
    result = await run(args.concurrency, rounds, args.pipeline_s)
    print(f"slack ack latency, HTTP mode, {args.concurrency} concurrent, {rounds} rounds, "
          f"pipeline {args.pipeline_s:.1f} s per answer")  # fmt: skip
    for name, lat in (("adapter /slack/events", result.adapter), ("baseline bare aiohttp", result.baseline)):
        print(f"  {name:24s} p50 {lat.p50_ms:7.1f} ms   p99 {lat.p99_ms:7.1f} ms   n={lat.count}")
    print(f"  ratio adapter/baseline   p50 {result.ratio_p50:5.1f}x     p99 {result.ratio_p99:5.1f}x")
    sent = result.adapter.count + args.concurrency  # the measured requests and the warm-up batch
    print(f"  non-200 acks: {result.non_200}; events stored in the inbox (SQLite) before their ack: "
          f"{result.stored} of {sent}; answers posted after the run: {result.answered}")  # fmt: skip
    return result


if __name__ == "__main__":
    asyncio.run(main())
