"""Abuse limits through the real service: per-user rate limit and input size with clear messages, and what the
documentation or a model writes is posted defanged (no pings, no raw HTML)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from adapters.slack.blocks import render_reply
from bot.app import App
from pipeline.locales import texts
from pipeline.messages import Inbound, Reply, ReplyKind
from tests.security.conftest import ask

pytestmark = pytest.mark.integration


def from_user(text: str, user: str) -> Inbound:
    return replace(ask(text), user_id=user)


async def test_a_person_asking_too_fast_gets_a_clear_message_and_others_are_not_affected(
    make_secure_app: Callable[..., Any],
) -> None:
    app: App = await make_secure_app(user_rate_limit="2/minute")
    replies = [await app.service.handle_message(from_user(f"How do I pair the remote? ({n})", "U-fast"))
               for n in range(3)]
    assert [r.kind for r in replies if r] == [ReplyKind.ANSWER, ReplyKind.ANSWER, ReplyKind.NOTICE]
    assert replies[2] is not None and replies[2].text == texts("en").rate_limited
    other = await app.service.handle_message(from_user("How do I pair the remote?", "U-other"))
    assert other is not None and other.kind is ReplyKind.ANSWER


async def test_an_oversized_question_is_refused_with_the_limit(make_secure_app: Callable[..., Any]) -> None:
    app: App = await make_secure_app(max_question_chars=120)
    reply = await app.service.handle_message(ask("How do I pair the remote? " + "Please help. " * 20))
    assert reply is not None and reply.kind is ReplyKind.NOTICE
    assert reply.text == texts("en").question_too_long.format(limit=120)


def slack_payload(reply: Reply) -> str:
    return json.dumps([{"text": m.text, "blocks": m.blocks} for m in render_reply(reply)], ensure_ascii=False)


async def test_pings_and_html_from_the_documentation_are_posted_inert(make_secure_app: Callable[..., Any]) -> None:
    app: App = await make_secure_app()
    reply = await app.service.handle_message(ask("How do I contact support when the television does not start?"))
    assert reply is not None and reply.kind is ReplyKind.ANSWER
    assert any("support.md" in c.url for c in reply.citations)
    assert "@here" in reply.text or "<!channel>" in reply.text or "<script>" in reply.text  # the page was quoted
    posted = slack_payload(reply)
    for live in ("<!channel>", "<!here>", "<@U0SUPPORT>", "<script", "@here", "@channel"):
        assert live not in posted, f"{live!r} would be live in Slack"
