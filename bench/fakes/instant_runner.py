"""A pipeline that answers "answer to <question>" at once: for the benchmarks and tests about the way in and out
(outages, chaos, replicas), where the answers themselves do not matter."""

from __future__ import annotations

from datetime import UTC, datetime

from pipeline.envelope import Context, Envelope, Payload
from pipeline.result import PipelineResult, ResultKind
from pipeline.types import SuggestedAction


class InstantRunner:
    """The runner's interface, none of its agents."""

    async def run(self, *, conversation_id: str, message_id: str, payload: Payload, context: Context) -> PipelineResult:
        now = datetime.now(UTC)
        envelope = Envelope(conversation_id, message_id, payload, now, now, process_count=1)
        return PipelineResult(ResultKind.ANSWER, f"answer to {payload.text}", "en", envelope)

    async def resume(
        self, envelope: Envelope, *, context: Context, chosen: SuggestedAction | None = None,
        reply_text: str | None = None,
    ) -> PipelineResult:  # fmt: skip
        return PipelineResult(ResultKind.ANSWER, f"answer to {reply_text}", "en", envelope)
