"""What the Slack adapter needs to know, handed to it by `bot/` (`bot.settings.Settings.slack_options`): the adapter
reads no settings and imports nothing of `bot/`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


def _everywhere(workspace_id: str, channel_id: str) -> bool:
    return True


def _default_collections(workspace_id: str, channel_id: str, viewed_channel_id: str | None) -> tuple[str, ...]:
    return ("default",)


@dataclass(frozen=True, slots=True)
class SlackOptions:
    """Secrets are kept out of `repr`. Single workspace with `bot_token`; multi-workspace (OAuth) with `client_id`."""

    api_url: str = "https://slack.com/api/"
    bot_token: str | None = field(default=None, repr=False)
    signing_secret: str = field(default="", repr=False)
    app_token: str | None = field(default=None, repr=False)  # Socket Mode
    client_id: str | None = None
    client_secret: str = field(default="", repr=False)
    ask_command: str = "/ask"
    support_mention: str | None = None  # who "Ask a human" reaches (a user group or person)
    max_question_chars: int = 4000
    watched_groups: frozenset[str] = frozenset()  # user groups of the answers' maintainers and experts, looked up
    # whether the bot answers in a channel (its channel policy), and which collections a question there searches
    channel_allowed: Callable[[str, str], bool] = _everywhere
    search_collections: Callable[[str, str, str | None], tuple[str, ...]] = _default_collections
