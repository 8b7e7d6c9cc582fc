"""The hourly upkeep of team answers: approved answers past their time and those whose sections changed go back to
review (out of the index), and the index is brought back to exactly the approved answers (a crash between a review
step and its index change, or an index outage during one, is repaired here)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from storage.answers.lifecycle import TeamAnswers

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Upkeep:
    expired_by_age: int
    expired_by_documents: int
    published: int
    withdrawn: int


async def tend_team_answers(answers: TeamAnswers, now: datetime) -> Upkeep:
    aged = [s for s in await answers.expire_due(now) if s.transition.done]
    changed = [s for s in await answers.check_documents() if s.transition.done]
    synced = await answers.sync()
    upkeep = Upkeep(len(aged), len(changed), synced.published, synced.withdrawn)
    if aged or changed or synced.published or synced.withdrawn:
        figures = {"expired_by_age": upkeep.expired_by_age, "expired_by_documents": upkeep.expired_by_documents,
                   "published": upkeep.published, "withdrawn": upkeep.withdrawn}  # fmt: skip
        log.info("team answers tended", extra=figures)
    return upkeep
