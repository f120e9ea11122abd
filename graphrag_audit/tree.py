"""The community tree as a networkx forest (edges parent -> child)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd


def build_tree(communities: pd.DataFrame, members: pd.DataFrame | None) -> nx.DiGraph:
    """From the ``parent`` column, or (``members`` given) from per-level membership.

    Membership derivation: an entity in community P at level L and in C at level L+1 makes
    P the parent of C (graphrag 0.x–0.9 wrote no parent column). Update outputs can give a
    community several parents; every such edge is kept, weighted by shared entities.
    Graph attributes: ``source`` ("parent"/"membership"), ``missing_parents`` {child: parent}.
    """
    g = nx.DiGraph()
    first = communities.drop_duplicates("community")
    g.add_nodes_from(
        (int(c), {"level": int(lv), "n_entities": int(n)})
        for c, lv, n in zip(first["community"], first["level"], first["n_entities"] if "n_entities" in first else np.zeros(len(first), dtype=np.int64))
    )
    missing: dict[int, int] = {}
    if members is None:
        g.graph["source"] = "parent"
        for c, p in zip(communities["community"].to_numpy(), communities["parent"].to_numpy()):
            c, p = int(c), int(p)
            if p < 0:
                continue
            if p in g:
                g.add_edge(p, c)
            else:
                missing[c] = p
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


def leaves(tree: nx.DiGraph) -> set[int]:
    return {n for n in tree.nodes if tree.out_degree(n) == 0}


def frontier(tree: nx.DiGraph, n: int | None) -> set[int]:
    """{communities at level n} ∪ {leaves at level < n}; all leaves when n is None."""
    out = set()
    for c, d in tree.nodes(data=True):
        lv = d["level"]
        if n is None:
            if tree.out_degree(c) == 0:
                out.add(c)
        elif lv == n or (lv < n and tree.out_degree(c) == 0):
            out.add(c)
    return out
