"""Graph formats: Mermaid labels, Graphviz DOT strings, GraphML (XML) text."""

from __future__ import annotations

import re

from graphrag_audit.sanitise.common import plain

#: HTML-entity-like codes Mermaid decodes (``#35;``), so no label character is Mermaid or HTML syntax
_MERMAID_CODES = str.maketrans(
    {ch: f"#{ord(ch)};" for ch in "#&<>`|{}[]"} | {'"': "#quot;", "\\": "#92;#8203;"}
)


def mermaid_text(text) -> str:
    """Text safe inside a double-quoted Mermaid label: no quote, no HTML, no markdown.

    A backslash is followed by a zero-width space: Mermaid 11 turns a literal backslash-n in an
    HTML label into a line break (checked with mermaid.min.js 11 in headless Chromium)."""
    return plain(text).translate(_MERMAID_CODES)


def dot_string(text) -> str:
    """A DOT double-quoted string (quotes included) of untrusted text."""
    s = plain(text).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'


_XML_BAD = re.compile("[\ufffe\uffff]")


def xml_text(text) -> str:
    """Text for an XML attribute or element written by an XML writer (GraphML through networkx,
    which escapes the markup): :func:`plain`, without the noncharacters XML forbids."""
    return _XML_BAD.sub("", plain(text))
