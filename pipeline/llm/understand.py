"""The fast configuration's single "understand" call, shared by the lang, translation, essence and guardrails roles.

The first role that asks starts the call; the others await the same task (or read its cached result), so one
question costs one call. The tokens are reported once, by the role whose request started the call. A failure is
shared too, so each of the four roles falls back to its offline strategy without calling again.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.agents.base import StrategyFailed
from pipeline.envelope import Context, Payload
from pipeline.llm import prompts
from pipeline.llm.schemas import Understanding
from pipeline.llm.structured import OFFLINE_RESERVE_S, ask, call_deadline
from pipeline.text import one_line, strip_mentions
from pipeline.types import LLM, LLMUsage, Role

Key = tuple[object, ...]


@dataclass(slots=True)
class _Entry:
    task: asyncio.Task[tuple[Understanding, LLMUsage]]
    started_by: Role
    expires_at: float
    usage_reported: bool = False


def understanding_key(payload: Payload, context: Context) -> Key:
    """What the understanding depends on: the message, the thread, the docs' language, a pressed button."""
    history = tuple(h.line() for h in context.history)
    return (_plain(payload.text), history, context.docs_language, payload.chosen_action)


def _plain(text: str) -> str:
    """The message as every role sees it (the translation agent cleans it and strips mentions first)."""
    return one_line(strip_mentions(text)) or one_line(text)


class Understander:
    def __init__(
        self,
        llm: LLM,
        *,
        scope: str,
        role_timeout_s: float | None = None,
        offline_reserve_s: float = OFFLINE_RESERVE_S,
        ttl_s: float = 300.0,
        max_entries: int = 512,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.llm = llm
        self.scope = scope
        self.role_timeout_s = role_timeout_s
        self.offline_reserve_s = offline_reserve_s
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        self.calls_started = 0

    async def understand(self, payload: Payload, context: Context, role: Role) -> tuple[Understanding, LLMUsage]:
        """The shared understanding; its usage is reported once, to the role that started the call (a shared
        failure likewise carries the spent tokens only once)."""
        entry = self._entry(payload, context, role)
        try:
            found, usage = await asyncio.shield(entry.task)
        except StrategyFailed as failure:
            raise StrategyFailed(failure.reason, failure.usage if self._claim(entry, role) else None) from None
        return found, usage if self._claim(entry, role) else LLMUsage()

    @staticmethod
    def _claim(entry: _Entry, role: Role) -> bool:
        if entry.started_by is not role or entry.usage_reported:
            return False
        entry.usage_reported = True
        return True

    def _entry(self, payload: Payload, context: Context, role: Role) -> _Entry:
        now = self.clock()
        key = understanding_key(payload, context)
        entry = self._entries.get(key)
        if entry is not None and entry.expires_at > now:
            return entry
        task = asyncio.ensure_future(self._call(payload, context))
        task.add_done_callback(_consume_exception)
        entry = _Entry(task=task, started_by=role, expires_at=now + self.ttl_s)
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return entry

    async def _call(self, payload: Payload, context: Context) -> tuple[Understanding, LLMUsage]:
        self.calls_started += 1
        messages = prompts.understand(payload.evolve(text=_plain(payload.text)), context, self.scope)
        deadline = call_deadline(
            context.deadline,
            Role.LANG,
            role_timeout_s=self.role_timeout_s,
            offline_reserve_s=self.offline_reserve_s,
            fast=True,
        )
        return await ask(self.llm, messages, Understanding, role=Role.LANG, deadline=deadline)


def _consume_exception(task: asyncio.Task[tuple[Understanding, LLMUsage]]) -> None:
    if not task.cancelled():
        task.exception()  # the awaiting roles see it; this only silences "exception was never retrieved"
