"""A Slack Web API outage of minutes, end to end (issue 28): questions asked while the Web API is down are answered
once after it is back, with no placeholder left.

Replicas (`--replicas`, default 2) run the production front door and delivery — the real Slack adapter over signed
HTTP, `Delivery` with the inbox and outbox at their production defaults (a reply is retried until the 24 h horizon,
at most a minute apart), the real `ConversationService` — on one database (a fresh PostgreSQL database when the
server at `--postgres` answers, else one SQLite file), each in its own process. Only the pipeline is an instant one:
this is about the way in and out, not about answers. Slack's side is a fake Web API on a real socket, and a
deliverer that signs each event and retries what is not acknowledged, as Slack does.

Questions are asked (a mention and its `message` twin each) while the Web API is down for `--outage-s`:

    http_500   every call answers HTTP 500 with an HTML page (a proxy's error page), as in the issue's run
    ok_false   every call answers HTTP 200 `{"ok": false}` with one of Slack's transient errors (internal_error,
               fatal_error, service_unavailable, request_timeout, ratelimited), and a third of the calls that post
               or update a message do so before answering the error ("it's possible some aspect of the operation
               succeeded")

Reported: questions, answered exactly once, bot posts per thread, placeholders left, apologies, and the time from
the recovery to each answer (p50 and the last).

    .venv/bin/python -m bench.outage --fault http_500 --outage-s 600      # the issue's 10-minute outage
    .venv/bin/python -m bench.outage --fault ok_false --outage-s 600
    .venv/bin/python -m bench.outage --fault ok_false --outage-s 20 --fast  # a short run (what the test runs)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import aiohttp
from aiohttp import web
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import create_async_engine

from adapters.slack.app import SlackAdapter
from adapters.slack.blocks import PROGRESS_BLOCK
from adapters.slack.fake_web_api import BOT_USER, TEAM, Failure, FakeSlackAPI, Message
from bench.fakes.instant_runner import InstantRunner
from bot.adapter_options import slack_options
from bot.delivery import Delivery, DeliveryConfig
from bot.service import ConversationService
from bot.settings import Settings
from pipeline.locales import texts
from pipeline.runner import PipelineRunner
from storage.actions import ActionStore
from storage.conversations import ConversationStore
from storage.db import Database
from storage.feedback import FeedbackStore
from storage.inbox import Inbox
from storage.outbox import Outbox
from storage.runs import RunStore

TOKEN = "xoxb-outage-bench"
SIGNING_SECRET = "outage-bench-signing-secret"
TRANSIENT = ("internal_error", "fatal_error", "service_unavailable", "request_timeout", "ratelimited")
WRITES = ("chat.postMessage", "chat.update", "chat.delete", "chat.postEphemeral")
REPO = Path(__file__).resolve().parent.parent
POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


# -- one replica --------------------------------------------------------------------------------------------------


@dataclass
class Replica:
    server: web.AppRunner
    worker: asyncio.Task[None]

    @property
    def port(self) -> int:
        return int(self.server.addresses[0][1])


async def serve_replica(name: str, db_url: str, slack_url: str, stop: asyncio.Event, *, fast: bool) -> Replica:
    """A replica's HTTP server and delivery worker, running until `stop`."""
    settings = Settings(
        _env_file=None, slack_bot_token=TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack_url
    )
    db = Database(db_url) if db_url.startswith("sqlite") else Database(db_url, pool_size=10)
    service = ConversationService(
        settings=settings, conversations=ConversationStore(db), runs=RunStore(db), actions=ActionStore(db),
        feedback=FeedbackStore(db), runner=cast(PipelineRunner, InstantRunner()),
    )  # fmt: skip
    adapter = SlackAdapter(slack_options(settings))
    if fast:  # the same path with shorter waits (the test's short outage)
        config = DeliveryConfig(lease_s=6.0, heartbeat_s=1.5, poll_s=0.1, sweep_s=0.5, progress_timeout_s=2.0)
        inbox = Inbox(db, base_backoff_s=0.2, max_backoff_s=1.0)
        outbox = Outbox(db, base_backoff_s=0.2, max_backoff_s=2.0)
    else:  # production defaults (what `docbot run` builds)
        config, inbox, outbox = DeliveryConfig(), Inbox(db), Outbox(db)
    delivery = Delivery(db, service, {"slack": adapter.sink}, name, fetcher_for=adapter.fetcher_for, config=config,
                        inbox=inbox, outbox=outbox)  # fmt: skip
    adapter.intake = delivery
    app = web.Application()
    adapter.add_routes(app)
    server = web.AppRunner(app, access_log=None)
    await server.setup()
    await web.TCPSite(server, "127.0.0.1", 0).start()

    async def work() -> None:
        try:
            await delivery.run_worker(stop)
        finally:
            await adapter.close()
            await server.cleanup()
            await db.dispose()

    return Replica(server, asyncio.create_task(work()))


async def _replica_main(name: str, db_url: str, slack_url: str, fast: bool) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    replica = await serve_replica(name, db_url, slack_url, stop, fast=fast)
    print(f"READY {replica.port}", flush=True)
    await replica.worker


async def _start_process(name: str, db_url: str, slack_url: str, fast: bool) -> tuple[asyncio.subprocess.Process, int]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "bench.outage", "--replica", name, "--db", db_url, "--slack", slack_url]
    process = await asyncio.create_subprocess_exec(
        *command, *(["--fast"] if fast else []), cwd=REPO, env=env, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), timeout=120)
    if not line.startswith(b"READY "):
        raise RuntimeError(f"replica {name} did not start")
    return process, int(line.split()[1])


# -- Slack's side -------------------------------------------------------------------------------------------------


@dataclass
class Outage:
    """The fault the fake Web API answers every call with while `active`."""

    kind: str  # "http_500" | "ok_false"
    rng: random.Random
    active: bool = False
    injected: int = 0
    writes: int = 0  # of those, calls that post or change a message
    landed: int = 0  # of those, calls that posted or changed a message before answering the error

    def __call__(self, method: str) -> Failure | None:
        if not self.active or method in ("auth.test", "apps.connections.open"):
            return None
        self.injected += 1
        if self.kind == "http_500":
            return Failure(status=500, html=True, retry_after=None)
        # every third write lands, the first among them: a short run with few writes still has one that landed
        landed = method in WRITES and self.writes % 3 == 0
        self.writes += method in WRITES
        self.landed += landed
        return Failure(status=200, error=self.rng.choice(TRANSIENT), retry_after=None, after=landed)


def signed(body: str) -> dict[str, str]:
    ts = str(int(time.time()))
    digest = hmac.new(SIGNING_SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}", "Content-Type": "application/json"}


async def deliver(http: aiohttp.ClientSession, ports: Sequence[int], body: str, first: int) -> None:
    """Slack's delivery: to a replica behind a load balancer, retried until acknowledged with 200."""
    for attempt in range(12):
        port = ports[(first + attempt) % len(ports)]
        with contextlib.suppress(aiohttp.ClientError, TimeoutError):
            async with http.post(f"http://127.0.0.1:{port}/slack/events", data=body, headers=signed(body)) as reply:
                await reply.read()
                if reply.status == 200:
                    return
        await asyncio.sleep(min(0.25 * 2**attempt, 3.0))
    raise RuntimeError("an event was never acknowledged")


async def ask(http: aiohttp.ClientSession, api: FakeSlackAPI, ports: Sequence[int], n: int) -> tuple[str, str]:
    """Question n: its `app_mention` and its `message` twin, to different replicas."""
    question = f"question {n} about pairing the remote"
    shown = f"<@{BOT_USER}> {question}"
    channel = f"C{n % 3}"
    ts = api.seed(channel, shown, user="UCAROL")
    event = {"type": "app_mention", "user": "UCAROL", "text": shown, "ts": ts, "channel": channel, "event_ts": ts}
    for index, payload in enumerate((event, {**event, "type": "message", "channel_type": "channel"})):
        body = {"token": "legacy", "team_id": TEAM, "api_app_id": "A0001", "type": "event_callback",
                "event_id": f"Ev{uuid.uuid4().hex[:10]}", "event_time": int(time.time()),
                "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
                "event": payload}  # fmt: skip
        await deliver(http, ports, json.dumps(body), n + index)
    return ts, question


# -- the run ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutageFigures:
    fault: str
    outage_s: float
    replicas: int
    database: str
    questions: int
    answered_once: int
    posts_per_thread_max: int
    posts_per_thread_mean: float
    placeholders_left: int
    apologies: int
    answered_before_recovery: int
    answer_after_recovery_p50_s: float | None
    answer_after_recovery_max_s: float | None
    faults_injected: int
    writes_landed_despite_the_error: int
    settings: str


def is_placeholder(message: Message) -> bool:
    return any(block.get("block_id") == PROGRESS_BLOCK for block in message.blocks)


def answers(api: FakeSlackAPI, root: str, question: str) -> list[Message]:
    return [m for m in api.bot_messages(thread_ts=root) if f"answer to {question}" in m.text]


@contextlib.asynccontextmanager
async def database(postgres: str | None) -> AsyncIterator[tuple[str, str]]:
    """A fresh, migrated database for the replicas: (its URL, "postgresql" or "sqlite"), removed afterwards."""
    if postgres:
        admin = create_async_engine(postgres, isolation_level="AUTOCOMMIT")
        name = f"docbot_outage_{uuid.uuid4().hex[:10]}"
        try:
            async with admin.connect() as connection:
                await connection.execute(text(f'CREATE DATABASE "{name}"'))
        except (OSError, SQLAlchemyError):
            await admin.dispose()
        else:
            url = make_url(postgres).set(database=name).render_as_string(hide_password=False)
            try:
                await _migrated(url)
                yield url, "postgresql"
            finally:
                async with admin.connect() as connection:
                    await connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                await admin.dispose()
            return
    with tempfile.TemporaryDirectory(prefix="docbot-outage-") as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'outage.db'}"
        await _migrated(url)
        yield url, "sqlite"


async def _migrated(url: str) -> None:
    db = Database(url)
    try:
        await db.migrate()
    finally:
        await db.dispose()


async def run_outage(
    fault: str,
    outage_s: float,
    *,
    questions: int = 30,
    replicas: int = 2,
    fast: bool = False,
    in_process: bool = False,
    postgres: str | None = POSTGRES,
    settle_s: float = 300.0,
) -> OutageFigures:
    """The scenario end to end; `in_process` runs the replicas as tasks of this process (the test), else each in
    its own process (the benchmark)."""
    api = FakeSlackAPI(users={"UCAROL": {"name": "carol", "profile": {"display_name": "Carol"}}}, page_size=100)
    outage = Outage(fault, random.Random(28))
    api.chaos = outage
    await api.start()
    stop = asyncio.Event()
    processes: list[asyncio.subprocess.Process] = []
    here: list[Replica] = []
    asked: dict[str, str] = {}
    answered_at: dict[str, float] = {}
    before_recovery, recovered, backend = 0, 0.0, ""
    try:
        async with database(postgres) as (db_url, backend):
            ports = []
            for index in range(replicas):
                if in_process:
                    replica = await serve_replica(f"r{index}", db_url, api.base_url, stop, fast=fast)
                    here.append(replica)
                    ports.append(replica.port)
                else:
                    process, port = await _start_process(f"r{index}", db_url, api.base_url, fast)
                    processes.append(process)
                    ports.append(port)
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15)) as http:
                outage.active = True
                started = time.monotonic()
                spacing = outage_s * 0.8 / max(questions, 1)  # asked over the first 80% of the outage
                for n in range(questions):
                    root, question = await ask(http, api, ports, n)
                    asked[root] = question
                    await asyncio.sleep(max(0.0, started + (n + 1) * spacing - time.monotonic()))
                await asyncio.sleep(max(0.0, started + outage_s - time.monotonic()))
                outage.active = False
                recovered = time.monotonic()
                before_recovery = sum(1 for root, question in asked.items() if answers(api, root, question))
                deadline = recovered + settle_s
                while len(answered_at) < len(asked) and time.monotonic() < deadline:
                    for root, question in asked.items():
                        if root not in answered_at and answers(api, root, question):
                            answered_at[root] = time.monotonic()
                    await asyncio.sleep(0.2)
                await asyncio.sleep(3.0 if fast else 15.0)  # a second copy posted late is counted too
            stop.set()
            await _stop(processes, here)
    finally:
        stop.set()
        await _stop(processes, here)
        await api.close()
    per_thread = {root: api.bot_messages(thread_ts=root) for root in asked}
    waits = sorted(at - recovered for at in answered_at.values())
    failure = texts("en").failure
    return OutageFigures(
        fault=fault,
        outage_s=outage_s,
        replicas=replicas,
        database=backend,
        questions=len(asked),
        answered_once=sum(
            1 for root, posts in per_thread.items() if len(posts) == 1 and answers(api, root, asked[root])
        ),
        posts_per_thread_max=max((len(posts) for posts in per_thread.values()), default=0),
        posts_per_thread_mean=round(statistics.fmean([len(posts) for posts in per_thread.values()] or [0]), 3),
        placeholders_left=sum(1 for message in api.bot_messages() if is_placeholder(message)),
        apologies=sum(1 for message in api.bot_messages() if failure in message.text),
        answered_before_recovery=before_recovery,
        answer_after_recovery_p50_s=round(statistics.median(waits), 1) if waits else None,
        answer_after_recovery_max_s=round(waits[-1], 1) if waits else None,
        faults_injected=outage.injected,
        writes_landed_despite_the_error=outage.landed,
        settings="fast (outbox backoff capped at 2 s)" if fast else "production defaults (outbox capped at 60 s)",
    )


async def _stop(processes: list[asyncio.subprocess.Process], here: list[Replica]) -> None:
    for process in processes:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            await asyncio.wait_for(process.wait(), timeout=90)
        except TimeoutError:
            process.kill()
            await process.wait()
    for replica in here:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(replica.worker, timeout=90)
    processes.clear()
    here.clear()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--fault", choices=("http_500", "ok_false"), default="http_500")
    parser.add_argument("--outage-s", type=float, default=600.0)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--fast", action="store_true", help="shorter backoffs and leases (the test's settings)")
    parser.add_argument("--postgres", default=POSTGRES, help="server for a fresh database ('' for SQLite)")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    parser.add_argument("--replica", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--slack", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.replica:
        asyncio.run(_replica_main(args.replica, args.db, args.slack, args.fast))
        return
    load_before = os.getloadavg()
    figures = asyncio.run(run_outage(args.fault, args.outage_s, questions=args.questions, replicas=args.replicas,
                                     fast=args.fast, postgres=args.postgres or None))  # fmt: skip
    report = {**asdict(figures), "measured": datetime.now(UTC).isoformat(timespec="seconds"),
              "load_average_before_after": [round(load_before[0], 1), round(os.getloadavg()[0], 1)]}  # fmt: skip
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
