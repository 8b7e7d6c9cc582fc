"""Multi-workspace mode: install through OAuth into stores on a database, then answer with that workspace's token."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from sqlalchemy.ext.asyncio import create_async_engine

from adapters.slack.app import SlackAdapter
from adapters.slack.fake_web_api import FakeSlackAPI
from adapters.slack.installations import database_oauth_stores
from bot.adapter_options import slack_options
from tests.adapters.slack.conftest import FakeHandler, make_settings, mention_event, signed_headers, wire

pytestmark = pytest.mark.integration


async def test_install_then_answer_with_the_installed_token(slack_api: FakeSlackAPI, tmp_path: Path) -> None:
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'oauth.db'}")
    installations, states = await database_oauth_stores(engine, "111.222")
    settings = make_settings(slack_api, slack_bot_token=None, slack_client_id="111.222",
                             slack_client_secret="client-secret-xyz")
    handler = FakeHandler(settings)
    adapter = SlackAdapter(slack_options(settings), installation_store=installations, oauth_state_store=states)
    wired = await wire(adapter, handler, tmp_path)
    web_app = web.Application()
    adapter.add_routes(web_app)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{base}/slack/install") as install:
                page = await install.text()
                cookie = install.headers["Set-Cookie"].split(";")[0]
            state = re.search(r"state=([0-9a-f-]+)", page)
            assert install.status == 200 and state is not None and "client_id=111.222" in page
            async with session.get(f"{base}/slack/oauth_redirect", params={"code": "c0de", "state": state.group(1)},
                                   headers={"Cookie": cookie}) as redirect:
                assert redirect.status == 200, await redirect.text()
            assert await installations.async_find_bot(enterprise_id=None, team_id="T0001") is not None
            ts = slack_api.seed("C1", "<@UBOT0001> hello", user="UALICE")
            raw = __import__("json").dumps(mention_event(ts, "<@UBOT0001> hello"))
            async with session.post(f"{base}/slack/events", data=raw, headers=signed_headers(raw)) as event:
                assert event.status == 200
            await wired.settle(adapter)
    finally:
        await adapter.close()
        await wired.close()
        await runner.cleanup()
        await engine.dispose()
    assert {c.token for c in slack_api.calls_to("chat.postMessage")} == {"xoxb-installed-token"}
    assert len(slack_api.bot_messages("C1", thread_ts=ts)) == 1
