"""Readers and text helpers: headings, anchors, chunk sizes, HTML, seed layouts, derived fields."""

from __future__ import annotations

import importlib.util

import pytest

from storage.ingest.readers import html_to_markdown, markdown_sections, sections_to_doc, seed_records, seed_to_doc
from storage.ingest.text import MAX_CHUNK_CHARS, keywords_of, pack_blocks, slugify, split_long, summary_of
from storage.search.tokenize import tokenize

pytestmark = pytest.mark.unit


def test_github_style_anchors() -> None:
    assert slugify("Pairing the Remote (QLED TV)") == "pairing-the-remote-qled-tv"
    assert slugify("E-2041: the hub is too hot!") == "e-2041-the-hub-is-too-hot"
    assert slugify("Über  Einstellungen") == "über--einstellungen"


def test_markdown_headings_outside_code_fences_split_sections() -> None:
    text = "Intro line.\n\n# Guide\n\n## Install {#setup}\n\nRun it.\n\n```\n# not a heading\n```\n\nSub\n---\n\nBody."
    sections = markdown_sections(text)
    assert [(s.title, s.level) for s in sections] == [("", 0), ("Guide", 1), ("Install", 2), ("Sub", 2)]
    assert sections[2].anchor == "setup" and "# not a heading" in sections[2].text
    assert sections[3].text == "Body."


def test_repeated_headings_get_numbered_anchors_and_crumbs_follow_nesting() -> None:
    text = "# Manual\n\n## Setup\n\nA.\n\n### Details\n\nB.\n\n## Setup\n\nC."
    doc = sections_to_doc(
        markdown_sections(text), doc_id="d", source="https://x/m.md", fallback_title="m", path_crumbs=("Guides",)
    )
    assert doc.title == "Manual"
    assert [(c.section, c.crumbs) for c in doc.chunks] == [
        ("setup", ("Guides", "Manual", "Setup")),
        ("details", ("Guides", "Manual", "Setup", "Details")),
        ("setup-1", ("Guides", "Manual", "Setup")),
    ]


def test_long_sections_are_cut_with_overlap() -> None:
    sentence = "The quick hub restarts after an update and keeps every profile intact. "
    text = sentence * 60
    pieces = split_long(text)
    assert len(pieces) > 1 and all(len(p) <= MAX_CHUNK_CHARS for p in pieces)
    assert pieces[1].split()[0:3] == pieces[0][-160:].split()[1:4] or pieces[0][-60:].strip() in pieces[1]
    assert split_long("short") == ["short"]


def test_html_keeps_headings_and_drops_chrome() -> None:
    title, markdown = html_to_markdown(
        "<html><head><title>T</title><style>p{}</style></head><body><header>menu</header>"
        "<h2 id='a1'>Alpha</h2><p>One</p><p>Two</p><footer>(c)</footer></body></html>"
    )
    assert title == "T"
    assert "## Alpha {#a1}" in markdown and "One\n\nTwo" in markdown
    assert "menu" not in markdown and "(c)" not in markdown and "p{}" not in markdown


def test_seed_layouts() -> None:
    record = {"id": "a", "content": "x"}
    assert seed_records('[{"id": "a", "content": "x"}]', "f") == [record]
    assert seed_records('{"id": "a", "content": "x"}', "f") == [record]
    assert seed_records('{"a": {"content": "x"}}', "f") == [record]
    assert seed_records('{"id": "a", "content": "x"}\n{"id": "b", "content": "y"}\n', "f")[1]["id"] == "b"
    with pytest.raises(ValueError, match="neither JSON nor JSONL"):
        seed_records("{oops\n", "f")


def test_a_section_given_as_printed_lines_reads_as_running_text() -> None:
    """A manual's PDF text, one list item per printed line (the shared e-manual's raw layout): the page number
    between two lines and a stray quote mark are not text, and "- 35 -" must not become a list item mid-sentence;
    a key's label ("+ / -") stays."""
    record = {"id": "s1", "title": "Adjusting the volume", "text": [
        "Press the volume key", "- 35 -", "(", "+ / -", ") to change the volume.", '"', "Page 36 of 120",
    ]}  # fmt: skip
    doc = seed_to_doc(record, doc_id="d", default_source="manual.json")
    assert doc.content == "Press the volume key ( + / -) to change the volume."
    assert [c.text for c in doc.chunks] == [doc.content]


def test_the_shared_manual_reads_the_same_ingested_raw_as_the_benchmarks_read_it() -> None:
    """`docbot ingest` of the shared e-manual's raw file and bench/emanual_data.py (which must run against older
    trees, so it keeps its own copy of the rule) give every section the same text."""
    from bench.emanual_data import load_corpus
    from tests.conftest import shared_path

    raw = shared_path("emanual", "raw", "smart_tv_remote_manual_corpus.json")
    by_id = {doc["id"]: doc["content"] for doc in load_corpus(raw)}
    records = seed_records(raw.read_text(encoding="utf-8"), raw.name)
    read = {r["id"]: seed_to_doc(r, doc_id=r["id"], default_source="m").content for r in records}
    assert len(by_id) >= 250 and all(read[key] == text for key, text in by_id.items())


def test_derived_fields() -> None:
    text = "The hub pairs the remote. Pairing needs the Home key. The remote battery lasts a year."
    assert summary_of(text, max_chars=40) == "The hub pairs the remote."
    assert keywords_of(text)[0] == "remot"  # the most frequent content term, stemmed


def test_tokenizer_handles_scripts() -> None:
    assert tokenize("Pairing the remotes") == ["pair", "remot"]
    assert tokenize("遥控器") == ["遥控", "控器"]
    assert tokenize("Пульт E-2041") == ["пульт", "e", "2041"]


# -- structure: tables, steps, definitions and code stay whole ---------------------------------------------------

GUIDE = """# Guide

## Permissions

Choose these permissions:

| permission | why |
|---|---|
| View Channels | see the channels |
| Send Messages | answer |

## Setup

1. Open the portal and
   create an app.
2. Copy the token.
3. Start docbot.

```
# not a heading
docbot run
```
"""


def test_markdown_blocks_are_parsed_by_structure_and_chunks_keep_them_whole() -> None:
    sections = markdown_sections(GUIDE)
    permissions = next(s for s in sections if s.title == "Permissions")
    # the paragraph introducing the table stays with it; the table keeps its header
    assert permissions.blocks == (
        "Choose these permissions:\n\n| permission | why |\n|---|---|\n| View Channels | see the channels |\n"
        "| Send Messages | answer |",
    )
    setup = next(s for s in sections if s.title == "Setup")
    assert setup.blocks[0].startswith("1. Open the portal") and "3. Start docbot." in setup.blocks[0]
    assert setup.blocks[1].startswith("```") and "# not a heading" in setup.blocks[1]
    doc = sections_to_doc(sections, doc_id="d", source="https://x/g.md", fallback_title="g", path_crumbs=())
    steps = next(c for c in doc.chunks if c.section == "setup")
    assert "1. Open" in steps.text and "3. Start docbot." in steps.text and steps.crumbs == ("Guide", "Setup")


def test_a_list_longer_than_a_chunk_is_not_split_and_a_huge_table_repeats_its_header() -> None:
    steps = "\n".join(f"{i}. Step {i} does one long and careful thing to the hub settings." for i in range(1, 30))
    assert len(steps) > MAX_CHUNK_CHARS
    assert pack_blocks((steps,)) == [steps]
    table = "| key | value |\n|---|---|\n" + "\n".join(f"| k{i} | {'v' * 60} |" for i in range(150))
    pieces = pack_blocks((table,))
    assert len(pieces) > 1 and all(p.startswith("| key | value |\n|---|---|\n| k") for p in pieces)
    assert sum(p.count("| k") - 1 for p in pieces) == 150  # every row once (the "| key" header aside)


def test_html_tables_lists_definitions_and_code_become_markdown_blocks() -> None:
    title, markdown = html_to_markdown(
        "<html><head><title>Setup</title></head><body><h2 id='perm'>Permissions</h2>"
        "<table><tr><th>permission</th><th>why</th></tr><tr><td>View Channels</td><td>see them</td></tr></table>"
        "<ol><li>Open the portal</li><li>Copy the <b>token</b><ul><li>keep it secret</li></ul></li></ol>"
        "<dl><dt>DOCBOT_LLM_MODEL</dt><dd>the small model</dd></dl><pre>docbot run\n  --verbose</pre></body></html>"
    )
    assert title == "Setup"
    assert "| permission | why |\n|---|---|\n| View Channels | see them |" in markdown
    assert "1. Open the portal\n2. Copy the token\n   - keep it secret" in markdown
    assert "- **DOCBOT_LLM_MODEL**: the small model" in markdown
    assert "```\ndocbot run\n  --verbose\n```" in markdown
    blocks = markdown_sections(markdown)[-1].blocks
    assert len(blocks) == 4  # table, ordered list, definitions, code: one block each


def test_inline_code_in_html_stays_code_as_in_a_markdown_page() -> None:
    """The Python docs' `<code>sys.argv[0]</code>` came out as plain words, so a quote of it was no code; a heading
    keeps its plain words (they are the section's title) and a `<pre>` block stays one fenced block."""
    _, markdown = html_to_markdown(
        "<h2 id='m'>The <code>match</code> statement</h2><p>When no script is given, <code class='docutils'>"
        "<span class='pre'>sys.argv[0]</span></code> is empty; press <kbd>Ctrl</kbd>.</p>"
        "<table><tr><th>name</th></tr><tr><td><code>DOCBOT_LLM_MODEL</code></td></tr></table>"
        "<pre><code>print(sys.argv)</code></pre>"
    )
    assert "## The match statement {#m}" in markdown
    assert "When no script is given, `sys.argv[0]` is empty; press `Ctrl`." in markdown
    assert "| `DOCBOT_LLM_MODEL` |" in markdown
    assert "```\nprint(sys.argv)\n```" in markdown


@pytest.mark.skipif(
    importlib.util.find_spec("mdit_py_plugins") is None,
    reason="mdit-py-plugins (definition lists) is not installed: pip install -e '.[dev]'",
)
def test_a_markdown_definition_list_is_one_block_of_term_items_like_an_html_one() -> None:
    (section,) = markdown_sections(
        "## Settings\n\nThe two settings that matter:\n\n"
        "DOCBOT_LLM_MODEL\n: The model name.\n  Sent to the endpoint.\n\n"
        "DOCBOT_ROLE_QUEUE_LIMIT\n: Requests waiting per role.\n: Beyond it, people are told the bot is busy.\n\n"
        "Anything else keeps its default.\n"
    )
    assert section.blocks == (
        "The two settings that matter:\n\n"  # the intro ending in ":" stays with its list
        "- **DOCBOT_LLM_MODEL**: The model name. Sent to the endpoint.\n"
        "- **DOCBOT_ROLE_QUEUE_LIMIT**: Requests waiting per role. Beyond it, people are told the bot is busy.",
        "Anything else keeps its default.",
    )
    _, html = html_to_markdown("<dl><dt>DOCBOT_LLM_MODEL</dt><dd>The model name.</dd></dl>")
    assert "- **DOCBOT_LLM_MODEL**: The model name." in html  # the same form as HTML's <dl>
