"""The words the pipeline and the platforms share: the roles, the kinds of button, a thread's message as the pipeline
reads it, and a step of a question as a person may watch it run. Standard library only."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Role(StrEnum):
    MANAGER = "manager"
    LANG = "lang"
    TRANSLATION = "translation"
    ESSENCE = "essence"
    GUARDRAILS = "guardrails"
    SEARCH = "search"
    AUGMENTATION = "augmentation"
    RESPONSE = "response"
    QUALITY = "quality"
    CLARIFICATION = "clarification"


class ActionKind(StrEnum):
    """What pressing a suggested action does when the conversation resumes."""

    SEARCH = "search"  # search again with `value` as the topic
    REPHRASE = "rephrase"  # ask the person to rephrase (no search)
    HUMAN = "human"  # hand over to the configured support person/group
    HELPFUL = "helpful"  # feedback
    NOT_HELPFUL = "not_helpful"  # feedback
    RETRY = "retry"  # re-run a question the bot failed to answer (handled by bot.delivery, never stored)
    # a maintainer's review of an answer the team gave in a thread (bot.answers.review; its own stored buttons)
    APPROVE_ANSWER = "approve_answer"
    EDIT_ANSWER = "edit_answer"
    REJECT_ANSWER = "reject_answer"


@dataclass(frozen=True, slots=True)
class HistoryMessage:
    """One message of a thread as the pipeline sees it."""

    ts: datetime  # timezone-aware UTC
    author: str
    text: str
    from_bot: bool = False

    def line(self) -> str:
        """`[YYYY.MM.DD HH:MM:SS] name: text`, the form the essence role reads."""
        return f"[{self.ts:%Y.%m.%d %H:%M:%S}] {self.author}: {self.text}"


StreamCallback = Callable[[str], Awaitable[None]]
"""Receives the whole answer text so far (not a delta) each time the model adds to it; it must not raise."""


class StepStatus(StrEnum):
    STARTED = "started"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Step:
    """One role's turn as the person may see it while the question runs (a task timeline): typed facts only, never
    the question's or the documents' text."""

    role: Role
    status: StepStatus
    attempt: int = 1  # 2 when the role runs again in this run (the quality role asked to search again or rewrite)
    language: str | None = None  # lang, done: the language the question is in
    sections: int | None = None  # search, done: how many sections were found
    decision: str | None = None  # search: its quality grade; quality: approve / research / regenerate / clarify


ProgressCallback = Callable[[Step], Awaitable[None]]
"""Told each step as it starts and ends; it must return quickly (queue the showing) and must not raise."""
