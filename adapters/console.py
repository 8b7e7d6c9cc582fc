"""The terminal chat: one thread at a time, suggested actions as numbered choices.

It is the adapter a newcomer meets first (`make run`), so it renders replies the way the platforms do: the answer,
its sources, then the choices.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from rich.console import Console
from rich.markup import escape

from adapters.tables import Table, aligned, rewrite_tables
from pipeline.locales import texts
from pipeline.messages import LOCAL_PLATFORM, ConversationHandler, Inbound, InboundKind, Reply, ReplyAction, ReplyKind

PLATFORM = LOCAL_PLATFORM
WORKSPACE = "local"
CHANNEL = "terminal"

_BOLD = re.compile(r"\*\*(.+?)\*\*")


INDENT = 2  # every line of a reply is indented by this much


def render_reply(reply: Reply, width: int = 80) -> str:
    """Rich markup for a reply: text (tables aligned to fit `width`, the terminal's, code blocks indented without
    their fences), sources, numbered choices."""
    lines: list[str] = []
    fenced = False

    def fitted(table: Table) -> list[str]:
        return aligned(table, line_width=width - INDENT)

    for line in rewrite_tables(reply.text, fitted).splitlines():
        if line.strip().startswith(("```", "~~~")):  # a code block: its lines indented as they are, no fences
            fenced = not fenced
            continue
        if fenced:
            lines.append(f"      [cyan]{escape(line)}[/cyan]")
            continue
        safe = _BOLD.sub(r"[bold]\1[/bold]", escape(line))
        lines.append(f"  [dim]│[/dim] [italic]{safe[2:]}[/italic]" if line.startswith("> ") else f"  {safe}")
    if reply.note:
        lines.append(f"  [dim]{escape(reply.note)}[/dim]")
    if reply.citations:
        lines.append("")
        for c in reply.citations:
            trail = " › ".join(c.crumbs) if c.crumbs else c.title
            dated = f" · {texts(reply.language).source_updated.format(date=c.changed_on)}" if c.changed_on else ""
            lines.append(f"  [cyan][{c.number}][/cyan] {escape(trail)}{escape(dated)}  [dim]{escape(c.url)}[/dim]")
    if reply.actions:
        lines.append("")
        for number, action in enumerate(reply.actions, start=1):
            lines.append(f"  [bold]{number}[/bold]) {escape(action.label)}")
    return "\n".join(lines)


class ConsoleChat:
    """Reads questions from the terminal and prints replies; `/new` starts a new thread, `/quit` leaves."""

    def __init__(
        self,
        handler: ConversationHandler,
        *,
        console: Console | None = None,
        read_line: Callable[[str], str] | None = None,
        user_name: str = "you",
        before_answer: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """`before_answer` is awaited before each question or choice is handled: the documentation still being read
        in the background (`docbot run --ingest`) holds the answer, not the prompt."""
        self._handler = handler
        self._before_answer = before_answer
        self._console = console or Console()
        self._read_line = read_line or self._console.input
        self._user = user_name
        self._counter = itertools.count(1)
        self._thread: str | None = None
        self._actions: list[ReplyAction] = []

    def _inbound(self, text: str, *, kind: InboundKind = InboundKind.MESSAGE, action_id: str | None = None) -> Inbound:
        message_id = f"m{next(self._counter)}-{uuid.uuid4().hex[:8]}"
        return Inbound(
            platform=PLATFORM,
            workspace_id=WORKSPACE,
            channel_id=CHANNEL,
            thread_id=self._thread,
            message_id=message_id,
            user_id=self._user,
            user_name=self._user,
            text=text,
            ts=datetime.now(UTC),
            kind=kind,
            action_id=action_id,
        )

    async def ask(self, text: str) -> Reply | None:
        inbound = self._inbound(text)
        if self._thread is None:
            self._thread = inbound.message_id
        if self._before_answer is not None:
            await self._before_answer()
        reply = await self._handler.handle_message(inbound)
        self._show(reply)
        return reply

    async def choose(self, number: int) -> Reply | None:
        if not 1 <= number <= len(self._actions):
            self._console.print(f"  [yellow]Choose a number from 1 to {len(self._actions)}.[/yellow]")
            return None
        action = self._actions[number - 1]
        if self._before_answer is not None:
            await self._before_answer()
        outcome = await self._handler.handle_action(
            self._inbound(action.label, kind=InboundKind.ACTION, action_id=action.id)
        )
        if not outcome.accepted:
            self._console.print(f"  [yellow]{escape(outcome.notice or '')}[/yellow]")
            return None
        self._console.print(f"  [dim]✓ {escape(outcome.chosen_label)}[/dim]")
        if outcome.notice:
            self._console.print(f"  {escape(outcome.notice)}")
        self._actions = [a for a in self._actions if a.kind.value not in ("search", "rephrase")]
        if outcome.reply is not None:
            self._show(outcome.reply)
        return outcome.reply

    def _show(self, reply: Reply | None) -> None:
        if reply is None:
            return
        self._console.print()
        self._console.print(render_reply(reply, self._console.width))
        self._console.print()
        if reply.kind is not ReplyKind.NOTICE:
            self._actions = list(reply.actions)

    PROMPT = "[bold green]you>[/bold green] "

    async def loop(self) -> None:
        self._console.print(
            "[bold]docbot[/bold] — ask about the documentation. "
            "Type a number to pick a choice, [bold]/new[/bold] for a new thread, [bold]/quit[/bold] to leave."
        )
        while True:
            try:
                line = (await asyncio.to_thread(self._read_line, self.PROMPT)).strip()
            except (EOFError, KeyboardInterrupt):
                self._console.print()
                return
            if not line:
                continue
            if line in ("/quit", "/exit"):
                return
            if line == "/new":
                self._thread, self._actions = None, []
                self._console.print("  [dim]new thread[/dim]")
                continue
            if line.isdigit() and self._actions:
                await self.choose(int(line))
                continue
            await self.ask(line)
