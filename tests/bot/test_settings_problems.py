"""Every setting given a bad value ends in one line naming its environment variable, the problem and an example,
in every CLI command, never a traceback (issue 28: `postgres://` URLs, non-JSON `DOCBOT_ROLE_LIMITS` and an invalid
`DOCBOT_USER_RATE_LIMIT` crashed `doctor` or `ask`; messages named `role_timeout_s` instead of the variable).

The table below is the one in docs/configuration.md ("When a setting is wrong"): a test keeps the two equal."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import cli
from bot.settings import Settings, load_settings
from bot.settings_problems import SettingsInvalid, env_name

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"

# field -> a value people plausibly type that docbot cannot use
BAD: dict[str, str] = {
    "database_url": "mysql://docbot@db.internal/docbot",
    "docs_base_url": "docs.example.com",
    "docs_language": "english",
    "ingest_sources": '["https://docs.example.com/"',
    "ingest_schedule_minutes": "-5",
    "crawl_max_pages": "0",
    "crawl_max_depth": "deep",
    "crawl_concurrency": "100",
    "crawl_delay_s": "-1",
    "crawl_timeout_s": "0",
    "crawl_max_page_mb": "10MB",
    "http_port": "70000",
    "log_level": "LOUD",
    "log_json": "maybe",
    "max_question_chars": "10",
    "question_deadline_s": "0",
    "role_limits": "search=4",
    "role_queue_limit": "-1",
    "role_timeout_s": "soon",
    "max_process_count": "2",
    "max_research_rounds": "-1",
    "max_regenerate_rounds": "one",
    "answerability_threshold": "1.5",
    "openai_base_url": "localhost:8000/v1",
    "llm_role_models": '{"writer": "gpt-4o"}',
    "llm_temperature": "3",
    "llm_timeout_s": "0",
    "llm_fast_mode": "sometimes",
    "llm_streaming": "2",
    "llm_structured_mode": "xml",
    "llm_max_retries": "9",
    "llm_offline_reserve_s": "-1",
    "llm_breaker_failures": "0",
    "llm_breaker_cooldown_s": "0",
    "llm_max_tokens": '{"Answer": "lots"}',
    "daily_token_budget": "-1",
    "cache_similarity": "0",
    "embedder_engines": "0",
    "embeddings_base_url": "api.openai.com/v1",
    "embeddings_dim": "0",
    "embeddings_batch_size": "5000",
    "embeddings_timeout_s": "0",
    "embeddings_max_retries": "10",
    "embeddings_query_deadline_s": "0",
    "embeddings_deadline_s": "-1",
    "clarification_ttl_hours": "0",
    "retention_days": "-1",
    "delivery_horizon_hours": "0",
    "digest_channel": "#docs-gaps",
    "answers_review_channel": "#answers-review",
    "answers_maintainers": "U0123ABCD",
    "answers_experts": "slack:user:U0123ABCD,slack:role:R0456",
    "answers_ttl_days": "six months",
    "user_rate_limit": "lots",
    "workspace_rate_limit": "300",
    "slack_bot_token": "xapp-1-A0123-SWAPPED",
    "slack_app_token": "xoxb-1-SWAPPED",
    "slack_api_url": "slack.com/api",
    "slack_ask_command": "ask",
    "slack_support_mention": "@support",
    "discord_api_url": "discord.com/api/v10",
    "discord_support_role_id": "@support",
    "discord_click_policy": "everyone",
    "discord_forum_channels": "help-forum",
    "pinecone_index": "Docs_Index",
    "pinecone_cloud": "ibm",
    "pinecone_host": "https://",
    "channel_policies": '[{"channel_id": "C1", "allowed": "perhaps"}]',
    "channel_policies_file": "/nonexistent/channels.json",
}
# fields where any text is a value someone may mean (names, prefixes, paths, opaque credentials)
FREE_TEXT = {
    "data_dir", "docs_scope", "http_host", "openai_api_key", "llm_model", "llm_response_model", "embeddings_api_key",
    "embeddings_model", "embeddings_query_prefix", "embeddings_passage_prefix", "worker_id", "slack_signing_secret",
    "slack_client_id", "slack_client_secret", "discord_bot_token", "pinecone_api_key", "pinecone_region",
    "crawl_user_agent", "discord_solved_tag",
}  # fmt: skip
COMMANDS = [
    ["ask", "hello"], ["chat"], ["ingest", "docs"], ["trace"], ["doctor"], ["eval", "README.md"], ["reindex"], ["run"],
    ["outbox", "retry"], ["answers", "list"], ["answers", "approve", "0123abcd"], ["digest"],
]  # fmt: skip


@pytest.fixture
def no_docbot_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith(("DOCBOT_", "SLACK_", "DISCORD_", "OPENAI_", "PINECONE_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no stray .env
    yield


def problem_of(field: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(env_name(Settings, field), BAD[field])
    with pytest.raises(SettingsInvalid) as raised:
        load_settings()
    monkeypatch.delenv(env_name(Settings, field))
    [line] = raised.value.problems
    return line


def test_every_setting_is_either_checked_or_free_text() -> None:
    assert set(BAD) | FREE_TEXT == set(Settings.model_fields)
    assert not set(BAD) & FREE_TEXT


@pytest.mark.usefixtures("no_docbot_env")
@pytest.mark.parametrize("field", sorted(BAD))
def test_a_bad_value_is_one_line_with_the_variable_and_an_example(
    field: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = problem_of(field, monkeypatch)
    name = env_name(Settings, field)
    assert line.startswith(f"{name}: ") and "\n" not in line
    assert f", e.g. {name}=" in line
    assert field not in line.removeprefix(f"{name}: ").split(", e.g.")[0].replace(name, "")  # not the field name
    if "SecretStr" in repr(Settings.model_fields[field].annotation):
        assert BAD[field] not in line  # a secret is never repeated
    else:  # the wrong value (or the wrong part of a JSON value) is quoted
        quoted = line.removeprefix(f"{name}: ").split('"')[1]
        assert quoted.rstrip("…") in BAD[field]


@pytest.mark.usefixtures("no_docbot_env")
def test_empty_values_are_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "DISCORD_BOT_TOKEN", "PINECONE_API_KEY", "DOCBOT_DATABASE_URL",
                 "DOCBOT_ROLE_LIMITS", "DOCBOT_HTTP_PORT", "DOCBOT_DIGEST_CHANNEL", "SLACK_BOT_TOKEN"):  # fmt: skip
        monkeypatch.setenv(name, "")
    settings = load_settings(embeddings_base_url="", slack_support_mention=" ")
    assert not settings.llm_enabled and not settings.discord_enabled and not settings.pinecone_enabled
    assert not settings.slack_enabled and settings.database_url is None and settings.http_port == 8080
    assert settings.digest_channel is None and settings.slack_support_mention is None


@pytest.mark.usefixtures("no_docbot_env")
@pytest.mark.parametrize(
    ("typed", "used"),
    [
        ("postgres://docbot:pw@db:5432/docbot", "postgresql+asyncpg://docbot:pw@db:5432/docbot"),
        ("postgresql://docbot@db/docbot?sslmode=require", "postgresql+asyncpg://docbot@db/docbot?ssl=require"),
        ("postgresql+psycopg2://docbot@db/docbot", "postgresql+asyncpg://docbot@db/docbot"),
        ("sqlite:///data/docbot.db", "sqlite+aiosqlite:///data/docbot.db"),
        ("sqlite+aiosqlite:///data/docbot.db", "sqlite+aiosqlite:///data/docbot.db"),
    ],
)
def test_database_urls_people_type_are_accepted(typed: str, used: str) -> None:
    assert load_settings(database_url=typed).effective_database_url == used


@pytest.mark.usefixtures("no_docbot_env")
def test_a_database_password_is_not_repeated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCBOT_DATABASE_URL", "mysql://docbot:hunter2@db/docbot")
    with pytest.raises(SettingsInvalid) as raised:
        load_settings()
    assert "hunter2" not in str(raised.value) and "mysql" in str(raised.value)


@pytest.mark.usefixtures("no_docbot_env")
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_command_prints_the_lines_and_exits_without_a_traceback(command: list[str]) -> None:
    env = {"DOCBOT_ROLE_LIMITS": "search=4", "DOCBOT_USER_RATE_LIMIT": "lots", "SLACK_APP_TOKEN": "xoxb-swapped"}
    result = CliRunner().invoke(cli, command, env=env)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert sorted(line.split(":")[1].strip() for line in lines) == sorted(env)
    assert all(line.startswith("error: ") for line in lines)
    assert "Traceback" not in result.output and "xoxb-swapped" not in result.output


@pytest.mark.usefixtures("no_docbot_env")
def test_the_docs_table_is_what_docbot_says(monkeypatch: pytest.MonkeyPatch) -> None:
    documented = DOCS.read_text(encoding="utf-8")
    missing = [row for row in docs_rows(monkeypatch) if row not in documented]
    assert not missing, "docs/configuration.md lacks these rows:\n" + "\n".join(missing)


def docs_rows(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The rows of the docs' table: what is typed, what docbot says (both as code, so `<@U…>` stays visible)."""
    fields = sorted(BAD, key=lambda f: env_name(Settings, f))
    return [f"| `{env_name(Settings, f)}={BAD[f]}` | `{problem_of(f, monkeypatch)}` |" for f in fields]


@pytest.mark.usefixtures("no_docbot_env")
def test_run_with_a_slack_token_but_no_way_to_check_requests_says_which_variable() -> None:
    result = CliRunner().invoke(cli, ["run"], env={"SLACK_BOT_TOKEN": "xoxb-1-real-looking"})
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: SLACK_SIGNING_SECRET: ") and "SLACK_APP_TOKEN" in line
    assert "xoxb-1-real-looking" not in result.output


@pytest.mark.usefixtures("no_docbot_env")
def test_a_dotenv_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"DOCBOT_LOG_LEVEL=INFO\nOPENAI_API_KEY=caf\xe9\n")
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: .env: not UTF-8 text (byte 0xe9 at offset 40); save it as UTF-8"
