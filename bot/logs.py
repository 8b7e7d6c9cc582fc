"""Structured logging for the whole process (structlog rendering stdlib records), with secrets redacted.

Log calls use fields (`extra={...}`); the text of users' messages is never logged at INFO.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable

import structlog


class RedactSecrets(logging.Filter):
    """Replaces any configured secret value that slipped into a log record with `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if s and len(s) >= 6]

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets:
            return True
        message = record.getMessage()
        if any(secret in message for secret in self._secrets):
            for secret in self._secrets:
                message = message.replace(secret, "***")
            record.msg, record.args = message, None
        for key, value in list(record.__dict__.items()):
            if isinstance(value, str) and any(secret in value for secret in self._secrets):
                for secret in self._secrets:
                    value = value.replace(secret, "***")
                record.__dict__[key] = value
        return True


def configure_logging(level: str = "INFO", *, json_output: bool = False, secrets: Iterable[str] = ()) -> None:
    shared: list[structlog.types.Processor] = [
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json_output else structlog.dev.ConsoleRenderer(colors=False)
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder()],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    handler.addFilter(RedactSecrets(secrets))
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
    for noisy in ("aiosqlite", "asyncio", "httpx", "httpcore", "openai", "discord.gateway", "alembic.runtime", "bm25s"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
