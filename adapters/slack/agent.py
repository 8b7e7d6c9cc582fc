"""Slack's agent messaging experience (`features.agent_view`), beside the messages and presses the inbox takes:

    app_home_opened, tab "messages"   suggested prompts drawn from the docs' top sections (no thread_ts: agent apps set
                                      them for the Messages tab), and a greeting the first time the DM is empty
    app_context_changed               the channel the person is looking at; their DM questions then search that
                                      channel's collections when a policy names it (`Inbound.context_channel_id`)
    agent_session_stopped             the stop button of a question's agent session: the run stops (`RunControl`),
                                      only for the person who asked
    assistant_thread_started / _context_changed   the same for apps still on `assistant_view` (prompts per thread)

None of these carries anything a person wrote, and each is safe to repeat: they are acknowledged without an inbox
row and handled in the background, best effort (a failed greeting or prompt list is logged and skipped).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from adapters.slack.client import ClientFor, UserDirectory, slack_error
from adapters.slack.events import team_of
from adapters.slack.mrkdwn import inert
from adapters.slack.stream import stream_safe
from adapters.slack.wording import SlackWording, wording
from pipeline.messages import Intake, RunControl, StopOutcome

log = logging.getLogger(__name__)

Topics = Callable[[Sequence[str], int], Awaitable[list[str]]]  # collections, limit → top-section labels
CollectionsFor = Callable[[str, str, str | None], tuple[str, ...]]  # team, channel, viewed channel → collections
MAX_PROMPTS = 4  # assistant.threads.setSuggestedPrompts takes up to four
PROMPT_TITLE_CHARS = 75
TOPICS_TIMEOUT_S = 3.0
CHANNEL_ENTITY = "slack#/types/channel_id"
MESSAGE_ENTITY = "slack#/types/message_context"


def viewed_channel(context: Any, team_id: str) -> str | None:
    """The channel of the most relevant entity of an agent view `context` (entities are ordered by relevance): a
    channel, or the channel of a message; None for an empty context or one in another workspace."""
    entities = context.get("entities") if isinstance(context, dict) else None
    for entity in entities or []:
        if not isinstance(entity, dict) or entity.get("team_id") not in (None, team_id):
            continue
        if entity.get("type") == CHANNEL_ENTITY and isinstance(entity.get("value"), str):
            return str(entity["value"])
        value = entity.get("value")
        if entity.get("type") == MESSAGE_ENTITY and isinstance(value, dict) and value.get("channel_id"):
            return str(value["channel_id"])
    return None


class ViewContexts:
    """(workspace, person) → the channel they were last seen looking at. In memory, bounded, forgotten after
    `ttl_s`: with several replicas, a question reaching another replica than its context searches the DM's own
    collections (see docs/slack.md)."""

    def __init__(self, ttl_s: float = 3600.0, max_size: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self._ttl_s = ttl_s
        self._max = max_size
        self._clock = clock
        self._seen: OrderedDict[tuple[str, str], tuple[float, str | None]] = OrderedDict()

    def remember(self, team_id: str, user_id: str, channel_id: str | None) -> None:
        key = (team_id, user_id)
        self._seen.pop(key, None)
        self._seen[key] = (self._clock(), channel_id)
        while len(self._seen) > self._max:
            self._seen.popitem(last=False)

    def get(self, team_id: str, user_id: str) -> str | None:
        found = self._seen.get((team_id, user_id))
        if found is None or self._clock() - found[0] > self._ttl_s:
            return None
        return found[1]


class AgentSurface:
    """Handles the agent experience's events for `SlackAdapter` (each method is one event, run in the background)."""

    def __init__(
        self,
        client_for: ClientFor,
        users: UserDirectory,
        collections_for: CollectionsFor,
        intake: Callable[[], Intake | None],
        contexts: ViewContexts,
    ) -> None:
        self._client_for = client_for
        self._users = users
        self._collections_for = collections_for
        self._intake = intake
        self.contexts = contexts
        self.topics: Topics | None = None  # assigned by the composition root (bot.topics.DocsTopics)
        self._greeted: set[tuple[str, str]] = set()
        self._greeting: dict[tuple[str, str], asyncio.Lock] = {}

    async def messages_tab_opened(self, body: dict[str, Any]) -> None:
        event = body.get("event") or {}
        if event.get("tab") != "messages" or not event.get("user") or not event.get("channel"):
            return  # the Home tab (disabled in docbot's manifest), or a malformed event
        team, user, channel = team_of(body), str(event["user"]), str(event["channel"])
        if "context" in event:
            self.contexts.remember(team, user, viewed_channel(event["context"], team))
        words = wording((await self._users.get(team, user)).locale)
        await self._suggest(team, channel, None, user, words)
        await self._greet_once(team, user, channel, words)

    def context_changed(self, body: dict[str, Any]) -> None:
        event = body.get("event") or {}
        team = team_of(body)
        if event.get("type") == "assistant_thread_context_changed":  # the assistant_view form
            thread = event.get("assistant_thread") or {}
            context = thread.get("context") or {}
            user, channel = thread.get("user_id"), context.get("channel_id")
            if user and context.get("team_id") in (None, team):
                self.contexts.remember(team, str(user), str(channel) if channel else None)
            return
        if event.get("user"):
            self.contexts.remember(team, str(event["user"]), viewed_channel(event.get("context"), team))

    async def assistant_thread_started(self, body: dict[str, Any]) -> None:
        """Apps still on `assistant_view`: prompts for the new thread (its context narrows them too)."""
        self.context_changed({**body, "event": {**(body.get("event") or {}),
                                                "type": "assistant_thread_context_changed"}})  # fmt: skip
        thread = (body.get("event") or {}).get("assistant_thread") or {}
        team, user = team_of(body), str(thread.get("user_id") or "")
        words = wording((await self._users.get(team, user)).locale)
        await self._suggest(team, str(thread.get("channel_id")), str(thread.get("thread_ts")), user, words)

    async def session_stopped(self, body: dict[str, Any]) -> None:
        """The stop button: stop the question running in that thread, if the person who pressed it asked it."""
        event = body.get("event") or {}
        team, channel = team_of(body), str(event.get("channel") or "")
        thread, user = str(event.get("thread_ts") or ""), str(event.get("user") or "")
        control = self._intake()
        if not isinstance(control, RunControl) or not thread:
            log.info("slack stop not handled", extra={"reason": "no run control" if thread else "no thread"})
            return
        outcome = await control.stop(f"slack:{team}:{channel}:{thread}", user)
        log.info("slack stop pressed", extra={"outcome": outcome.value, "channel": channel})
        if outcome is StopOutcome.NOT_ALLOWED:
            words = wording((await self._users.get(team, user)).locale)
            try:
                client = await self._client_for(team)
                await client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread,
                                                text=words.only_asker_stops)  # fmt: skip
            except Exception as exc:
                log.warning("telling who may stop failed", extra={"error": slack_error(exc)})

    async def _suggest(self, team: str, channel: str, thread_ts: str | None, user: str, words: SlackWording) -> None:
        """Suggested prompts from the top sections of the collections this DM searches."""
        prompts = await self._prompts(self._collections_for(team, channel, self.contexts.get(team, user)), words)
        try:
            client = await self._client_for(team)
            await client.assistant_threads_setSuggestedPrompts(
                channel_id=channel, thread_ts=thread_ts, title=words.greeting_title, prompts=prompts
            )
        except Exception as exc:
            log.warning("suggested prompts failed", extra={"error": slack_error(exc)})

    async def _prompts(self, collections: Sequence[str], words: SlackWording) -> list[dict[str, str]]:
        topics: list[str] = []
        if self.topics is not None:
            try:
                topics = await asyncio.wait_for(self.topics(collections, MAX_PROMPTS), TOPICS_TIMEOUT_S)
            except Exception as exc:  # the default prompts instead
                log.warning("docs topics unavailable", extra={"error": type(exc).__name__})
        prompts = []
        for topic in topics[:MAX_PROMPTS]:
            safe = stream_safe(" ".join(topic.split()))  # a prompt is sent as the person's message: nothing pings
            title = safe if len(safe) <= PROMPT_TITLE_CHARS else safe[: PROMPT_TITLE_CHARS - 1] + "…"
            prompts.append({"title": title, "message": words.prompt_about.format(topic=safe)})
        return prompts or [{"title": p, "message": p} for p in words.suggested_prompts]

    async def _greet_once(self, team: str, user: str, channel: str, words: SlackWording) -> None:
        """A greeting the first time someone opens an empty DM (the DM's history decides, so a restart or a second
        replica does not greet again once the greeting is there)."""
        key = (team, user)
        lock = self._greeting.setdefault(key, asyncio.Lock())
        async with lock:
            if key in self._greeted:
                return
            try:
                client = await self._client_for(team)
                history = await client.conversations_history(channel=channel, limit=1)
                if not history.get("messages"):
                    await client.chat_postMessage(
                        channel=channel, text=words.greeting,
                        blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": inert(words.greeting)}}],
                    )  # fmt: skip
                self._greeted.add(key)
            except Exception as exc:  # tried again the next time the tab is opened
                log.warning("greeting failed", extra={"error": slack_error(exc)})
