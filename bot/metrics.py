"""Prometheus metrics. One registry per process, passed around explicitly so tests can read it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from pipeline.envelope import Envelope
from pipeline.types import StrategyUsed

if TYPE_CHECKING:  # pipeline.llm (and the OpenAI SDK under it) loads only when an endpoint is configured
    from pipeline.llm.breaker import BreakerStatus

_ROLE_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.replies = Counter(
            "docbot_replies", "Replies by kind (answer, clarification, refusal, notice)", ["kind"],
            registry=self.registry,
        )
        self.answer_seconds = Histogram(
            "docbot_answer_seconds", "Time from message to reply", registry=self.registry, buckets=_ROLE_BUCKETS
        )
        self.role_seconds = Histogram(
            "docbot_role_seconds", "Time spent in each role", ["role"], registry=self.registry, buckets=_ROLE_BUCKETS
        )
        self.role_wait_seconds = Histogram(
            "docbot_role_wait_seconds", "Time waiting for a free slot of each role", ["role"],
            registry=self.registry, buckets=_ROLE_BUCKETS,
        )
        self.llm_tokens = Counter(
            "docbot_llm_tokens", "LLM tokens by role and kind", ["role", "kind"], registry=self.registry
        )
        self.llm_calls = Counter(
            "docbot_llm_calls", "LLM calls by role (cut calls included)", ["role"], registry=self.registry
        )
        self.llm_estimated_tokens = Counter(
            "docbot_llm_estimated_tokens",
            "Tokens of calls cut before the server reported usage (our estimate; also in docbot_llm_tokens)",
            ["role"],
            registry=self.registry,
        )
        self.llm_fallbacks = Counter(
            "docbot_llm_fallbacks", "Roles whose LLM strategy failed and the offline one answered", ["role"],
            registry=self.registry,
        )
        self.llm_breaker_open = Gauge(
            "docbot_llm_breaker_open", "1 while the LLM endpoint's circuit breaker skips it", registry=self.registry
        )
        self.llm_breaker_skipped = Gauge(
            "docbot_llm_breaker_skipped_calls", "LLM calls skipped by the open breaker since start",
            registry=self.registry,
        )
        self.llm_breaker_opened = Gauge(
            "docbot_llm_breaker_opened", "Times the LLM endpoint's breaker opened since start", registry=self.registry
        )
        self.role_queue = Gauge(
            "docbot_role_queue_depth", "Requests waiting for each role", ["role"], registry=self.registry
        )
        self.role_running = Gauge(
            "docbot_role_running", "Requests running in each role", ["role"], registry=self.registry
        )
        self.inbox_lag = Gauge(
            "docbot_inbox_lag_seconds", "Age of the oldest unprocessed inbox event", registry=self.registry
        )
        self.outbox_rows = Gauge(
            "docbot_outbox_rows", "Replies not delivered: pending (being retried) and failed (past the horizon or "
            "refused; `docbot outbox retry`)", ["status"], registry=self.registry,
        )  # fmt: skip

    def observe_run(self, envelope: Envelope, kind: str, seconds: float) -> None:
        self.replies.labels(kind=kind).inc()
        self.answer_seconds.observe(seconds)
        for hop in envelope.hops:
            self.role_seconds.labels(role=hop.role.value).observe(hop.duration_ms / 1000)
            self.role_wait_seconds.labels(role=hop.role.value).observe(hop.wait_ms / 1000)
            if hop.usage.calls:
                self.llm_calls.labels(role=hop.role.value).inc(hop.usage.calls)
                self.llm_tokens.labels(role=hop.role.value, kind="prompt").inc(hop.usage.prompt_tokens)
                self.llm_tokens.labels(role=hop.role.value, kind="completion").inc(hop.usage.completion_tokens)
                if hop.usage.estimated:
                    self.llm_estimated_tokens.labels(role=hop.role.value).inc(hop.usage.total_tokens)
            if hop.strategy is StrategyUsed.LLM_FAILED:
                self.llm_fallbacks.labels(role=hop.role.value).inc()

    def observe_outbox(self, undelivered: Mapping[str, int]) -> None:
        for status, count in undelivered.items():
            self.outbox_rows.labels(status=status).set(count)

    def observe_notice(self) -> None:
        self.replies.labels(kind="notice").inc()

    def watch_llm_breaker(self, status: Callable[[], BreakerStatus]) -> None:
        """The endpoint's breaker, read at scrape time."""
        from pipeline.llm.breaker import BreakerState

        self.llm_breaker_open.set_function(lambda: float(status().state is not BreakerState.CLOSED))
        self.llm_breaker_skipped.set_function(lambda: float(status().skipped))
        self.llm_breaker_opened.set_function(lambda: float(status().opened))

    def watch_roles(self, counts: Callable[[], Mapping[str, tuple[int, int]]]) -> None:
        """Queue depth and running counts are read at scrape time: `counts()` gives role -> (running, waiting)."""

        def running(role: str) -> Callable[[], float]:
            return lambda: float(counts()[role][0])

        def waiting(role: str) -> Callable[[], float]:
            return lambda: float(counts()[role][1])

        for role in counts():
            self.role_running.labels(role=role).set_function(running(role))
            self.role_queue.labels(role=role).set_function(waiting(role))
