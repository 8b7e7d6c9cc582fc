"""The composition root: reads nothing itself, builds every part from `Settings` once, and owns their lifetimes."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.answers.wiring import TeamAnswerParts, build_team_answers
from bot.budget import UsageGuard
from bot.latency import keep_loop_responsive
from bot.metrics import Metrics
from bot.service import ConversationService
from bot.settings import Settings
from pipeline.agents.base import Strategy
from pipeline.agents.lang import LangAgent
from pipeline.assembly import build_agents
from pipeline.envelope import Context, Payload
from pipeline.messages import ThreadRef
from pipeline.runner import PipelineRunner
from pipeline.types import Embedder, Role
from storage.actions import ActionStore
from storage.conversations import ConversationStore
from storage.corpus_versions import corpus_version
from storage.db import Database, mask_url
from storage.embedder import E5Embedder, QueryMemo, ZerosOnFailure
from storage.embedding_space import check_space
from storage.errors import EmbeddingUnavailable
from storage.feedback import FeedbackStore
from storage.ingest.ingestor import Ingestor, ProgressCallback
from storage.ingest.model import IngestReport
from storage.ingest.site.limits import CrawlLimits
from storage.local_index import LocalVectorIndex
from storage.runs import RunStore
from storage.search.retriever import HybridRetriever
from storage.semantic_cache import SemanticCache
from storage.source_facts import source_facts
from storage.usage_counters import SqlTokenLedger
from storage.vector_index import VectorIndex

if TYPE_CHECKING:  # what only serving needs loads in `serve`: `docbot ask` never imports the HTTP server,
    # the delivery worker, the scheduler or (offline) the OpenAI SDK
    from aiohttp import web

    from bot.delivery import Delivery
    from bot.scheduler import JobSpec
    from pipeline.llm.client import OpenAIChat

log = logging.getLogger(__name__)


@dataclass
class App:
    """Everything one process runs. Build with `build_app`, end with `close`."""

    settings: Settings
    db: Database
    embedder: Embedder
    index: VectorIndex
    retriever: HybridRetriever
    runner: PipelineRunner
    service: ConversationService
    runs: RunStore
    ingestor: Ingestor
    metrics: Metrics
    cache: SemanticCache
    team: TeamAnswerParts
    agents: Mapping[Role, Any] = field(default_factory=dict)
    _closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    async def ingest(
        self,
        sources: Sequence[str],
        *,
        collection: str = "default",
        base_url: str | None = None,
        on_progress: ProgressCallback | None = None,
        crawl: CrawlLimits | None = None,
    ) -> IngestReport:
        return await self.ingestor.ingest(
            sources, collection=collection, base_url=base_url, on_progress=on_progress, crawl=crawl
        )

    async def warm_up(self) -> None:
        """Build what the first question would otherwise wait for (the language detector), off the event loop."""
        lang = self.agents.get(Role.LANG)
        warm = getattr(lang, "warm_up", None)
        if warm is not None:
            await warm()

    async def ready(self) -> str | None:
        """None when the process can take traffic, otherwise why not."""
        try:
            await self.db.check()
        except Exception as exc:
            return f"database: {type(exc).__name__}"
        return None

    async def serve(self, stop: asyncio.Event | None = None) -> None:
        """Run the HTTP server and every configured platform adapter until SIGINT/SIGTERM (or `stop`)."""
        if stop is None:  # the CLI: stop on SIGINT/SIGTERM (tests pass their own event)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(sig, stop.set)
        from bot.answers.hooks import TeamAnswerHooks
        from bot.delivery import Delivery, DeliveryConfig, default_worker_id, fetchers_by_platform
        from bot.http import build_http_app, start_http
        from bot.scheduler import LeasedScheduler
        from storage.leases import JobLeases
        from storage.outbox import Outbox

        await self.warm_up()
        web_app = build_http_app(self.metrics, self.ready)
        adapters = await self._platform_adapters(web_app)
        worker_id = self.settings.worker_id or default_worker_id()
        sinks = {name: adapter.sink for name, adapter in adapters.items()}
        outbox = Outbox(self.db, horizon=timedelta(hours=self.settings.delivery_horizon_hours))
        hooks = TeamAnswerHooks(self.team, outbox, sinks)  # ✅, "Solved", experts' replies, review buttons
        delivery = Delivery(
            self.db,
            self.service,
            sinks,
            worker_id,
            fetcher_for=fetchers_by_platform({name: adapter.fetcher_for for name, adapter in adapters.items()}),
            language_for=self.service.language_of,  # an apology or progress sign in the message's own language
            on_lag=self.metrics.inbox_lag.set,
            on_undelivered=self.metrics.observe_outbox,
            config=DeliveryConfig(stream_answers=self.settings.llm_streaming and self.settings.llm_enabled),
            outbox=outbox,
            hooks=hooks,
        )
        if "discord" in adapters:  # Discord's Edit opens its modal while acknowledging the press
            adapters["discord"].review_text = hooks.editor_text_for("discord")
        for adapter in adapters.values():
            adapter.intake = delivery  # events go through the inbox, replies through the outbox
        scheduler = LeasedScheduler(JobLeases(self.db), worker_id, self._jobs(delivery))
        http = await start_http(web_app, self.settings.http_host, self.settings.http_port)
        log.info("http listening", extra={"port": self.settings.http_port, "worker": worker_id})
        worker = asyncio.create_task(delivery.run_worker(stop))
        tasks: list[asyncio.Task[Any]] = [worker]
        try:
            scheduler.start()
            if "slack" in adapters and self.settings.slack_app_token is not None:
                await adapters["slack"].start_socket_mode()
            if "discord" in adapters:
                assert self.settings.discord_bot_token is not None
                token = self.settings.discord_bot_token.get_secret_value()
                tasks.append(asyncio.create_task(adapters["discord"].start(token)))
            await stop.wait()
        finally:
            stop.set()
            await scheduler.stop()
            for adapter in adapters.values():
                with contextlib.suppress(Exception):
                    await adapter.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker, timeout=10)
            for task in tasks:
                task.cancel()
            await http.cleanup()

    async def _platform_adapters(self, web_app: web.Application) -> dict[str, Any]:
        """The configured platforms' adapters, by platform name (Slack routes mounted on `web_app`)."""
        adapters: dict[str, Any] = {}
        if self.settings.slack_enabled:
            from adapters.slack.app import SlackAdapter
            from adapters.slack.installations import database_oauth_stores
            from bot.adapter_options import slack_options
            from bot.topics import DocsTopics

            stores: dict[str, Any] = {}
            if self.settings.slack_client_id is not None:  # multi-workspace OAuth: installations in our database
                installations, states = await database_oauth_stores(self.db.engine, self.settings.slack_client_id)
                stores = {"installation_store": installations, "oauth_state_store": states}
            slack = SlackAdapter(slack_options(self.settings), language_of=self._text_language(), **stores)
            slack.topics = DocsTopics(self.db)  # the suggested prompts of the Messages tab: the docs' top sections
            slack.add_routes(web_app)
            adapters["slack"] = slack
        if self.settings.discord_enabled:
            from adapters.discord.client import DocbotClient
            from bot.adapter_options import discord_options

            adapters["discord"] = DocbotClient(discord_options(self.settings), language_of=self._text_language())
        return adapters

    def _text_language(self) -> Callable[[str], Awaitable[str | None]]:
        """A text's language for the notices adapters send themselves: the lang role's offline detector (warmed up
        in `serve`), over the text's first `NOTICE_DETECT_CHARS` characters."""
        from bot.service import NOTICE_DETECT_CHARS

        detect = asker_language()
        context = Context(docs_language=self.settings.docs_language)

        async def language_of(text: str) -> str | None:
            return await detect(text[:NOTICE_DETECT_CHARS], context)

        return language_of

    def _jobs(self, delivery: Delivery) -> list[JobSpec]:
        from bot.jobs import standard_jobs
        from storage.retention import RetentionPolicy

        settings = self.settings
        platform, workspace, channel = (settings.digest_channel or "::").split(":")
        digest = ThreadRef(platform, workspace, channel, "") if settings.digest_channel else None
        days = settings.retention_days
        return standard_jobs(
            db=self.db,
            delivery=delivery,
            ingest=lambda source: self.ingest([source], base_url=settings.docs_base_url),
            sources=settings.ingest_sources,
            reingest_every=timedelta(minutes=settings.ingest_schedule_minutes)
            if settings.ingest_schedule_minutes
            else None,
            clarification_ttl=timedelta(hours=settings.clarification_ttl_hours),
            retention=RetentionPolicy(runs_days=days, conversations_days=2 * days) if days else None,
            digest_target=digest,
            embedder=self.embedder,
            team=self.team,
            corpus_version=lambda: corpus_version(self.db),
            reload_search=self.reload_search,
        )

    async def reload_search(self) -> None:
        """Pick up documents another replica ingested: the retriever reads only the changed documents (keyword
        levels and, for the local index, their vectors)."""
        await self.retriever.reload()

    async def close(self) -> None:
        for closer in reversed(self._closers):
            try:
                await closer()
            except Exception:
                log.warning("error while closing", exc_info=True)
        self._closers.clear()


def answerer_of(settings: Settings) -> str:
    """What makes the answers, as the semantic cache's partition: offline, or the models and endpoint of LLM mode."""
    if not settings.llm_enabled:
        return "offline"
    roles = ",".join(sorted({settings.model_for(role) for role in Role}))
    return f"llm:{settings.openai_base_url or 'openai'}:{roles}".replace("|", "/")[:160]


def asker_language() -> Callable[[str, Context], Awaitable[str | None]]:
    """The asker's language for the semantic cache's key: the lang role's offline detector (the same cached
    detector the pipeline uses; no LLM call before the cache)."""
    detector = LangAgent()

    async def language(text: str, context: Context) -> str | None:
        result = await detector.run(Payload(text=text), context)
        return result.payload.language

    return language


def llm_strategies(settings: Settings) -> tuple[Mapping[Role, Strategy], OpenAIChat | None]:
    """LLM strategies per role when an endpoint is configured (and the client, to watch and close); none otherwise,
    and the offline agents answer."""
    if not settings.llm_enabled:
        return {}, None
    from pipeline.llm.breaker import CircuitBreaker
    from pipeline.llm.client import OpenAIChat
    from pipeline.llm.strategies import build_strategies

    models = {role: settings.model_for(role) for role in Role}
    chat = OpenAIChat(
        api_key=settings.openai_api_key,
        base_url=settings.openai_base_url,
        models=models,
        default_model=settings.llm_model,
        temperature=settings.llm_temperature,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        structured_mode=settings.llm_structured_mode,
        breaker=CircuitBreaker(threshold=settings.llm_breaker_failures, cooldown_s=settings.llm_breaker_cooldown_s),
        max_tokens=settings.llm_max_tokens,
    )
    strategies = build_strategies(
        chat,
        fast=settings.llm_fast_mode,
        scope=settings.docs_scope,
        role_timeout_s=settings.role_timeout_s,
        offline_reserve_s=settings.llm_offline_reserve_s,
    )
    return strategies, chat


async def build_index(settings: Settings, db: Database, dim: int) -> VectorIndex:
    if settings.pinecone_enabled:
        from storage.pinecone_index import PineconeIndex

        assert settings.pinecone_api_key is not None
        index = PineconeIndex(
            api_key=settings.pinecone_api_key,
            index_name=settings.pinecone_index,
            dimension=dim,
            cloud=settings.pinecone_cloud,
            region=settings.pinecone_region,
            host=settings.pinecone_host,
        )
        await index.open()
        return index
    return LocalVectorIndex(dim)  # filled by the retriever's load (snapshot file, then the changed documents)


def snapshot_dir(settings: Settings, embedder: Embedder) -> Path | None:
    """Where this database's search snapshot lives: `<data_dir>/index/<key of database, model, dimension>` (none for
    an in-memory database). Replicas on PostgreSQL each keep their own (or share one volume): see operations.md."""
    url = settings.effective_database_url
    if url.rstrip("/").endswith((":memory:", "sqlite:", "aiosqlite:")):
        return None
    model = str(getattr(embedder, "model_name", type(embedder).__name__))
    key = hashlib.blake2b(f"{mask_url(url)}\0{model}\0{embedder.dim}".encode(), digest_size=8).hexdigest()
    return settings.data_dir / "index" / key


MAX_DEFAULT_ENGINES = 4


def e5_engines(settings: Settings) -> int:
    """How many bundled E5 engines embed a batch at once: as configured; else one per usable core (at most four)
    for the terminal chat and the CLI, where an ingest is what the person waits for, and one while serving Slack or
    Discord, so an ingest leaves a core to acknowledge events and answer."""
    if settings.embedder_engines is not None:
        return settings.embedder_engines
    if settings.slack_enabled or settings.discord_enabled:
        return 1
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(MAX_DEFAULT_ENGINES, usable))


async def build_embedder(settings: Settings, closers: list[Callable[[], Awaitable[None]]]) -> Embedder:
    """The bundled E5 (no network), or the configured OpenAI-compatible endpoint with its dimension resolved."""
    if not settings.embeddings_enabled:
        return E5Embedder(engines=e5_engines(settings))
    from pipeline.llm.breaker import CircuitBreaker
    from storage.remote_embedder import OpenAIEmbedder

    assert settings.embeddings_base_url is not None
    remote = OpenAIEmbedder(
        model=settings.embeddings_model,
        base_url=settings.embeddings_base_url,
        api_key=settings.embeddings_api_key or settings.openai_api_key,
        dim=settings.embeddings_dim,
        batch_size=settings.embeddings_batch_size,
        timeout_s=settings.embeddings_timeout_s,
        max_retries=settings.embeddings_max_retries,
        query_deadline_s=settings.embeddings_query_deadline_s,
        deadline_s=settings.embeddings_deadline_s,
        query_prefix=settings.embeddings_query_prefix,
        passage_prefix=settings.embeddings_passage_prefix,
        breaker=CircuitBreaker(threshold=settings.llm_breaker_failures, cooldown_s=settings.llm_breaker_cooldown_s),
    )
    closers.append(remote.close)
    try:
        await remote.resolve_dim()  # configured, or one probe: the index is built for this size
    except EmbeddingUnavailable as exc:
        raise EmbeddingUnavailable(
            exc.failure, f"{exc.detail}; set DOCBOT_EMBEDDINGS_DIM to start without asking the endpoint"
        ) from None
    return remote


def crawl_limits(settings: Settings, *, max_pages: int | None = None, max_depth: int | None = None) -> CrawlLimits:
    """How a site is crawled, from the settings (the CLI may lower the page and depth limits for one ingest)."""
    return CrawlLimits(
        user_agent=settings.crawl_user_agent,
        max_pages=max_pages if max_pages is not None else settings.crawl_max_pages,
        max_depth=max_depth if max_depth is not None else settings.crawl_max_depth,
        concurrency=settings.crawl_concurrency,
        delay_s=settings.crawl_delay_s,
        timeout_s=settings.crawl_timeout_s,
        max_page_bytes=int(settings.crawl_max_page_mb * 1024 * 1024),
    )


async def build_app(
    settings: Settings, *, embedder: Embedder | None = None, check_embeddings: bool = True
) -> App:
    """Build every part from the settings. `embedder` is for tests that want a tiny deterministic one.
    `check_embeddings=False` (only `docbot ingest`) starts even when the index holds another embedder's vectors,
    so that ingesting the sources again can re-embed them."""
    keep_loop_responsive()
    db = Database(settings.effective_database_url)
    closers: list[Callable[[], Awaitable[None]]] = [db.dispose]
    try:
        await db.migrate()
        # one embedder for search, cache and ingest; the memo lets the cache and the search share a question's vector
        if embedder is None:
            embedder = await build_embedder(settings, closers)
        embedder = QueryMemo(embedder)
        # vectors of another model or dimension in the index: refuse to serve rather than compare two spaces
        if check_embeddings:
            await check_space(db, embedder.model_name, embedder.dim, remember_in=snapshot_dir(settings, embedder))
        index = await build_index(settings, db, embedder.dim)
        if hasattr(index, "close"):
            closers.append(index.close)
        retriever = HybridRetriever(
            db, embedder, index, snapshot_dir=snapshot_dir(settings, embedder), freeze_snapshots=True
        )
        closers.append(retriever.close)  # its background embedding stops before the embedder, index and database
        await retriever.load()
        strategies, chat = llm_strategies(settings)
        if chat is not None:
            closers.append(chat.close)
        agents = build_agents(
            retriever,
            embedder=ZerosOnFailure(embedder) if settings.embeddings_enabled else embedder,
            strategies=strategies,
            answerability_threshold=settings.answerability_threshold,
        )
        runner = PipelineRunner(
            agents,
            settings.role_limits,
            max_waiting=settings.role_queue_limit,
            role_timeout_s=settings.role_timeout_s,
            max_process_count=settings.max_process_count,
            max_research_rounds=settings.max_research_rounds,
            max_regenerate_rounds=settings.max_regenerate_rounds,
        )
        metrics = Metrics()
        metrics.watch_roles(lambda: {r.value: (lim.running, lim.waiting) for r, lim in runner.limits().items()})
        if chat is not None:
            metrics.watch_llm_breaker(chat.breaker.status)
        runs = RunStore(db)
        cache = SemanticCache(db, embedder, threshold=settings.cache_similarity, answerer=answerer_of(settings))
        detect = asker_language()
        service = ConversationService(
            settings=settings,
            conversations=ConversationStore(db),
            runs=runs,
            actions=ActionStore(db),
            feedback=FeedbackStore(db),
            runner=runner,
            usage=UsageGuard(
                settings.user_rate_limit,
                settings.workspace_rate_limit,
                settings.daily_token_budget,
                ledger=SqlTokenLedger(db),  # the daily budget is shared by every replica
            ),
            metrics=metrics,
            cache=cache,
            corpus_version=lambda collections: corpus_version(db, collections),
            cache_language=detect,
            message_language=detect,  # notices in the language of the message they answer
            source_facts=lambda doc_ids: source_facts(db, doc_ids),
        )
        team: TeamAnswerParts | None = None

        async def documents_changed() -> None:
            await retriever.reload()
            if team is not None:  # approved answers relying on a changed section go back to review
                await team.answers.on_documents_changed()

        ingestor = Ingestor(db, embedder, index, on_change=documents_changed, crawl=crawl_limits(settings))
        team = build_team_answers(settings, db, ingestor)
    except BaseException:
        for closer in reversed(closers):
            with contextlib.suppress(Exception):
                await closer()
        raise
    return App(
        settings=settings,
        db=db,
        embedder=embedder,
        index=index,
        retriever=retriever,
        runner=runner,
        service=service,
        runs=runs,
        ingestor=ingestor,
        metrics=metrics,
        cache=cache,
        team=team,
        agents=agents,
        _closers=closers,
    )

