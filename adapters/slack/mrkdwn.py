"""Neutral reply markup → Slack mrkdwn, with everything from docs or model output made inert.

Slack treats `&`, `<` and `>` as control characters (`<!here>`, `<@U123>`, `<!subteam^S1>`, `<url|label>`), so text
from documents or a language model is escaped before any of our own markup is added; plain-word broadcasts
(`@here`, `@channel`, `@everyone`) get a word joiner after the `@` so they can never notify anyone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from adapters.tables import rewrite_tables, row_wise

_WORD_JOINER = "\u2060"
_BROADCAST = re.compile(r"@(here|channel|everyone)\b", re.IGNORECASE)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_CITATION = re.compile(r"\[(\d{1,3})\]")
_SAFE_URL = re.compile(r"^(https?://|mailto:)[^\s<>|]+$", re.IGNORECASE)


def escape(text: str) -> str:
    """Escape Slack's three control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def inert(text: str) -> str:
    """Escaped and defanged: safe to show from any untrusted source."""
    return _BROADCAST.sub(lambda m: f"@{_WORD_JOINER}{m.group(1)}", escape(text))


def link(url: str, label: str) -> str:
    """`<url|label>` for http(s)/mailto URLs; just the label for anything else (no javascript:, no mentions)."""
    safe_label = inert(label).replace("|", "¦")
    if not _SAFE_URL.match(url):
        return safe_label
    return f"<{url.replace('&', '&amp;')}|{safe_label}>"


def to_mrkdwn(text: str, citation_urls: Mapping[int, str] | None = None) -> str:
    """Render the neutral markup (paragraphs, `> ` quotes, `- ` bullets, `**bold**`, `[n]`, pipe tables, code fences)
    as Slack mrkdwn; a table becomes one bullet per row naming each column (Slack has no tables)."""
    urls = citation_urls or {}
    out: list[str] = []
    fenced = False
    for line in rewrite_tables(text, row_wise).splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            out.append("```")
            continue
        if fenced:
            out.append(inert(line))
            continue
        prefix = ""
        body = line
        if line.startswith("> ") or line == ">":
            prefix, body = "> ", line[2:]
        elif line.lstrip().startswith("- "):
            indent = len(line) - len(line.lstrip())
            prefix, body = " " * indent + "• ", line.lstrip()[2:]
        rendered = _BOLD.sub(r"*\1*", inert(body))
        rendered = _CITATION.sub(lambda m: _cite(m, urls), rendered)
        out.append(prefix + rendered)
    return "\n".join(out)


def _cite(match: re.Match[str], urls: Mapping[int, str]) -> str:
    number = int(match.group(1))
    url = urls.get(number)
    return link(url, f"[{number}]") if url else match.group(0)
