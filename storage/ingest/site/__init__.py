"""Crawling a documentation site: scope, robots.txt, sitemaps, fetching, page scanning, and the site as an ingest
input (`SiteReading`)."""

from storage.ingest.site.limits import DEFAULT_USER_AGENT, CrawlLimits

__all__ = ["DEFAULT_USER_AGENT", "CrawlLimits"]
