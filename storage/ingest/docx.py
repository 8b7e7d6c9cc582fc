"""Word documents (.docx) through mammoth, which turns Word's own structure into plain semantic HTML: headings from
the Heading styles, lists, tables. That HTML then takes the path every HTML page takes (`main_html_to_markdown`),
so a Word file's sections, tables and lists come out as a web page's would. Images are left out."""

from __future__ import annotations

import io
import zipfile
from typing import Any
from xml.etree import ElementTree
from xml.parsers.expat import ExpatError

from storage.ingest.readers import ReadText, main_html_to_markdown, markdown_sections

# Word's Title style is the title printed on the document's first page: a top heading (mammoth maps only Heading N)
STYLE_MAP = "p[style-name='Title'] => h1:fresh"
_CORE_PROPERTIES = "docProps/core.xml"
_DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_COMPOUND_FILE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Word saves a password-protected .docx in this container


def read_docx(raw: bytes) -> ReadText:
    """The sections of a Word document; its title is the one in its properties, else its first top heading.
    Raises ValueError, with the reason, for a file that cannot be read."""
    import mammoth

    if raw.startswith(_COMPOUND_FILE):
        raise ValueError("is password-protected (or an old .doc file named .docx)")
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as package:
            title = _core_title(package)
        converted = mammoth.convert_to_html(
            io.BytesIO(raw), style_map=STYLE_MAP, convert_image=mammoth.images.img_element(_no_image)
        )
    # a damaged package: not a zip, a part missing (mammoth's OSError) or broken XML in one
    except (zipfile.BadZipFile, KeyError, OSError, ValueError, ElementTree.ParseError, ExpatError) as exc:
        raise ValueError(f"is not a readable Word document ({type(exc).__name__})") from exc
    sections = markdown_sections(main_html_to_markdown(converted.value))
    top = min((s.level for s in sections if s.level), default=0)
    first_top = next((s.title for s in sections if top and s.level == top), "")
    return ReadText(sections, title=title, title_hint=first_top)


def _core_title(package: zipfile.ZipFile) -> str:
    """The title in the document's core properties (File > Properties), "" when it has none."""
    if _CORE_PROPERTIES not in package.namelist():
        return ""
    # the standard library's expat refuses entity expansion attacks since 2.4.1 (as for sitemaps)
    root = ElementTree.fromstring(package.read(_CORE_PROPERTIES))  # noqa: S314
    found = root.find(_DC_TITLE)
    return " ".join((found.text or "").split()) if found is not None else ""


def _no_image(image: Any) -> dict[str, str]:
    return {}  # an <img> without a source: the picture's bytes are never read, and no text comes of it
