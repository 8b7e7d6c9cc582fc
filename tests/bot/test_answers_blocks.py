"""Issue 14, whole blocks on the production path: a small fixture page (tests/fixtures/answers) with a definition
list of status codes, numbered steps, a settings table and a code block, ingested by the app, asked through the
conversation service and rendered for the terminal, Slack and Discord.

A definition list is parsed by mdit-py-plugins' deflist (a declared dependency): the tests that need it skip with
that reason where it is not installed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.console import Console

from adapters.console import render_reply as terminal_render
from adapters.discord.render import render_reply as discord_render
from adapters.slack.blocks import render_reply as slack_render
from bot.app import App
from bot.settings import Settings
from pipeline.locales import texts
from pipeline.messages import Reply, ReplyKind
from tests.adapters.slack.block_limits import problems
from tests.bot.conftest import inbound
from tests.helpers.app_template import AppTemplate, make_template

pytestmark = pytest.mark.integration

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "answers"
needs_deflist = pytest.mark.skipif(
    importlib.util.find_spec("mdit_py_plugins") is None,
    reason="mdit-py-plugins (definition lists) is not installed: pip install -e '.[dev]'",
)


@pytest.fixture(scope="session")
def pages_template(tmp_path_factory: pytest.TempPathFactory) -> AppTemplate:
    folder = tmp_path_factory.mktemp("answers-db")

    async def ingest(app: App) -> None:
        report = await app.ingest([str(PAGES)], base_url="https://docs.example.com/")
        assert report.added == 1, report.summary()

    return asyncio.run(make_template(folder, ingest))


@pytest.fixture
async def app(pages_template: AppTemplate, tmp_path: Path) -> AsyncIterator[App]:
    built = await pages_template.build_app(Settings(data_dir=tmp_path / "data"))
    yield built
    await built.close()


async def ask(app: App, text: str) -> Reply:
    reply = await app.service.handle_message(inbound(text))
    assert reply is not None and reply.kind is ReplyKind.ANSWER, reply and reply.text
    return reply


def terminal(reply: Reply) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(terminal_render(reply))
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


def slack(reply: Reply) -> str:
    """The mrkdwn of the reply's section blocks (the text a person reads)."""
    blocks = [block for message in slack_render(reply) for block in message.blocks]
    return "\n".join(block["text"]["text"] for block in blocks if block["type"] == "section")


def slack_table_rows(reply: Reply) -> list[list[str]]:
    """The rows of the reply's table blocks (Slack shows a docs table as a table block), each checked with Slack's
    block limits."""
    messages = slack_render(reply)
    for message in messages:
        assert problems(message.text, message.blocks) == []
    return [[cell["text"] for cell in row] for m in messages for b in m.blocks if b["type"] == "table"
            for row in b["rows"]]  # fmt: skip


def discord(reply: Reply) -> str:
    return "\n".join(m.content for m in discord_render(reply, asker_id=1, sources_heading="Sources"))


async def test_what_does_a_code_mean_quotes_that_code_not_its_neighbour(app: App) -> None:
    """Issue 14: "what does ZX-42 mean?" quoted ZX-17 first."""
    reply = await ask(app, "what does ZX-42 mean?")
    assert "ZX-42" in reply.text and "licence has expired" in reply.text
    assert "ZX-17" not in reply.text and "fan is blocked" not in reply.text, reply.text
    assert reply.citations[0].url.endswith("kettle.md#status-codes")


@needs_deflist
async def test_a_definition_list_stays_whole_and_reads_as_a_list_in_every_chat(app: App) -> None:
    reply = await ask(app, "Which status codes can the display show?")
    for code, meaning in (("ZX-17", "The fan is blocked."), ("ZX-42", "The licence has expired."),
                          ("ZX-58", "The water tank is empty.")):  # fmt: skip
        assert f"- **{code}**: {meaning}" in reply.text, reply.text  # one item per term, its definition beside it
        assert f"{code}: {meaning}" in terminal(reply)  # bold in the terminal, on one line
        assert f"• *{code}*: {meaning}" in slack(reply)  # Slack mrkdwn bullet, bold term
        assert f"- **{code}**: {meaning}" in discord(reply)  # Discord renders Markdown lists


async def test_numbered_steps_stay_whole_and_in_order_in_every_chat(app: App) -> None:
    reply = await ask(app, "How do I install the controller?")
    steps = [
        "1. Switch off the power at the fuse box.",
        "2. Fix the mounting plate to the wall with the four screws.",
        "3. Clip the controller onto the plate until it clicks.",
        "4. Switch the power back on and wait for the green light.",
    ]
    for rendered in (reply.text, terminal(reply), slack(reply), discord(reply)):
        lines = [line.strip() for line in rendered.splitlines()]
        found = [next((i for i, line in enumerate(lines) if line.endswith(step)), -1) for step in steps]
        assert -1 not in found and found == sorted(found), rendered  # every step, each on its own line, in order


async def test_a_named_setting_gets_the_table_header_and_its_row_in_every_chat(app: App) -> None:
    reply = await ask(app, "what does KETTLE_KEEP_WARM do?")
    assert "| setting | default | what it does |" in reply.text and "KETTLE_KEEP_WARM" in reply.text
    assert "KETTLE_CHILD_LOCK" not in reply.text  # only the row asked about
    assert "keeps the water warm for thirty minutes" in terminal(reply) and "setting" in terminal(reply)
    rows = slack_table_rows(reply)  # a table block: the header row, then the row asked about
    assert rows[0] == ["setting", "default", "what it does"]
    assert any(row[0] == "KETTLE_KEEP_WARM" and "keeps the water warm for thirty minutes" in row[2] for row in rows)
    assert "keeps the water warm for thirty minutes" in discord(reply) and "|---" not in discord(reply)


async def test_a_code_block_stays_whole_in_every_chat(app: App) -> None:
    reply = await ask(app, "How do I reset every setting from the command line?")
    assert "```\nkettlectl reset --all\nkettlectl status\n```" in reply.text, reply.text
    assert "```\nkettlectl reset --all\nkettlectl status\n```" in discord(reply)
    assert "```\nkettlectl reset --all\nkettlectl status\n```" in slack(reply)
    shown = terminal(reply)
    assert "kettlectl reset --all\n" in shown and "```" not in shown  # indented, no fences
    assert texts("en").answer_lead_in in shown
