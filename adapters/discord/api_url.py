"""Where discord.py sends REST calls.

discord.py builds every REST URL, including interaction callbacks and webhook follow-ups, from the class attribute
`discord.http.Route.BASE` (the library itself rewrites it to switch API versions). There is no per-client option,
so the base is process-wide: one Discord API per process, which is what production needs, and tests point it at a
fake server on loopback. The gateway URL is not affected (tests never open the gateway).
"""

from __future__ import annotations

from discord.http import Route

DISCORD_API_URL = "https://discord.com/api/v10"


def use_api_url(url: str | None) -> str:
    """Point discord.py's REST client at `url` (None: Discord's own); returns the base now in use.

    `url` is the API root including the version, e.g. `http://127.0.0.1:8123/api/v10`.
    """
    base = (url or DISCORD_API_URL).rstrip("/")
    if not base.startswith(("https://", "http://")):
        raise ValueError(f"DISCORD_API_URL must be an http(s) URL, got {base!r}")
    Route.BASE = base
    return base


def current_api_url() -> str:
    return Route.BASE
