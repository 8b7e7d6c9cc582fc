"""Structured logging for the whole process (structlog rendering stdlib records), with secrets redacted.

Log calls use fields (`extra={...}`); the text of users' messages is never logged. Three guards make that true for
lines we do not write ourselves:

- tracebacks are rendered without local variables and without exception messages (types, files, lines, functions):
  an exception's message or a frame's locals may hold a token, a request body or a person's question;
- third-party libraries that see payloads (slack-bolt, slack_sdk, discord.py, aiohttp, pdfminer) keep only the head
  of their line, before the first colon or parenthesis, where they put bodies, headers and arguments;
- every rendered line is redacted once more for configured secret values, after rendering.
"""

from __future__ import annotations

import logging
import re
import sys
import traceback
from collections.abc import Iterable
from types import TracebackType
from typing import Any

import structlog

PAYLOAD_LOGGERS = ("slack_bolt", "slack_sdk", "discord", "aiohttp", "websockets", "pdfminer")
_HEAD = re.compile(r"^[^:(\[{\n=]*")
HEAD_CHARS = 120


class RedactSecrets(logging.Filter):
    """Replaces any configured secret value that slipped into a log record with `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if s and len(s) >= 6]

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets:
            return True
        message = record.getMessage()
        if any(secret in message for secret in self._secrets):
            record.msg, record.args = self.redact(message), None
        for key, value in list(record.__dict__.items()):
            if isinstance(value, str) and any(secret in value for secret in self._secrets):
                record.__dict__[key] = self.redact(value)
        return True


class LibraryLineHead(logging.Filter):
    """Keeps only the head of a payload-seeing library's line ("Invalid request signature detected"), dropping
    what follows the first colon or bracket (bodies, headers, arguments), at every level."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(PAYLOAD_LOGGERS):
            return True
        try:
            message = record.getMessage()
        except Exception:
            message = str(record.msg)
        head = (_HEAD.match(message) or _HEAD.match(""))
        record.msg, record.args = (head.group(0) if head else "").strip()[:HEAD_CHARS] or "(withheld)", None
        return True


def safe_traceback(exc_info: tuple[type[BaseException], BaseException, TracebackType | None]) -> str:
    """A traceback with frames (file, line, function) and exception types only: no messages, no locals, no source
    lines' values. Chained causes are included the same way."""
    lines: list[str] = []
    exc: BaseException | None = exc_info[1]
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        lines.append("Traceback (most recent call last):")
        for frame in traceback.extract_tb(exc.__traceback__):
            lines.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}')
        lines.append(f"{type(exc).__module__}.{type(exc).__qualname__} (message withheld)")
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
        if exc is not None:
            lines.append("caused by / during handling of:")
    return "\n".join(lines)


def _safe_exceptions(_: Any, __: str, event_dict: structlog.types.EventDict) -> structlog.types.EventDict:
    """structlog processor: render `exc_info` with `safe_traceback` into `exception`."""
    exc_info = event_dict.pop("exc_info", None)
    if exc_info:
        if exc_info is True:
            exc_info = sys.exc_info()
        elif isinstance(exc_info, BaseException):
            exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
        if exc_info[0] is not None:
            event_dict["exception"] = safe_traceback(exc_info)
    event_dict.pop("stack_info", None)
    return event_dict


class RedactingFormatter(structlog.stdlib.ProcessorFormatter):
    """Redacts configured secrets from the fully rendered line (tracebacks included)."""

    def __init__(self, redact: RedactSecrets, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._redact = redact

    def format(self, record: logging.LogRecord) -> str:
        return self._redact.redact(super().format(record))


def configure_logging(level: str = "INFO", *, json_output: bool = False, secrets: Iterable[str] = ()) -> None:
    shared: list[structlog.types.Processor] = [
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if json_output
        else structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)
    )
    redact = RedactSecrets(secrets)
    formatter = RedactingFormatter(
        redact,
        foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder()],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, _safe_exceptions, renderer],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    handler.addFilter(LibraryLineHead())
    handler.addFilter(redact)
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level.upper())
    # Loggers made with structlog.get_logger go through the same stdlib handler, level and redaction.
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    # pdfminer logs each object of a PDF it parses at DEBUG (about 90,000 lines for a 17-page manual), contents included
    for noisy in ("aiosqlite", "asyncio", "httpx", "httpcore", "openai", "discord.gateway", "alembic.runtime", "bm25s",
                  "pdfminer"):  # fmt: skip
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
