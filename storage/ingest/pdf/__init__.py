"""Reading PDF files: layout (pdfminer.six), running headers and footers, tables, running text, sections."""

from storage.ingest.pdf.document import read_pdf

__all__ = ["read_pdf"]
