"""The options each platform adapter is given, built from the settings: adapters read no settings and import nothing
of `bot/`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.answers.people import People
from bot.settings import ClickPolicy, Settings

if TYPE_CHECKING:  # each adapter's package is imported only when that platform is configured
    from adapters.discord.options import DiscordOptions
    from adapters.slack.options import SlackOptions


def slack_options(settings: Settings) -> SlackOptions:
    from adapters.slack.options import SlackOptions

    def secret(value: object) -> str | None:
        return value.get_secret_value() if value is not None else None  # type: ignore[attr-defined]

    return SlackOptions(
        api_url=settings.slack_api_url,
        bot_token=secret(settings.slack_bot_token),
        signing_secret=secret(settings.slack_signing_secret) or "",
        app_token=secret(settings.slack_app_token),
        client_id=settings.slack_client_id,
        client_secret=secret(settings.slack_client_secret) or "",
        ask_command=settings.slack_ask_command,
        support_mention=settings.slack_support_mention,
        max_question_chars=settings.max_question_chars,
        watched_groups=People.parse((*settings.answers_maintainers, *settings.answers_experts)).group_ids("slack"),
        channel_allowed=lambda team, channel: settings.channel_policy("slack", team, channel).allowed,
        search_collections=lambda team, channel, viewed: settings.search_collections("slack", team, channel, viewed),
    )


def discord_options(settings: Settings) -> DiscordOptions:
    from adapters.discord.options import DiscordOptions

    return DiscordOptions(
        api_url=settings.discord_api_url,
        support_role_id=settings.discord_support_role_id,
        solved_tag=settings.discord_solved_tag,
        forum_channels=settings.discord_forum_channels,
        only_asker_clicks=settings.discord_click_policy is ClickPolicy.ASKER,
        max_question_chars=settings.max_question_chars,
        channel_allowed=lambda guild, channel: settings.channel_policy("discord", guild, channel).allowed,
    )
