"""Slack payload shapes (as TypedDicts, they never leave `adapters/slack`) and the small pure helpers on them."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict

# Message subtypes that are a person writing; everything else (edits, deletions, joins, bot posts) is ignored.
PERSON_SUBTYPES: frozenset[str | None] = frozenset({None, "thread_broadcast", "file_share"})


class MessageEvent(TypedDict):
    """`message` and `app_mention` events (the fields docbot reads)."""

    type: str
    channel: str
    ts: str
    text: NotRequired[str]
    user: NotRequired[str]
    bot_id: NotRequired[str]
    subtype: NotRequired[str]
    thread_ts: NotRequired[str]
    channel_type: NotRequired[str]  # "channel" | "group" | "im" | "mpim"; absent on app_mention


class ReactedItem(TypedDict):
    type: str  # "message" (also "file", "file_comment" for older apps)
    channel: NotRequired[str]
    ts: NotRequired[str]


class ReactionEvent(TypedDict):
    """`reaction_added` (Events API): who put which emoji on which message; the message's thread is not said."""

    type: str
    user: str
    reaction: str  # the emoji's name, with a skin tone as `name::skin-tone-2`
    item: ReactedItem
    item_user: NotRequired[str]
    event_ts: str


class RepliesMessage(TypedDict):
    """One message from conversations.replies."""

    ts: str
    text: NotRequired[str]
    user: NotRequired[str]
    bot_id: NotRequired[str]
    subtype: NotRequired[str]


def to_datetime(ts: str) -> datetime:
    """Slack's `"1700000000.000100"` timestamp as an aware UTC datetime."""
    return datetime.fromtimestamp(float(ts), tz=UTC)


def mentions(text: str, bot_user_id: str | None) -> bool:
    return bool(bot_user_id) and f"<@{bot_user_id}" in text


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The text without the bot's own `<@U…>` mention(s)."""
    if not bot_user_id:
        return text.strip()
    return re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>[,:]?\s*", "", text).strip()


def team_of(body: dict[str, Any]) -> str:
    """The workspace id of any payload shape (events, commands, interactivity)."""
    team = body.get("team_id") or body.get("team")
    if isinstance(team, dict):
        team = team.get("id")
    if not team:
        event = body.get("event") or {}
        team = event.get("team") or (body.get("authorizations") or [{}])[0].get("team_id")
    return str(team or "")


def delivery_key(body: dict[str, Any]) -> str | None:
    """A key that is equal for every delivery of the same user action (HTTP retries, Socket Mode redelivery,
    the `app_mention` + `message` pair for one message), or None when the payload is not deduplicated."""
    team = team_of(body)
    event = body.get("event")
    if isinstance(event, dict):
        if event.get("type") == "assistant_thread_started":
            thread = event.get("assistant_thread") or {}
            return f"ats:{team}:{thread.get('channel_id')}:{thread.get('thread_ts')}"
        if event.get("type") in ("message", "app_mention") and event.get("ts"):
            return f"msg:{team}:{event.get('channel')}:{event['ts']}"
        return f"evt:{body.get('event_id')}" if body.get("event_id") else None
    if body.get("type") == "block_actions":
        container = body.get("container") or {}
        actions = body.get("actions") or [{}]
        return f"act:{team}:{container.get('channel_id')}:{container.get('message_ts')}:{actions[0].get('action_ts')}"
    if "command" in body and body.get("trigger_id"):
        return f"cmd:{body['trigger_id']}"
    return None


def ignorable(body: dict[str, Any], bot_user_id: str | None, bot_id: str | None) -> bool:
    """Our own and other bots' messages, edits, deletions and other non-person message subtypes."""
    event = body.get("event")
    if not isinstance(event, dict) or event.get("type") not in ("message", "app_mention"):
        return False
    if event.get("subtype") not in PERSON_SUBTYPES:
        return True
    if event.get("bot_id") or event.get("bot_profile"):
        return True
    user = event.get("user")
    return not user or user == bot_user_id or (bot_id is not None and event.get("bot_id") == bot_id)
