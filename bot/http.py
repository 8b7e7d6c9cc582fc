"""The process's HTTP server: `/healthz`, `/readyz`, `/metrics`; platform adapters add their own routes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.metrics import Metrics

ReadyCheck = Callable[[], Awaitable[str | None]]  # None when ready, else the reason


def build_http_app(metrics: Metrics, ready: ReadyCheck) -> web.Application:
    app = web.Application()

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(_: web.Request) -> web.Response:
        problem = await ready()
        if problem is None:
            return web.json_response({"status": "ready"})
        return web.json_response({"status": "not ready", "reason": problem}, status=503)

    async def prometheus(_: web.Request) -> web.Response:
        body = generate_latest(metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", prometheus)
    return app


async def start_http(app: web.Application, host: str, port: int) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    return runner
