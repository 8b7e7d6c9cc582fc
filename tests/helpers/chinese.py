"""What a test asks of a text shown to people who read Traditional Chinese."""

from __future__ import annotations

from pipeline.locales.chinese import convert


def simplified_only(text: str) -> list[str]:
    """The characters of `text` that only Simplified Chinese writes: those Simplified → Traditional (Taiwan's
    standard forms, `s2tw`) changes on their own. Looked at one by one, since in a phrase OpenCC may pick a rarer
    form of a character both scripts share (稽核 → 稽覈)."""
    return [ch for ch in text if convert(ch, "s2tw") != ch]
