"""Ask any `LLM` for one structured decision: schema in, validated pydantic model out, one repair attempt,
everything bounded by the question's deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from pipeline.agents.base import StrategyFailed
from pipeline.llm.client import MalformedOutput
from pipeline.llm.schemas import strict_schema
from pipeline.types import LLM, ChatMessage, LLMResult, LLMUsage, Role

M = TypeVar("M", bound=BaseModel)

FALLBACK_RESERVE_S = 1.0  # left for the offline strategy when the LLM uses up the deadline


class LLMFailed(StrategyFailed):
    """A structured call failed; `usage` still counts the tokens it spent."""


def remaining_s(deadline: float | None, reserve_s: float = FALLBACK_RESERVE_S) -> float | None:
    """Seconds the LLM may still use before `deadline` (monotonic), keeping `reserve_s` for the fallback."""
    if deadline is None:
        return None
    return deadline - reserve_s - time.monotonic()


def role_deadline(question_deadline: float | None, role_timeout_s: float | None) -> float | None:
    """The earlier of the question's deadline and the end of this role's time slot (monotonic seconds)."""
    if role_timeout_s is None:
        return question_deadline
    own = time.monotonic() + role_timeout_s
    return own if question_deadline is None else min(question_deadline, own)


async def complete_within(
    llm: LLM,
    messages: Sequence[ChatMessage],
    *,
    role: Role,
    deadline: float | None,
    schema: dict[str, object] | None = None,
    temperature: float | None = None,
) -> LLMResult:
    left = remaining_s(deadline)
    if left is not None and left <= 0:
        raise StrategyFailed("no time left before the question's deadline")
    try:
        async with asyncio.timeout(left):
            return await llm.complete(messages, role=role, schema=schema, temperature=temperature)
    except TimeoutError:
        raise StrategyFailed("llm did not answer before the question's deadline") from None


def _repair_request(raw: str, problem: str) -> list[ChatMessage]:
    return [
        ChatMessage("assistant", raw[:4000]),
        ChatMessage(
            "user",
            f"That reply was not valid: {problem}. Reply again with one JSON object that matches the schema "
            "exactly, and nothing else.",
        ),
    ]


def _problem(error: ValidationError) -> str:
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in error.errors()[:5]]
    return "; ".join(parts)


async def ask(
    llm: LLM,
    messages: Sequence[ChatMessage],
    output: type[M],
    *,
    role: Role,
    deadline: float | None,
    temperature: float | None = None,
) -> tuple[M, LLMUsage]:
    """One structured decision. Malformed or invalid output gets one repair attempt, then `LLMFailed`."""
    schema = strict_schema(output)
    usage = LLMUsage()
    conversation = list(messages)
    for attempt in (1, 2):
        try:
            result = await complete_within(
                llm, conversation, role=role, deadline=deadline, schema=schema, temperature=temperature
            )
        except MalformedOutput as bad:
            usage = usage + bad.usage
            raw, problem = bad.raw, bad.reason
        except LLMFailed:
            raise
        except StrategyFailed as failure:
            raise LLMFailed(failure.reason, usage) from None
        else:
            usage = usage + result.usage
            if result.data is None:
                raw, problem = result.text, "no JSON object"
            else:
                try:
                    return output.model_validate(result.data), usage
                except ValidationError as error:
                    raw, problem = result.text, _problem(error)
        if attempt == 1:
            conversation = [*messages, *_repair_request(raw, problem)]
    raise LLMFailed(f"{output.__name__} output invalid after one repair attempt ({problem[:200]})", usage)
