"""The pipeline's steps as the tasks of a Slack task timeline: what a person sees while their question runs.

    lang                         → Reading your question              (Language: de)
    translation, essence,
    guardrails (first)           → Understanding what you ask
    search                       → Searching the docs                 (12 sections found)
    augmentation, response       → Writing the answer
    quality                      → Checking the answer against the sources (Every point has a source)
    search / response again      → Searching again / Rewriting the answer   (the quality role asked for it)
    clarification                → Preparing a question back

Only steps that happened are shown (the route is not known ahead). A task starts `in_progress`, ends `complete` or
`error`; a task still open when a later one starts is complete. Titles and outputs are our own wording with counts and
grades: never the question's or the documents' text. Pure: `work.py` sends what changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.slack.wording import SlackWording
from pipeline.messages import Step, StepStatus
from pipeline.types import Role

IN_PROGRESS = "in_progress"
COMPLETE = "complete"
ERROR = "error"

_UNDERSTAND = (Role.TRANSLATION, Role.ESSENCE, Role.GUARDRAILS)
_WRITE = (Role.AUGMENTATION, Role.RESPONSE)


@dataclass
class Task:
    id: str
    title: str
    status: str
    output: str | None = None


class Timeline:
    def __init__(self, words: SlackWording) -> None:
        self._words = words
        self._tasks: dict[str, Task] = {}
        self._changed: dict[str, None] = {}  # ids changed since the last `changes()`, in order
        self._writes = 0

    @property
    def tasks(self) -> list[Task]:
        return list(self._tasks.values())

    def changes(self) -> list[Task]:
        """The tasks changed since the last call (each once, in the order they changed)."""
        changed = [self._tasks[i] for i in self._changed]
        self._changed.clear()
        return changed

    def apply(self, step: Step) -> None:
        key = self._task_for(step)
        if key is None:
            return
        task_id, title = key
        if step.status is StepStatus.STARTED:
            self._close_others(task_id)
            if task_id not in self._tasks:
                self._set(Task(task_id, title, IN_PROGRESS))
            return
        task = self._tasks.get(task_id) or Task(task_id, title, IN_PROGRESS)
        if step.status is StepStatus.FAILED:
            self._set(Task(task.id, task.title, ERROR, task.output))
        elif self._ends(step):
            self._set(Task(task.id, task.title, COMPLETE, self._output(step) or task.output))

    def close(self) -> None:
        """The run ended: every task still open is complete."""
        self._close_others(None)

    def _task_for(self, step: Step) -> tuple[str, str] | None:
        words = self._words
        if step.role is Role.LANG:
            return "read", words.task_read
        if step.role in _UNDERSTAND:
            if step.role is Role.GUARDRAILS and step.attempt > 1:
                return None  # the scope check after the search belongs to the search
            return "understand", words.task_understand
        if step.role is Role.SEARCH:
            return f"search-{step.attempt}", words.task_search if step.attempt == 1 else words.task_search_again
        if step.role in _WRITE:
            if step.status is StepStatus.STARTED and f"write-{self._writes}" not in self._open():
                self._writes += 1
            n = max(self._writes, 1)
            return f"write-{n}", words.task_write if n == 1 else words.task_rewrite
        if step.role is Role.QUALITY:
            return f"check-{step.attempt}", words.task_check if step.attempt == 1 else words.task_check_again
        if step.role is Role.CLARIFICATION:
            return "clarify", words.task_clarify
        return None

    @staticmethod
    def _ends(step: Step) -> bool:
        """Whether this finished step finishes its task (a task's earlier roles do not; a later task closes it)."""
        return step.role not in (Role.TRANSLATION, Role.ESSENCE, Role.AUGMENTATION)

    def _output(self, step: Step) -> str | None:
        if step.role is Role.LANG and step.language:
            return self._words.found_language.format(language=step.language)
        if step.role is Role.SEARCH and step.sections is not None:
            return self._words.found_sections.format(count=step.sections)
        if step.role is Role.QUALITY and step.decision:
            return self._words.checked.get(step.decision)
        return None

    def _open(self) -> set[str]:
        return {t.id for t in self._tasks.values() if t.status == IN_PROGRESS}

    def _close_others(self, keep: str | None) -> None:
        for task in list(self._tasks.values()):
            if task.status == IN_PROGRESS and task.id != keep:
                self._set(Task(task.id, task.title, COMPLETE, task.output))

    def _set(self, task: Task) -> None:
        self._tasks[task.id] = task
        self._changed.pop(task.id, None)
        self._changed[task.id] = None
