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

_NS = ('<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
       'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
       'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
       'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">')
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
    keys: dict[tuple[str, str, str], str] = {}

    def key(name: str, value, scope: str) -> str:
        t = _XML_TYPE.get(type(value))
        if t is None:
            raise GraphMLUnsupported(f"GraphML value of type {type(value).__name__} for {name!r}")
        k = (name, t, scope)
        kid = keys.get(k)
        if kid is None:
            kid = keys[k] = f"d{len(keys)}"
        return kid

    def data(attrs: dict, scope: str, indent: str) -> list[str]:
        out = []
        for name, value in attrs.items():
            kid = key(str(name), value, scope)
            text = str(value)
            out.append(f'{indent}<data key="{kid}">{_text(text)}</data>' if text
                       else f'{indent}<data key="{kid}" />')
        return out

    graph_lines = data(graph_data, "graph", "    ")  # keys in networkx's order: graph, nodes, edges
    body: list[str] = []
    node_ids = set()
    for nid, attrs in nodes:
        if nid in node_ids:
            raise GraphMLUnsupported(f"node {nid!r} twice")
        node_ids.add(nid)
        inner = data(attrs, "node", "      ")
        if inner:
            body.append(f'    <node id="{_attr(nid)}">')
            body.extend(inner)
            body.append("    </node>")
        else:
            body.append(f'    <node id="{_attr(nid)}" />')
    by_source: dict[str, list[tuple[str, dict]]] = {}
    for s, t, attrs in edges:
        if s not in node_ids or t not in node_ids:
            raise GraphMLUnsupported(f"edge {s!r} -> {t!r} to a node not added")
        by_source.setdefault(s, []).append((t, attrs))
    for nid, _ in nodes:
        for t, attrs in by_source.get(nid, ()):
            inner = data(attrs, "edge", "      ")
            head = f'    <edge source="{_attr(nid)}" target="{_attr(t)}"'
            if inner:
                body.append(head + ">")
                body.extend(inner)
                body.append("    </edge>")
            else:
                body.append(head + " />")
    lines = [_NS]
    for (name, t, scope), kid in reversed(list(keys.items())):
        lines.append(f'  <key id="{kid}" for="{scope}" attr.name="{_attr(name)}" attr.type="{t}" />')
    if body or graph_lines:
        lines.append('  <graph edgedefault="directed">')
        lines.extend(body)
        lines.extend(graph_lines)
        lines.append("  </graph>")
    else:
        lines.append('  <graph edgedefault="directed" />')
    lines.append("</graphml>")
    text = "\n".join(lines) + "\n"
    if not text.isascii():  # ElementTree's us-ascii output: character references
        text = text.encode("ascii", "xmlcharrefreplace").decode("ascii")
    if any(ch in text for ch in _OTHER_BREAKS):  # then generate_graphml's splitlines and "\n".join
        text = "\n".join(text.splitlines()) + "\n"
    return text
