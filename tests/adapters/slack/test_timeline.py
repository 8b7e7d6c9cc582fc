"""The pipeline's steps as the tasks of Slack's task timeline (adapters/slack/timeline.py)."""

from __future__ import annotations

import pytest

from adapters.slack.timeline import COMPLETE, ERROR, IN_PROGRESS, Timeline
from adapters.slack.wording import wording
from pipeline.messages import Step, StepStatus
from pipeline.types import Role

pytestmark = pytest.mark.unit

S, D, F = StepStatus.STARTED, StepStatus.DONE, StepStatus.FAILED


def run(steps: list[Step], language: str = "en") -> Timeline:
    timeline = Timeline(wording(language))
    for step in steps:
        timeline.apply(step)
    return timeline


def shown(timeline: Timeline) -> list[tuple[str, str, str | None]]:
    return [(t.title, t.status, t.output) for t in timeline.tasks]


def test_a_run_reads_as_five_tasks_with_their_findings() -> None:
    timeline = run([Step(Role.LANG, S), Step(Role.LANG, D, language="de"), Step(Role.TRANSLATION, S),
                    Step(Role.TRANSLATION, D), Step(Role.ESSENCE, S), Step(Role.ESSENCE, D),
                    Step(Role.GUARDRAILS, S), Step(Role.GUARDRAILS, D), Step(Role.SEARCH, S),
                    Step(Role.SEARCH, D, sections=12, decision="good"), Step(Role.GUARDRAILS, S, 2),
                    Step(Role.GUARDRAILS, D, 2), Step(Role.AUGMENTATION, S), Step(Role.AUGMENTATION, D),
                    Step(Role.RESPONSE, S), Step(Role.RESPONSE, D), Step(Role.QUALITY, S),
                    Step(Role.QUALITY, D, decision="approve")])  # fmt: skip
    assert shown(timeline) == [
        ("Reading your question", COMPLETE, "Language: de"),
        ("Understanding what you ask", COMPLETE, None),
        ("Searching the docs", COMPLETE, "12 sections found"),
        ("Writing the answer", COMPLETE, None),
        ("Checking the answer against the sources", COMPLETE, "Every point has a source"),
    ]


def test_a_search_again_asked_by_the_check_is_its_own_task() -> None:
    timeline = run([Step(Role.SEARCH, S), Step(Role.SEARCH, D, sections=2), Step(Role.RESPONSE, S),
                    Step(Role.RESPONSE, D), Step(Role.QUALITY, S), Step(Role.QUALITY, D, decision="research"),
                    Step(Role.SEARCH, S, 2), Step(Role.SEARCH, D, 2, sections=7), Step(Role.AUGMENTATION, S, 2),
                    Step(Role.RESPONSE, S, 2), Step(Role.RESPONSE, D, 2), Step(Role.QUALITY, S, 2)])  # fmt: skip
    assert shown(timeline) == [
        ("Searching the docs", COMPLETE, "2 sections found"),
        ("Writing the answer", COMPLETE, None),
        ("Checking the answer against the sources", COMPLETE, "Not enough yet: searching again"),
        ("Searching again", COMPLETE, "7 sections found"),
        ("Rewriting the answer", COMPLETE, None),
        ("Checking again", IN_PROGRESS, None),
    ]


def test_a_failed_step_shows_an_error_and_close_completes_what_is_open() -> None:
    timeline = run([Step(Role.LANG, S), Step(Role.LANG, D, language="en"), Step(Role.SEARCH, S),
                    Step(Role.SEARCH, F), Step(Role.CLARIFICATION, S)])  # fmt: skip
    assert [t.status for t in timeline.tasks] == [COMPLETE, ERROR, IN_PROGRESS]
    timeline.close()
    assert [t.status for t in timeline.tasks] == [COMPLETE, ERROR, COMPLETE]


def test_changes_names_each_changed_task_once_in_order() -> None:
    timeline = Timeline(wording("en"))
    timeline.apply(Step(Role.LANG, S))
    timeline.apply(Step(Role.LANG, D, language="en"))
    timeline.apply(Step(Role.SEARCH, S))
    assert [(t.id, t.status) for t in timeline.changes()] == [("read", COMPLETE), ("search-1", IN_PROGRESS)]
    assert timeline.changes() == []
