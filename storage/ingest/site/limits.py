"""How a site is crawled (set from `bot.settings`); kept apart so that importing it loads no HTTP or HTML code."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_USER_AGENT = "docbot/0.1 (documentation crawler)"  # DOCBOT_CRAWL_USER_AGENT can add a contact URL


@dataclass(frozen=True, slots=True)
class CrawlLimits:
    user_agent: str = DEFAULT_USER_AGENT
    max_pages: int = 5000  # pages requested per crawl; the rest wait for the next one
    max_depth: int = 20  # link hops from the start page or a sitemap entry
    concurrency: int = 4  # requests in flight per host
    delay_s: float = 0.0  # between request starts to one host; robots.txt's crawl delay can only raise it
    timeout_s: float = 20.0  # one request, body included
    max_page_bytes: int = 10 * 1024 * 1024
