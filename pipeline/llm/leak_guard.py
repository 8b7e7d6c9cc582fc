"""An output check: a model's reply must not repeat its system prompt.

Whatever a prompt says, a model can be talked into quoting it. This check does not rely on the model: a reply that
shares a run of eight words with the request's system prompt, or carries one of its identifiers (long tokens with
digits, such as an internal marker), is rejected, and the role falls back to its offline strategy.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
_IDENTIFIER = re.compile(r"[\w-]*\d[\w-]*")
RUN = 8  # words in a row that count as quoting
MIN_IDENTIFIER = 10  # characters; shorter tokens with digits ("2", "e-2041") occur in ordinary answers


def _runs(text: str, n: int) -> set[tuple[str, ...]]:
    words = [w.casefold() for w in _WORD.findall(text)]
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def repeats_system_prompt(output: str, system: str, *, run: int = RUN) -> bool:
    """True when `output` quotes `system`: a shared run of `run` words, or a long identifier of it."""
    if not output or not system:
        return False
    identifiers = {t for t in _IDENTIFIER.findall(system) if len(t) >= MIN_IDENTIFIER}
    if any(identifier in output for identifier in identifiers):
        return True
    return bool(_runs(output, run) & _runs(system, run))
