"""Slack payloads → neutral `Inbound` messages plus the `ThreadRef` their replies go to (pure functions)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from enum import Enum
from typing import Any, cast

from adapters.slack.editor import EDITOR_BLOCK, EDITOR_CALLBACK, EDITOR_INPUT, TRIGGER
from adapters.slack.events import MessageEvent, ReactionEvent, mentions, strip_mention, team_of, to_datetime
from adapters.slack.sink import ASK_COMMAND, RESPONSE_URL, slack_thread_ref
from pipeline.messages import CHECKMARK, Inbound, InboundKind, ThreadRef

PLATFORM = "slack"
CHECKMARKS = frozenset({"white_check_mark", "heavy_check_mark"})  # ✅ and ✔️


def message_inbound(body: dict[str, Any], bot_user_id: str | None) -> tuple[Inbound, ThreadRef] | None:
    """An `app_mention` or `message` event, or None when it cannot be for the bot (chatter outside threads, a thread
    message without text).

    `mentioned` is True for mentions and DMs, False for plain messages in threads (follow-ups the service may take).
    A bare mention is kept (empty text): the service answers it with "type a question after the mention".
    `user_name` is left empty for the caller to resolve.
    """
    event = cast(MessageEvent, body.get("event") or {})
    if event.get("type") not in ("app_mention", "message") or not event.get("ts") or not event.get("channel"):
        return None
    text = event.get("text", "")
    is_dm = event.get("channel_type") == "im"
    mentioned = event["type"] == "app_mention" or is_dm or mentions(text, bot_user_id)
    thread_ts = event.get("thread_ts")
    if not mentioned and (thread_ts is None or not strip_mention(text, bot_user_id)):
        return None  # chatter outside threads; a thread message without text (a bare file share) asks nothing
    team = team_of(body)
    inbound = Inbound(
        platform=PLATFORM,
        workspace_id=team,
        channel_id=event["channel"],
        thread_id=thread_ts,
        message_id=event["ts"],
        user_id=event.get("user", ""),
        user_name="",
        text=strip_mention(text, bot_user_id),
        ts=to_datetime(event["ts"]),
        mentioned=mentioned,
    )
    ref = slack_thread_ref(
        team, event["channel"], thread_ts or event["ts"], inbound.user_id,
        assistant=is_dm and thread_ts is not None, bot_user_id=bot_user_id,
    )  # fmt: skip
    return inbound, ref


def action_inbound(body: dict[str, Any]) -> tuple[Inbound, ThreadRef]:
    """A `block_actions` press of one of our buttons; the thread is the one of the message that carried it."""
    action = (body.get("actions") or [{}])[0]
    container = body.get("container") or {}
    message = body.get("message") or {}
    team = team_of(body)
    channel = str(container.get("channel_id") or (body.get("channel") or {}).get("id") or "")
    message_ts = str(container.get("message_ts") or message.get("ts") or "")
    thread_ts = str(container.get("thread_ts") or message.get("thread_ts") or message_ts)
    user = body.get("user") or {}
    raw_ts = action.get("action_ts")
    inbound = Inbound(
        platform=PLATFORM,
        workspace_id=team,
        channel_id=channel,
        thread_id=thread_ts,
        message_id=message_ts,
        user_id=str(user.get("id") or ""),
        user_name=str(user.get("username") or user.get("name") or ""),
        text=str((action.get("text") or {}).get("text") or ""),
        ts=to_datetime(str(raw_ts)) if raw_ts else datetime.now(UTC),
        kind=InboundKind.ACTION,
        action_id=str(action.get("value") or ""),
        mentioned=True,
    )
    ref = slack_thread_ref(team, channel, thread_ts, inbound.user_id)
    if body.get("trigger_id"):  # an Edit press opens its editor with it (`SlackReplySink.open_editor`)
        ref = replace(ref, extra=(*ref.extra, (TRIGGER, str(body["trigger_id"]))))
    return inbound, ref


def reaction_inbound(body: dict[str, Any], bot_user_id: str | None) -> tuple[Inbound, ThreadRef] | None:
    """A ✅ put on a message (`reaction_added`), or None for any other emoji, item or the bot's own reaction. The
    message's thread is not in the event: the worker reads the message back (`SlackReplySink.read_message`)."""
    event = cast(ReactionEvent, body.get("event") or {})
    item = event.get("item") or {}
    name = str(event.get("reaction") or "").split("::", 1)[0]
    user, channel, ts = event.get("user"), item.get("channel"), item.get("ts")
    if event.get("type") != "reaction_added" or item.get("type") != "message" or name not in CHECKMARKS:
        return None
    if not user or not channel or not ts or user == bot_user_id:
        return None
    team = team_of(body)
    inbound = Inbound(
        platform=PLATFORM, workspace_id=team, channel_id=channel, thread_id=None, message_id=ts, user_id=user,
        user_name="", text="", ts=to_datetime(str(event.get("event_ts") or ts)), kind=InboundKind.REACTION,
        action_id=CHECKMARK, mentioned=False,
    )  # fmt: skip
    return inbound, slack_thread_ref(team, channel, ts, user, bot_user_id=bot_user_id)


def edit_inbound(body: dict[str, Any]) -> tuple[Inbound, ThreadRef] | None:
    """A submitted review editor (`view_submission` of the modal `open_editor` opened), or None when it is not ours
    or says nothing. Where the review message is comes from the modal's private_metadata, which docbot wrote."""
    view = body.get("view") or {}
    if view.get("callback_id") != EDITOR_CALLBACK:
        return None
    try:
        where = json.loads(str(view.get("private_metadata") or "{}"))
    except ValueError:
        return None
    values = ((view.get("state") or {}).get("values") or {}).get(EDITOR_BLOCK) or {}
    text = str((values.get(EDITOR_INPUT) or {}).get("value") or "").strip()
    channel, message_ts, action = str(where.get("c") or ""), str(where.get("m") or ""), str(where.get("a") or "")
    if not (text and channel and message_ts and action):
        return None
    team, user = team_of(body), body.get("user") or {}
    thread_ts = str(where.get("t") or message_ts)
    inbound = Inbound(
        platform=PLATFORM, workspace_id=team, channel_id=channel, thread_id=thread_ts, message_id=message_ts,
        user_id=str(user.get("id") or ""), user_name=str(user.get("username") or user.get("name") or ""),
        text=text, ts=datetime.now(UTC), kind=InboundKind.EDIT, action_id=action,
    )  # fmt: skip
    return inbound, slack_thread_ref(team, channel, thread_ts, inbound.user_id)


class Refusal(Enum):
    """Why a /ask is answered at once, privately, instead of being stored."""

    EMPTY = "empty"


def command_inbound(body: dict[str, Any], bot_user_id: str | None) -> tuple[Inbound, ThreadRef] | Refusal:
    """A `/ask question` command. The question is not posted yet (the worker that claims it posts it and answers
    in its thread), so the message id is the command's `trigger_id` until then and the ref is marked `ASK_COMMAND`."""
    question = str(body.get("text") or "").strip()
    if not question:
        return Refusal.EMPTY
    team, channel, user = team_of(body), str(body.get("channel_id") or ""), str(body.get("user_id") or "")
    inbound = Inbound(
        platform=PLATFORM, workspace_id=team, channel_id=channel, thread_id=None,
        message_id=f"ask-{body.get('trigger_id') or ''}", user_id=user, user_name="",
        text=question, ts=datetime.now(UTC), mentioned=True,
    )  # fmt: skip
    ref = slack_thread_ref(team, channel, "", user, bot_user_id=bot_user_id)
    extra = [(ASK_COMMAND, "1")]
    if body.get("response_url"):  # where to answer privately when the bot cannot post in the channel
        extra.append((RESPONSE_URL, str(body["response_url"])))
    return inbound, replace(ref, extra=(*ref.extra, *extra))
