"""`docbot ...`: ask, chat, ingest, trace, doctor, run.

User mistakes end with a clear message and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from adapters.console import ConsoleChat, render_reply
from bot.answers.review import review_text
from bot.app import App, build_app
from bot.doctor import doctor_report
from bot.logs import configure_logging
from bot.output_contract import reply_contract
from bot.settings import Settings, load_settings
from bot.settings_problems import SettingsInvalid
from pipeline.messages import LOCAL_PLATFORM, Inbound, Reply, ReplyKind
from storage.answers.lifecycle import Step
from storage.answers.model import AnswerStatus, Outcome, Reviewer, TeamAnswer
from storage.errors import StorageError
from storage.ingest.model import IngestProgress, IngestReport
from storage.ingest.site.limits import CrawlLimits

cli = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="docbot: answers from your documentation in Slack, Discord and the terminal.",
)
out = Console()
err = Console(stderr=True)
log = logging.getLogger(__name__)

T = TypeVar("T")

EXIT_USAGE = 2
EXIT_FAILURE = 1


class UserError(Exception):
    """A mistake the person can fix; printed without a traceback."""


def _settings(verbose: bool, **overrides: Any) -> Settings:
    try:
        settings = load_settings(**{k: v for k, v in overrides.items() if v is not None})
    except SettingsInvalid as exc:  # one line per mistake: the variable, the problem, an example
        for problem in exc.problems:
            err.print(f"[red]error:[/red] {escape(problem)}", soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    level = "INFO" if verbose else "WARNING"
    configure_logging(level, json_output=settings.log_json, secrets=_secret_values(settings))
    return settings


def _fail(message: str) -> NoReturn:
    err.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(EXIT_USAGE)


def _secret_values(settings: Settings) -> list[str]:
    values = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if hasattr(value, "get_secret_value"):
            values.append(value.get_secret_value())
    return values


def _run(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    from storage.vector_index import VectorIndexUnavailable

    try:
        return asyncio.run(main())
    except (UserError, StorageError, VectorIndexUnavailable) as exc:  # a service the settings name is unusable
        err.print(f"[red]error:[/red] {escape(' '.join(str(exc).split()))}", soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


async def _with_app(settings: Settings, body: Callable[[App], Awaitable[T]], *, check_embeddings: bool = True) -> T:
    app = await build_app(settings, check_embeddings=check_embeddings)
    try:
        return await body(app)
    finally:
        await app.close()


def _console_inbound(text: str, thread: str | None) -> Inbound:
    message_id = uuid.uuid4().hex[:12]
    return Inbound(
        platform=LOCAL_PLATFORM,
        workspace_id="local",
        channel_id="cli",
        thread_id=thread,
        message_id=message_id,
        user_id="cli",
        user_name="you",
        text=text,
        ts=datetime.now(UTC),
    )


VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Log at INFO to stderr.")]
DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", help="Folder of the SQLite database.")]


@cli.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the output contract as JSON.")] = False,
    thread: Annotated[str | None, typer.Option(help="Continue this console thread id.")] = None,
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Ask one question and print the answer."""
    settings = _settings(verbose, data_dir=data_dir)

    async def body(app: App) -> Reply | None:
        await app.warm_up()  # a cold language detector must not eat the question's deadline (before the clock starts)
        started = datetime.now(UTC)
        reply = await app.service.handle_message(_console_inbound(question, thread))
        if as_json:
            contract = reply_contract(reply, started=started, finished=datetime.now(UTC))
            out.print_json(json.dumps(contract, ensure_ascii=False))
        elif reply is not None:
            out.print(render_reply(reply, out.width))
        return reply

    reply = _run(lambda: _with_app(settings, body))
    if reply is None or reply.kind is ReplyKind.NOTICE:
        raise typer.Exit(EXIT_USAGE if reply is not None and reply.reason in _USER_REASONS else EXIT_FAILURE)


_USER_REASONS = {"empty_question", "question_too_long", "unreadable_input"}


@cli.command()
def chat(data_dir: DataDirOpt = None, verbose: VerboseOpt = False) -> None:
    """A conversation in the terminal; choices are numbered."""
    settings = _settings(verbose, data_dir=data_dir)
    _run(lambda: _with_app(settings, _chat))


async def _chat(app: App, reading: ReadingDocs | None = None) -> None:
    """The terminal chat; the language detector warms up while the person types the first question (and the
    documentation is read, when `reading`)."""
    warming = asyncio.create_task(app.warm_up())
    gate = reading.before_answer if reading is not None else None
    try:
        if reading is not None:
            reading.started()
        await ConsoleChat(app.service, console=out, before_answer=gate).loop()
    finally:
        if reading is not None:
            await reading.stop()
        await warming


@cli.command()
def ingest(
    sources: Annotated[
        list[str] | None,
        typer.Argument(help="Folders, files (Markdown/reST/HTML/text/JSON/JSONL), or site URLs to crawl "
                            "(https://docs.example.com/guide/ or .../sitemap.xml); none: DOCBOT_INGEST_SOURCES."),
    ] = None,
    collection: Annotated[str, typer.Option(help="Document collection.")] = "default",
    base_url: Annotated[str | None, typer.Option(help="Base URL that turns paths into citation links.")] = None,
    max_pages: Annotated[
        int | None, typer.Option(min=1, help="Pages requested per site crawl (default DOCBOT_CRAWL_MAX_PAGES).")
    ] = None,
    max_depth: Annotated[
        int | None, typer.Option(min=0, help="Link hops from the start page (default DOCBOT_CRAWL_MAX_DEPTH).")
    ] = None,
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Add or refresh documents (incremental: unchanged documents cost nothing; a site is re-crawled with
    conditional requests)."""
    from bot.app import crawl_limits

    settings = _settings(verbose, data_dir=data_dir)
    crawl = crawl_limits(settings, max_pages=max_pages, max_depth=max_depth)
    inputs = list(sources or settings.ingest_sources)
    if not inputs:
        _fail("name what to ingest (a folder, a file or a site URL), or set DOCBOT_INGEST_SOURCES")

    async def body(app: App) -> None:
        await _ingest(app, inputs, collection, base_url or settings.docs_base_url, crawl)
        await app.retriever.wait_for_titles()  # the title level of what was added, saved for the next start

    # an index of another embedder's vectors does not stop an ingest: it is how they get re-embedded
    _run(lambda: _with_app(settings, body, check_embeddings=False))


def progress_line(state: IngestProgress) -> str:
    """The counts a person watches during an ingest, with the rate."""
    return f"{state.line()}; {state.rate:.1f}/s"


async def _ingest(
    app: App, sources: list[str], collection: str, base_url: str | None, crawl: CrawlLimits | None = None
) -> None:
    with Progress(
        TextColumn("[bold]ingesting[/bold]"),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task("", total=None)

        def on_progress(state: IngestProgress) -> None:
            progress.update(task, completed=state.settled, total=max(state.found, 1),
                            description=escape(progress_line(state)))  # fmt: skip

        report = await _ingest_report(app, sources, collection, base_url, on_progress, crawl)
    for crawled in report.crawls:
        out.print(escape(crawled.summary()))
    out.print(report.summary())
    for line in _problem_lines(report):
        err.print(line)
    if report.failed:
        raise UserError(_failed_message(report))


async def _ingest_report(
    app: App,
    sources: list[str],
    collection: str,
    base_url: str | None,
    on_progress: Callable[[IngestProgress], None],
    crawl: CrawlLimits | None = None,
) -> IngestReport:
    from storage.ingest.errors import IngestError
    from storage.vector_index import VectorIndexUnavailable

    try:
        return await app.ingest(
            sources, collection=collection, base_url=base_url, on_progress=on_progress, crawl=crawl
        )
    except IngestError as exc:
        raise UserError(str(exc)) from None
    except VectorIndexUnavailable as exc:
        raise UserError(f"{exc}; documents stored so far are kept, run the same ingest again to finish") from None


def _problem_lines(report: IngestReport) -> list[str]:
    return [f"[yellow]skipped:[/yellow] {escape(w)}" for w in report.warnings] + [
        f"[red]not ingested:[/red] {escape(f.name)}: {escape(f.reason)}" for f in report.failed
    ]


def _failed_message(report: IngestReport) -> str:
    count = len(report.failed)
    documents = "1 document was" if count == 1 else f"{count} documents were"
    return f"{documents} not ingested because the embedder failed (the rest is stored); run the same ingest again"


class ReadingDocs:
    """`docbot run --ingest` in the terminal: the documentation is read in the background while the chat is already
    open, so a newcomer gets the prompt at once instead of after the whole first ingest (the bundled embedder takes
    most of a minute over docbot's own docs/). A question asked meanwhile waits for the reading, with a line saying
    how far it got; the report is shown once, when the reading ends. A failed reading is said in the chat (the
    answers then use what was stored before), never silently."""

    def __init__(self, app: App, sources: list[str], base_url: str | None, console: Console) -> None:
        self._console = console
        self._sources = sources
        self._state: IngestProgress | None = None
        self._waiting = False
        self._shown = False
        self._task = asyncio.create_task(self._read(app, sources, base_url))
        self._task.add_done_callback(self._finished)

    async def _read(self, app: App, sources: list[str], base_url: str | None) -> list[str]:
        try:
            report = await _ingest_report(app, sources, "default", base_url, self._progress)
        except UserError as exc:
            return [f"[red]Reading the documentation failed:[/red] {escape(str(exc))}", _ANSWERS_FROM_STORED]
        lines = [f"[dim]Documentation read: {escape(report.summary())}[/dim]", *_problem_lines(report)]
        if report.failed:
            lines += [f"[red]{escape(_failed_message(report))}[/red]", _ANSWERS_FROM_STORED]
        return lines

    def _progress(self, state: IngestProgress) -> None:
        self._state = state

    def started(self) -> None:
        where = ", ".join(escape(s) for s in self._sources)
        self._console.print(f"[dim]Reading {where} in the background; ask away, answers wait for it.[/dim]")

    def _finished(self, task: asyncio.Task[list[str]]) -> None:
        """Shown at once if nobody is waiting for it (the person is at the prompt: the prompt is shown again)."""
        if not self._waiting and not task.cancelled():
            self._show(task, reprompt=True)

    def _show(self, task: asyncio.Task[list[str]], *, reprompt: bool) -> None:
        if self._shown or task.cancelled():
            return
        self._shown = True
        failure = task.exception()
        if failure is not None:  # not a mistake the person can fix (those are UserError): logged for the operator
            log.error("background ingest failed", exc_info=(type(failure), failure, failure.__traceback__))
            lines = [f"[red]Reading the documentation stopped on an unexpected error ({type(failure).__name__}, "
                     "logged).[/red]", _ANSWERS_FROM_STORED]
        else:
            lines = task.result()
        self._console.print()
        for line in lines:
            self._console.print(f"  {line}")
        if reprompt:
            self._console.print(ConsoleChat.PROMPT, end="")

    async def before_answer(self) -> None:
        """Awaited by the chat before each answer."""
        if not self._task.done():
            so_far = f" ({escape(progress_line(self._state))})" if self._state is not None else ""
            self._console.print(
                f"  [dim]Still reading the documentation{so_far}; your question is answered as soon as that is done."
                "[/dim]"
            )
            self._waiting = True
            try:
                await asyncio.wait([self._task])  # its outcome is shown, not raised: the chat goes on
            finally:
                self._waiting = False
        self._show(self._task, reprompt=False)

    async def stop(self) -> None:
        """Leaving the chat stops the reading: documents stored so far are kept, the next ingest goes on from there."""
        self._task.cancel()
        await asyncio.wait([self._task])


_ANSWERS_FROM_STORED = "Answers use what was stored before; `docbot ingest PATH` reads it again."


@cli.command()
def trace(
    conversation: Annotated[str, typer.Argument(help="A conversation id, or 'last'.")] = "last",
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Show every step of a conversation's runs: role, decision, time, waiting, tokens."""
    settings = _settings(verbose, data_dir=data_dir)

    async def body(app: App) -> None:
        found = await app.runs.trace(conversation)
        if found is None:
            raise UserError(f"no conversation {conversation!r} (try 'last')")
        for run in found.runs:
            table = Table(title=f"run {run.id} · {run.status} · {run.total_ms:.0f} ms", title_justify="left")
            for column in ("#", "role", "decision", "ms", "wait ms", "strategy", "tokens"):
                table.add_column(column)
            for hop in run.hops:
                table.add_row(
                    str(hop.seq), hop.role, hop.decision, f"{hop.duration_ms:.1f}", f"{hop.wait_ms:.1f}",
                    hop.strategy, str(hop.prompt_tokens + hop.completion_tokens),
                )
            out.print(table)

    _run(lambda: _with_app(settings, body))


@cli.command()
def doctor(data_dir: DataDirOpt = None, verbose: VerboseOpt = False) -> None:
    """Print the effective configuration (secrets masked) and what is and isn't configured."""
    settings = _settings(verbose, data_dir=data_dir)
    ok = _run(lambda: doctor_report(settings, out))
    if not ok:
        raise typer.Exit(EXIT_FAILURE)


@cli.command("eval")
def eval_command(
    qa_file: Annotated[Path | None, typer.Argument(help="JSONL question/answer pairs, or SQuAD JSON.")] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Where the JSON and Markdown reports go (default: <data dir>/eval).")
    ] = None,
    compare_reports: Annotated[
        tuple[Path, Path] | None, typer.Option("--compare", help="Show two JSON reports side by side.")
    ] = None,
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Run question/answer pairs through the whole pipeline: gold source cited, token-F1, clarification and
    refusal rates, latency."""
    from bot.evaluation import compare, evaluate, load_qa, load_report, markdown, write_report

    if compare_reports is not None:
        first, second = compare_reports
        for path in (first, second):
            if not path.is_file():
                _fail(f"no report at {path}")
        out.print(compare(load_report(first), load_report(second)))
        return
    settings = _settings(verbose, data_dir=data_dir)
    if qa_file is None or not qa_file.is_file():
        _fail(f"no question file at {qa_file}" if qa_file else "give a question file (or --compare A B)")
    try:
        pairs = load_qa(qa_file)
    except (OSError, ValueError, KeyError) as exc:
        _fail(f"cannot read {qa_file}: {exc}")

    async def body(app: App) -> None:
        await app.retriever.wait_for_titles()  # scored with every search level in place
        report = await evaluate(app, pairs, name=qa_file.stem)
        # Under the data dir by default: the one place an installation may write (the image's root is read-only).
        reports = out_dir if out_dir is not None else settings.data_dir / "eval"
        json_path, md_path = reports / f"eval-{qa_file.stem}.json", reports / f"eval-{qa_file.stem}.md"
        write_report(report, json_path, md_path)
        out.print(markdown(report))
        out.print(f"written: {json_path}, {md_path}")

    _run(lambda: _with_app(settings, body))


@cli.command()
def reindex(
    to: Annotated[str, typer.Option("--to", help="Target vector index (only 'pinecone').")] = "pinecone",
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Move the stored embeddings into another vector index without re-reading or re-embedding the sources."""
    settings = _settings(verbose, data_dir=data_dir)
    if to != "pinecone":
        _fail(f"unknown target {to!r}; the only supported target is 'pinecone'")
    if settings.pinecone_api_key is None:
        _fail("set PINECONE_API_KEY (and optionally DOCBOT_PINECONE_INDEX / DOCBOT_PINECONE_HOST) first")

    async def body() -> None:
        from storage.db import Database
        from storage.pinecone_index import PineconeIndex, reindex_from_database

        db = Database(settings.effective_database_url)
        assert settings.pinecone_api_key is not None
        target = PineconeIndex(
            api_key=settings.pinecone_api_key,
            index_name=settings.pinecone_index,
            dimension=384,
            cloud=settings.pinecone_cloud,
            region=settings.pinecone_region,
            host=settings.pinecone_host,
        )
        try:
            await db.migrate()
            report = await reindex_from_database(db, target)
        finally:
            await target.close()
            await db.dispose()
        out.print(
            f"{report.upserted} of {report.read} vectors moved to Pinecone index {settings.pinecone_index!r} "
            f"in {report.upsert_requests} requests ({report.seconds:.1f} s); "
            f"{report.skipped_wrong_dimension} skipped for a wrong dimension"
        )

    _run(body)


@cli.command()
def run(
    ingest_paths: Annotated[
        list[str] | None, typer.Option("--ingest", help="Ingest these sources first (incremental).")
    ] = None,
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Start every configured platform adapter; with none configured, start the terminal chat."""
    settings = _settings(verbose, data_dir=data_dir)
    if settings.slack_enabled and not (settings.slack_signing_secret or settings.slack_app_token):
        _fail(
            "SLACK_SIGNING_SECRET: not set, so no request could be checked as Slack's; set it for HTTP mode "
            "(Basic Information > App Credentials) or SLACK_APP_TOKEN for Socket Mode, e.g. SLACK_APP_TOKEN=xapp-..."
        )
    platforms = settings.slack_enabled or settings.discord_enabled
    if platforms and not verbose:
        configure_logging(settings.log_level, json_output=settings.log_json, secrets=_secret_values(settings))

    async def body(app: App) -> None:
        if platforms:
            if ingest_paths:
                await _ingest(app, list(ingest_paths), "default", settings.docs_base_url)
            await app.serve()
        elif ingest_paths:  # the terminal chat opens at once; the documentation is read meanwhile
            await _chat(app, ReadingDocs(app, list(ingest_paths), settings.docs_base_url, out))
        else:
            await _chat(app)

    _run(lambda: _with_app(settings, body))


outbox_cli = typer.Typer(no_args_is_help=True, help="Replies waiting to be delivered, or failed.")
cli.add_typer(outbox_cli, name="outbox")


@outbox_cli.command("list")
def outbox_list(
    failed_only: Annotated[bool, typer.Option("--failed", help="Only failed deliveries.")] = False,
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Show undelivered replies: pending ones are being retried, failed ones wait for `docbot outbox retry`."""
    settings = _settings(verbose, data_dir=data_dir)
    statuses = ["failed"] if failed_only else ["pending", "failed"]

    async def body() -> None:
        from storage.outbox import Outbox

        async with _database(settings) as db:
            entries = await Outbox(db).entries(statuses=statuses)
        table = Table(title=f"{len(entries)} undelivered", title_justify="left")
        for column in ("id", "platform", "status", "attempts", "stored", "next try", "last error"):
            table.add_column(column)
        for e in entries:
            table.add_row(
                str(e.id), e.platform, e.status, str(e.attempts), f"{e.created_at:%Y-%m-%d %H:%M}",
                f"{e.next_attempt_at:%H:%M:%S}" if e.status == "pending" else "-", escape(e.error or ""),
            )  # fmt: skip
        out.print(table)

    _run(body)


@outbox_cli.command("retry")
def outbox_retry(
    ids: Annotated[list[int] | None, typer.Argument(help="Outbox ids (default: every failed delivery).")] = None,
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Queue failed deliveries again (e.g. after inviting the bot back to a channel): the running bot posts them."""
    settings = _settings(verbose, data_dir=data_dir)

    async def body() -> int:
        from storage.outbox import Outbox

        async with _database(settings) as db:
            return await Outbox(db).retry_failed(ids or None)

    queued = _run(body)
    out.print(f"{queued} failed {'delivery' if queued == 1 else 'deliveries'} queued again; a running docbot posts "
              "them at its next sweep (within seconds)")  # fmt: skip


@contextlib.asynccontextmanager
async def _database(settings: Settings) -> AsyncIterator[Any]:
    from storage.db import Database

    db = Database(settings.effective_database_url)
    try:
        await db.migrate()
        yield db
    finally:
        await db.dispose()


# -- team answers and the digest ----------------------------------------------------------------------------------

answers_cli = typer.Typer(
    no_args_is_help=True,
    help="Team answers: what people from the team answered in threads, reviewed before the bot quotes it.",
)
cli.add_typer(answers_cli, name="answers")

AnswerIdArg = Annotated[str, typer.Argument(help="The answer's id (its first 8 characters are enough).")]


def _operator() -> Reviewer:
    """The CLI acts as the operator at the terminal (always allowed: they hold the database)."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # a container user without a passwd entry
        name = "operator"
    return Reviewer(f"cli:{name}", name)


async def _one_answer(app: App, id_or_prefix: str) -> TeamAnswer:
    found = await app.team.answers.store.find(id_or_prefix)
    if not found:
        raise UserError(f"no team answer {id_or_prefix!r} (see `docbot answers list --all`)")
    if len(found) > 1:
        raise UserError(f"{id_or_prefix!r} names {len(found)} answers; give more of the id")
    return found[0]


def _say_step(step: Step, done: str) -> None:
    answer = step.answer
    if step.outcome is Outcome.DONE:
        out.print(f"{done}: {answer.id if answer else ''}")
        if step.indexed is False:
            err.print("[yellow]the search index could not be updated now; the hourly upkeep retries[/yellow]")
        return
    state = answer.status.value if answer else "gone"
    messages = {
        Outcome.UNCHANGED: f"nothing to do: the answer is already {state}",
        Outcome.NOT_ALLOWED: f"not possible: the answer is {state}",
        Outcome.STALE: "the answer changed meanwhile; look at it again",
        Outcome.INDEX_FAILED: "the search index is unavailable: nothing was changed, try again",
        Outcome.UNKNOWN: "no such answer",
    }
    raise UserError(messages.get(step.outcome, step.outcome.value))


@answers_cli.command("list")
def answers_list(
    status: Annotated[
        list[AnswerStatus] | None, typer.Option("--status", help="Only these (default: draft and expired).")
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every status.")] = False,
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """List team answers, awaiting review by default (drafts, and approved answers sent back by an expiry)."""
    settings = _settings(verbose, data_dir=data_dir)
    wanted = None if all_ else (status or [AnswerStatus.DRAFT, AnswerStatus.EXPIRED])

    async def body(app: App) -> None:
        answers = await app.team.answers.store.list(wanted)
        if not answers:
            out.print("no team answers" + ("" if all_ else " awaiting review"))
            return
        table = Table(title_justify="left")
        for column in ("id", "status", "question", "answered by", "in", "on", "collection", "expires"):
            table.add_column(column)
        for answer in answers:
            table.add_row(
                answer.id[:8], answer.status.value, escape(_clip(answer.question, 60)), escape(answer.author_name),
                escape(f"#{answer.channel_name or answer.channel_id}"), f"{answer.answered_at:%Y-%m-%d}",
                escape(answer.collection), f"{answer.expires_at:%Y-%m-%d}" if answer.expires_at else "",
            )  # fmt: skip
        out.print(table)

    _run(lambda: _with_app(settings, body))


@answers_cli.command("show")
def answers_show(answer_id: AnswerIdArg, data_dir: DataDirOpt = None, verbose: VerboseOpt = False) -> None:
    """Show one answer in full: question, text, thread, what it relies on, and the diff that sent it back."""
    settings = _settings(verbose, data_dir=data_dir)

    async def body(app: App) -> None:
        text, citations = review_text(await _one_answer(app, answer_id))
        out.print(render_reply(Reply(ReplyKind.NOTICE, text, "en", "", citations=citations)))

    _run(lambda: _with_app(settings, body))


@answers_cli.command("approve")
def answers_approve(
    answer_id: AnswerIdArg,
    collection: Annotated[
        str | None, typer.Option(help="Index it in this collection instead of its channel's first one.")
    ] = None,
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Approve: from now on the bot answers from it, cited with its author and date."""
    settings = _settings(verbose, data_dir=data_dir)

    async def body(app: App) -> None:
        answer = await _one_answer(app, answer_id)
        _say_step(await app.team.answers.approve(answer.id, _operator(), collection=collection), "approved")

    _run(lambda: _with_app(settings, body))


@answers_cli.command("reject")
def answers_reject(
    answer_id: AnswerIdArg,
    reason: Annotated[str, typer.Option(help="Why (kept with the answer).")] = "",
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Reject a candidate, or withdraw an approved answer: it is never quoted."""
    settings = _settings(verbose, data_dir=data_dir)

    async def body(app: App) -> None:
        answer = await _one_answer(app, answer_id)
        _say_step(await app.team.answers.reject(answer.id, _operator(), reason), "rejected")

    _run(lambda: _with_app(settings, body))


@answers_cli.command("edit")
def answers_edit(
    answer_id: AnswerIdArg,
    text: Annotated[str | None, typer.Option("--answer", help="The corrected answer.")] = None,
    text_file: Annotated[
        Path | None, typer.Option("--answer-file", help="Read the corrected answer from a file.")
    ] = None,
    question: Annotated[str | None, typer.Option(help="The corrected question.")] = None,
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Correct an answer's text or question (an approved one is re-indexed at once)."""
    settings = _settings(verbose, data_dir=data_dir)
    if text_file is not None:
        try:
            text = text_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            _fail(f"cannot read {text_file}: {exc}")
    if not (text or "").strip() and not (question or "").strip():
        _fail("give --answer, --answer-file or --question")

    async def body(app: App) -> None:
        answer = await _one_answer(app, answer_id)
        step = await app.team.answers.edit(
            answer.id, _operator(), answer=(text or "").strip() or None, question=(question or "").strip() or None
        )
        _say_step(step, "edited")

    _run(lambda: _with_app(settings, body))


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@cli.command("digest")
def digest_command(
    days: Annotated[int, typer.Option(min=1, help="The period: this many days up to now.")] = 7,
    send: Annotated[bool, typer.Option("--send", help="Also post it to DOCBOT_DIGEST_CHANNEL.")] = False,
    data_dir: DataDirOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Show the docs digest: unanswered questions by meaning, stale pages, answers rated not helpful, team answers
    awaiting review."""
    settings = _settings(verbose, data_dir=data_dir)
    if send and not settings.digest_channel:
        _fail("set DOCBOT_DIGEST_CHANNEL (platform:workspace:channel) to send the digest")

    async def body(app: App) -> None:
        from bot.answers.wiring import channel_ref
        from bot.jobs.digest import build_digest, digest_replies
        from storage.outbox import Outbox, OutgoingReply

        until = datetime.now(UTC)
        digest = await build_digest(app.db, app.embedder, app.team.answers.store, since=until - timedelta(days=days),
                                    until=until)  # fmt: skip
        replies = await digest_replies(digest, app.team.desk if send else None)
        out.print(render_reply(replies[0]))
        target = channel_ref(settings.digest_channel)
        if send and target is not None:
            outbox = Outbox(app.db)
            key = f"cli:docs-gap-digest:{target.platform}:{target.channel_id}:{until.isoformat()}"
            for number, reply in enumerate(replies):
                await outbox.add(OutgoingReply(target, reply, key if number == 0 else f"{key}:review:{number}"))
            out.print(f"queued for {settings.digest_channel} ({len(replies)} messages; delivered by `docbot run`)")

    _run(lambda: _with_app(settings, body))


def main() -> None:
    cli()
