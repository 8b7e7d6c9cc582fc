"""One bot replica for the chaos test: the production front door and delivery — the real Slack adapter over HTTP
(signature, StoreThenAck), `Delivery` with its inbox and outbox, the real `ConversationService` and stores — on
PostgreSQL, posting to the fake Slack Web API. Only the pipeline is replaced, by an instant one (the chaos test is
about the way in and out, not about answers).

    DOCBOT_REPLICA_DB=postgresql+asyncpg://... python -m tests.integration.chaos_replica --name r1 --slack URL

Prints `READY <port>` once it serves `POST /slack/events`; SIGTERM stops it, the test also kills it with SIGKILL.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from typing import cast

from aiohttp import web

from adapters.slack.app import SlackAdapter
from bench.fakes.instant_runner import InstantRunner
from bot.adapter_options import slack_options
from bot.delivery import Delivery, DeliveryConfig
from bot.logs import configure_logging
from bot.service import ConversationService
from bot.settings import Settings
from pipeline.runner import PipelineRunner
from storage.actions import ActionStore
from storage.conversations import ConversationStore
from storage.db import Database
from storage.feedback import FeedbackStore
from storage.inbox import Inbox
from storage.outbox import Outbox
from storage.runs import RunStore

TOKEN = "xoxb-chaos-0000-SECRETTOKEN"
SIGNING_SECRET = "chaos-signing-secret-7f3a"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--slack", required=True)
    args = parser.parse_args()
    configure_logging("INFO", secrets=(TOKEN, SIGNING_SECRET))  # what `docbot serve` does at default settings
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, slack_bot_token=TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=args.slack
    )
    db = Database(os.environ["DOCBOT_REPLICA_DB"], pool_size=10)
    service = ConversationService(
        settings=settings, conversations=ConversationStore(db), runs=RunStore(db), actions=ActionStore(db),
        feedback=FeedbackStore(db), runner=cast(PipelineRunner, InstantRunner()),
    )  # fmt: skip
    adapter = SlackAdapter(slack_options(settings))
    delivery = Delivery(
        db, service, {"slack": adapter.sink}, args.name, fetcher_for=adapter.fetcher_for,
        config=DeliveryConfig(lease_s=4.0, heartbeat_s=1.0, poll_s=0.1, concurrency=8, sweep_s=0.5,
                              outbox_lease_s=15.0, progress_timeout_s=2.0),
        inbox=Inbox(db, max_attempts=10, base_backoff_s=0.2, max_backoff_s=2.0),
        outbox=Outbox(db, base_backoff_s=0.2, max_backoff_s=2.0),
    )  # fmt: skip
    adapter.intake = delivery
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    app = web.Application()
    adapter.add_routes(app)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(f"READY {runner.addresses[0][1]}", flush=True)
    await delivery.run_worker(stop)
    await adapter.close()
    await runner.cleanup()
    await db.dispose()


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
