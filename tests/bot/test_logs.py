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
