"""What the Discord adapter needs to know, handed to it by `bot/` (`bot.settings.Settings.discord_options`): the
adapter reads no settings and imports nothing of `bot/`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def _everywhere(guild_id: str, channel_id: str) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class DiscordOptions:
    api_url: str | None = None  # a stand-in for Discord's API (tests, proxies); None: Discord's own
    support_role_id: int | None = None  # who "Ask a human" reaches
    solved_tag: str = "Solved"  # the forum tag the "Solved" button applies
    forum_channels: tuple[int, ...] = ()  # forums where every new post is a question
    only_asker_clicks: bool = False  # buttons answer only the person who asked (else anyone in the thread)
    max_question_chars: int = 4000
    channel_allowed: Callable[[str, str], bool] = _everywhere  # whether the bot answers there (its channel policy)
