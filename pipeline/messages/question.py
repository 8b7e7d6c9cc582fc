"""Checks on what a person typed, before anything else sees it."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from enum import StrEnum


class InputProblem(StrEnum):
    EMPTY = "empty_question"
    TOO_LONG = "question_too_long"
    UNREADABLE = "unreadable_input"


@dataclass(frozen=True, slots=True)
class CheckedInput:
    text: str
    problem: InputProblem | None = None


_KEEP_CONTROLS = {"\n", "\t"}
# Bidirectional formatting marks are legitimate in right-to-left text; other format characters are noise.
_BIDI_MARKS = {"\u200e", "\u200f", "\u061c", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067",
               "\u2068", "\u2069", "\u200d"}


def _keep(ch: str) -> bool:
    if ch in _KEEP_CONTROLS or ch in _BIDI_MARKS:
        return True
    category = unicodedata.category(ch)
    return not (category.startswith("C") and category != "Co")


def check_question(raw: str, *, max_chars: int) -> CheckedInput:
    """Normalise a question; report empty, too long, or unreadable (binary junk) input.

    Emoji, right-to-left scripts and private-use characters pass; control characters and lone surrogates are removed.
    """
    text = raw.encode("utf-8", "replace").decode("utf-8")
    kept = "".join(ch for ch in unicodedata.normalize("NFC", text) if _keep(ch))
    removed = len(text) - len(kept)
    stripped = " ".join(kept.split())
    if not stripped:
        return CheckedInput("", InputProblem.UNREADABLE if removed else InputProblem.EMPTY)
    if removed > max(8, len(text) // 5) or stripped.count("\ufffd") > max(3, len(stripped) // 5):
        return CheckedInput(stripped, InputProblem.UNREADABLE)
    if len(stripped) > max_chars:
        return CheckedInput(stripped[:max_chars], InputProblem.TOO_LONG)
    return CheckedInput(stripped)
