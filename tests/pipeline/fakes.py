"""Plain fakes for pipeline tests: a small hand-written corpus, a word-overlap retriever, scripted agents."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pipeline import text as textutil
from pipeline.envelope import AgentResult, Context, Payload
from pipeline.locales import lexicon
from pipeline.types import HistoryMessage, Role, SearchHit, SearchQuality, SearchRequest, SearchResponse


@dataclass(frozen=True)
class Section:
    doc_id: str
    title: str
    text: str
    crumbs: tuple[str, ...] = ("Orbit speaker",)


CORPUS: tuple[Section, ...] = (
    Section(
        "remote",
        "Pairing the remote",
        "Hold the Link key on the remote for five seconds until the ring light blinks blue. "
        "The speaker confirms pairing with a short chime. "
        "A remote can be paired with one speaker at a time.",
    ),
    Section(
        "remote",
        "Remote batteries",
        "The remote runs on two AAA batteries. Replace them when the ring light flashes red twice.",
    ),
    Section(
        "assistant",
        "Orbit Voice assistant",
        "Orbit Voice is the built-in voice assistant of the speaker. "
        "Say the wake word and ask for music, timers or the weather. "
        "To turn Orbit Voice off, press the microphone key until the ring light turns amber.",
    ),
    Section(
        "reset",
        "Factory reset",
        "A factory reset erases your Wi-Fi networks and pairings. "
        "Press and hold the power key and the volume down key together for fifteen seconds.",
    ),
    Section(
        "network",
        "Wi-Fi setup",
        "Open the Orbit app, choose Add speaker and follow the steps to join a 2.4 GHz or 5 GHz network.",
    ),
)


class WordRetriever:
    """Scores sections by the share of the query's content words they contain (title counts double)."""

    def __init__(self, corpus: tuple[Section, ...] = CORPUS, *, good: float = 0.45, excellent: float = 0.7) -> None:
        self.corpus = corpus
        self.good = good
        self.excellent = excellent
        self.requests: list[SearchRequest] = []

    async def search(self, request: SearchRequest) -> SearchResponse:
        self.requests.append(request)
        stop = lexicon("en").stopwords | lexicon(request.language).stopwords
        wanted = textutil.features(request.text, stop)
        hits = []
        for i, s in enumerate(self.corpus):
            body = textutil.features(s.text, stop)
            title = textutil.features(s.title, stop)
            score = min(1.0, textutil.overlap(wanted, body) * 0.7 + textutil.overlap(wanted, title) * 0.6)
            if score > 0:
                hits.append(
                    SearchHit(
                        chunk_id=f"{s.doc_id}#{i}",
                        doc_id=s.doc_id,
                        section=s.title.lower().replace(" ", "-"),
                        title=s.title,
                        crumbs=(*s.crumbs, s.title),
                        url=f"https://docs.example/{s.doc_id}#{s.title.lower().replace(' ', '-')}",
                        text=s.text,
                        score=round(score, 4),
                    )
                )
        hits.sort(key=lambda h: h.score, reverse=True)
        hits = hits[: request.top_k]
        top = hits[0].score if hits else 0.0
        quality = (
            SearchQuality.EXCELLENT if top >= self.excellent else SearchQuality.GOOD if top >= self.good
            else SearchQuality.POOR
        )
        return SearchResponse(hits=tuple(hits), quality=quality)


class ScriptedRetriever:
    """Returns the given response whatever the question."""

    def __init__(self, response: SearchResponse) -> None:
        self.response = response
        self.requests: list[SearchRequest] = []

    async def search(self, request: SearchRequest) -> SearchResponse:
        self.requests.append(request)
        return self.response


def hit(title: str, score: float, text: str = "Some text about the topic.", doc: str | None = None) -> SearchHit:
    doc_id = doc or title.lower().replace(" ", "-")
    return SearchHit(
        chunk_id=f"{doc_id}#0",
        doc_id=doc_id,
        section="",
        title=title,
        crumbs=("Guide", title),
        url=f"https://docs.example/{doc_id}",
        text=text,
        score=score,
    )


Step = Callable[[Payload, Context], Awaitable[AgentResult]]


class FnAgent:
    """An agent for any role whose behaviour is a function; counts its runs."""

    def __init__(self, role: Role, step: Step) -> None:
        self.role = role
        self.step = step
        self.calls = 0

    async def run(self, payload: Payload, context: Context) -> AgentResult:
        self.calls += 1
        return await self.step(payload, context)


def passing(changes: dict[str, object] | None = None, *, delay: float = 0.0) -> Step:
    async def step(payload: Payload, context: Context) -> AgentResult:
        if delay:
            await asyncio.sleep(delay)
        return AgentResult(payload.evolve(**(changes or {})), "ok")

    return step


def history(*texts: str, start: datetime | None = None) -> tuple[HistoryMessage, ...]:
    begin = start or datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
    return tuple(HistoryMessage(begin + timedelta(minutes=i), "alice", t) for i, t in enumerate(texts))
