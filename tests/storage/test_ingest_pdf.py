"""PDF files: sections from the outline (else headings by type, else pages), citations to their page, running
headers and footers gone, paragraphs, lists and tables kept, unreadable files reported, and a question answered
from a PDF's section through the real ingest into the real search. The manuals are written here with fpdf2."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fpdf import FPDF

from pipeline.types import SearchRequest
from storage.db import Database
from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor
from storage.ingest.model import SourceDoc
from storage.ingest.readers import ReadText, read_document_text, text_to_doc
from storage.ingest.text import Section
from storage.local_index import LocalVectorIndex
from storage.search import HybridRetriever

HEADER = "Corvid Hub manual, revision 3"
MIME_SPEC = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")  # Debian's shared-mime-info
LIBTASN1 = Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf")  # Debian's libtasn1-doc


class Manual(FPDF):
    """Every page has a running header and a "- N -" page number, as printed manuals do."""

    def header(self) -> None:
        self.set_font("helvetica", "I", 9)
        self.cell(0, 8, HEADER, align="R")
        self.ln(14)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("helvetica", "I", 9)
        self.cell(0, 10, f"- {self.page_no()} -", align="C")


def _pdf(title: str = "Corvid Hub manual") -> Manual:
    pdf = Manual()
    pdf.core_fonts_encoding = "windows-1252"  # bullets and dashes in the built-in fonts
    if title:
        pdf.set_title(title)
    return pdf


def _heading(pdf: FPDF, title: str, level: int, *, outline: bool) -> None:
    pdf.set_font("helvetica", "B", 18 if level == 0 else 14)
    if outline:
        pdf.start_section(title, level=level)
    pdf.cell(0, 10, title, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def _lines(pdf: FPDF, *lines: str) -> None:
    """Printed lines of one paragraph, broken where given (so a word can be hyphenated across two of them)."""
    pdf.set_font("helvetica", "", 11)
    for line in lines:
        pdf.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(5)


def manual(*, outline: bool = True, title: str = "Corvid Hub manual", cover: str = "") -> bytes:
    """Three pages (after a cover page, if given): two chapters with a section each, a hyphenated word, a bulleted
    list and a table."""
    pdf = _pdf(title)
    if cover:
        pdf.add_page()
        pdf.set_font("helvetica", "B", 26)
        pdf.cell(0, 20, cover, new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    _heading(pdf, "Getting started", 0, outline=outline)
    _lines(pdf, "Unpack the hub and place it on a flat surface near a wall socket. The hub keeps its",
           "settings in a battery-backed mem-", "ory, so a power cut loses nothing.")  # fmt: skip
    _lines(pdf, "Keep the hub away from radiators and direct sunlight.")
    _heading(pdf, "Pairing the remote", 1, outline=outline)
    _lines(pdf, "Hold Home and Back together for five seconds until the light blinks blue three times.",
           "The remote is then paired with the hub. What the remote needs:")  # fmt: skip
    pdf.set_font("helvetica", "", 11)
    for item in ("Batteries: two AAA cells", "Range: up to ten metres", "Line of sight: not needed"):
        pdf.cell(0, 6, f"\u2022 {item}", new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    _heading(pdf, "Troubleshooting", 0, outline=outline)
    _lines(pdf, "The hub shows an error code on its display when something is wrong:")
    with pdf.table(col_widths=(30, 90), width=120, align="LEFT") as table:
        for code, meaning in (("Code", "Meaning"), ("E-2041", "The hub is too hot"), ("E-3100", "No network")):
            row = table.row()
            row.cell(code)
            row.cell(meaning)
    pdf.ln(6)
    _heading(pdf, "Resetting the hub", 1, outline=outline)
    _lines(pdf, "Press the reset button with a pin for ten seconds; the hub restarts with factory settings.")
    pdf.add_page()
    _heading(pdf, "Specifications", 0, outline=outline)
    _lines(pdf, "The hub draws 4 watts and weighs 310 grams.")
    return bytes(pdf.output())


def read(raw: bytes) -> ReadText:
    return read_document_text(raw, ".pdf")


def by_title(sections: list[Section]) -> dict[str, Section]:
    return {s.title: s for s in sections}


@pytest.mark.unit
def test_outline_entries_become_sections_that_cite_their_page() -> None:
    read_pdf = read(manual())
    titles = [(s.title, s.level) for s in read_pdf.sections]
    assert titles == [("Getting started", 1), ("Pairing the remote", 2), ("Troubleshooting", 1),
                      ("Resetting the hub", 2), ("Specifications", 1)]  # fmt: skip
    assert read_pdf.title == "Corvid Hub manual"  # the document information's title
    sections = by_title(read_pdf.sections)
    # a section opening its page cites the page; one further down opens the page at its heading
    assert sections["Troubleshooting"].anchor == "page=2" and sections["Specifications"].anchor == "page=3"
    page, view = sections["Resetting the hub"].anchor.split("&")
    assert page == "page=2" and view.startswith("view=FitH,") and int(view.rpartition(",")[2]) > 0
    assert sections["Pairing the remote"].anchor.startswith("page=1&view=FitH,")
    # each section holds its own text, without its printed heading
    assert sections["Pairing the remote"].text.startswith("Hold Home and Back")
    assert "factory settings" in sections["Resetting the hub"].text
    assert "factory settings" not in sections["Troubleshooting"].text


@pytest.mark.unit
def test_without_a_title_of_its_own_a_pdf_is_named_by_its_cover_else_its_file() -> None:
    def document(raw: bytes) -> SourceDoc:
        return text_to_doc(read(raw), doc_id="d", source="file:///hub.pdf", fallback_title="Hub", path_crumbs=())

    def first_section(doc: SourceDoc) -> str:
        return next(c.section for c in doc.chunks if c.title == "Getting started")

    named = document(manual(title="", cover="Corvid Hub owner's guide"))
    assert named.title == "Corvid Hub owner's guide" and first_section(named) == "page=2"
    unnamed = document(manual(title=""))
    # the first page opens with a section: it is that section, not the document's title
    assert unnamed.title == "Hub" and first_section(unnamed) == "page=1"


@pytest.mark.unit
def test_running_headers_and_page_numbers_are_removed() -> None:
    text = "\n".join(s.text for s in read(manual()).sections)
    assert HEADER not in text
    assert not any(f"- {n} -" in text for n in (1, 2, 3))
    assert "Unpack the hub" in text and "4 watts" in text


@pytest.mark.unit
def test_lines_of_a_paragraph_are_one_paragraph_and_hyphenated_words_whole() -> None:
    started = by_title(read(manual()).sections)["Getting started"]
    assert started.blocks == (
        "Unpack the hub and place it on a flat surface near a wall socket. The hub keeps its settings in a "
        "battery-backed memory, so a power cut loses nothing.",
        "Keep the hub away from radiators and direct sunlight.",
    )


@pytest.mark.unit
def test_an_identifier_broken_after_its_underscore_is_one_identifier() -> None:
    """Typesetters break long identifiers after an underscore, without a hyphen (the libtasn1 manual does):
    joined with a space, "asn1_der_ decoding()" matched neither the function's name nor a question about it."""
    pdf = _pdf()
    pdf.add_page()
    _heading(pdf, "Decoding", 0, outline=True)
    _lines(pdf, "Fill the structure with asn1_der_", "decoding() and then read each element.")
    (section,) = [s for s in read(bytes(pdf.output())).sections if s.title == "Decoding"]
    assert "asn1_der_decoding() and then read" in section.text


@pytest.mark.unit
def test_bullets_stay_a_list_and_a_table_keeps_its_rows() -> None:
    sections = by_title(read(manual()).sections)
    pairing = sections["Pairing the remote"].blocks
    assert pairing[-1].endswith(  # the list, with the paragraph that introduces it
        "What the remote needs:\n\n- Batteries: two AAA cells\n- Range: up to ten metres\n- Line of sight: not needed"
    )
    trouble = sections["Troubleshooting"].text
    assert "| Code | Meaning |\n|---|---|\n| E-2041 | The hub is too hot |\n| E-3100 | No network |" in trouble


@pytest.mark.unit
def test_without_an_outline_headings_are_found_by_their_type() -> None:
    sections = read(manual(outline=False)).sections
    assert [(s.title, s.level) for s in sections] == [
        (s.title, s.level) for s in read(manual()).sections
    ]  # the same sections as the outline gives
    found = by_title(sections)
    assert found["Troubleshooting"].anchor == "page=2"
    assert found["Pairing the remote"].anchor.startswith("page=1&view=FitH,")
    assert found["Pairing the remote"].text.startswith("Hold Home and Back")


@pytest.mark.unit
def test_with_nothing_to_tell_sections_apart_each_page_is_one() -> None:
    pdf = _pdf()
    for topic in ("the hub", "the remote"):
        pdf.add_page()
        _lines(pdf, f"This page is about {topic}.")
    sections = read(bytes(pdf.output())).sections
    assert [(s.title, s.anchor, s.text) for s in sections] == [
        ("Page 1", "page=1", "This page is about the hub."),
        ("Page 2", "page=2", "This page is about the remote."),
    ]


def locked() -> bytes:
    pdf = _pdf()
    pdf.set_encryption(owner_password="owner", user_password="secret")
    pdf.add_page()
    _lines(pdf, "The vault code is 4711.")
    return bytes(pdf.output())


def scanned() -> bytes:
    """A page that is only a picture, as a scan without a text layer is (a filled shape serves here)."""
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 30, 150, 200, style="F")
    return bytes(pdf.output())


@pytest.mark.integration
async def test_unreadable_pdfs_are_skipped_with_their_reason_and_the_rest_is_ingested(
    sqlite_db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "manuals"
    folder.mkdir()
    (folder / "hub.pdf").write_bytes(manual())
    (folder / "locked.pdf").write_bytes(locked())
    (folder / "scan.pdf").write_bytes(scanned())
    (folder / "broken.pdf").write_bytes(manual()[:2000])  # cut off in the middle: no cross-reference table
    with caplog.at_level(logging.WARNING, logger="storage.ingest"):
        report = await Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64)).ingest([str(folder)])
    assert report.added == 1
    reasons = {Path(s.name).name: s.reason for s in report.skipped}
    assert reasons["locked.pdf"] == "is password-protected"
    assert reasons["scan.pdf"] == "has no text layer (scanned?)"
    assert reasons["broken.pdf"].startswith("is not a readable PDF")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert all(name in logged for name in reasons)  # the operator sees which files and why ...
    assert "4711" not in logged  # ... and never what they say


@pytest.mark.integration
async def test_a_question_is_answered_from_the_pdf_section_that_holds_it_citing_its_page(
    sqlite_db: Database, tmp_path: Path
) -> None:
    path = tmp_path / "hub.pdf"
    path.write_bytes(manual())
    index = LocalVectorIndex(64)
    retriever = HybridRetriever(sqlite_db, HashingEmbedder(), index)
    await Ingestor(sqlite_db, HashingEmbedder(), index, on_change=retriever.reload).ingest([str(path)])
    source = path.resolve().as_uri()

    pairing = (await retriever.search(SearchRequest(text="how do I pair the remote with the hub"))).hits[0]
    assert pairing.title == "Pairing the remote"
    assert pairing.url.startswith(f"{source}#page=1&view=FitH,")
    assert pairing.crumbs[-2:] == ("Getting started", "Pairing the remote")

    error = (await retriever.search(SearchRequest(text="what does error E-2041 mean"))).hits[0]
    assert error.title == "Troubleshooting" and error.url == f"{source}#page=2"
    assert "| E-2041 | The hub is too hot |" in error.text


@pytest.mark.unit
def test_a_real_manual_reads_as_its_outline_without_its_running_header() -> None:
    """The Shared MIME-info spec (pdfTeX, hyperref outline, a running title and page numbers on every page)."""
    if not MIME_SPEC.is_file():
        pytest.skip(f"{MIME_SPEC} is not installed (apt-get install shared-mime-info)")
    sections = read(MIME_SPEC.read_bytes()).sections
    found = by_title(sections)
    assert {"1.1. Version", "2.1. Directory layout", "2.4. The glob files", "2.11. Subclassing"} <= set(found)
    assert found["2.1. Directory layout"].level == 2 and found["2. Unified system"].level == 1
    assert found["2.4. The glob files"].anchor.startswith("page=7&view=FitH,")
    body = [block for s in sections if s.level for block in s.blocks]
    assert "Shared MIME-info Database" not in body  # the running title of every page
    assert not any(block.isdigit() for s in sections if s.level and "mime.cache" not in s.title for block in s.blocks)
    # a paragraph that runs over a page break is one paragraph, with no header or page number inside it
    assert any("Information found in a directory is added to the information found in previous directories" in block
               for block in found["2.1. Directory layout"].blocks)  # fmt: skip


@pytest.mark.unit
def test_a_texinfo_manual_loses_its_chapter_headers() -> None:
    """GNU libtasn1's manual (texinfo): each page's header names its chapter, beside the page number."""
    if not LIBTASN1.is_file():
        pytest.skip(f"{LIBTASN1} is not installed (apt-get install libtasn1-doc)")
    sections = read(LIBTASN1.read_bytes()).sections
    found = by_title(sections)
    assert {"ASN.1 syntax", "Naming", "Invoking asn1Coding", "DER functions"} <= set(found)
    text = "\n".join(s.text for s in sections)
    assert "Chapter 4: Function reference" not in text and "Chapter 2: ASN.1 structure handling" not in text
    assert "manipulation" in text and "manip-" not in text  # hyphenated across two lines of the copyright page
