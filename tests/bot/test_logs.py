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


def test_reading_a_pdf_at_debug_level_logs_none_of_the_parsers_objects(capfd: pytest.CaptureFixture[str]) -> None:
    """pdfminer logs every object it parses at DEBUG, their contents included; with `-v` a manual's ingest printed
    tens of thousands of such lines."""
    from fpdf import FPDF

    from bot.logs import configure_logging
    from storage.ingest.pdf import read_pdf

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        configure_logging("DEBUG")
        pdf = FPDF()
        pdf.add_page()
        pdf.set_font("helvetica", size=11)
        pdf.start_section("Pairing")
        pdf.multi_cell(0, 6, "Hold the PRIVATE key for three seconds.")
        read_pdf(bytes(pdf.output()))
        logging.getLogger("bot.ingest").debug("a line of ours")
    finally:
        root.handlers, root.level = handlers, level
        logging.getLogger("pdfminer").setLevel(logging.NOTSET)
    err = capfd.readouterr().err
    assert "a line of ours" in err  # DEBUG was on
    assert "pdfminer" not in err and "PRIVATE" not in err
