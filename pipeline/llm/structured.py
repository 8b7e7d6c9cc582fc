"""Ask any `LLM` for one structured decision: schema in, validated pydantic model out, one repair attempt,
everything bounded by the question's deadline.

One deadline per question, shared by the roles (`call_deadline`): before each LLM call, `offline_reserve_s` is set
aside for the offline steps still to come (search, augmentation, every fallback), and the call may use its role's
share of the rest: its weight over the weights of the LLM calls still ahead on the answer path. A slow model thus
slows each role by a bounded amount, and the offline pipeline always keeps the time to answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from pipeline.agents.base import StrategyFailed
from pipeline.llm.client import CutOff, MalformedOutput, estimated_prompt_tokens
from pipeline.llm.schemas import strict_schema
from pipeline.types import LLM, ChatMessage, LLMResult, LLMUsage, Role

M = TypeVar("M", bound=BaseModel)

FALLBACK_RESERVE_S = 1.0  # left in the role's own slot for its offline strategy when the LLM uses up its time
OFFLINE_RESERVE_S = 8.0  # left of the question's deadline for the offline rest of the pipeline (the default)

# the LLM calls of the answer path, in order, with their weights (the response writes the most)
ANSWER_PATH: tuple[tuple[Role, float], ...] = (
    (Role.LANG, 1.0),
    (Role.TRANSLATION, 1.0),
    (Role.ESSENCE, 1.0),
    (Role.GUARDRAILS, 1.0),
    (Role.RESPONSE, 3.0),
    (Role.QUALITY, 1.0),
)
FAST_PATH: tuple[tuple[Role, float], ...] = ((Role.LANG, 4.0), (Role.RESPONSE, 3.0), (Role.QUALITY, 1.0))


def share(role: Role, *, fast: bool = False) -> float:
    """The part of the spendable time the LLM call of `role` may use: its weight over the weights from it to the end
    of the path (the last call, and any role off the path such as clarification, gets all of it)."""
    path = FAST_PATH if fast else ANSWER_PATH
    roles = [r for r, _ in path]
    if role not in roles:
        return 1.0
    ahead = path[roles.index(role) :]
    return ahead[0][1] / sum(weight for _, weight in ahead)


def role_fallback_s(role_timeout_s: float) -> float:
    """What an LLM call always leaves of its role's timeout for the role's offline strategy: half of it (10 s of the
    default 20 s). On a loaded 2-core box the offline answer of a
    German question (multilingual embeddings of every candidate sentence) took more than the 4 s it had before, and
    the role timed out; raise `DOCBOT_ROLE_TIMEOUT_S` to give a slow model's answers more time."""
    return max(FALLBACK_RESERVE_S, role_timeout_s / 2)


def call_deadline(
    question_deadline: float | None,
    role: Role,
    *,
    role_timeout_s: float | None,
    offline_reserve_s: float = OFFLINE_RESERVE_S,
    fast: bool = False,
    now: float | None = None,
) -> float | None:
    """When the LLM call of `role` must end (monotonic): its share of the question's time after the offline reserve,
    and never past the role's own timeout."""
    now = time.monotonic() if now is None else now
    if question_deadline is None:
        return None if role_timeout_s is None else now + role_timeout_s
    spendable = max(0.0, question_deadline - offline_reserve_s - now)
    own = spendable * share(role, fast=fast)
    if role_timeout_s is not None:
        own = min(own, role_timeout_s - role_fallback_s(role_timeout_s))
    # remaining_s keeps FALLBACK_RESERVE_S of it for the role's own fallback
    return now + own + FALLBACK_RESERVE_S if own > 0 else now


class LLMFailed(StrategyFailed):
    """A structured call failed; `usage` still counts the tokens it spent."""


def remaining_s(deadline: float | None, reserve_s: float = FALLBACK_RESERVE_S) -> float | None:
    """Seconds the LLM may still use before `deadline` (monotonic), keeping `reserve_s` for the fallback."""
    if deadline is None:
        return None
    return deadline - reserve_s - time.monotonic()


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
        raise StrategyFailed("no time left for the llm before the question's deadline")
    try:
        async with asyncio.timeout(left):
            return await llm.complete(messages, role=role, schema=schema, temperature=temperature)
    except TimeoutError:
        # the request was sent and the server worked on it: count the call and its prompt, marked as an estimate
        cut = LLMUsage(prompt_tokens=estimated_prompt_tokens(messages), calls=1, estimated=True)
        raise StrategyFailed(f"llm cut at its {left:.1f}s share of the question's time", cut) from None


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
        except CutOff as cut:  # a runaway generation: a repair would run away again
            raise LLMFailed(cut.reason, usage + cut.usage) from None
        except MalformedOutput as bad:
            usage = usage + bad.usage
            raw, problem = bad.raw, bad.reason
        except LLMFailed:
            raise
        except StrategyFailed as failure:
            raise LLMFailed(failure.reason, usage + failure.usage) from None
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
