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
    n_ent = first["n_entities"] if "n_entities" in first else np.zeros(len(first), dtype=np.int64)
    g.add_nodes_from(
        (c, {"level": lv, "n_entities": n})
        for c, lv, n in zip(_ints(first["community"]), _ints(first["level"]), _ints(n_ent))
    )
    missing: dict[int, int] = {}
    if members is None:
        g.graph["source"] = "parent"
        comm = communities["community"].to_numpy().astype(np.int64)
        par = communities["parent"].to_numpy().astype(np.int64)
        linked = par >= 0
        known = linked & np.isin(par, comm)  # the parent has a row (is a node)
        g.add_edges_from(zip(par[known].tolist(), comm[known].tolist()))  # row order, as before
        gone = linked & ~known
        missing = dict(zip(comm[gone].tolist(), par[gone].tolist()))  # later rows win, as before
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
