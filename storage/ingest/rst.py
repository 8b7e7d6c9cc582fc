"""reStructuredText (Sphinx sources) read by docutils, the reference parser, into the same sections and Markdown
blocks the other readers give: sections by the document's own structure (anchors are docutils' section ids),
code and tables whole, admonitions ("Note", "Warning", Sphinx's "New in version") kept with their text, Sphinx's
API descriptions (`.. function::`) as `**signature**: text` items, and roles (`:func:`, `:ref:`, ...) as their text.

docutils knows only its own directives and roles; Sphinx's are registered here, once per process, under names
docutils does not use (the way Sphinx registers them), each rendering the text it carries. Include directives and
raw input are off: a document can only ever read itself."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from docutils import nodes, utils
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, Parser, directives, roles
from docutils.parsers.rst.languages import en as english
from docutils.parsers.rst.states import Inliner

from storage.ingest.text import Section

# Sphinx directives that describe an API object: the signature, then its text.
_DESCRIPTIONS = (
    "function", "method", "class", "attribute", "data", "exception", "decorator", "decoratormethod",
    "classmethod", "staticmethod", "property", "coroutinefunction", "coroutinemethod", "abstractmethod",
    "describe", "object", "envvar", "option", "cmdoption", "confval", "opcode", "pdbcommand", "2to3fixer",
    "c:function", "c:member", "c:macro", "c:type", "c:var", "c:struct", "c:union", "c:enum", "c:enumerator",
    "cpp:function", "cpp:class", "cpp:member", "cpp:type", "js:function", "js:class", "js:method", "js:data",
    "js:attribute",
)  # fmt: skip
_DOMAINS = ("py:",)
# Admonitions Sphinx adds, with the lead-in they show.
_NOTES = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "deprecated-removed": "Deprecated since version",
    "versionremoved": "Removed in version",
    "seealso": "See also",
    "todo": "To do",
    "impl-detail": "CPython implementation detail",
    "availability": "Availability",
    "audit-event": "Raises an auditing event",
}
# Containers whose content is ordinary text (tabs, cards, conditional blocks, glossaries).
_CONTAINERS = (
    "only", "glossary", "hlist", "centered", "tab", "tabs", "group-tab", "code-tab", "tab-set", "tab-item", "card",
    "dropdown", "grid", "grid-item", "grid-item-card", "margin", "ifconfig", "versionchanges",
)  # fmt: skip
# Directives whose content is code.
_CODE = ("testcode", "testoutput", "doctest", "testsetup", "testcleanup", "productionlist", "jupyter-execute")
# Directives with nothing for a reader: navigation, indexes, build settings, files that cannot be included.
_DROPPED = (
    "toctree", "index", "highlight", "currentmodule", "module", "py:module", "py:currentmodule", "c:namespace",
    "tabularcolumns", "sectionauthor", "moduleauthor", "codeauthor", "program", "literalinclude", "autosummary",
    "automodule", "autoclass", "autofunction", "automethod", "autodata", "autoattribute", "autoexception",
    "default-role", "default-domain", "rst-class", "cssclass", "meta", "graphviz", "digraph", "inheritance-diagram",
    "plot", "mermaid",
)  # fmt: skip
_CODE_ROLES = frozenset(
    {
        "func", "meth", "class", "mod", "attr", "exc", "data", "const", "obj", "keyword", "option", "envvar",
        "file", "samp", "command", "program", "kbd", "token", "opcode", "type", "macro", "member", "var",
        "expr", "makevar", "mimetype", "regexp", "confval", "setting", "any",
    }
)  # fmt: skip
_CALLABLE_ROLES = frozenset({"func", "meth"})


class _Description(Directive):
    has_content = True
    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        signature = " ".join(" ".join(self.arguments).split())
        body = nodes.definition()
        self.state.nested_parse(self.content, self.content_offset, body)
        return [nodes.definition_list("", nodes.definition_list_item("", nodes.term("", signature), body))]


class _Note(Directive):
    """`.. seealso:: text` and the like: a labelled note whose text is the argument and/or the content."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {}
    lead = ""
    versioned = False  # `.. versionadded:: 2.1 text`: the first argument is the version, the rest is text

    def run(self) -> list[nodes.Node]:
        words = list(self.arguments)
        title = f"{self.lead} {words.pop(0)}" if self.versioned and words else self.lead
        note = nodes.admonition("", nodes.title("", title.strip()))
        if words:
            inline, messages = self.state.inline_text(" ".join(words), self.lineno)
            note += nodes.paragraph("", "", *inline)
            note += messages
        self.state.nested_parse(self.content, self.content_offset, note)
        return [note]


class _VersionNote(_Note):
    required_arguments = 1
    optional_arguments = 1
    versioned = True


class _Container(Directive):
    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        box = nodes.container()
        if self.arguments and self.name not in ("only", "ifconfig"):
            box += nodes.paragraph("", "", nodes.strong("", self.arguments[0]))
        self.state.nested_parse(self.content, self.content_offset, box)
        return [box]


class _Code(Directive):
    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        code = "\n".join(self.content)
        return [nodes.literal_block(code, code)] if code.strip() else []


class _Dropped(Directive):
    has_content = True
    optional_arguments = 99
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        return []


class _AnyOptions(dict[str, Any]):
    """Every option accepted, as text: Sphinx directives carry options docutils cannot know (`:noindex:`)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __bool__(self) -> bool:  # docutils reads a directive's option lines only when it has options
        return True

    def __missing__(self, key: str) -> Callable[[str | None], str]:
        return lambda value: value or ""


def _directive_types() -> Iterator[tuple[str, type[Directive]]]:
    for name in _DESCRIPTIONS:
        yield name, _Description
        if ":" not in name:
            yield from ((f"{domain}{name}", _Description) for domain in _DOMAINS)
    for name, lead in _NOTES.items():
        base = _VersionNote if "version" in lead else _Note
        yield name, type(f"_Note_{name}", (base,), {"lead": lead})
    for name in _CONTAINERS:
        yield name, _Container
    for name in _CODE:
        yield name, _Code
    for name in _DROPPED:
        yield name, _Dropped


_registered = threading.Lock()
_done: list[bool] = []


def _register_sphinx_directives() -> None:
    with _registered:
        if _done:
            return
        for name, kind in _directive_types():
            if name not in english.directives:  # docutils' own (note, code, table, ...) stay as they are
                kind.option_spec = _AnyOptions()
                directives.register_directive(name, kind)
        _done.append(True)


def _text_roles() -> Inliner:
    """An inliner on which roles docutils does not know render as their text: code-like ones (`:func:`,
    `:class:`) as code, the rest (`:ref:`, `:doc:`, `:term:`) as words; `title <target>` shows the title and
    `~a.b.c` shows `c`. (Set on the instance: docutils builds its patterns from `Inliner`'s own class attributes,
    which a subclass would not carry.)"""
    inliner = Inliner()
    known = inliner.interpreted

    def interpreted(rawsource: str, text: str, role: str, lineno: int) -> tuple[list[nodes.Node], list[Any]]:
        role_fn, messages = roles.role(role, inliner.language, lineno, inliner.reporter)
        if role_fn:
            return known(rawsource, text, role, lineno)
        return [_role_text(role, text)], messages

    inliner.interpreted = interpreted  # type: ignore[method-assign]
    return inliner


def _role_text(role: str, text: str) -> nodes.Node:
    name = role.rsplit(":", 1)[-1].lower()
    shown = utils.unescape(text)
    if shown.endswith(">") and " <" in shown:
        shown = shown[: shown.rindex(" <")]
    elif shown.startswith("~"):
        shown = shown[1:].rsplit(".", 1)[-1]
    shown = shown.lstrip("!")
    if name == "menuselection":
        shown = shown.replace("-->", ">")
    if name == "guilabel":
        shown = shown.replace("&", "")
    if name in _CODE_ROLES:
        if name in _CALLABLE_ROLES and not shown.endswith(")"):
            shown += "()"
        return nodes.literal(shown, shown)
    return nodes.Text(shown)


_SETTINGS = {
    "report_level": 5,  # nothing on stderr: problems become nodes, which the renderer leaves out
    "halt_level": 5,
    "warning_stream": io.StringIO(),
    "file_insertion_enabled": False,  # `.. include::` and `:file:` options never read another file
    "raw_enabled": False,
    "doctitle_xform": False,  # the top heading stays a section (level 1), as Markdown's `#` does
    "sectsubtitle_xform": False,
    "syntax_highlight": "none",
    "smart_quotes": False,
    "input_encoding": "unicode",
    "language_code": "en",
}


def parse_rst(text: str) -> nodes.document:
    _register_sphinx_directives()
    settings = dict(_SETTINGS, warning_stream=io.StringIO())
    return publish_doctree(text, parser=Parser(inliner=_text_roles()), settings_overrides=settings)


def rst_sections(text: str) -> list[Section]:
    """Sections of a reStructuredText document: headings by nesting level, each with its Markdown blocks."""
    document = parse_rst(text)
    sections: list[Section] = []
    _walk(document, 0, "", "", sections)
    return [s for s in sections if s.title or s.text]


def _walk(node: nodes.Element, level: int, title: str, anchor: str, out: list[Section]) -> None:
    blocks: list[str] = []
    children: list[nodes.section] = []
    for child in node.children:  # in reST a section's body comes before its subsections
        if isinstance(child, nodes.section):
            children.append(child)
        elif not isinstance(child, nodes.title):
            blocks.extend(_blocks(child))
    out.append(Section(title=title, level=level, text="\n\n".join(blocks), anchor=anchor, blocks=tuple(blocks)))
    for section in children:
        heading = section.next_node(nodes.title)
        words = " ".join(_plain(heading).split()) if heading is not None else ""
        ids: list[str] = list(section.get("ids", []))
        own = nodes.make_id(words)  # the id the heading gives itself, as Sphinx's HTML uses it
        _walk(section, level + 1, words, own if own in ids else (ids[0] if ids else ""), out)


def _plain(node: nodes.Node) -> str:
    return str(node.astext())


def _inline(node: nodes.Node) -> str:
    """Inline markup as Markdown text: code in backticks, strong and emphasis kept, references as their text."""
    if isinstance(node, nodes.Text):
        return str(node)
    if isinstance(node, nodes.literal):
        return f"`{node.astext()}`"
    if isinstance(node, nodes.strong):
        return f"**{''.join(_inline(c) for c in node.children)}**"
    if isinstance(node, nodes.emphasis):
        return f"*{''.join(_inline(c) for c in node.children)}*"
    if isinstance(node, nodes.footnote_reference | nodes.citation_reference):
        return f"[{node.astext()}]"
    if isinstance(node, nodes.problematic | nodes.system_message | nodes.target | nodes.substitution_definition):
        return node.astext() if isinstance(node, nodes.problematic) else ""
    if isinstance(node, nodes.image):
        return str(node.get("alt", ""))
    if isinstance(node, nodes.Element):
        return "".join(_inline(c) for c in node.children)
    return node.astext()


def _paragraph(node: nodes.Node) -> str:
    return " ".join(_inline(node).split())


def _blocks(node: nodes.Node, depth: int = 0) -> list[str]:
    """A body element as Markdown blocks (a list, a table, a code block and an admonition are one block each)."""
    if isinstance(node, nodes.paragraph | nodes.rubric):
        text = _paragraph(node)
        return [f"**{text}**" if isinstance(node, nodes.rubric) and text else text] if text else []
    if isinstance(node, nodes.literal_block | nodes.doctest_block):
        classes: list[str] = list(node.get("classes", []))
        language = next((c for c in classes if c not in ("code", "literal-block")), "")
        return [f"```{language}\n{node.astext().rstrip()}\n```"]
    if isinstance(node, nodes.bullet_list | nodes.enumerated_list):
        return [_list(node, depth)]
    if isinstance(node, nodes.definition_list | nodes.field_list | nodes.option_list):
        return [_definitions(node)]
    if isinstance(node, nodes.table):
        return [_table(node)]
    if isinstance(node, nodes.Admonition) and isinstance(node, nodes.Element):
        heading = node.next_node(nodes.title)
        label = _paragraph(heading) if heading is not None and heading.parent is node else node.tagname.title()
        inner = [b for c in node.children if not isinstance(c, nodes.title) for b in _blocks(c)]
        lead = f"**{label}:**"
        if inner and not inner[0].startswith(("```", "|", "- ", "1. ")):
            inner[0] = f"{lead} {inner[0]}"
        else:
            inner.insert(0, lead)
        return ["\n\n".join(inner)]  # one block: the note stays with what it says
    if isinstance(node, nodes.block_quote):
        inner = [b for c in node.children for b in _blocks(c, depth)]
        return ["\n".join(f"> {line}" if line else ">" for line in "\n\n".join(inner).splitlines())] if inner else []
    if isinstance(node, nodes.line_block):
        return ["\n".join(_paragraph(line) for line in node.findall(nodes.line))]
    if isinstance(node, nodes.topic | nodes.sidebar):
        heading = node.next_node(nodes.title)
        inner = [b for c in node.children if not isinstance(c, nodes.title) for b in _blocks(c)]
        return ([f"**{_paragraph(heading)}**"] if heading is not None else []) + inner
    if isinstance(node, nodes.footnote | nodes.citation):
        label = node.next_node(nodes.label)
        inner = [b for c in node.children if not isinstance(c, nodes.label) for b in _blocks(c)]
        return [f"[{label.astext() if label is not None else ''}] {' '.join(inner)}"] if inner else []
    if isinstance(node, nodes.figure):
        caption = node.next_node(nodes.caption)
        return [_paragraph(caption)] if caption is not None else []
    if isinstance(node, nodes.comment | nodes.system_message | nodes.target | nodes.substitution_definition
                  | nodes.raw | nodes.image | nodes.transition | nodes.pending):  # fmt: skip
        return []
    if isinstance(node, nodes.Element):  # containers, compound paragraphs, unknown wrappers: their children
        return [b for c in node.children for b in _blocks(c, depth)]
    text = " ".join(node.astext().split())
    return [text] if text else []


def _list(node: nodes.Element, depth: int) -> str:
    ordered = isinstance(node, nodes.enumerated_list)
    lines: list[str] = []
    pad = "   " * depth
    for number, item in enumerate(node.children, start=1):
        marker = f"{number}." if ordered else "-"
        first = True
        for child in item.children:
            if isinstance(child, nodes.bullet_list | nodes.enumerated_list):
                lines.append(_list(child, depth + 1))
                continue
            for block in _blocks(child, depth + 1):
                if first:
                    lines.append(f"{pad}{marker} {block}")
                    first = False
                else:
                    lines.append("\n".join(f"{pad}   {line}" for line in block.splitlines()))
    return "\n".join(lines)


def _definitions(node: nodes.Element) -> str:
    items: list[str] = []
    for item in node.children:
        if not isinstance(item, nodes.Element):
            continue
        term = item.next_node(nodes.term) or item.next_node(nodes.field_name) or item.next_node(nodes.option_group)
        body = (
            item.next_node(nodes.definition)
            or item.next_node(nodes.field_body)
            or item.next_node(nodes.description)
        )
        words = " ".join(_paragraph(term).split()) if term is not None else ""
        text = " ".join(b.replace("\n", " ") if not b.startswith("```") else b for b in _blocks(body)) if body else ""
        if words:
            items.append(f"- **{words}**: {text}" if text else f"- **{words}**")
    return "\n".join(items)


def _table(node: nodes.table) -> str:
    rows: list[list[str]] = []
    for row in node.findall(nodes.row):
        rows.append([" ".join(_paragraph(entry).split()).replace("|", "\\|") for entry in row.children])
    rows = [r for r in rows if r]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    title = node.next_node(nodes.title)
    lines = [f"**{_paragraph(title)}**", ""] if title is not None and title.parent is node else []
    lines += [f"| {' | '.join(rows[0])} |", f"|{'---|' * width}"] + [f"| {' | '.join(r)} |" for r in rows[1:]]
    return "\n".join(lines)
