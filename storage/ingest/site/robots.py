"""robots.txt, read with protego (Scrapy's parser: Google's matching rules, wildcards, crawl delay, Sitemap lines),
and what RFC 9309 says to do when it cannot be read."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storage.ingest.site.fetch import Body, Failed, Failure, Fetcher, Gone, NotModified, Skipped

if TYPE_CHECKING:
    from protego import Protego

log = logging.getLogger(__name__)



@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The rules for docbot's user agent. `reachable` is False when robots.txt could not be read (5xx, timeout,
    refused): RFC 9309 2.3.1.4 then means "disallow everything" until it can."""

    parser: Protego | None
    user_agent: str
    reachable: bool = True
    problem: str = ""

    def allows(self, url: str) -> bool:
        if not self.reachable:
            return False
        return self.parser is None or bool(self.parser.can_fetch(url, self.user_agent))

    @property
    def crawl_delay(self) -> float:
        if self.parser is None:
            return 0.0
        delay = self.parser.crawl_delay(self.user_agent)
        rate = self.parser.request_rate(self.user_agent)
        seconds = float(delay) if delay else 0.0
        if rate is not None and rate.requests:
            seconds = max(seconds, rate.seconds / rate.requests)
        return seconds

    @property
    def sitemaps(self) -> tuple[str, ...]:
        return tuple(self.parser.sitemaps) if self.parser is not None else ()


async def read_robots(fetcher: Fetcher, robots_url: str) -> RobotsRules:
    """4xx (none published): everything allowed; 5xx or unreachable: nothing allowed (RFC 9309 2.3.1.3/2.3.1.4)."""
    from protego import Protego

    ua = fetcher.user_agent
    outcome = await fetcher.get(robots_url)
    if isinstance(outcome, Body):
        text = outcome.body.decode("utf-8", errors="replace")
        return RobotsRules(Protego.parse(text), ua)
    if isinstance(outcome, Gone | Skipped | NotModified):
        return RobotsRules(None, ua)
    assert isinstance(outcome, Failed)
    if outcome.failure is Failure.HTTP_ERROR:  # 401, 403 and the other 4xx count as "none published"
        return RobotsRules(None, ua)
    log.warning("robots.txt unreachable: crawling nothing this time", extra={"url": robots_url,
                                                                           "failure": outcome.failure.value})
    return RobotsRules(None, ua, reachable=False, problem=f"{outcome.failure.value} ({outcome.detail})")
