"""Team answers built from the settings: the lifecycle (store, index, mentions), the review desk and capture."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from bot.answers.capture import Capture
from bot.answers.people import People
from bot.answers.review import ReviewDesk
from bot.settings import Settings
from pipeline.messages import ThreadRef
from storage.answers.lifecycle import TeamAnswers
from storage.answers.mentions import MentionReader
from storage.answers.publish import AnswerPublisher, DocumentIngest
from storage.answers.store import AnswerStore
from storage.db import Database


@dataclass(frozen=True)
class TeamAnswerParts:
    answers: TeamAnswers
    desk: ReviewDesk
    capture: Capture
    review_target: ThreadRef | None  # where review messages go (None: only `docbot answers` and the digest)


def channel_ref(value: str | None) -> ThreadRef | None:
    """A `platform:workspace:channel` setting as the target of a new message in that channel."""
    if not value:
        return None
    platform, workspace, channel = value.split(":")
    return ThreadRef(platform, workspace, channel, "")


def build_team_answers(settings: Settings, db: Database, ingest: DocumentIngest) -> TeamAnswerParts:
    ttl = timedelta(days=settings.answers_ttl_days) if settings.answers_ttl_days else None
    answers = TeamAnswers(AnswerStore(db), AnswerPublisher(db, ingest), MentionReader(db), ttl=ttl)
    maintainers = People.parse(settings.answers_maintainers)
    experts = People.parse(settings.answers_experts) if settings.answers_experts else maintainers

    def collections(platform: str, workspace: str, channel: str) -> tuple[str, ...]:
        return settings.channel_policy(platform, workspace, channel).collections

    return TeamAnswerParts(
        answers=answers,
        desk=ReviewDesk(answers, maintainers),
        capture=Capture(db, answers, experts, collections),
        review_target=channel_ref(settings.answers_review_channel),
    )
