"""The framework's own cost per message: the real `PipelineRunner` and manager over zero-work agents.

Every agent returns its payload at once (search and quality return canned payloads so the manager follows the
answer path: lang, translation, essence, guardrails, search, guardrails, augmentation, response, quality). The
baseline makes the same nine agent calls in a plain loop, so runner / baseline shows what routing, slots, timeouts
and the trace cost. Per role: the time from the previous agent's return to this agent's start (the manager's
routing, the role's slot and timeout set-up), and `finish` from the last agent's return to the result.

    .venv/bin/python -m bench.overhead [--messages 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.evaluation import p50_p95
from bot.logs import configure_logging
from bot.settings import DEFAULT_ROLE_LIMITS
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.result import ResultKind
from pipeline.runner import PipelineRunner
from pipeline.types import ContextType, QualityDecision, Role, SearchHit, SearchQuality, SourceReference

ANSWER_PATH: tuple[Role, ...] = (
    Role.LANG,
    Role.TRANSLATION,
    Role.ESSENCE,
    Role.GUARDRAILS,
    Role.SEARCH,
    Role.GUARDRAILS,
    Role.AUGMENTATION,
    Role.RESPONSE,
    Role.QUALITY,
)


def _hit() -> SearchHit:
    return SearchHit("c1", "d1", "s", "Title", ("Manual",), "https://docs.example.com/d1#s", "Text.", 0.9)


def start_payload() -> Payload:
    """The payload a message starts with, already understood (the fakes do no work)."""
    return Payload(
        text="How do I pair the remote?",
        language="en",
        confidence=1.0,
        text_eng="How do I pair the remote?",
        canonical_question="How do I pair the remote?",
        context_type=ContextType.NEW_TOPIC,
        within_scope=True,
    )


def searched_payload() -> Payload:
    return start_payload().evolve(search_results=(_hit(),), search_quality=SearchQuality.GOOD)


def approved_payload() -> Payload:
    source = SourceReference(1, "c1", "d1", "Title", ("Manual",), "https://docs.example.com/d1#s", "Text.", 0.9)
    return searched_payload().evolve(
        response="Hold Home and Back [1].", source_references=(source,), quality_decision=QualityDecision.APPROVE
    )


class Stamps:
    """Entry and exit times of agent calls, for per-role attribution."""

    def __init__(self) -> None:
        self.calls: list[tuple[Role, float, float]] = []

    def clear(self) -> None:
        self.calls.clear()


class ZeroWorkAgent:
    """Returns its input payload (or a canned one) without doing anything; records when it ran."""

    role: ClassVar[Role]

    def __init__(self, role: Role, stamps: Stamps, canned: Payload | None = None) -> None:
        self.role = role  # type: ignore[misc]
        self._stamps = stamps
        self._canned = None if canned is None else AgentResult(canned, "canned")

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        entered = time.perf_counter()
        result = self._canned or AgentResult(payload, "echo")
        self._stamps.calls.append((self.role, entered, time.perf_counter()))
        return result


def zero_work_agents(stamps: Stamps) -> dict[Role, ZeroWorkAgent]:
    canned = {Role.SEARCH: searched_payload(), Role.QUALITY: approved_payload()}
    return {role: ZeroWorkAgent(role, stamps, canned.get(role)) for role in Role if role is not Role.MANAGER}


def default_runner(agents: Any, *, max_waiting: int = 100, role_timeout_s: float = 20.0) -> PipelineRunner:
    """The runner with the default instance counts and round limits of `bot.settings`."""
    return PipelineRunner(
        agents,
        DEFAULT_ROLE_LIMITS,
        max_waiting=max_waiting,
        role_timeout_s=role_timeout_s,
        max_process_count=30,
        max_research_rounds=1,
        max_regenerate_rounds=1,
    )


@dataclass(frozen=True, slots=True)
class OverheadResult:
    p50_ms: float
    p95_ms: float
    baseline_p50_ms: float
    baseline_p95_ms: float
    per_role_p50_ms: dict[str, float]
    messages: int

    def figures(self) -> dict[str, Any]:
        return {
            "overhead_p50_ms": self.p50_ms,
            "overhead_p95_ms": self.p95_ms,
            "overhead_baseline_p50_ms": self.baseline_p50_ms,
            "overhead_baseline_p95_ms": self.baseline_p95_ms,
            "overhead_per_role_p50_ms": self.per_role_p50_ms,
        }


def _hop_labels() -> list[str]:
    seen: dict[Role, int] = defaultdict(int)
    labels = []
    for role in ANSWER_PATH:
        seen[role] += 1
        labels.append(role.value if seen[role] == 1 else f"{role.value}#{seen[role]}")
    return labels


async def run(messages: int = 2000, warmup: int = 200) -> OverheadResult:
    """Time `messages` runs one after another through the runner, then the same calls in a plain loop."""
    stamps = Stamps()
    agents = zero_work_agents(stamps)
    runner = default_runner(agents)
    context = Context()
    payload = Payload(text="How do I pair the remote?")
    labels = _hop_labels()
    totals: list[float] = []
    per_hop: dict[str, list[float]] = defaultdict(list)
    for i in range(warmup + messages):
        stamps.clear()
        started = time.perf_counter()
        result = await runner.run(conversation_id="c", message_id=f"m{i}", payload=payload, context=context)
        finished = time.perf_counter()
        if result.kind is not ResultKind.ANSWER or [r for r, _, _ in stamps.calls] != list(ANSWER_PATH):
            raise RuntimeError(f"the runner left the answer path: {result.kind.value} {result.reason}")
        if i < warmup:
            continue
        totals.append((finished - started) * 1000)
        previous = started
        for label, (_, entered, left) in zip(labels, stamps.calls, strict=True):
            per_hop[label].append((entered - previous) * 1000)
            previous = left
        per_hop["finish"].append((finished - previous) * 1000)

    baseline: list[float] = []
    ordered = [agents[role] for role in ANSWER_PATH]
    for i in range(warmup + messages):
        stamps.clear()
        started = time.perf_counter()
        current = payload
        for agent in ordered:
            current = (await agent.run(current, context)).payload
        finished = time.perf_counter()
        if i >= warmup:
            baseline.append((finished - started) * 1000)

    p50, p95 = p50_p95(totals)
    b50, b95 = p50_p95(baseline)
    per_role = {label: round(p50_p95(values)[0], 4) for label, values in per_hop.items()}
    return OverheadResult(p50, p95, b50, b95, per_role, messages)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.overhead", description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args(argv)
    configure_logging("WARNING")
    print(json.dumps(asyncio.run(run(args.messages)).figures(), indent=2))


if __name__ == "__main__":
    main()
