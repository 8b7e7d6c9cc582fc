"""What reading a PDF costs: `storage.ingest.pdf.read_pdf` (pdfminer.six's layout analysis, then sections, running
headers, paragraphs and tables) against the bare text extraction of the same pages in the same run.

    .venv/bin/python -m bench.pdf_read                       # the real PDF manuals Debian installs, when present
    .venv/bin/python -m bench.pdf_read FILE.pdf ... --out R.json

The baseline is pdfminer.six's own `extract_text` (the library's layout analysis with no reading of ours), so the
ratio is what docbot's reading adds on top of the parse; with pypdfium2 installed (not a dependency), its plain text
extraction is shown too, the fastest reader measured when the library was chosen (docs/ingesting-documents.md).
A file absent here is skipped with its path.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REAL_MANUALS = (
    Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),  # Debian package shared-mime-info
    Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),  # Debian package libtasn1-doc
)
ROUNDS = 3


def _best_of(read: Callable[[bytes], Any], raw: bytes) -> float:
    """The fastest of `ROUNDS` reads, in seconds (the least disturbed by other work on the machine)."""
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        read(raw)
        best = min(best, time.perf_counter() - started)
    return best


def _pdfminer_text(raw: bytes) -> str:
    import io

    from pdfminer.high_level import extract_text

    return str(extract_text(io.BytesIO(raw)))


def _pdfium_text(raw: bytes) -> str | None:
    import importlib

    try:
        pypdfium2: Any = importlib.import_module("pypdfium2")  # optional: not one of docbot's dependencies
    except ImportError:
        return None
    document = pypdfium2.PdfDocument(raw)
    return "".join(page.get_textpage().get_text_range() for page in document)


def measure(path: Path) -> dict[str, Any]:
    import io

    from pdfminer.high_level import extract_pages

    from storage.ingest.pdf import read_pdf

    raw = path.read_bytes()
    pages = sum(1 for _ in extract_pages(io.BytesIO(raw)))
    sections = len(read_pdf(raw).sections)
    ours = _best_of(read_pdf, raw)
    parse = _best_of(_pdfminer_text, raw)
    row: dict[str, Any] = {
        "file": str(path), "pages": pages, "sections": sections,
        "read_pdf_s": round(ours, 3), "pdfminer_extract_text_s": round(parse, 3),
        "read_pdf_per_page_ms": round(1000 * ours / pages, 1), "ratio_to_extract_text": round(ours / parse, 2),
    }  # fmt: skip
    if _pdfium_text(raw) is not None:
        pdfium = _best_of(_pdfium_text, raw)
        row |= {"pypdfium2_text_s": round(pdfium, 3), "ratio_to_pypdfium2": round(ours / pdfium, 1)}
    return row


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", type=Path, nargs="*", default=list(REAL_MANUALS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    rows, skipped = [], []
    for path in args.files:
        if path.is_file():
            rows.append(measure(path))
        else:
            skipped.append(f"skipped: no PDF at {path}")
    result = {"rounds": ROUNDS, "rows": rows, "skipped": skipped}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
