"""Builders of Discord gateway and REST payloads, shaped after Discord's API reference and `discord/types/`.

Tests feed these to discord.py's own state parsing (`ConnectionState.parse_guild_create`, `parse_message_create`,
`parse_thread_create`, `parse_interaction_create`), so the objects the adapter sees are the real discord.py models.
"""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime
from typing import Any

DISCORD_EPOCH_MS = 1_420_070_400_000
_counter = itertools.count(1)

# message and channel type numbers (Discord API reference)
TEXT_CHANNEL = 0
DM_CHANNEL = 1
PUBLIC_THREAD = 11
COMPONENT_ACTION_ROW = 1
COMPONENT_BUTTON = 2
INTERACTION_APPLICATION_COMMAND = 2
INTERACTION_MESSAGE_COMPONENT = 3


def snowflake() -> str:
    """A fresh, increasing snowflake id (as Discord sends them: a string)."""
    ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
    return str((ms << 22) | (next(_counter) & 0x3FFFFF))


def iso_now() -> str:
    return datetime.now(UTC).isoformat()


def user(user_id: str, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": user_id,
        "username": name,
        "global_name": name.title(),
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
    }


def application(app_id: str, bot_user: dict[str, Any], *, message_content: bool = True) -> dict[str, Any]:
    """GET /oauth2/applications/@me; `flags` carries GATEWAY_MESSAGE_CONTENT_LIMITED (1 << 19) when enabled."""
    return {
        "id": app_id,
        "name": "docbot",
        "icon": None,
        "description": "",
        "rpc_origins": [],
        "bot_public": True,
        "bot_require_code_grant": False,
        "bot": bot_user,
        "summary": "",
        "verify_key": "0" * 64,
        "team": None,
        "owner": user(snowflake(), "owner"),
        "flags": (1 << 19) if message_content else 0,
    }


def role(role_id: str, name: str, *, permissions: str = "0") -> dict[str, Any]:
    return {
        "id": role_id,
        "name": name,
        "color": 0,
        "hoist": False,
        "position": 0,
        "permissions": permissions,
        "managed": False,
        "mentionable": True,
        "flags": 0,
    }


def text_channel(channel_id: str, guild_id: str, name: str = "help") -> dict[str, Any]:
    return {
        "id": channel_id,
        "type": TEXT_CHANNEL,
        "guild_id": guild_id,
        "name": name,
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
        "parent_id": None,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
    }


def thread_channel(
    thread_id: str, parent_id: str, guild_id: str, owner_id: str, name: str = "question"
) -> dict[str, Any]:
    return {
        "id": thread_id,
        "type": PUBLIC_THREAD,
        "guild_id": guild_id,
        "parent_id": parent_id,
        "owner_id": owner_id,
        "name": name,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "message_count": 0,
        "member_count": 1,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": 1440,
            "archive_timestamp": iso_now(),
            "locked": False,
        },
    }


def member(member_user: dict[str, Any], role_ids: list[str] | None = None) -> dict[str, Any]:
    return {
        "user": member_user,
        "nick": None,
        "roles": role_ids or [],
        "joined_at": iso_now(),
        "deaf": False,
        "mute": False,
        "flags": 0,
    }


def guild_create(
    guild_id: str,
    channels: list[dict[str, Any]],
    members: list[dict[str, Any]],
    *,
    threads: list[dict[str, Any]] | None = None,
    extra_roles: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """GUILD_CREATE: the @everyone role may view, send and create threads (so permission checks pass)."""
    everyone = role(guild_id, "@everyone", permissions=str((1 << 10) | (1 << 11) | (1 << 35) | (1 << 38)))
    return {
        "id": guild_id,
        "name": "Docs team",
        "icon": None,
        "owner_id": members[0]["user"]["id"],
        "region": "europe",
        "afk_channel_id": None,
        "afk_timeout": 300,
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "roles": [everyone, *(extra_roles or [])],
        "emojis": [],
        "stickers": [],
        "features": [],
        "mfa_level": 0,
        "application_id": None,
        "system_channel_id": None,
        "system_channel_flags": 0,
        "rules_channel_id": None,
        "vanity_url_code": None,
        "banner": None,
        "premium_tier": 0,
        "preferred_locale": "en-US",
        "public_updates_channel_id": None,
        "nsfw_level": 0,
        "premium_progress_bar_enabled": False,
        "joined_at": iso_now(),
        "large": False,
        "unavailable": False,
        "member_count": len(members),
        "voice_states": [],
        "members": members,
        "channels": [{k: v for k, v in c.items() if k != "guild_id"} for c in channels],
        "threads": threads or [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
    }


def message(
    channel_id: str,
    author: dict[str, Any],
    content: str,
    *,
    guild_id: str | None = None,
    message_id: str | None = None,
    mentions: list[dict[str, Any]] | None = None,
    referenced: dict[str, Any] | None = None,
    components: list[dict[str, Any]] | None = None,
    embeds: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A message object; with `guild_id` it is the MESSAGE_CREATE shape of a guild message (with `member`)."""
    data: dict[str, Any] = {
        "id": message_id or snowflake(),
        "channel_id": channel_id,
        "author": author,
        "content": content,
        "timestamp": iso_now(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": "@everyone" in content,
        "mentions": mentions or [],
        "mention_roles": [],
        "attachments": [],
        "embeds": embeds or [],
        "pinned": False,
        "type": 19 if referenced else 0,
        "flags": 0,
        "components": components or [],
    }
    if guild_id is not None:
        data["guild_id"] = guild_id
        data["member"] = {k: v for k, v in member(author).items() if k != "user"}
    if referenced is not None:
        data["message_reference"] = {
            "type": 0,
            "message_id": referenced["id"],
            "channel_id": referenced["channel_id"],
            **({"guild_id": guild_id} if guild_id else {}),
        }
        data["referenced_message"] = referenced
    return data


def button_interaction(
    *,
    app_id: str,
    clicker: dict[str, Any],
    custom_id: str,
    bot_message: dict[str, Any],
    guild_id: str | None,
    channel: dict[str, Any],
) -> dict[str, Any]:
    """INTERACTION_CREATE for a button press on `bot_message` (type 3, MESSAGE_COMPONENT)."""
    data = _interaction_base(app_id, clicker, guild_id, channel, INTERACTION_MESSAGE_COMPONENT)
    data["data"] = {"custom_id": custom_id, "component_type": COMPONENT_BUTTON}
    data["message"] = bot_message
    return data


def ask_command_interaction(
    *,
    app_id: str,
    command_id: str,
    asker: dict[str, Any],
    question: str,
    guild_id: str | None,
    channel: dict[str, Any],
) -> dict[str, Any]:
    """INTERACTION_CREATE for `/ask question:<text>` (type 2, APPLICATION_COMMAND, chat input)."""
    data = _interaction_base(app_id, asker, guild_id, channel, INTERACTION_APPLICATION_COMMAND)
    data["data"] = {
        "id": command_id,
        "name": "ask",
        "type": 1,
        "options": [{"name": "question", "type": 3, "value": question}],
    }
    return data


def _interaction_base(
    app_id: str, actor: dict[str, Any], guild_id: str | None, channel: dict[str, Any], kind: int
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": snowflake(),
        "application_id": app_id,
        "type": kind,
        "token": f"tok-{snowflake()}",
        "version": 1,
        "channel_id": channel["id"],
        "channel": channel,
        "app_permissions": str((1 << 11) | (1 << 35) | (1 << 38)),
        "locale": "en-US",
        "entitlements": [],
        "attachment_size_limit": 10 * 1024 * 1024,
        "authorizing_integration_owners": {"0": guild_id or "0"},
        "context": 0 if guild_id else 1,
    }
    if guild_id is not None:
        data["guild_id"] = guild_id
        data["guild_locale"] = "en-US"
        data["member"] = {**member(actor), "permissions": str((1 << 11) | (1 << 38))}
    else:
        data["user"] = actor
    return data


COMPONENT_TEXT_DISPLAY = 10
FLAG_EPHEMERAL = 1 << 6
FLAG_COMPONENTS_V2 = 1 << 15


def components_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Every component of a message (or a message body), nested ones included (action rows, containers, sections),
    in order."""
    found: list[dict[str, Any]] = []

    def walk(items: list[dict[str, Any]]) -> None:
        for item in items:
            found.append(item)
            walk(item.get("components") or [])
            if isinstance(item.get("accessory"), dict):
                walk([item["accessory"]])

    walk(message.get("components") or [])
    return found


def buttons_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in components_of(message) if c.get("type") == COMPONENT_BUTTON]


def text_of(message: dict[str, Any]) -> str:
    """What a person reads: the content, or, for a Components v2 message, its text displays."""
    if message.get("content"):
        return str(message["content"])
    return "\n".join(str(c.get("content")) for c in components_of(message) if c.get("type") == COMPONENT_TEXT_DISPLAY)


FORUM_CHANNEL = 15
INTERACTION_MESSAGE_COMMAND = 3  # the data.type of a message context menu command


def forum_channel(channel_id: str, guild_id: str, tags: list[tuple[str, str]], name: str = "help-forum") -> dict[str,
                                                                                                                Any]:
    """A forum channel (discord.com/developers/docs/resources/channel#channel-object: type 15) with its tags."""
    return {**text_channel(channel_id, guild_id, name), "type": FORUM_CHANNEL, "flags": 0,
            "available_tags": [{"id": tag_id, "name": tag_name, "moderated": False, "emoji_id": None,
                                "emoji_name": None} for tag_id, tag_name in tags],
            "default_reaction_emoji": None, "default_sort_order": None, "default_forum_layout": 0}  # fmt: skip


def forum_post(thread_id: str, forum_id: str, guild_id: str, owner_id: str, title: str) -> dict[str, Any]:
    """A post of a forum: a public thread in it, shaped like the docs' thread example (docs__thread_channel.json),
    with the post's `applied_tags`."""
    return {**thread_channel(thread_id, forum_id, guild_id, owner_id, name=title), "applied_tags": [],
            "message_count": 0, "total_message_sent": 0}  # fmt: skip


def message_command_interaction(
    *, app_id: str, command_id: str, name: str, invoker: dict[str, Any], target: dict[str, Any],
    guild_id: str | None, channel: dict[str, Any],
) -> dict[str, Any]:
    """INTERACTION_CREATE for a message context menu command on `target`, shaped like the docs' example
    (docs__interaction_message_command.json: data.type 3, target_id, resolved.messages)."""
    data = _interaction_base(app_id, invoker, guild_id, channel, INTERACTION_APPLICATION_COMMAND)
    data["data"] = {"id": command_id, "name": name, "type": INTERACTION_MESSAGE_COMMAND, "target_id": target["id"],
                    "resolved": {"messages": {target["id"]: target}}}  # fmt: skip
    return data


def installed_by_the_user(interaction: dict[str, Any], user_id: str) -> dict[str, Any]:
    """The interaction as Discord sends it for an app the user installed, used in a server that did not install it
    (`authorizing_integration_owners` names only the user, under "1"; `app_permissions` of a user app)."""
    return {**interaction, "authorizing_integration_owners": {"1": user_id}, "context": 0,
            "app_permissions": str((1 << 11) | (1 << 14))}  # fmt: skip


INTERACTION_MODAL_SUBMIT = 5
COMPONENT_TEXT_INPUT = 4
COMPONENT_LABEL = 18


def modal_submit_interaction(
    *, app_id: str, submitter: dict[str, Any], custom_id: str, inputs: dict[str, str], message: dict[str, Any] | None,
    guild_id: str | None, channel: dict[str, Any], labelled: bool = False,
) -> dict[str, Any]:
    """INTERACTION_CREATE for a submitted modal (type 5, MODAL_SUBMIT), shaped like hikari's fixture
    (hikari__interaction_modal_submit.json): each text input's value in an action row, or (`labelled`) in a label
    component, as Discord sends the inputs of a modal built with labels. `message`: the message whose button opened
    the modal."""
    data = _interaction_base(app_id, submitter, guild_id, channel, INTERACTION_MODAL_SUBMIT)
    components: list[dict[str, Any]] = []
    for n, (input_id, value) in enumerate(inputs.items()):
        field = {"id": 2 * n + 2, "type": COMPONENT_TEXT_INPUT, "custom_id": input_id, "value": value}
        if labelled:
            components.append({"type": COMPONENT_LABEL, "id": 2 * n + 1, "component": field})
        else:
            components.append({"type": COMPONENT_ACTION_ROW, "id": 2 * n + 1, "components": [field]})
    data["data"] = {"custom_id": custom_id, "components": components}
    if message is not None:
        data["message"] = message
    return data
