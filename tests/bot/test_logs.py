import logging

import pytest

from bot.logs import RedactSecrets

pytestmark = pytest.mark.unit


def test_secret_values_are_redacted_from_messages_and_fields() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "token %s used", ("xoxb-123456789",), None)
    record.__dict__["header"] = "Bearer xoxb-123456789"
    assert RedactSecrets(["xoxb-123456789"]).filter(record)
    assert record.getMessage() == "token *** used"
    assert record.__dict__["header"] == "Bearer ***"


def test_short_or_empty_secrets_are_not_used_for_redaction() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "a b c", None, None)
    RedactSecrets(["", "a"]).filter(record)
    assert record.getMessage() == "a b c"


def test_tracebacks_carry_no_locals_and_no_exception_messages() -> None:
    from bot.logs import safe_traceback

    def fail(question: str) -> None:
        token = "xoxb-987654321"
        raise ValueError(f"{question} {token}")

    try:
        try:
            fail("what is my PRIVATE question")
        except ValueError as inner:
            raise RuntimeError("wrapped PRIVATE") from inner
    except RuntimeError as exc:
        rendered = safe_traceback((type(exc), exc, exc.__traceback__))
    assert "PRIVATE" not in rendered and "xoxb" not in rendered
    assert "builtins.ValueError" in rendered and "builtins.RuntimeError" in rendered and "in fail" in rendered


def test_payload_seeing_libraries_keep_only_the_head_of_their_lines() -> None:
    from bot.logs import LibraryLineHead

    bolt = logging.LogRecord("slack_bolt.AsyncApp", logging.INFO, __file__, 1,
                             "Invalid request signature detected (signature: v0=1, body: {\"text\": \"hi PRIVATE\"})",
                             None, None)  # fmt: skip
    ours = logging.LogRecord("bot.delivery", logging.INFO, __file__, 1, "event handled: %s", ("k",), None)
    LibraryLineHead().filter(bolt)
    LibraryLineHead().filter(ours)
    assert bolt.getMessage() == "Invalid request signature detected"
    assert ours.getMessage() == "event handled: k"
