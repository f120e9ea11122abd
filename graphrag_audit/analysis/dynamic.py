"""Dynamic community selection per graphrag line, on one index, at each audited community_level.

Builds graphrag/dynamic.py's :class:`DynamicInput` from the :class:`IndexModel` once, then runs
``simulate_all`` per community_level (the cap on the candidates) for the lines that can read the
layout: a ``create_final_*`` layout is read by 1.x (children rebuilt from ``create_final_nodes`` by
entity containment, ``children_from_nodes_v1``), a ``communities`` layout by 2.x and 3.x (children
from the ``children`` column).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from graphrag_audit.graphrag.dynamic import (FAMILIES, DynamicInput, DynamicSettings, EndlessSelection, Scenario,
                                             children_csr, children_from_nodes_v1, simulate_all)
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import DynamicByVersion, DynamicScenario, DynamicVersion

__all__ = ["dynamic_by_level", "dynamic_families", "dynamic_input"]

_FLOAT_TYPES = ("double", "float", "float64", "float32", "halffloat")


def dynamic_families(model: IndexModel) -> tuple[str, ...]:
    """The graphrag lines whose dynamic selection reads this layout (none without reports)."""
    if not model.has_reports_table:
        return ()
    return ("1.x",) if model.generation.before_2 else ("2.x", "3.x")


def dynamic_input(model: IndexModel) -> DynamicInput | None:
    """The selector's tables as arrays (None when no line reads the layout)."""
    fams = dynamic_families(model)
    if not fams:
        return None
    ct, rt = model.communities, model.reports
    cid = ct["community"].to_numpy(dtype=np.int64)
    clv = ct["level"].to_numpy(dtype=np.int64)
    rep_ids = rt["community"].to_numpy(dtype=np.int64)
    rep_lv = rt["level"].to_numpy(dtype=np.int64)
    if fams == ("1.x",):
        nodes = model.rollup_rows
        nc = nodes["community"].to_numpy(dtype=np.int64)
        if str(model.schemas.get("nodes", {}).get("community", "")).lower() in _FLOAT_TYPES:
            # graphrag reads a float column (nulls present): the model's -1 is its NaN
            nc = np.where(nc == -1, np.nan, nc.astype(np.float64))
        codes = pd.factorize(nodes["entity"], use_na_sentinel=False)[0].astype(np.int64)  # entity codes as titles
        off, val, match = children_from_nodes_v1(cid, nc, nodes["level"].to_numpy(dtype=np.int64), codes, rep_ids)
        return DynamicInput(cid, clv, np.full(cid.size, -1, dtype=np.int64), off, val, rep_ids, rep_lv, match)
    children = ct["children"] if "children" in ct.columns else None
    if children is None or (len(ct) and children.isna().all()):
        off, val = np.zeros(cid.size + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    else:
        off, val = children_csr(children)
    return DynamicInput(cid, clv, ct["parent"].to_numpy(dtype=np.int64), off, val, rep_ids, rep_lv)


def _v1_unreadable(model: IndexModel) -> str | None:
    """What graphrag 1.1.1-1.2.x raises building the selector's communities, when it cannot.

    ``global_search`` calls ``read_indexer_communities`` first (graphrag/api/query.py@v1.2.0), which
    reads ``communities_df.community`` before anything else (graphrag/query/indexer_adapters.py@v1.2.0
    ``missing_reports = communities_df[~communities_df.community.isin(...)]``): a 0.1-0.4
    ``create_final_communities`` has no ``community`` column."""
    if "community" not in model.schemas.get("communities", {}):
        return "AttributeError: 'DataFrame' object has no attribute 'community'"
    return None


def _scenario(sc: Scenario | None, what_if: bool = False) -> DynamicScenario | None:
    if sc is None:
        return None
    return DynamicScenario(sc.rating_calls, tuple(sc.kept_ids), tuple(sc.waves),
                           tuple(sc.relevant_ids or ()) if what_if else None)


def dynamic_by_level(model: IndexModel, levels, *, threshold: int = 1, keep_parent: bool = False,
                     num_repeats: int = 1, max_level: int = 2,
                     relevant=None) -> dict:
    """{community_level: DynamicByVersion} for each N of ``levels`` (None = no cap); {} when no
    graphrag line reads the layout. ``relevant``: community numbers for the what-if (None: none)."""
    fams = dynamic_families(model)
    inp = dynamic_input(model) if fams else None
    if inp is None:
        return {}
    unreadable = _v1_unreadable(model) if fams == ("1.x",) else None
    out = {}
    for n in levels:
        st = DynamicSettings(community_level=n, threshold=threshold, keep_parent=keep_parent,
                             num_repeats=num_repeats, max_level=max_level)
        versions = {}
        for f in fams:
            if unreadable is not None:
                versions[f] = DynamicVersion(family=f, graphrag=FAMILIES[f], error=unreadable, descends=False,
                                             start_ids=(), cut_off_ids=(), unreachable_ids=(), none_relevant=None,
                                             all_relevant=None)
                continue
            try:
                r = simulate_all(inp, (f,), st, what_if=relevant)[f]
            except EndlessSelection as exc:  # a cycle in the children: graphrag never returns
                versions[f] = DynamicVersion(family=f, graphrag=FAMILIES[f], error=f"never ends: {exc}",
                                             descends=True, start_ids=(), cut_off_ids=(), unreachable_ids=(),
                                             none_relevant=None, all_relevant=None)
                continue
            versions[f] = DynamicVersion(
                family=f, graphrag=r.graphrag, error=r.error, descends=r.descends, start_ids=tuple(r.start_ids),
                cut_off_ids=tuple(r.cut_off_ids), unreachable_ids=tuple(r.unreachable_ids),
                none_relevant=_scenario(r.none_relevant), all_relevant=_scenario(r.all_relevant),
                what_if=_scenario(r.what_if, what_if=True) if relevant is not None else None)
        out[n] = DynamicByVersion(versions)
    return out
