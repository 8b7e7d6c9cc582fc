"""Documentation sources as teams keep them: reStructuredText (Sphinx) through docutils, MkDocs and Docusaurus
Markdown with front matter and admonitions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import select

from bench.sites import python_docs
from storage.db import Database
from storage.doc_tables import ChunkRow, DocumentRow
from storage.embedder import HashingEmbedder
from storage.ingest import Ingestor
from storage.ingest.readers import read_document_text
from storage.ingest.rst import rst_sections
from storage.local_index import LocalVectorIndex

SPHINX_SOURCE = """\
.. _setup:

*****
Setup
*****

.. index:: single: setup

Install with :command:`pip` and call :func:`corvid.pair` (see :ref:`the pairing guide <pairing>`,
:class:`~corvid.hub.Hub` and :pep:`8`).

.. note::
   The hub must be on the same network.

.. warning:: Pairing erases old keys.

.. versionadded:: 2.1
   The ``--force`` option.

.. code-block:: console

   $ pip install corvid
   $ corvid pair --force

Options
=======

.. list-table:: Flags
   :header-rows: 1

   * - Flag
     - Meaning
   * - ``--force``
     - Pair again even when paired

.. function:: pair(hub, *, force=False)
   :noindex:

   Pair the remote with *hub*.

.. seealso:: :doc:`troubleshooting`

.. toctree::
   :maxdepth: 2

   install
   usage

.. unknown-extension-directive:: whatever

   Lost text.
"""


@pytest.mark.unit
def test_rst_sections_keep_directives_that_carry_text_and_render_roles_as_text() -> None:
    sections = rst_sections(SPHINX_SOURCE)
    assert [(s.level, s.title, s.anchor) for s in sections] == [(1, "Setup", "setup"), (2, "Options", "options")]
    setup, options = sections
    assert "Install with `pip` and call `corvid.pair()` (see the pairing guide, `Hub` and PEP 8)." in setup.text
    assert "**Note:** The hub must be on the same network." in setup.blocks
    assert "**Warning:** Pairing erases old keys." in setup.blocks
    assert "**New in version 2.1:** The `--force` option." in setup.blocks
    assert "```console\n$ pip install corvid\n$ corvid pair --force\n```" in setup.blocks
    assert "**Flags**\n\n| Flag | Meaning |\n|---|---|\n| `--force` | Pair again even when paired |" in options.blocks
    assert "- **pair(hub, *, force=False)**: Pair the remote with *hub*." in options.blocks
    assert "**See also:** troubleshooting" in options.blocks
    assert "install" not in options.text.split()  # the toctree is navigation
    assert "Lost text" not in options.text and "unknown-extension" not in options.text  # no raw markup, no error


@pytest.mark.unit
def test_rst_never_reads_other_files(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    text = f"Title\n=====\n\n.. include:: {secret}\n\n.. raw:: html\n   :file: {secret}\n\nAfter.\n"
    sections = rst_sections(text)
    assert "TOP SECRET" not in " ".join(s.text for s in sections) and "After." in sections[0].text


@pytest.mark.unit
def test_real_sphinx_sources_of_the_python_tutorial() -> None:
    docs = python_docs()
    if docs is None:
        pytest.skip("python3-doc is not installed (apt-get install python3-doc): no real Sphinx sources to read")
    source = docs / "_sources" / "tutorial" / "controlflow.rst.txt"
    sections = rst_sections(source.read_text(encoding="utf-8"))
    titles = {s.title: s for s in sections}
    # the same anchors Sphinx gave the published HTML page
    html = (docs / "tutorial" / "controlflow.html").read_text(encoding="utf-8")
    for title in ("if Statements", "The range() Function", "Keyword Arguments", "Lambda Expressions"):
        assert f'id="{titles[title].anchor}"' in html, title
    assert "`range()`" in titles["The range() Function"].text  # :func:`range` as Sphinx shows it
    assert "```\n>>> for i in range(5):" in titles["The range() Function"].text
    assert not any(".. index::" in s.text or ":keyword:" in s.text for s in sections)


MKDOCS_PAGE = """---
title: Pairing the remote
description: How to pair the Corvid remote with the hub.
tags: [remote, pairing]
---

Hold **Home** and **Back** for five seconds.

!!! warning "Back up first"
    Pairing erases the old keys.

    - Write them down
    - Keep the hub on

???+ note
    Works with hub firmware 2.0 and later.
"""

DOCUSAURUS_PAGE = """---
id: reset
title: Resetting the hub
sidebar_label: Reset
keywords:
  - factory reset
---

import Tabs from '@theme/Tabs';

Use a pin.

:::danger[Data loss]
A factory reset deletes every scene.
:::

:::tip
Export scenes first.
:::
"""


@pytest.mark.unit
def test_mkdocs_front_matter_and_admonitions() -> None:
    read = read_document_text(MKDOCS_PAGE.encode(), ".md")
    assert read.title == "Pairing the remote" and read.keywords == ["remote", "pairing"]
    assert read.description.startswith("How to pair")
    (section,) = read.sections
    warning = next(b for b in section.blocks if b.startswith("**Warning"))
    assert warning == (
        "**Warning: Back up first:**\n\nPairing erases the old keys.\n\n- Write them down\n- Keep the hub on"
    )
    assert "**Note:** Works with hub firmware 2.0 and later." in section.blocks
    assert "title:" not in section.text


@pytest.mark.unit
def test_docusaurus_front_matter_and_admonitions() -> None:
    read = read_document_text(DOCUSAURUS_PAGE.encode(), ".mdx")
    assert read.title == "Resetting the hub" and read.keywords == ["factory reset"]
    (section,) = read.sections
    assert "**Danger: Data loss:** A factory reset deletes every scene." in section.blocks
    assert "**Tip:** Export scenes first." in section.blocks
    assert ":::" not in section.text


@pytest.mark.integration
async def test_a_folder_of_rst_and_markdown_sources(sqlite_db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "setup.rst").write_text(SPHINX_SOURCE)
    (folder / "pairing.md").write_text(MKDOCS_PAGE)
    (folder / "draft.md").write_text("---\ntitle: Not yet\ndraft: true\n---\n\nUnpublished.\n")
    (folder / "broken.md").write_text("---\ntitle: [unclosed\n---\n\nText.\n")
    docs = python_docs()
    if docs is not None:  # real Sphinx sources beside them, read as reST (they are published with .rst.txt names)
        shutil.copy(docs / "_sources" / "tutorial" / "errors.rst.txt", folder / "errors.rst")
    report = await Ingestor(sqlite_db, HashingEmbedder(), LocalVectorIndex(64)).ingest(
        [str(folder)], base_url="https://docs.example.com/"
    )
    async with sqlite_db.session() as session:
        titles = {d.title: d for d in await session.scalars(select(DocumentRow))}
        urls = set(await session.scalars(select(ChunkRow.url)))
    assert {"Setup", "Pairing the remote"} <= set(titles)
    assert titles["Pairing the remote"].keywords == ["remote", "pairing"]
    assert "https://docs.example.com/setup.rst#options" in urls
    skipped = {Path(s.name).name: s.reason for s in report.skipped}
    assert skipped["draft.md"].startswith("a draft") and "front matter" in skipped["broken.md"]
    if docs is not None:
        assert "Errors and Exceptions" in titles
        assert "https://docs.example.com/errors.rst#handling-exceptions" in urls
