"""What POST /slack/events checks before bolt sees a request: the signature on the raw bytes, where malformed headers
are a refusal (401) and never an exception, then the shape of the body, where a field docbot or bolt reads having
another type than Slack sends is a refusal (400) and never a traceback. Each refusal is one short log line, and a
flood of them a few lines (`RefusalLog`).

Only the fields that are read are checked, and only on the payload kinds that are read (messages, mentions, our
buttons' presses, slash commands): Slack adds fields over time, and other events (a `user_change`, whose `user` is an
object) must keep being acknowledged.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections import Counter
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from pydantic import BaseModel, ConfigDict, ValidationError
from slack_sdk.signature import SignatureVerifier

TIMESTAMP_HEADER = "X-Slack-Request-Timestamp"
SIGNATURE_HEADER = "X-Slack-Signature"
SIGNATURE_CHARS = len("v0=") + 64  # v0= and a hex SHA-256
MESSAGE_EVENTS = frozenset({"app_mention", "message"})


class Refusal(StrEnum):
    BAD_SIGNATURE = "bad signature"
    UNREADABLE_BODY = "unreadable body"
    UNEXPECTED_SHAPE = "unexpected shape"


def signature_valid(verifier: SignatureVerifier, raw: bytes, headers: Mapping[str, str]) -> bool:
    """Slack's v0 signature over the raw body, within the verifier's five minutes. Headers that cannot be a
    signature (letters or a float for the timestamp, non-ASCII, another scheme) are simply not valid."""
    timestamp = headers.get(TIMESTAMP_HEADER, "")
    signature = headers.get(SIGNATURE_HEADER, "")
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12):
        return False
    if not (signature.isascii() and signature.startswith("v0=") and len(signature) == SIGNATURE_CHARS):
        return False
    try:
        return verifier.is_valid(raw, timestamp, signature)
    except (ValueError, TypeError):
        return False


class _Read(BaseModel):
    """The fields read from a payload object; any other field passes unchecked."""

    model_config = ConfigDict(extra="allow", strict=True)


class _Authorization(_Read):
    team_id: str | None = None
    user_id: str | None = None
    is_bot: bool | None = None


class _MessageEvent(_Read):
    type: str
    channel: str | None = None
    ts: str | None = None
    event_ts: str | None = None
    text: str | None = None
    user: str | None = None
    bot_id: str | None = None
    subtype: str | None = None
    thread_ts: str | None = None
    channel_type: str | None = None
    team: str | None = None


class _Envelope(_Read):
    type: str | None = None
    team_id: str | None = None
    event_id: str | None = None
    challenge: str | None = None
    event: dict[str, Any] | None = None
    authorizations: list[_Authorization] | None = None


class _Action(_Read):
    action_id: str | None = None
    value: str | None = None
    action_ts: str | None = None
    block_id: str | None = None


class _Interaction(_Read):
    type: str
    actions: list[_Action] | None = None
    container: dict[str, Any] | None = None
    message: dict[str, Any] | None = None
    channel: dict[str, Any] | None = None
    user: dict[str, Any] | None = None
    team: dict[str, Any] | None = None


def body_problem(raw: bytes, content_type: str) -> Refusal | None:
    """None when the body is one Slack sends, as far as docbot reads it; otherwise why not."""
    if content_type == "application/json":
        return _json_problem(raw)
    if content_type == "application/x-www-form-urlencoded":
        return _form_problem(raw)
    return Refusal.UNREADABLE_BODY


def _json_problem(raw: bytes) -> Refusal | None:
    try:
        body = json.loads(raw)
    except ValueError:
        return Refusal.UNREADABLE_BODY
    if not isinstance(body, dict):
        return Refusal.UNEXPECTED_SHAPE
    try:
        envelope = _Envelope.model_validate(body)
        if envelope.event is not None and envelope.event.get("type") in MESSAGE_EVENTS:
            _MessageEvent.model_validate(envelope.event)
    except ValidationError:
        return Refusal.UNEXPECTED_SHAPE
    return None


def _form_problem(raw: bytes) -> Refusal | None:
    try:
        form = urllib.parse.parse_qs(raw.decode("utf-8"), strict_parsing=bool(raw))
    except (UnicodeDecodeError, ValueError):
        return Refusal.UNREADABLE_BODY
    if "payload" not in form:
        return None  # a slash command: every field is text
    try:
        payload = json.loads(form["payload"][0])
    except ValueError:
        return Refusal.UNREADABLE_BODY
    if not isinstance(payload, dict):
        return Refusal.UNEXPECTED_SHAPE
    if payload.get("type") == "block_actions":
        try:
            _Interaction.model_validate(payload)
        except ValidationError:
            return Refusal.UNEXPECTED_SHAPE
    return None


class RefusalLog:
    """One short warning per refused request, at most `limit` (`limits` notation) per kind of refusal: a flood of
    forged or broken requests writes a few lines, the next of which says how many were left out."""

    def __init__(self, logger: logging.Logger, limit: str = "5/10 seconds") -> None:
        self._log = logger
        self._item = parse(limit)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())
        self._left_out: Counter[Refusal] = Counter()

    def refused(self, refusal: Refusal, **fields: Any) -> None:
        if not self._limiter.hit(self._item, refusal.value):
            self._left_out[refusal] += 1
            return
        left_out = self._left_out.pop(refusal, 0)
        extra = {**fields, "left_out_before": left_out} if left_out else fields
        self._log.warning("slack request refused: %s", refusal.value, extra=extra)
