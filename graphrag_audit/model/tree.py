"""The community tree: edge arrays for the analyses, and a networkx forest (edges parent -> child).

Every analysis of ``levels`` works on :class:`TreeLinks` (numpy arrays). The networkx graph
(``IndexModel.tree``) is built from the ``parent`` column only when a view needs it (``tree``,
``report``, ``plan``): on a 1M-entity index it costs about 0.3 s and 100 MB that ``levels``
never uses. Trees derived from membership rows (graphrag 0.x-0.9) are small and built at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class TreeLinks:
    """The forest as arrays, equal to the networkx graph :func:`build_tree` makes.

    ``nodes``: every community number once (the graph's node order). ``parents[i] ->
    children[i]``: every distinct edge once, in the order the edges were first given (for a
    ``parent`` column: row order), so a community's first edge names its first parent.
    ``missing_parents``: {child: parent} for parents with no row (no edge is made for them).
    """

    nodes: np.ndarray
    parents: np.ndarray
    children: np.ndarray
    missing_parents: dict[int, int] = field(default_factory=dict)


def parent_links(communities: pd.DataFrame) -> TreeLinks:
    """:class:`TreeLinks` of the ``parent`` column, without building a graph."""
    nodes = communities["community"].drop_duplicates().to_numpy().astype(np.int64)
    comm = communities["community"].to_numpy().astype(np.int64)
    par = communities["parent"].to_numpy().astype(np.int64)
    linked = par >= 0
    known = linked & np.isin(par, comm)  # the parent has a row (is a node)
    u, v = par[known], comm[known]
    if len(u):  # distinct edges, first occurrence first (a DiGraph keeps one of each)
        first = ~pd.DataFrame({"u": u, "v": v}).duplicated().to_numpy()
        u, v = u[first], v[first]
    gone = linked & ~known
    missing = dict(zip(comm[gone].tolist(), par[gone].tolist()))  # later rows win
    return TreeLinks(nodes=nodes, parents=u, children=v, missing_parents=missing)


def graph_links(g: nx.DiGraph) -> TreeLinks:
    """:class:`TreeLinks` of a graph: its node order; edges child by child (node order), each
    child's parents in the order they were added (so the first edge names the first parent)."""
    e = np.array([(p, c) for c, preds in g.pred.items() for p in preds], dtype=np.int64).reshape(-1, 2)
    nodes = np.fromiter(g.nodes, dtype=np.int64, count=g.number_of_nodes())
    return TreeLinks(nodes=nodes, parents=e[:, 0], children=e[:, 1],
                     missing_parents=dict(g.graph.get("missing_parents", {})))


def build_tree(communities: pd.DataFrame, members: pd.DataFrame | None) -> nx.DiGraph:
    """From the ``parent`` column, or (``members`` given) from per-level membership.

    Membership derivation: an entity in community P at level L and in C at level L+1 makes
    P the parent of C (graphrag 0.x–0.9 wrote no parent column). Update outputs can give a
    community several parents; every such edge is kept, weighted by shared entities.
    Graph attributes: ``source`` ("parent"/"membership"), ``missing_parents`` {child: parent}.
    """
    import networkx as nx

    g = nx.DiGraph()
    first = communities.drop_duplicates("community")
    n_ent = first["n_entities"] if "n_entities" in first else np.zeros(len(first), dtype=np.int64)
    g.add_nodes_from(
        (c, {"level": lv, "n_entities": n})
        for c, lv, n in zip(_ints(first["community"]), _ints(first["level"]), _ints(n_ent))
    )
    missing: dict[int, int] = {}
    if members is None:
        g.graph["source"] = "parent"
        links = parent_links(communities)  # distinct edges in row order: the graph's edge order
        g.add_edges_from(zip(links.parents.tolist(), links.children.tolist()))
        missing = links.missing_parents
    else:
        g.graph["source"] = "membership"
        m = members[["entity", "community", "level"]]
        lower = m.assign(level=m["level"] - 1)
        pairs = m.merge(lower, on=["entity", "level"], suffixes=("_p", "_c"))
        pairs = pairs[pairs["community_p"] != pairs["community_c"]]
        counts = pairs.groupby(["community_p", "community_c"]).size()
        for (p, c), w in counts.items():
            g.add_edge(int(p), int(c), shared=int(w))
    g.graph["missing_parents"] = missing
    return g


def _ints(values) -> list[int]:
    return np.asarray(values).astype(np.int64).tolist()
