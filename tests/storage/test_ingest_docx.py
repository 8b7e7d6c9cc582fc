"""Word files (.docx): sections from the Heading styles, lists and tables as an HTML page's, the title from the
document's properties, unreadable files reported, and a question answered from a Word
document's section through the real ingest into the real search. The documents are written here by python-docx."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import docx
import pytest

from pipeline.types import SearchRequest
from storage.db import Database
from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor
from storage.ingest.readers import ReadText, read_document_text, text_to_doc
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever


def guide(*, title: str = "Corvid Hub guide", title_style: str = "") -> bytes:
    """Two chapters with a section each, a bulleted list and a table of error codes."""
    document = docx.Document()
    document.core_properties.title = title
    if title_style:
        document.add_paragraph(title_style, style="Title")
    document.add_heading("Getting started", level=1)
    document.add_paragraph("Unpack the hub and place it on a flat surface near a wall socket.")
    document.add_heading("Pairing the remote", level=2)
    document.add_paragraph("Hold Home and Back together for five seconds until the light blinks blue.")
    document.add_paragraph("What the remote needs:")
    for item in ("Batteries: two AAA cells", "Range: up to ten metres"):
        document.add_paragraph(item, style="List Bullet")
    document.add_heading("Troubleshooting", level=1)
    document.add_paragraph("The hub shows an error code on its display when something is wrong.")
    table = document.add_table(rows=3, cols=2)
    for row, cells in zip(table.rows, (("Code", "Meaning"), ("E-2041", "The hub is too hot"),
                                       ("E-3100", "No network")), strict=True):  # fmt: skip
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def read(raw: bytes) -> ReadText:
    return read_document_text(raw, ".docx")


def title_of(raw: bytes) -> str:
    doc = text_to_doc(read(raw), doc_id="d", source="file:///guide.docx", fallback_title="Guide", path_crumbs=())
    return doc.title


@pytest.mark.unit
def test_heading_styles_become_sections_with_their_lists_and_tables() -> None:
    sections = {s.title: s for s in read(guide()).sections}
    assert [(s.title, s.level) for s in sections.values()] == [
        ("Getting started", 1), ("Pairing the remote", 2), ("Troubleshooting", 1),
    ]  # fmt: skip
    assert sections["Pairing the remote"].blocks == (
        "Hold Home and Back together for five seconds until the light blinks blue.",
        "What the remote needs:\n\n- Batteries: two AAA cells\n- Range: up to ten metres",
    )
    assert sections["Troubleshooting"].blocks[-1] == (
        "| Code | Meaning |\n|---|---|\n| E-2041 | The hub is too hot |\n| E-3100 | No network |"
    )


@pytest.mark.unit
def test_the_title_is_the_documents_own_else_its_first_top_heading_else_the_file_name() -> None:
    assert title_of(guide(title="Corvid Hub guide", title_style="Welcome")) == "Corvid Hub guide"
    assert title_of(guide(title="", title_style="Welcome to the hub")) == "Welcome to the hub"  # Word's Title style
    assert title_of(guide(title="")) == "Getting started"
    empty = docx.Document()
    empty.add_paragraph("Only a paragraph.")
    out = io.BytesIO()
    empty.save(out)
    assert title_of(out.getvalue()) == "Guide"


@pytest.mark.integration
async def test_unreadable_word_files_are_skipped_with_their_reason_and_the_rest_is_ingested(
    sqlite_db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "guides"
    folder.mkdir()
    (folder / "hub.docx").write_bytes(guide())
    (folder / "broken.docx").write_bytes(guide()[:3000])  # cut off: not a whole zip
    # Word encrypts a protected document into a compound file (the OLE container), whatever its name says
    (folder / "locked.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504)
    with caplog.at_level(logging.WARNING, logger="storage.ingest"):
        report = await Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64)).ingest([str(folder)])
    assert report.added == 1
    reasons = {Path(s.name).name: s.reason for s in report.skipped}
    assert reasons == {
        "broken.docx": "is not a readable Word document (BadZipFile)",
        "locked.docx": "is password-protected (or an old .doc file named .docx)",
    }
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "broken.docx" in logged and "locked.docx" in logged


@pytest.mark.integration
async def test_a_question_is_answered_from_the_word_section_that_holds_it(sqlite_db: Database, tmp_path: Path) -> None:
    path = tmp_path / "hub.docx"
    path.write_bytes(guide())
    index = LocalVectorIndex(64)
    retriever = HybridRetriever(sqlite_db, HashingEmbedder(), index)
    await Ingestor(sqlite_db, HashingEmbedder(), index, on_change=retriever.reload).ingest([str(path)])
    hit = (await retriever.search(SearchRequest(text="what does error E-2041 mean"))).hits[0]
    assert hit.title == "Troubleshooting"
    assert hit.url == f"{path.resolve().as_uri()}#troubleshooting"
    assert hit.crumbs == ("Corvid Hub guide", "Troubleshooting")
    assert "| E-2041 | The hub is too hot |" in hit.text
