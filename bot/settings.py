"""Settings, read once at start from the environment and an optional `.env` into a frozen, validated object.

Nothing below `bot/` reads the environment: the composition root passes the values it needs down.
Secrets are `SecretStr`, so they are masked in `repr`, logs and `docbot doctor`.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from limits import parse as parse_rate_limit
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from pipeline.types import Role

DEFAULT_ROLE_LIMITS: dict[Role, int] = {
    Role.MANAGER: 1,
    Role.LANG: 1,
    Role.TRANSLATION: 2,
    Role.ESSENCE: 2,
    Role.GUARDRAILS: 1,
    Role.SEARCH: 2,
    Role.AUGMENTATION: 1,
    Role.RESPONSE: 2,
    Role.QUALITY: 1,
    Role.CLARIFICATION: 2,
}


class FollowMode(StrEnum):
    AUTO = "auto"  # answer follow-ups in threads the bot is engaged in without a new mention
    MENTION = "mention"  # only answer when mentioned


class ClickPolicy(StrEnum):
    THREAD = "thread"  # anyone in the thread may press the buttons
    ASKER = "asker"  # only the person who asked


class ChannelPolicy(BaseModel):
    """Per-channel rules. `*` matches any workspace/guild or channel; the most specific rule wins."""

    model_config = ConfigDict(frozen=True)

    platform: str = "*"
    workspace_id: str = "*"
    channel_id: str = "*"
    allowed: bool = True
    collections: tuple[str, ...] = ("default",)
    follow_mode: FollowMode = FollowMode.AUTO

    def specificity(self) -> int:
        return sum(v != "*" for v in (self.platform, self.workspace_id, self.channel_id))

    def matches(self, platform: str, workspace_id: str, channel_id: str) -> bool:
        return all(
            rule in ("*", value)
            for rule, value in (
                (self.platform, platform),
                (self.workspace_id, workspace_id),
                (self.channel_id, channel_id),
            )
        )


class Settings(BaseSettings):
    """All configuration. Environment names: `DOCBOT_*`, plus the SDKs' standard names for credentials.

    An empty value means unset, wherever it comes from (`KEY=` in a `.env`, `KEY: ""` in a Kubernetes Secret): the
    default applies. `Field(examples=...)` is the example an error message shows when the default is none. JSON
    values (`NoDecode`) are parsed by the field's own validator, so a mistake is one line, not the source's error."""

    model_config = SettingsConfigDict(
        env_prefix="DOCBOT_",
        env_file=".env",
        env_file_encoding="utf-8",
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
        populate_by_name=True,
    )

    # storage
    data_dir: Path = Path("data")
    # default: sqlite+aiosqlite:///<data_dir>/docbot.db; postgres://, postgresql://, sqlite:/// are accepted too
    database_url: str | None = Field(default=None, examples=["postgresql://docbot:PASSWORD@db.internal:5432/docbot"])

    # documents
    docs_base_url: str | None = Field(default=None, examples=["https://docs.example.com/"])  # citation links
    docs_language: str = "en"
    docs_scope: str = "the team's product and its documentation"  # what the docs cover, for the LLM guardrails
    # re-ingested on a schedule: a JSON list, or one source, or several separated by commas
    ingest_sources: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(), examples=['["https://docs.example.com/sitemap.xml"]']
    )
    ingest_schedule_minutes: int = Field(default=0, ge=0)  # 0: never

    # crawling a documentation site (`docbot ingest https://...`; docs/ingesting-documents.md)
    crawl_max_pages: int = Field(default=5000, ge=1)  # pages requested per crawl; the rest wait for the next one
    crawl_max_depth: int = Field(default=20, ge=0)  # link hops from the start page or a sitemap entry
    crawl_concurrency: int = Field(default=4, ge=1, le=32)  # requests in flight per host
    crawl_delay_s: float = Field(default=0.0, ge=0)  # between requests to one host; robots.txt may ask for more
    crawl_timeout_s: float = Field(default=20.0, gt=0)  # one request, body included
    crawl_max_page_mb: float = Field(default=10.0, gt=0)  # a larger page is skipped (and tried again next time)
    crawl_user_agent: str = "docbot/0.1 (documentation crawler)"  # add a contact URL for the sites you crawl

    # service
    http_port: int = Field(default=8080, ge=0, le=65535)
    http_host: str = "0.0.0.0"  # noqa: S104 - the service is meant to be reachable in its container
    log_level: str = "INFO"
    log_json: bool = False
    max_question_chars: int = Field(default=4000, ge=100)
    question_deadline_s: float = Field(default=60.0, gt=0)

    # pipeline
    role_limits: Annotated[dict[Role, int], NoDecode] = Field(
        default_factory=lambda: dict(DEFAULT_ROLE_LIMITS), examples=['{"search": 4}']
    )
    role_queue_limit: int = Field(default=500, ge=0)  # waiting requests per role before "busy"
    role_timeout_s: float = Field(default=20.0, gt=0)
    max_process_count: int = Field(default=30, ge=5)
    max_research_rounds: int = Field(default=1, ge=0)
    max_regenerate_rounds: int = Field(default=1, ge=0)
    # below this answerability score the bot says "the docs don't say" instead of quoting a nearby section;
    # 0 never refuses on the score (fitted by `python -m bench.answerability`, see docs/benchmarks.md)
    answerability_threshold: float = Field(default=0.5, ge=0, le=1)

    # LLM (the openai SDK's standard names)
    openai_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_API_KEY", "DOCBOT_OPENAI_API_KEY"),
        examples=["sk-..."],
    )
    openai_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENAI_BASE_URL", "DOCBOT_OPENAI_BASE_URL"),
        examples=["http://localhost:11434/v1"],
    )
    llm_model: str = "gpt-4o-mini"  # small model: lang, translation, essence, guardrails, quality, clarification
    llm_response_model: str = "gpt-4o"  # stronger model for the response role
    llm_role_models: Annotated[dict[Role, str], NoDecode] = Field(  # per-role overrides
        default_factory=dict, examples=['{"quality": "gpt-4o"}']
    )
    llm_temperature: float = Field(default=0.1, ge=0, le=2)
    llm_timeout_s: float = Field(default=30.0, gt=0)
    llm_fast_mode: bool = False  # one "understand" call for lang + translation + essence + guardrails
    llm_streaming: bool = False
    # json_schema: the endpoint enforces the schema (OpenAI, llama.cpp, vLLM, Ollama); json_object: for servers
    # without it, the schema goes into the prompt and the reply is validated (and repaired once) here
    llm_structured_mode: Literal["json_schema", "json_object"] = "json_schema"
    llm_max_retries: int = Field(default=1, ge=0, le=5)  # the SDK's retries of one call (429/5xx/timeouts)
    # kept of the question's deadline for the offline rest of the pipeline; each LLM call gets a share of the rest
    llm_offline_reserve_s: float = Field(default=8.0, ge=0)
    llm_breaker_failures: int = Field(default=3, ge=1)  # endpoint failures in a row that open its circuit breaker
    llm_breaker_cooldown_s: float = Field(default=30.0, gt=0)  # how long the endpoint is then skipped
    llm_max_tokens: Annotated[dict[str, int], NoDecode] = Field(  # per decision (schema title), over the defaults
        default_factory=dict, examples=['{"Answer": 900}']
    )
    daily_token_budget: int = Field(default=0, ge=0)  # 0: unlimited
    cache_similarity: float = Field(default=0.95, gt=0, le=1)

    # embeddings: the bundled multilingual E5 (offline) unless an OpenAI-compatible endpoint is configured
    # bundled E5 engines embedding one batch of passages at once (ingest, search levels); default: the usable cores
    # (at most 4) when no platform is configured (terminal chat, CLI), 1 when serving Slack or Discord
    embedder_engines: int | None = Field(default=None, ge=1, le=16, examples=["2"])
    embeddings_base_url: str | None = Field(default=None, examples=["https://api.openai.com/v1"])
    embeddings_api_key: SecretStr | None = Field(default=None, examples=["sk-..."])  # default: OPENAI_API_KEY
    embeddings_model: str = "text-embedding-3-small"
    embeddings_dim: int | None = Field(default=None, ge=1, examples=["1536"])  # default: one probe vector's size
    embeddings_batch_size: int = Field(default=64, ge=1, le=2048)  # inputs per request (OpenAI allows 2048)
    embeddings_timeout_s: float = Field(default=20.0, gt=0)  # one HTTP attempt
    embeddings_max_retries: int = Field(default=2, ge=0, le=5)  # the SDK's retries (429 / 5xx / timeouts / resets)
    embeddings_query_deadline_s: float = Field(default=5.0, gt=0)  # a question's vector, retries included
    embeddings_deadline_s: float = Field(default=120.0, gt=0)  # one batch of passages at ingest, retries included
    embeddings_query_prefix: str = ""  # "query: " for an E5 model served remotely
    embeddings_passage_prefix: str = ""  # "passage: " for an E5 model served remotely

    # reliability and housekeeping
    worker_id: str | None = Field(default=None, examples=["docbot-0"])  # default: host name and process id
    clarification_ttl_hours: float = Field(default=48.0, gt=0)  # pending questions expire with a note after this
    retention_days: int = Field(default=90, ge=0)  # runs, traces and idle conversations; 0 keeps them forever
    # a stored reply is retried (capped, jittered backoff) until it is posted or this many hours have passed
    delivery_horizon_hours: float = Field(default=24.0, gt=0)
    digest_channel: str | None = Field(  # where the weekly docs-gap digest goes (unset: no digest)
        default=None, examples=["slack:T0123ABCD:C0456EFGH"]
    )

    # team answers (docs/how-it-works.md): what the team answers in threads becomes a source once a maintainer
    # approves it. People: "platform:user:ID" or "platform:group:ID" (a Slack user group, a Discord role);
    # "platform:ID" is a user. The lists: a JSON list, or entries separated by commas.
    answers_review_channel: str | None = Field(  # where candidates' review messages go (unset: the CLI and digest)
        default=None, examples=["slack:T0123ABCD:C0789IJKL"]
    )
    # who may approve, edit and reject (the CLI always may)
    answers_maintainers: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(), examples=["slack:user:U0123ABCD,slack:group:S0456EFGH"]
    )
    # whose replies after a refusal or a "not helpful" are drafted; default: the maintainers
    answers_experts: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(), examples=["slack:user:U0123ABCD,discord:group:112233445566778899"]
    )
    answers_ttl_days: int = Field(default=180, ge=0)  # approved answers go back to review after this; 0: never

    # abuse limits (`limits` notation: N/second|minute|hour|day)
    user_rate_limit: str = "10/minute"
    workspace_rate_limit: str = "300/minute"

    # Slack (bolt's standard names)
    slack_bot_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_BOT_TOKEN", "DOCBOT_SLACK_BOT_TOKEN"),
        examples=["xoxb-..."],
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_SIGNING_SECRET", "DOCBOT_SLACK_SIGNING_SECRET"),
        examples=["(Basic Information > Signing Secret)"],
    )
    slack_app_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_APP_TOKEN", "DOCBOT_SLACK_APP_TOKEN"),
        examples=["xapp-..."],
    )
    slack_client_id: str | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_CLIENT_ID", "DOCBOT_SLACK_CLIENT_ID"),
        examples=["1234567890.1234567890"],
    )
    slack_client_secret: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_CLIENT_SECRET", "DOCBOT_SLACK_CLIENT_SECRET"),
        examples=["(Basic Information > Client Secret)"],
    )
    slack_api_url: str = Field(
        default="https://slack.com/api/", validation_alias=AliasChoices("SLACK_API_URL", "DOCBOT_SLACK_API_URL")
    )
    slack_ask_command: str = "/ask"
    slack_support_mention: str | None = Field(default=None, examples=["<!subteam^S0123ABCD>"])  # or "<@U123>"

    # Discord
    discord_bot_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("DISCORD_BOT_TOKEN", "DOCBOT_DISCORD_BOT_TOKEN"),
        examples=["(Developer Portal > Bot > Token)"],
    )
    discord_api_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("DISCORD_API_URL", "DOCBOT_DISCORD_API_URL"),
        examples=["https://discord.com/api/v10"],
    )
    discord_support_role_id: int | None = Field(default=None, examples=["123456789012345678"])
    discord_click_policy: ClickPolicy = ClickPolicy.THREAD
    # forum channels whose every new post docbot answers in the post's thread: a JSON list of ids, or ids separated by
    # commas
    discord_forum_channels: Annotated[tuple[int, ...], NoDecode] = Field(
        default=(), examples=["123456789012345678,234567890123456789"]
    )
    discord_solved_tag: str = "Solved"  # the forum tag the "Solved" button applies (matched case-insensitively)

    # Pinecone
    pinecone_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("PINECONE_API_KEY", "DOCBOT_PINECONE_API_KEY"),
        examples=["pcsk_..."],
    )
    pinecone_index: str = "docbot"
    pinecone_cloud: Literal["aws", "gcp", "azure"] = "aws"
    pinecone_region: str = "us-east-1"
    pinecone_host: str | None = Field(default=None, examples=["https://docbot-abc123.svc.pinecone.io"])

    # channels
    channel_policies: Annotated[tuple[ChannelPolicy, ...], NoDecode] = Field(
        default=(), examples=['[{"channel_id": "C0123", "allowed": false}]']
    )
    channel_policies_file: Path | None = Field(default=None, examples=["/etc/docbot/channels.json"])

    @model_validator(mode="before")
    @classmethod
    def _empty_means_unset(cls, data: Any) -> Any:
        """`Settings(x="")` like `DOCBOT_X=`: the default applies (the environment's empties are skipped by
        `env_ignore_empty`)."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if not (isinstance(v, str) and not v.strip())}
        return data

    @field_validator("database_url")
    @classmethod
    def _normalise_database_url(cls, value: str | None) -> str | None:
        return None if value is None else database_url(value)

    @field_validator(
        "docs_base_url", "openai_base_url", "embeddings_base_url", "slack_api_url", "discord_api_url", "pinecone_host"
    )
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None:
            _check_http_url(value)
        return value

    @field_validator("log_level")
    @classmethod
    def _check_log_level(cls, value: str) -> str:
        level = value.strip().upper()
        if level not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")
        return level

    @field_validator("docs_language")
    @classmethod
    def _check_language(cls, value: str) -> str:
        base, _, region = value.strip().replace("_", "-").partition("-")
        if not (2 <= len(base) <= 3 and base.isascii() and base.isalpha()) or (region and not region.isalnum()):
            raise ValueError("must be a language code such as en, de or pt-BR")
        return value.strip()

    @field_validator("user_rate_limit", "workspace_rate_limit")
    @classmethod
    def _check_rate_limit(cls, value: str) -> str:
        try:
            parse_rate_limit(value)
        except ValueError:
            raise ValueError("must be a rate such as 10/minute (N per second, minute, hour or day)") from None
        return value

    @field_validator("slack_bot_token")
    @classmethod
    def _check_bot_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(("xoxb-", "xoxe.xoxb-")):
            raise ValueError("must be the bot token, which starts with xoxb- (OAuth & Permissions page)")
        return value

    @field_validator("slack_app_token")
    @classmethod
    def _check_app_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("xapp-"):
            raise ValueError("must be the app-level token, which starts with xapp- (Basic Information page)")
        return value

    @field_validator("slack_ask_command")
    @classmethod
    def _check_command(cls, value: str) -> str:
        if not value.startswith("/") or len(value) < 2 or any(ch.isspace() for ch in value):
            raise ValueError("must be a slash command such as /ask")
        return value

    @field_validator("slack_support_mention")
    @classmethod
    def _check_mention(cls, value: str | None) -> str | None:
        # "@support" in a message pings nobody: Slack needs the escaped form of a user group or a person
        if value is not None and not (value.startswith("<") and value.endswith(">") and len(value) > 3):
            raise ValueError("must be a Slack mention such as <!subteam^S0123ABCD> (a user group) or <@U0123ABCD>")
        return value

    @field_validator("pinecone_index")
    @classmethod
    def _check_index_name(cls, value: str) -> str:
        # Pinecone's rule: lower-case letters, digits and hyphens, at most 45 characters
        if not value or len(value) > 45 or not all(ch.islower() or ch.isdigit() or ch == "-" for ch in value):
            raise ValueError("must be lower-case letters, digits and hyphens (at most 45)")
        return value

    @field_validator("ingest_sources", mode="before")
    @classmethod
    def _parse_sources(cls, value: Any) -> Any:
        if isinstance(value, str):
            if value.lstrip().startswith("["):
                return _json(value, "a JSON list of folders, files or URLs")
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("discord_forum_channels", mode="before")
    @classmethod
    def _parse_ids(cls, value: Any) -> Any:
        if isinstance(value, str):
            if value.lstrip().startswith("["):
                return _json(value, "a JSON list of channel ids")
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("llm_role_models", "llm_max_tokens", mode="before")
    @classmethod
    def _parse_object(cls, value: Any) -> Any:
        return _json(value, "a JSON object") if isinstance(value, str) else value

    @field_validator("channel_policies", mode="before")
    @classmethod
    def _parse_policies(cls, value: Any) -> Any:
        return _json(value, "a JSON list of channel rules") if isinstance(value, str) else value

    @field_validator("role_limits", mode="before")
    @classmethod
    def _merge_role_limits(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = _json(value, "a JSON object of role: count")
        if isinstance(value, dict):
            merged: dict[Any, Any] = {str(k): v for k, v in DEFAULT_ROLE_LIMITS.items()}
            merged.update({str(k): v for k, v in value.items()})
            roles = {role.value for role in Role}
            for role, limit in merged.items():
                if role not in roles:
                    raise ValueError(f"unknown role {role!r} (roles: {', '.join(sorted(roles))})")
                if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
                    raise ValueError(f"role limit for {role!r} must be a whole number >= 1")
            return merged
        return value

    @field_validator("channel_policies_file")
    @classmethod
    def _check_policies_file(cls, value: Path | None) -> Path | None:
        if value is not None:
            _read_policies(value)
        return value

    @model_validator(mode="after")
    def _load_channel_policies_file(self) -> Settings:
        if self.channel_policies_file is not None:
            policies = _read_policies(self.channel_policies_file)
            object.__setattr__(self, "channel_policies", self.channel_policies + policies)
        return self

    @field_validator("digest_channel", "answers_review_channel")
    @classmethod
    def _check_digest_channel(cls, value: str | None) -> str | None:
        if value is not None and (len(value.split(":")) != 3 or not all(value.split(":"))):
            raise ValueError("must look like slack:T0123:C0456 (platform:workspace:channel)")
        return value

    @field_validator("answers_maintainers", "answers_experts", mode="before")
    @classmethod
    def _parse_people(cls, value: Any) -> Any:
        if isinstance(value, str):
            if value.lstrip().startswith("["):
                return _json(value, "a JSON list of people")
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("answers_maintainers", "answers_experts")
    @classmethod
    def _check_people(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            parts = entry.split(":")
            if not (len(parts) == 2 or (len(parts) == 3 and parts[1] in ("user", "group"))) or not all(parts):
                which = "is not a person" if len(value) == 1 else f"has {entry}, which is not a person"
                raise ValueError(
                    f"{which}: use platform:user:ID or platform:group:ID (a Slack user group, a Discord role)"
                )
        return value

    @property
    def effective_database_url(self) -> str:
        return self.database_url or f"sqlite+aiosqlite:///{self.data_dir / 'docbot.db'}"

    @property
    def llm_enabled(self) -> bool:
        return self.openai_api_key is not None or self.openai_base_url is not None

    @property
    def embeddings_enabled(self) -> bool:
        return bool(self.embeddings_base_url)  # an empty line in .env keeps the bundled model

    @property
    def slack_enabled(self) -> bool:
        return self.slack_bot_token is not None or self.slack_client_id is not None

    @property
    def discord_enabled(self) -> bool:
        return self.discord_bot_token is not None

    @property
    def pinecone_enabled(self) -> bool:
        return self.pinecone_api_key is not None

    def model_for(self, role: Role) -> str:
        if role in self.llm_role_models:
            return self.llm_role_models[role]
        return self.llm_response_model if role is Role.RESPONSE else self.llm_model

    def channel_policy(self, platform: str, workspace_id: str, channel_id: str) -> ChannelPolicy:
        """The most specific matching policy; with none configured every channel is allowed."""
        matching = [p for p in self.channel_policies if p.matches(platform, workspace_id, channel_id)]
        if not matching:
            return ChannelPolicy()
        return max(matching, key=ChannelPolicy.specificity)

    def search_collections(
        self, platform: str, workspace_id: str, channel_id: str, viewed_channel_id: str | None = None
    ) -> tuple[str, ...]:
        """The collections a question asked in `channel_id` searches: that channel's, or, when the asker was looking
        at another channel (Slack's agent view context) that a policy names and allows, that channel's."""
        own = self.channel_policy(platform, workspace_id, channel_id).collections
        if not viewed_channel_id or viewed_channel_id == channel_id:
            return own
        viewed = self.channel_policy(platform, workspace_id, viewed_channel_id)
        return viewed.collections if viewed.channel_id == viewed_channel_id and viewed.allowed else own


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_DATABASE_DRIVERS = {"postgresql": "postgresql+asyncpg", "postgres": "postgresql+asyncpg", "sqlite": "sqlite+aiosqlite"}
DATABASE_EXAMPLE = "postgresql://user:password@host:5432/docbot or sqlite:///data/docbot.db"


def database_url(value: str) -> str:
    """The URL as docbot's async drivers need it. The URLs people have at hand are accepted: `postgres://` and
    `postgresql://` (with any driver, and libpq's `sslmode`) become asyncpg's, `sqlite:///` becomes aiosqlite's."""
    try:
        url = make_url(value.strip())
    except (ArgumentError, ValueError):
        raise ValueError(f"is not a database URL; use {DATABASE_EXAMPLE}") from None
    backend = url.get_backend_name()
    if backend not in _DATABASE_DRIVERS:
        raise ValueError(f"is a {backend} URL: docbot runs on PostgreSQL or SQLite ({DATABASE_EXAMPLE})")
    url = url.set(drivername=_DATABASE_DRIVERS[backend])
    if backend != "sqlite":
        if not url.host:
            raise ValueError(f"has no host; use {DATABASE_EXAMPLE}")
        if "sslmode" in url.query:  # libpq's name; asyncpg calls it ssl
            query = {k: v for k, v in url.query.items() if k != "sslmode"}
            url = url.set(query={**query, "ssl": url.query["sslmode"]})
    return url.render_as_string(hide_password=False)


def _check_http_url(value: str) -> None:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when it is read
    except ValueError:
        raise ValueError("has a port that is not a number from 0 to 65535") from None


def _json(value: str, what: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        raise ValueError(f"must be {what} (not valid JSON)") from None


def _read_policies(path: Path) -> tuple[ChannelPolicy, ...]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(raw, list):
            raise ValueError("the file must hold a JSON list of channel rules")
        return tuple(ChannelPolicy.model_validate(item) for item in raw)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else _one_line(exc)
        raise ValueError(f"cannot be read as channel rules ({reason})") from None


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return " ".join(str(exc).split())


def load_settings(**overrides: Any) -> Settings:
    """Read the settings once (environment, then `.env`); `overrides` win (used by the CLI and tests).

    Raises `SettingsInvalid` with one line per problem (the variable, what is wrong, an example)."""
    from bot.settings_problems import read_settings

    return read_settings(Settings, overrides)
