"""Throughput under load: many conversations at once through the real runner, every agent call taking a fixed time.

The agents stand in for an LLM that answers each call after `call_s` (200 ms by default) without using the CPU.
With the default instance counts the semaphores bound throughput at `min over roles of limit / (calls per message x
call_s)`; guardrails runs twice per message with one instance, so the bound is 1 / (2 x 0.2 s) = 2.5 messages/s.
The ratio is measured throughput / that bound. The wait queue is sized so no conversation is refused as busy;
`lost` counts conversations that did not end in an answer. Peak memory is tracemalloc's peak during the run.

    .venv/bin/python -m bench.throughput [--conversations 200 --call-ms 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import tracemalloc
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from bench.overhead import ANSWER_PATH, approved_payload, default_runner, searched_payload
from bot.evaluation import p50_p95
from bot.logs import configure_logging
from bot.settings import DEFAULT_ROLE_LIMITS
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.result import ResultKind
from pipeline.types import Role


class SlowAgent:
    """Answers after `delay_s` without using the CPU (a remote model call)."""

    role: ClassVar[Role]

    def __init__(self, role: Role, delay_s: float, canned: Payload | None = None) -> None:
        self.role = role  # type: ignore[misc]
        self._delay_s = delay_s
        self._canned = canned

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        await asyncio.sleep(self._delay_s)
        return AgentResult(self._canned or payload, "slow")


def semaphore_bound(limits: Mapping[Role, int], calls_per_message: Mapping[Role, int], call_s: float) -> float:
    """Messages per second the per-role limits allow: the bottleneck role's limit / its time per message."""
    return min(limits.get(role, 1) / (calls * call_s) for role, calls in calls_per_message.items() if calls > 0)


@dataclass(frozen=True, slots=True)
class ThroughputResult:
    conversations: int
    call_s: float
    seconds: float
    per_s: float
    bound_per_s: float
    e2e_p50_ms: float
    e2e_p95_ms: float
    peak_memory_mb: float
    lost: int
    outcomes: dict[str, int]

    @property
    def ratio(self) -> float:
        return self.per_s / self.bound_per_s

    def figures(self) -> dict[str, Any]:
        return {
            "throughput_ratio": self.ratio,
            "throughput_per_s": self.per_s,
            "throughput_bound_per_s": self.bound_per_s,
            "throughput_e2e_p50_ms": self.e2e_p50_ms,
            "throughput_e2e_p95_ms": self.e2e_p95_ms,
            "throughput_peak_memory_mb": self.peak_memory_mb,
            "throughput_lost": self.lost,
        }


async def run(conversations: int = 200, call_s: float = 0.2, *, max_waiting: int | None = None) -> ThroughputResult:
    """`max_waiting` defaults to room for every conversation; the service's default queue limit is 100 per role."""
    canned = {Role.SEARCH: searched_payload(), Role.QUALITY: approved_payload()}
    agents = {role: SlowAgent(role, call_s, canned.get(role)) for role in Role if role is not Role.MANAGER}
    waiting = conversations * 2 if max_waiting is None else max_waiting
    runner = default_runner(agents, max_waiting=waiting, role_timeout_s=max(20.0, call_s * 10))
    context = Context()
    latencies: list[float] = []
    outcomes: Counter[str] = Counter()

    async def one(n: int) -> None:
        started = time.perf_counter()
        result = await runner.run(
            conversation_id=f"c{n}", message_id=f"m{n}", payload=Payload(text=f"question {n}"), context=context
        )
        latencies.append((time.perf_counter() - started) * 1000)
        outcomes[result.kind.value] += 1

    tracemalloc.start()
    try:
        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(conversations)))
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    calls = Counter(ANSWER_PATH)
    bound = semaphore_bound(DEFAULT_ROLE_LIMITS, calls, call_s)
    p50, p95 = p50_p95(latencies)
    return ThroughputResult(
        conversations=conversations,
        call_s=call_s,
        seconds=seconds,
        per_s=conversations / seconds,
        bound_per_s=bound,
        e2e_p50_ms=p50,
        e2e_p95_ms=p95,
        peak_memory_mb=peak / 1024 / 1024,
        lost=conversations - outcomes[ResultKind.ANSWER.value],
        outcomes=dict(outcomes),
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.throughput", description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--call-ms", type=float, default=200.0)
    args = parser.parse_args(argv)
    configure_logging("WARNING")
    result = asyncio.run(run(args.conversations, args.call_ms / 1000))
    print(json.dumps({**result.figures(), "seconds": result.seconds, "outcomes": result.outcomes}, indent=2))


if __name__ == "__main__":
    main()
