"""The options the adapters are given instead of the settings: the channel policies and collections they apply are
the settings' own, and no secret shows in their repr (nor in a log line that prints them)."""

from __future__ import annotations

import pytest

from bot.adapter_options import discord_options, slack_options
from bot.settings import ChannelPolicy, ClickPolicy, Settings

pytestmark = pytest.mark.unit


def test_the_slack_options_carry_the_settings_policies_and_hide_the_secrets() -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        slack_bot_token="xoxb-1-secret-token", slack_signing_secret="signing-secret", max_question_chars=500,
        channel_policies=(ChannelPolicy(platform="slack", channel_id="C-hr", collections=("hr",)),
                          ChannelPolicy(platform="slack", channel_id="C-no", allowed=False)),
    )  # fmt: skip
    options = slack_options(settings)
    assert options.bot_token == "xoxb-1-secret-token" and options.signing_secret == "signing-secret"
    assert "secret" not in repr(options)
    assert options.channel_allowed("T1", "C-hr") and not options.channel_allowed("T1", "C-no")
    assert options.search_collections("T1", "C-hr", None) == ("hr",)
    assert options.max_question_chars == 500


def test_the_discord_options_carry_the_click_policy_and_the_channel_policy() -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        discord_click_policy=ClickPolicy.ASKER, discord_forum_channels=(42,),
        channel_policies=(ChannelPolicy(platform="discord", channel_id="7", allowed=False),),
    )  # fmt: skip
    options = discord_options(settings)
    assert options.only_asker_clicks and options.forum_channels == (42,)
    assert not options.channel_allowed("G1", "7") and options.channel_allowed("G1", "8")
