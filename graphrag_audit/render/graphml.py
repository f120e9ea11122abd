"""GraphML text, byte for byte what ``"\\n".join(networkx.generate_graphml(g)) + "\\n"`` writes for a
``networkx.DiGraph`` built with the same nodes, edges and attributes, without building the graph or
its XML element tree (at 100,000 communities those held about 1 GB; this holds the lines only).

What networkx 3 does, restated (``networkx/readwrite/graphml.py``, ``GraphMLWriter`` with its
defaults: pretty-printed, no type inference, numbered key ids) and serialised by ElementTree's
``tostring`` (us-ascii: every non-ASCII character becomes a decimal character reference):

* a ``<key>`` per (attribute name, XML type, scope) in the order first met: the graph's data, then
  each node's in node order, then each edge's; each new key is inserted at the top, so the keys are
  listed newest first;
* nodes in insertion order, each with its data in insertion order; then the edges grouped by source
  node in node order, each source's edges in the order added (a ``DiGraph``'s adjacency order);
  then the graph's own data at the end of ``<graph>``;
* element text escaped for ``&``, ``<``, ``>``; an empty text written as an empty element (``<data
  key="d8" />``); ``generate_graphml``'s ``splitlines`` turns any other line break into ``\\n``.

Values must be ``str``, ``int``, ``float`` or ``bool`` (what the exports use);
``GraphMLUnsupported`` is raised otherwise, and by an edge whose end is not a node (networkx would
add it bare), so the caller can fall back to networkx.
"""

from __future__ import annotations

from collections.abc import Iterator

from graphrag_audit.render.chunks import joined

_NS = (
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
    'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">'
)
#: networkx's GraphML type names for the Python types (its ``get_xml_type``); bool before int
_XML_TYPE = {bool: "boolean", int: "long", float: "double", str: "string"}
#: line boundaries str.splitlines knows besides "\n" that ElementTree leaves in text
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e"


class GraphMLUnsupported(ValueError):
    """The input needs networkx's general writer (an unsupported value type, or a bare edge end)."""


def _text(s: str) -> str:
    if "&" in s:
        s = s.replace("&", "&amp;")
    if "<" in s:
        s = s.replace("<", "&lt;")
    if ">" in s:
        s = s.replace(">", "&gt;")
    return s


def _attr(s: str) -> str:
    s = _text(s)
    for ch, ref in (('"', "&quot;"), ("\r", "&#13;"), ("\n", "&#10;"), ("\t", "&#09;")):
        if ch in s:
            s = s.replace(ch, ref)
    return s


def graphml_text(graph_data: dict, nodes: list[tuple[str, dict]], edges: list[tuple[str, str, dict]]) -> str:
    """The GraphML document of a directed graph: ``graph_data`` (the graph's attributes), ``nodes``
    [(id, attributes)] in order, ``edges`` [(source, target, attributes)] in the order added."""
    return "".join(GraphMLDocument(graph_data, nodes, edges).chunks())


class GraphMLDocument:
    """:func:`graphml_text` as consecutive text chunks (:meth:`chunks`), never held whole.

    Everything that can refuse the input (``GraphMLUnsupported``) is checked when the document is
    made, before any text is handed out: the keys must all be known before the first node is
    written, so the attributes are read once here and once more as the lines are written."""

    def __init__(self, graph_data: dict, nodes: list[tuple[str, dict]], edges: list[tuple[str, str, dict]]):
        self.graph_data, self.nodes = graph_data, nodes
        self.keys: dict[tuple[str, str, str], str] = {}
        for name, value in graph_data.items():  # keys in networkx's order: graph, nodes, edges
            self._key(str(name), value, "graph")
        node_ids = set()
        for nid, attrs in nodes:
            if nid in node_ids:
                raise GraphMLUnsupported(f"node {nid!r} twice")
            node_ids.add(nid)
            for name, value in attrs.items():
                self._key(str(name), value, "node")
        self.by_source: dict[str, list[tuple[str, dict]]] = {}
        for s, t, attrs in edges:
            if s not in node_ids or t not in node_ids:
                raise GraphMLUnsupported(f"edge {s!r} -> {t!r} to a node not added")
            self.by_source.setdefault(s, []).append((t, attrs))
        for nid, _ in nodes:  # (the edges' keys in the order they are written)
            for _t, attrs in self.by_source.get(nid, ()):
                for name, value in attrs.items():
                    self._key(str(name), value, "edge")

    def _key(self, name: str, value, scope: str) -> str:
        t = _XML_TYPE.get(type(value))
        if t is None:
            raise GraphMLUnsupported(f"GraphML value of type {type(value).__name__} for {name!r}")
        k = (name, t, scope)
        kid = self.keys.get(k)
        if kid is None:
            kid = self.keys[k] = f"d{len(self.keys)}"
        return kid

    def _data(self, attrs: dict, scope: str, indent: str) -> Iterator[str]:
        for name, value in attrs.items():
            kid = self.keys[(str(name), _XML_TYPE[type(value)], scope)]
            text = str(value)
            yield (
                f'{indent}<data key="{kid}">{_text(text)}</data>\n'
                if text
                else f'{indent}<data key="{kid}" />\n'
            )

    def _lines(self) -> Iterator[str]:
        """Every line of the document, each ending in a newline."""
        yield _NS + "\n"
        for (name, t, scope), kid in reversed(list(self.keys.items())):
            yield f'  <key id="{kid}" for="{scope}" attr.name="{_attr(name)}" attr.type="{t}" />\n'
        if not self.nodes and not self.graph_data:
            yield '  <graph edgedefault="directed" />\n'
        else:
            yield '  <graph edgedefault="directed">\n'
            for nid, attrs in self.nodes:
                if attrs:
                    yield f'    <node id="{_attr(nid)}">\n'
                    yield from self._data(attrs, "node", "      ")
                    yield "    </node>\n"
                else:
                    yield f'    <node id="{_attr(nid)}" />\n'
            for nid, _ in self.nodes:
                for t, attrs in self.by_source.get(nid, ()):
                    head = f'    <edge source="{_attr(nid)}" target="{_attr(t)}"'
                    if attrs:
                        yield head + ">\n"
                        yield from self._data(attrs, "edge", "      ")
                        yield "    </edge>\n"
                    else:
                        yield head + " />\n"
            yield from self._data(self.graph_data, "graph", "    ")
            yield "  </graph>\n"
        yield "</graphml>\n"

    def chunks(self) -> Iterator[str]:
        """The document in chunks of whole lines. ElementTree's us-ascii output (character
        references) and ``generate_graphml``'s ``splitlines`` act on each chunk as on the whole:
        a chunk ends with a line's own newline, so no line break straddles two chunks."""
        for chunk in joined(self._lines()):
            if not chunk.isascii():
                chunk = chunk.encode("ascii", "xmlcharrefreplace").decode("ascii")
            if any(ch in chunk for ch in _OTHER_BREAKS):
                chunk = "\n".join(chunk.splitlines()) + "\n"
            yield chunk
