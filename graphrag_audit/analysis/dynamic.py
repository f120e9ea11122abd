"""Dynamic community selection per graphrag line (graphrag/dynamic.py) at each audited community_level:
1.x reads a ``create_final_*`` layout, 2.x and 3.x a ``communities`` layout.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from graphrag_audit.graphrag.dynamic import (
    FAMILIES,
    DynamicInput,
    DynamicSettings,
    EndlessSelection,
    children_csr,
    children_from_nodes_v1,
    rating_prompt_tokens_by_family,
    simulate_family,
)
from graphrag_audit.io.coerce import text_column
from graphrag_audit.io.tables import read_table
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import (
    AuditOptions,
    DynamicByVersion,
    DynamicVersion,
    KeptCosts,
    LevelResult,
)

#: input orders the what-if's map step is packed in (ascending community order + seeded permutations)
KEPT_ORDERS = 8
#: trees with more levels get the simulation at ``--level`` and None only (each costs a wave per level)
DYNAMIC_ALL_LEVELS = 16
_FLOAT_TYPES = ("double", "float", "float64", "float32", "halffloat")


def not_communities(model: IndexModel, ids) -> list[int]:
    """The numbers of ``ids`` (sorted, distinct) in neither the communities nor the reports of ``model``."""
    want = np.unique(np.asarray(list(ids), dtype=np.int64))
    known = [model.communities["community"].to_numpy(dtype=np.int64)]
    if model.has_reports_table:
        known.append(model.reports["community"].to_numpy(dtype=np.int64))
    return want[~np.isin(want, np.concatenate(known))].tolist()


def dynamic_input(model: IndexModel, fams: tuple[str, ...], prompt=None) -> DynamicInput:
    """The selector's tables as arrays; ``prompt``: each report row's rating-call prompt tokens per line."""
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
        codes = pd.factorize(nodes["entity"], use_na_sentinel=False)[0].astype(np.int64)  # titles as codes
        off, val, match = children_from_nodes_v1(
            cid, nc, nodes["level"].to_numpy(dtype=np.int64), codes, rep_ids
        )
        no_parent = np.full(cid.size, -1, dtype=np.int64)
        return DynamicInput(cid, clv, no_parent, off, val, rep_ids, rep_lv, match, prompt)
    children = ct["children"] if "children" in ct.columns else None
    if children is None or (len(ct) and children.isna().all()):
        off, val = np.zeros(cid.size + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    else:
        off, val = children_csr(children)
    parent = ct["parent"].to_numpy(dtype=np.int64)
    return DynamicInput(cid, clv, parent, off, val, rep_ids, rep_lv, report_prompt_tokens=prompt)


def _layout_error(model: IndexModel, fams: tuple[str, ...]) -> str | None:
    """The exception graphrag 1.x raises reading this layout before any rating: loading create_final_nodes,
    then _communities (``cli/query.py``@v1.2.0), then filtering on ``community``
    (``indexer_adapters.py``@v1.2.0 L184), which 0.1-0.4 lack."""
    if fams != ("1.x",):
        return None
    for key, name in (("nodes", "create_final_nodes"), ("communities", "create_final_communities")):
        if key not in model.files:
            return f"ValueError: Could not find {name}.parquet in storage!"
    if "community" not in model.schemas.get("communities", {}):
        return "AttributeError: 'DataFrame' object has no attribute 'community'"
    return None


def kept_costs(coster, model: IndexModel, family: str, kept_ids, community_level) -> KeptCosts:
    """Global search's map step over the kept reports (each one's last candidate row, the selector's
    ``self.reports``), packed in ascending order and ``KEPT_ORDERS - 1`` seeded permutations, weighted as
    each line weighs."""
    levels = model.reports["level"].to_numpy(dtype=np.int64)
    crow = np.arange(len(levels)) if community_level is None else np.flatnonzero(levels <= community_level)
    ids = model.reports["community"].to_numpy(dtype=np.int64)[crow]
    rows = pd.Series(crow, index=ids).groupby(level=0).last().loc[sorted(kept_ids)].to_numpy()
    behaviour = "v1" if family == "1.x" else "v2"
    rng = np.random.default_rng(86)
    maps, toks = [], []
    for i in range(KEPT_ORDERS if rows.size > 1 else 1):
        order = rows if i == 0 else rows[rng.permutation(rows.size)]
        b = coster.selection_batches(order, behaviour, community_level)
        maps.append(int(b.n_batches))
        toks.append(int(b.total_tokens))
    exact = bool(b.counter_exact)
    return KeptCosts(maps[0], toks[0], (min(maps), max(maps)), (min(toks), max(toks)), len(maps), exact)


def _failed(family: str, error: str, descends: bool) -> DynamicVersion:
    return DynamicVersion(family, FAMILIES[family], error, descends, (), (), (), None, None)


def with_dynamic(
    model: IndexModel, levels: list[LevelResult], options: AuditOptions, coster=None
) -> list[LevelResult]:
    """``levels`` with each ``dynamic`` selection carrying its per-line simulation; with the costs'
    ``coster`` also the rating calls' prompt tokens and the what-if's map calls and tokens."""
    if not model.has_reports_table:
        return levels
    fams = ("1.x",) if model.generation.before_2 else ("2.x", "3.x")  # the lines that read this layout
    o = options  # resolve_options has set every dynamic setting
    assert o.threshold is not None and o.keep_parent is not None and o.num_repeats is not None
    assert o.max_level is not None and o.use_summary is not None
    ns = [r.community_level for r in levels]
    if len(ns) > DYNAMIC_ALL_LEVELS:
        ns = [n for n in ns if n is None or n == o.level] or [ns[-2] if len(ns) > 1 else ns[-1], ns[-1]]
    error = _layout_error(model, fams)
    if error is None:
        prompt = None
        if coster is not None:  # rated by full_content, or by summary (read only then; '' where missing)
            texts = model.reports["content"]
            if o.use_summary:
                path = model.files.get("reports")
                df = read_table(path, ["summary"]) if path is not None else None
                summary = df["summary"] if df is not None and "summary" in df.columns else None
                texts = text_column(summary, len(model.reports))
            prompt = rating_prompt_tokens_by_family(fams, texts, o.query, coster.counter)
        inp = dynamic_input(model, fams, prompt)
    dyn = {}
    for n in ns:
        st = DynamicSettings(n, o.threshold, o.keep_parent, o.num_repeats, o.max_level)
        versions = {}
        for f in fams:
            if error is not None:  # graphrag 1.x cannot load this layout
                versions[f] = _failed(f, error, False)
                continue
            try:
                v = simulate_family(inp, f, st, what_if=o.relevant)
            except EndlessSelection as exc:  # a cycle in the children: graphrag never returns
                v = _failed(f, f"never ends: {exc}", True)
            if v.what_if is not None and coster is not None:
                kc = kept_costs(coster, model, f, v.what_if.kept_ids, n)
                v = replace(v, what_if=replace(v.what_if, kept_costs=kc))
            versions[f] = v
        dyn[n] = DynamicByVersion(versions)
    return [
        LevelResult(n, {**r.selected, "dynamic": r.selected["dynamic"].with_(by_version=dyn[n])})
        if (n := r.community_level) in dyn
        else r
        for r in levels
    ]
