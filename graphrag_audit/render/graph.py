"""The community forest as Mermaid, Graphviz DOT and GraphML: titles through ``sanitise.common.plain``,
then each medium's escaper (sanitise/graph.py; GraphML: networkx's XML writer)."""

from __future__ import annotations

from graphrag_audit.results.tree import SENT_VALUES, ForestView, Row, TreeView
from graphrag_audit.sanitise.common import plain
from graphrag_audit.sanitise.graph import dot_string, mermaid_text, xml_text

FORMAT_VERSION = 1
LABEL_TITLE_CHARS = 48
#: (class, fill colour, legend label) per what community_level N sends (SENT_VALUES order), then no report
_CLASSES = (
    ("both", "#74c476", "sent by graphrag >= 2.0 and < 2.0"),
    ("v2only", "#fd8d3c", "sent only by graphrag >= 2.0"),
    ("v1only", "#9e9ac8", "sent only by graphrag < 2.0"),
    ("notsent", "#d9d9d9", "not sent"),
    ("noreport", "#ffffff", "no report"),
)
SENT_CLASS = dict(zip(SENT_VALUES, (c for c, _, _ in _CLASSES)))
_FILL = {c: fill for c, fill, _ in _CLASSES}
#: Mermaid's default ``maxTextSize`` (mermaid 11 ``defaultConfig``): larger diagrams are refused
#: with "Maximum text size in diagram exceeded"; and its default ``maxEdges``
MERMAID_MAX_TEXT = 50_000
MERMAID_MAX_EDGES = 500


def tree_items(
    forest: ForestView, view: TreeView | None
) -> tuple[list[int], list[tuple[int, int]], list[Row], dict]:
    """(communities in tree order, parent->child edges, summary rows, hidden-below per community)."""
    nodes = forest.nodes
    rows = view.rows if view is not None else []
    order = [r.community for r in rows if r.kind == "community"] if view is not None else list(nodes)
    hidden = {r.community: r.hidden_below for r in rows if r.kind == "community" and r.hidden_below}
    shown = set(order)
    edges = [(nodes[n].parent, n) for n in order if nodes[n].parent in shown]
    return order, edges, [r for r in rows if r.kind == "more"], hidden


def _node_id(community: int) -> str:
    return f"c{community}" if community >= 0 else f"cm{-community}"


def _more_id(row: Row) -> str:
    return "more_roots" if row.community < 0 else f"more_{_node_id(row.community)}"


def _more_label(row: Row) -> str:
    leaves = "leaf" if row.more_leaves == 1 else "leaves"
    if row.community < 0:
        return (
            f"… {row.more:,} more roots ({row.more_communities:,} communities, {row.more_leaves:,} {leaves})"
        )
    what = "community" if row.more_communities == 1 else "communities"
    return f"… {row.more_communities:,} more {what} ({row.more_leaves:,} {leaves}) under {row.community}"


def _head(forest: ForestView, n: int, hidden: dict) -> str:
    nd = forest.nodes[n]
    parts = [str(n), f"level {nd.level}", f"{nd.entities:,} {'entity' if nd.entities == 1 else 'entities'}"]
    if nd.leaf:
        parts.append("leaf")
    elif n in hidden:
        parts.append(f"+{hidden[n]:,} hidden")
    if not nd.has_report and forest.has_reports_table:
        parts.append("no report")
    return " · ".join(parts)


def _cls(forest: ForestView, n: int) -> str | None:
    nd = forest.nodes[n]
    if nd.sent is None:
        return None
    return SENT_CLASS[nd.sent] if nd.has_report else "noreport"


def _is_forest(forest: ForestView, view: TreeView | None, more: list[Row]) -> bool:
    """More than one tree in the export: drawn left to right, so that the trees stack."""
    tops = forest.roots if view is None else view.tops
    return len(tops) + sum(1 for r in more if r.community < 0) > 1


def _legend(forest: ForestView, order: list[int], more: list[Row]) -> tuple[str, list[tuple[str, str]]]:
    """(legend title, [(class, label)]) for the fills used in this export (none without colour); a
    graphrag whose status is not exact (graphrag.compat) is marked ``(hyp.)``."""
    used = {_cls(forest, n) for n in order}
    if forest.has_reports_table and any(not forest.nodes[n].has_report for n in order):
        used.add("noreport")
    entries = []
    for c, _, label in _CLASSES:
        for b, who in (("v2", ">= 2.0"), ("v1", "< 2.0")):
            if forest.status(b) not in (None, "exact"):
                label = label.replace(who, who + " (hyp.)")
        if c in used:
            entries.append((c, label))
    if more:
        entries.append(("more", "hidden communities (--max-lines, --depth)"))
    n = forest.community_level
    return "legend" if n is None else f"legend: what community_level {n} sends", entries


def mermaid_size_warning(text: str) -> str | None:
    """One stderr line when a Mermaid export is past what Mermaid renders by default, else None."""
    edges = sum(1 for ln in text.splitlines() if " --> " in ln or " -.-> " in ln)
    size = len(text.encode("utf-16-le")) // 2  # JavaScript's string length, which Mermaid compares
    problems = []
    if size > MERMAID_MAX_TEXT:
        problems.append(f"{size:,} characters, over Mermaid's default maxTextSize of {MERMAID_MAX_TEXT:,}")
    if edges > MERMAID_MAX_EDGES:
        problems.append(f"{edges:,} edges, over Mermaid's default maxEdges of {MERMAID_MAX_EDGES:,}")
    if not problems:
        return None
    return (
        f"graphrag-audit: warning: the Mermaid diagram has {' and '.join(problems)}: GitHub and Mermaid "
        "will not render it; lower --max-lines, use --root/--depth, or export -f dot or -f graphml\n"
    )


def to_mermaid(forest: ForestView, view: TreeView | None = None, title_chars: int = LABEL_TITLE_CHARS) -> str:
    order, edges, more, hidden = tree_items(forest, view)
    lines = ["flowchart LR" if _is_forest(forest, view, more) else "flowchart TD"]
    for n in order:
        label = mermaid_text(_head(forest, n, hidden))
        if title := plain(forest.nodes[n].title, title_chars):
            label += "<br/>" + mermaid_text(title)
        lines.append(f'    {_node_id(n)}["{label}"]')
    lines += [f'    {_more_id(r)}["{mermaid_text(_more_label(r))}"]' for r in more]
    lines += [f"    {_node_id(parent)} --> {_node_id(child)}" for parent, child in edges]
    lines += [f"    {_node_id(r.community)} -.-> {_more_id(r)}" for r in more if r.community >= 0]
    classes: dict[str, list[str]] = {}
    for n in order:
        if (c := _cls(forest, n)) is not None:
            classes.setdefault(c, []).append(_node_id(n))
    lines += [f"    classDef {c} fill:{_FILL[c]},stroke:#555,color:#000" for c in sorted(classes)]
    lines += [f"    class {','.join(classes[c])} {c}" for c in sorted(classes)]
    if more:
        lines.append("    classDef more fill:#ffffff,stroke:#999,stroke-dasharray:4 3,color:#555")
        lines.append(f"    class {','.join(_more_id(r) for r in more)} more")
    title, entries = _legend(forest, order, more)
    if entries:
        lines += [f'    subgraph legend["{mermaid_text(title)}"]', "        direction TB"]
        lines += [f'        legend_{c}["{mermaid_text(label)}"]' for c, label in entries]
        lines.append("    end")
        for c, _ in entries:
            if c not in classes and c != "more":
                lines.append(f"    classDef {c} fill:{_FILL[c]},stroke:#555,color:#000")
            lines.append(f"    class legend_{c} {c}")
    return "\n".join(lines) + "\n"


def to_dot(forest: ForestView, view: TreeView | None = None, title_chars: int = LABEL_TITLE_CHARS) -> str:
    order, edges, more, hidden = tree_items(forest, view)
    lines = [
        "digraph communities {",
        f'    graph [rankdir={"LR" if _is_forest(forest, view, more) else "TB"}, charset="UTF-8"];',
        '    node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica"];',
    ]
    dashed = 'style="rounded,dashed"'
    for n in order:
        head = dot_string(_head(forest, n, hidden))
        title = plain(forest.nodes[n].title, title_chars)
        # join the two quoted strings with DOT's own line break: "head" + "\n" + "title"
        attrs = ["label=" + head[:-1] + ("\\n" + dot_string(title)[1:] if title else '"')]
        if (c := _cls(forest, n)) is not None:
            attrs.append(f'fillcolor="{_FILL[c]}"')
        if not forest.nodes[n].has_report and forest.has_reports_table:
            attrs.append(dashed)
        lines.append(f"    {_node_id(n)} [{', '.join(attrs)}];")
    more_style = 'style="dashed", fontcolor="#555555"'
    lines += [f"    {_more_id(r)} [label={dot_string(_more_label(r))}, {more_style}];" for r in more]
    lines += [f"    {_node_id(parent)} -> {_node_id(child)};" for parent, child in edges]
    lines += [
        f"    {_node_id(r.community)} -> {_more_id(r)} [style=dashed];" for r in more if r.community >= 0
    ]
    title, entries = _legend(forest, order, more)
    if entries:
        lines.append("    subgraph cluster_legend {")
        lines.append(f'        graph [label={dot_string(title)}, style="rounded", color="#999999"];')
        for c, label in entries:
            attrs = [f"label={dot_string(label)}", more_style if c == "more" else f'fillcolor="{_FILL[c]}"']
            if c == "noreport" and forest.has_reports_table:
                attrs.append(dashed)
            lines.append(f"        legend_{c} [{', '.join(attrs)}];")
        lines.append("    }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_graphml(forest: ForestView, view: TreeView | None = None) -> str:
    """GraphML as networkx's writer prints it."""
    import networkx as nx  # only here: its GraphML writer

    order, edges, more, hidden = tree_items(forest, view)
    g = nx.DiGraph()
    for n in order:
        nd = forest.nodes[n]
        g.add_node(
            _node_id(n),
            kind="community",
            community=nd.community,
            level=nd.level,
            entities=nd.entities,
            title=xml_text(nd.title),
            reports=nd.reports,
            leaf=int(nd.leaf),
            sent=nd.sent or "",
            hidden_below=hidden.get(n, 0),
            subtree_communities=nd.size,
        )
    for r in more:
        g.add_node(
            _more_id(r),
            kind="more",
            community=r.community,
            level=-1,
            entities=0,
            title=xml_text(_more_label(r)),
            reports=0,
            leaf=0,
            sent="",
            hidden_below=r.more_communities,
            subtree_communities=r.more_communities,
        )
    g.add_edges_from(((_node_id(p), _node_id(c)) for p, c in edges), kind="child")
    g.add_edges_from(((_node_id(r.community), _more_id(r)) for r in more if r.community >= 0), kind="more")
    g.graph["community_level"] = "" if forest.community_level is None else str(forest.community_level)
    return "\n".join(nx.generate_graphml(g)) + "\n"
