"""The seam between the service, delivery and storage (issue 29), for this tree and a baseline tree in one run.

Every question goes the whole way a platform event goes: `Delivery.accept` (the inbox put), a worker's claim, the
service and the pipeline (offline, hashing embedder, the fixture manual), the settling of the answer and the outbox
row, the post to a recording sink and the row marked sent. Counted on the engine from the first put to the last
sent row: SQL statements and commits per question (each conversation asks a question and a follow-up in its thread).

- `sqlite`: one replica on the default SQLite file, 10 conversations;
- `postgres`: two replicas (two apps, two engines, two workers) on one PostgreSQL database, 50 conversations at
  once: answers/s (settled and sent) besides the counts.

    .venv/bin/python -m bench.seam --baseline /tmp/base-tree [--postgres postgresql://postgres@127.0.0.1:5432/test]

The baseline is an export of another commit (`git archive main | tar -x -C /tmp/base-tree`); both trees use this
tree's virtualenv. The figures go to stdout as JSON and, with --write, to bench/results/seam.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MANUAL = REPO / "tests" / "fixtures" / "manual"

QUESTIONS = [
    "how do I pair the remote",
    "how do I reset the network settings",
    "what audio formats are supported",
    "how do I change the display brightness",
    "how do I create an account",
    "what are the specifications",
    "how do I update the software",
    "why is there no sound",
]

CHILD = r'''
import asyncio, json, sys, time
from datetime import UTC, datetime
from sqlalchemy import event, text
mode, data, manual, url, conversations, replicas = sys.argv[1:7]
conversations, replicas = int(conversations), int(replicas)
questions = json.loads(sys.argv[7])

from bot.app import build_app
from bot.delivery import Delivery, DeliveryConfig
from bot.settings import Settings
from pipeline.messages import Inbound, ThreadRef
from storage.embedder import HashingEmbedder


POSTED = {}  # thread → replies posted there, over every replica's sink


class Sink:  # a platform that takes every post: the message id it would return
    def __init__(self):
        self.posted = 0
    async def post(self, ref, reply):
        self.posted += 1
        POSTED[ref.thread_id] = POSTED.get(ref.thread_id, 0) + 1
        return f"{time.time_ns()}.{self.posted}"


async def main():
    settings = Settings(data_dir=data, database_url=url or None, cache_similarity=0.999)
    apps = [await build_app(settings, embedder=HashingEmbedder(384))]
    await apps[0].ingest([manual], base_url="https://docs.example.com/manual")
    for _ in range(replicas - 1):
        apps.append(await build_app(settings, embedder=HashingEmbedder(384)))
    counts = {"statements": 0, "commits": 0}
    def bump(name):
        def listener(*_args):
            counts[name] += 1
        return listener
    sinks = [Sink() for _ in apps]
    config = DeliveryConfig(poll_s=0.05, concurrency=max(8, conversations // replicas + 1), sweep_s=3600)
    deliveries = [Delivery(app.db, app.service, {"slack": sink}, f"w{i}", config=config)
                  for i, (app, sink) in enumerate(zip(apps, sinks))]
    for app in apps:
        event.listen(app.db.engine.sync_engine, "before_cursor_execute", bump("statements"))
        event.listen(app.db.engine.sync_engine, "commit", bump("commits"))
    stop = asyncio.Event()
    workers = [asyncio.create_task(d.run_worker(stop)) for d in deliveries]
    await asyncio.sleep(0.2)  # the workers' first sweep is not the questions'
    counts.update(statements=0, commits=0)
    base = time.time_ns() // 1000
    def ask(c, k):
        ts = f"{base + c}.{k:06d}"
        thread = f"{base + c}.000000" if k else None
        inbound = Inbound(platform="slack", workspace_id="T1", channel_id="C1", thread_id=thread,
                          message_id=ts, user_id=f"U{c}", user_name=f"U{c}",
                          text=questions[(c + k) % len(questions)], ts=datetime.now(UTC), mentioned=True)
        ref = ThreadRef(platform="slack", workspace_id="T1", channel_id="C1", thread_id=thread or ts)
        return inbound, ref
    async def conversation(c):
        for k in range(2):
            inbound, ref = ask(c, k)
            target = deliveries[c % len(deliveries)]  # the load balancer sends each event to some replica
            await target.accept(inbound, ref)
            while POSTED.get(ref.thread_id, 0) <= k:  # in memory: the bench's waiting runs no SQL
                await asyncio.sleep(0.02)
    started = time.perf_counter()
    await asyncio.gather(*(conversation(c) for c in range(conversations)))
    elapsed = time.perf_counter() - started
    counted = dict(counts)  # before the workers stop (their last sweeps are no question's)
    stop.set()
    await asyncio.gather(*workers)
    asked = 2 * conversations
    out = {"questions": asked, "answers_per_s": round(asked / elapsed, 2), "posted": sum(s.posted for s in sinks),
           "counted": counted,
           "statements_per_question": round(counted["statements"] / asked, 1),
           "commits_per_question": round(counted["commits"] / asked, 1)}
    for app in apps:
        await app.close()
    print("RESULT " + json.dumps(out))

asyncio.run(main())
'''


def run_child(root: Path, data: Path, url: str, conversations: int, replicas: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root), "DOCBOT_LOG_LEVEL": "WARNING"}
    script = data / "child.py"
    script.write_text(CHILD)
    argv = [sys.executable, str(script), "seam", str(data), str(MANUAL), url, str(conversations), str(replicas),
            json.dumps(QUESTIONS)]  # fmt: skip
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=1800, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line[7:])
            return result
    return {"error": (done.stderr or done.stdout)[-1500:]}


def _fresh_postgres(url: str, name: str) -> str:
    """A new empty database beside the one `url` names (dropped first if a previous run left it)."""
    import asyncio

    import asyncpg  # type: ignore[import-untyped]

    plain = url.replace("postgresql+asyncpg://", "postgresql://")

    async def recreate() -> None:
        connection = await asyncpg.connect(plain)
        try:
            await connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
            await connection.execute(f'CREATE DATABASE "{name}"')
        finally:
            await connection.close()

    asyncio.run(recreate())
    return plain.rsplit("/", 1)[0] + "/" + name


def run(baseline: Path, postgres: str | None, conversations: int) -> dict[str, Any]:
    out: dict[str, Any] = {"at": datetime.now(UTC).isoformat(timespec="seconds")}
    for name, root in (("baseline", baseline), ("this", REPO)):
        figures: dict[str, Any] = {}
        with tempfile.TemporaryDirectory() as work:
            figures["sqlite_1_replica"] = run_child(root, Path(work), "", 10, 1)
        if postgres:
            with tempfile.TemporaryDirectory() as work:
                url = _fresh_postgres(postgres, f"bench_seam_{name}")
                figures["postgres_2_replicas"] = run_child(root, Path(work), url, conversations, 2)
        out[name] = figures
        print(json.dumps({name: figures}), file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--baseline", type=Path, required=True, help="an export of the baseline commit")
    parser.add_argument("--postgres", help="a PostgreSQL URL whose server the bench may create a database on")
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--write", action="store_true", help="also write bench/results/seam.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result = run(args.baseline, args.postgres, args.conversations)
    result["bench_s"] = round(time.perf_counter() - started, 1)
    text = json.dumps(result, indent=2)
    print(text)
    if args.write:
        (REPO / "bench" / "results" / "seam.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
