import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.settings import ChannelPolicy, FollowMode, Settings, load_settings
from bot.settings_problems import SettingsInvalid
from pipeline.types import Role

pytestmark = pytest.mark.unit


def test_secrets_are_masked_in_repr_and_str(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdef123456")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-secret-token-value")
    settings = load_settings()
    assert settings.openai_api_key is not None
    assert settings.openai_api_key.get_secret_value() == "sk-live-abcdef123456"
    for shown in (repr(settings), str(settings), str(settings.model_dump())):
        assert "sk-live-abcdef123456" not in shown
        assert "xoxb-secret-token-value" not in shown


def test_settings_are_frozen() -> None:
    settings = load_settings()
    with pytest.raises(ValidationError):
        settings.http_port = 1  # type: ignore[misc]


def test_role_limits_merge_with_seed_defaults_and_reject_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCBOT_ROLE_LIMITS", '{"search": 5}')
    settings = load_settings()
    assert settings.role_limits[Role.SEARCH] == 5
    assert settings.role_limits[Role.RESPONSE] == 2
    with pytest.raises(SettingsInvalid, match="DOCBOT_ROLE_LIMITS"):
        load_settings(role_limits={"search": 0})


def test_default_database_is_sqlite_under_the_data_dir(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path)
    assert settings.effective_database_url == f"sqlite+aiosqlite:///{tmp_path / 'docbot.db'}"
    assert not settings.llm_enabled and not settings.slack_enabled and not settings.discord_enabled


def test_most_specific_channel_policy_wins(tmp_path: Path) -> None:
    rules = [
        {"platform": "slack", "allowed": True, "collections": ["public"]},
        {"platform": "slack", "workspace_id": "T1", "channel_id": "C9", "allowed": False},
        {"platform": "slack", "workspace_id": "T1", "channel_id": "C2", "collections": ["internal"],
         "follow_mode": "mention"},
    ]
    path = tmp_path / "channels.json"
    path.write_text(json.dumps(rules))
    settings = Settings(channel_policies_file=path)
    assert settings.channel_policy("slack", "T1", "C9").allowed is False
    internal = settings.channel_policy("slack", "T1", "C2")
    assert internal.collections == ("internal",) and internal.follow_mode is FollowMode.MENTION
    assert settings.channel_policy("slack", "T2", "C2").collections == ("public",)
    assert settings.channel_policy("discord", "G", "C") == ChannelPolicy()


def test_unreadable_channel_policies_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="cannot be read as channel rules"):
        Settings(channel_policies_file=tmp_path / "missing.json")


def test_the_channel_rule_examples_in_the_docs_do_what_the_docs_say(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/configuration.md › Channels: each example rule list, read as DOCBOT_CHANNEL_POLICIES is, behaves as the
    sentence before it says."""
    from markdown_it import MarkdownIt

    page = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    section = page.split("\n## Channels\n", 1)[1].split("\n## ", 1)[0]
    tokens = MarkdownIt().parse(section)
    fenced = [t.content for t in tokens if t.type == "fence" and t.info == "json"]
    spans = [child for t in tokens if t.type == "inline" for child in t.children or ()]
    inline = [span.content for span in spans if span.type == "code_inline" and span.content.startswith("[{")]
    support, hr = fenced
    [mentions] = inline

    def policies(rules: str) -> Settings:
        monkeypatch.setenv("DOCBOT_CHANNEL_POLICIES", rules)
        return load_settings()

    only_support = policies(support)
    assert only_support.channel_policy("slack", "T1", "C0123SUPPORT").allowed
    assert not only_support.channel_policy("slack", "T1", "C0999GENERAL").allowed
    assert only_support.channel_policy("discord", "G1", "C1").allowed  # the rules name Slack only
    hr_only = policies(hr)
    assert hr_only.channel_policy("slack", "T1", "C0456HR").collections == ("hr", "default")
    assert hr_only.channel_policy("slack", "T1", "C0999GENERAL").collections == ("default",)
    assert policies(mentions).channel_policy("discord", "G1", "C1").follow_mode is FollowMode.MENTION
