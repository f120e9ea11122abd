"""Reference community trees for the tests, built with networkx straight from the tables
(independently of ``model.forest``): the graph the ``parent`` column describes, row by row, or
the one graphrag 0.x-0.9's per-level membership implies."""

from __future__ import annotations

import networkx as nx
import numpy as np


def reference_graph(model) -> nx.DiGraph:
    """Parent -> child DiGraph of ``model``: nodes in first-row order with ``level`` and
    ``n_entities``; edges in the order they are first given (so ``g.pred[c]`` lists ``c``'s
    parents first parent first)."""
    c = model.communities
    g = nx.DiGraph()
    first = c.drop_duplicates("community")
    for n, lv, k in zip(first["community"].tolist(), first["level"].tolist(), first["n_entities"].tolist()):
        g.add_node(int(n), level=int(lv), n_entities=int(k))
    if model.tree_source == "parent":
        for n, p in zip(c["community"].tolist(), c["parent"].tolist()):
            if p >= 0 and p in g:
                g.add_edge(int(p), int(n))
        return g
    # membership (the nodes table's rows when there is one): an entity in P at level L and in C
    # at level L+1 makes P a parent of C, edges added sorted by (parent, child)
    rows = model.members
    if "nodes" in model.files:
        rows = model.rollup_rows[model.rollup_rows["community"] >= 0]
    at: dict[tuple, set] = {}
    for e, n, lv in zip(rows["entity"].tolist(), rows["community"].tolist(), rows["level"].tolist()):
        at.setdefault((e, int(lv)), set()).add(int(n))
    pairs: dict[tuple[int, int], int] = {}
    for (e, lv), comms in at.items():
        for p in comms:
            for k in at.get((e, lv + 1), ()):
                if p != k:
                    pairs[(p, k)] = pairs.get((p, k), 0) + 1
    for (p, k), w in sorted(pairs.items()):
        g.add_edge(p, k, shared=w)
    return g


def first_parents(g: nx.DiGraph) -> dict[int, int]:
    """{community: its first parent (first predecessor)} for communities with a parent."""
    return {int(n): int(next(iter(g.pred[n]))) for n in g.nodes if g.pred[n]}


def children_by_first_parent(g: nx.DiGraph) -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {int(n): [] for n in g.nodes}
    for n, p in first_parents(g).items():
        kids[p].append(n)
    return {k: sorted(v) for k, v in kids.items()}


def edges(forest) -> set[tuple[int, int]]:
    return set(zip(np.asarray(forest.edge_parents).tolist(), np.asarray(forest.edge_children).tolist()))
