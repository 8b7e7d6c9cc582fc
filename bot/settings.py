"""Settings, read once at start from the environment and an optional `.env` into a frozen, validated object.

Nothing below `bot/` reads the environment: the composition root passes the values it needs down.
Secrets are `SecretStr`, so they are masked in `repr`, logs and `docbot doctor`.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

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
    """All configuration. Environment names: `DOCBOT_*`, plus the SDKs' standard names for credentials."""

    model_config = SettingsConfigDict(
        env_prefix="DOCBOT_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        frozen=True,
        populate_by_name=True,
    )

    # storage
    data_dir: Path = Path("data")
    database_url: str | None = None  # default: sqlite+aiosqlite:///<data_dir>/docbot.db

    # documents
    docs_base_url: str | None = None  # turns ingested paths into citation links
    docs_language: str = "en"
    docs_scope: str = "the team's product and its documentation"  # what the docs cover, for the LLM guardrails
    ingest_sources: tuple[str, ...] = ()  # re-ingested on a schedule
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
    role_limits: dict[Role, int] = Field(default_factory=lambda: dict(DEFAULT_ROLE_LIMITS))
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
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "DOCBOT_OPENAI_API_KEY")
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL", "DOCBOT_OPENAI_BASE_URL")
    )
    llm_model: str = "gpt-4o-mini"  # small model: lang, translation, essence, guardrails, quality, clarification
    llm_response_model: str = "gpt-4o"  # stronger model for the response role
    llm_role_models: dict[Role, str] = Field(default_factory=dict)  # per-role overrides
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
    llm_max_tokens: dict[str, int] = Field(default_factory=dict)  # per decision (schema title), over the defaults
    daily_token_budget: int = Field(default=0, ge=0)  # 0: unlimited
    cache_similarity: float = Field(default=0.95, gt=0, le=1)

    # embeddings: the bundled multilingual E5 (offline) unless an OpenAI-compatible endpoint is configured
    # bundled E5 engines embedding one batch of passages at once (ingest, search levels); default: the usable cores
    # (at most 4) when no platform is configured (terminal chat, CLI), 1 when serving Slack or Discord
    embedder_engines: int | None = Field(default=None, ge=1, le=16)
    embeddings_base_url: str | None = None  # e.g. https://api.openai.com/v1 or http://localhost:8081/v1
    embeddings_api_key: SecretStr | None = None  # default: OPENAI_API_KEY
    embeddings_model: str = "text-embedding-3-small"
    embeddings_dim: int | None = Field(default=None, ge=1)  # default: the size of one probe vector at start
    embeddings_batch_size: int = Field(default=64, ge=1, le=2048)  # inputs per request (OpenAI allows 2048)
    embeddings_timeout_s: float = Field(default=20.0, gt=0)  # one HTTP attempt
    embeddings_max_retries: int = Field(default=2, ge=0, le=5)  # the SDK's retries (429 / 5xx / timeouts / resets)
    embeddings_query_deadline_s: float = Field(default=5.0, gt=0)  # a question's vector, retries included
    embeddings_deadline_s: float = Field(default=120.0, gt=0)  # one batch of passages at ingest, retries included
    embeddings_query_prefix: str = ""  # "query: " for an E5 model served remotely
    embeddings_passage_prefix: str = ""  # "passage: " for an E5 model served remotely

    # reliability and housekeeping
    worker_id: str | None = None  # default: host name and process id
    clarification_ttl_hours: float = Field(default=48.0, gt=0)  # pending questions expire with a note after this
    retention_days: int = Field(default=90, ge=0)  # runs, traces and idle conversations; 0 keeps them forever
    digest_channel: str | None = None  # "platform:workspace:channel" for the weekly docs-gap digest

    # team answers (issue 31): what the team answers in threads becomes a source once a maintainer approves it.
    # People: "platform:user:ID" or "platform:group:ID" (a Slack user group, a Discord role); "platform:ID" a user.
    answers_review_channel: str | None = None  # "platform:workspace:channel" where candidates are posted for review
    answers_maintainers: tuple[str, ...] = ()  # who may approve, edit and reject (the CLI always may)
    answers_experts: tuple[str, ...] = ()  # whose replies after a refusal or a 👎 are drafted; default: the maintainers
    answers_ttl_days: int = Field(default=180, ge=0)  # approved answers go back to review after this; 0: never

    # abuse limits
    user_rate_limit: str = "10/minute"  # `limits` notation
    workspace_rate_limit: str = "300/minute"

    # Slack (bolt's standard names)
    slack_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_BOT_TOKEN", "DOCBOT_SLACK_BOT_TOKEN")
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_SIGNING_SECRET", "DOCBOT_SLACK_SIGNING_SECRET")
    )
    slack_app_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_APP_TOKEN", "DOCBOT_SLACK_APP_TOKEN")
    )
    slack_client_id: str | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_CLIENT_ID", "DOCBOT_SLACK_CLIENT_ID")
    )
    slack_client_secret: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_CLIENT_SECRET", "DOCBOT_SLACK_CLIENT_SECRET")
    )
    slack_api_url: str = Field(
        default="https://slack.com/api/", validation_alias=AliasChoices("SLACK_API_URL", "DOCBOT_SLACK_API_URL")
    )
    slack_ask_command: str = "/ask"
    slack_support_mention: str | None = None  # e.g. "<!subteam^S123>" or "<@U123>"

    # Discord
    discord_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("DISCORD_BOT_TOKEN", "DOCBOT_DISCORD_BOT_TOKEN")
    )
    discord_api_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DISCORD_API_URL", "DOCBOT_DISCORD_API_URL")
    )
    discord_support_role_id: int | None = None
    discord_click_policy: ClickPolicy = ClickPolicy.THREAD
    # forum channels whose every new post docbot answers in the post's thread (ids; comma-separated in the environment)
    discord_forum_channels: tuple[int, ...] = ()
    discord_solved_tag: str = "Solved"  # the forum tag the "Solved" button applies (matched case-insensitively)

    # Pinecone
    pinecone_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("PINECONE_API_KEY", "DOCBOT_PINECONE_API_KEY")
    )
    pinecone_index: str = "docbot"
    pinecone_cloud: str = "aws"
    pinecone_region: str = "us-east-1"
    pinecone_host: str | None = None  # a local or private endpoint

    # channels
    channel_policies: tuple[ChannelPolicy, ...] = ()
    channel_policies_file: Path | None = None  # JSON list of ChannelPolicy objects

    @field_validator("role_limits", mode="before")
    @classmethod
    def _merge_role_limits(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = json.loads(value)
        if isinstance(value, dict):
            merged: dict[Any, Any] = {str(k): v for k, v in DEFAULT_ROLE_LIMITS.items()}
            merged.update({str(k): v for k, v in value.items()})
            for role, limit in merged.items():
                if not isinstance(limit, int) or limit < 1:
                    raise ValueError(f"role limit for {role!r} must be a whole number >= 1")
            return merged
        return value

    @model_validator(mode="after")
    def _load_channel_policies_file(self) -> Settings:
        if self.channel_policies_file is not None:
            try:
                raw = json.loads(self.channel_policies_file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ValueError(f"cannot read channel policies from {self.channel_policies_file}: {exc}") from exc
            policies = tuple(ChannelPolicy.model_validate(item) for item in raw)
            object.__setattr__(self, "channel_policies", self.channel_policies + policies)
        return self

    @field_validator("digest_channel", "answers_review_channel")
    @classmethod
    def _check_digest_channel(cls, value: str | None) -> str | None:
        if value is not None and len(value.split(":")) != 3:
            raise ValueError("the channel must look like 'slack:T0123:C0456' (platform:workspace:channel)")
        return value

    @field_validator("answers_maintainers", "answers_experts")
    @classmethod
    def _check_people(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            parts = entry.split(":")
            if not (len(parts) == 2 or (len(parts) == 3 and parts[1] in ("user", "group"))) or not all(parts):
                raise ValueError(
                    f"{entry!r}: a person is 'platform:user:ID' or 'platform:group:ID' (e.g. 'slack:user:U0123', "
                    "'slack:group:S0456', 'discord:group:<role id>')"
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


def load_settings(**overrides: Any) -> Settings:
    """Read the settings once (environment, then `.env`); `overrides` win (used by the CLI and tests)."""
    return Settings(**overrides)
