"""bench/pdf_read.py: what reading a PDF costs, beside pdfminer.six's bare text extraction of the same file."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from bench.pdf_read import main


def _manual(path: Path) -> Path:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for title in ("Pairing the remote", "Error codes"):
        pdf.add_page()
        pdf.start_section(title)
        pdf.multi_cell(0, 6, f"{title}. Hold the Link key for three seconds until the light blinks twice.")
    pdf.output(str(path))
    return path


@pytest.mark.unit
def test_each_pdf_is_read_by_docbot_and_by_the_baseline_and_an_absent_one_is_skipped_by_path(tmp_path: Path) -> None:
    missing = tmp_path / "absent.pdf"
    result = main([str(_manual(tmp_path / "hub.pdf")), str(missing), "--out", str(tmp_path / "r.json")])
    (row,) = result["rows"]
    assert (row["pages"], row["sections"]) == (2, 2)  # the outline's two entries
    reported = {"read_pdf_s", "pdfminer_extract_text_s", "read_pdf_per_page_ms", "ratio_to_extract_text"}
    assert set(row).issuperset(reported)  # which figures a row reports, not their size
    assert result["skipped"] == [f"skipped: no PDF at {missing}"]
    assert (tmp_path / "r.json").is_file()
