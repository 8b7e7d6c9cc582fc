"""Streaming the response role's answer, for the adapters (Slack chat streaming, Discord progressive edits).

`stream_answer` yields text deltas of the grounded answer; `coalesce` batches them so an adapter updates the
message at most once per interval (Discord allows about five edits per five seconds per channel; Slack's
`chat.appendStream` is rate-limited per workspace). A failure before or during the stream raises
`StrategyFailed`: before the first delta the caller answers offline instead; after it, the caller keeps the
partial text and appends a short note.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Protocol, runtime_checkable

from pipeline.agents.base import StrategyFailed
from pipeline.envelope import Context, Payload
from pipeline.llm import prompts
from pipeline.llm.client import StreamStats
from pipeline.llm.structured import remaining_s
from pipeline.types import ChatMessage, Role


@runtime_checkable
class StreamingLLM(Protocol):
    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: Role,
        temperature: float | None = None,
        stats: StreamStats | None = None,
    ) -> AsyncIterator[str]: ...


async def stream_answer(
    llm: StreamingLLM, payload: Payload, context: Context, *, stats: StreamStats | None = None
) -> AsyncIterator[str]:
    """The answer to `payload` (which must carry `source_references`), streamed as text deltas.

    `stats` collects the full text and the tokens. The stream stops with `StrategyFailed` at the deadline.
    """
    if not payload.source_references:
        raise StrategyFailed("no sources to ground an answer")
    language = payload.language or context.docs_language
    messages = prompts.answer_plain(payload, context, language=language)
    deltas = llm.stream(messages, role=Role.RESPONSE, stats=stats)
    try:
        async for delta in deltas:
            left = remaining_s(context.deadline)
            if left is not None and left <= 0:
                raise StrategyFailed("answer stream passed the question's deadline")
            yield delta
    finally:
        aclose = getattr(deltas, "aclose", None)
        if aclose is not None:
            await aclose()


async def coalesce(
    deltas: AsyncIterator[str], *, min_interval_s: float, clock: Callable[[], float] = time.monotonic
) -> AsyncIterator[str]:
    """Join deltas so that batches are at least `min_interval_s` apart; the last batch is always flushed."""
    buffer: list[str] = []
    last = clock() - min_interval_s
    async for delta in deltas:
        buffer.append(delta)
        now = clock()
        if now - last >= min_interval_s:
            yield "".join(buffer)
            buffer.clear()
            last = now
    if buffer:
        yield "".join(buffer)
