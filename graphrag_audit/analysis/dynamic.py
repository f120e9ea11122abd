"""Dynamic community selection per graphrag line, on one index, at each audited community_level.

Builds graphrag/dynamic.py's :class:`DynamicInput` from the :class:`IndexModel` once, then runs
``simulate_family`` per community_level (the cap on the candidates) for the lines that can read the
layout: a ``create_final_*`` layout is read by 1.x (children rebuilt from ``create_final_nodes`` by
entity containment, ``children_from_nodes_v1``), a ``communities`` layout by 2.x and 3.x (children
from the ``children`` column).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from graphrag_audit.graphrag.dynamic import (
    FAMILIES,
    DynamicInput,
    DynamicSettings,
    EndlessSelection,
    Scenario,
    children_csr,
    children_from_nodes_v1,
    rating_prompt_tokens_by_family,
    simulate_family,
)
from graphrag_audit.io.coerce import text_column
from graphrag_audit.io.settings import DYNAMIC_SEARCH_KEYS, read_dynamic_settings
from graphrag_audit.io.tables import read_table
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import DynamicByVersion, DynamicScenario, DynamicVersion, KeptCosts

#: input orders the what-if's map step is packed in (ascending community order + seeded permutations)
KEPT_ORDERS = 8

__all__ = [
    "dynamic_by_level",
    "dynamic_families",
    "dynamic_input",
    "not_communities",
    "resolve_dynamic_options",
]

_FLOAT_TYPES = ("double", "float", "float64", "float32", "halffloat")


def dynamic_families(model: IndexModel) -> tuple[str, ...]:
    """The graphrag lines whose dynamic selection reads this layout (none without reports)."""
    if not model.has_reports_table:
        return ()
    return ("1.x",) if model.generation.before_2 else ("2.x", "3.x")


def not_communities(model: IndexModel, ids) -> list[int]:
    """The numbers of ``ids`` (sorted, distinct) that are no community of ``model``: in neither
    its communities (as read or derived) nor its reports. A what-if id among them would never be
    rated (``levels --relevant`` refuses them)."""
    want = np.unique(np.asarray(list(ids), dtype=np.int64))
    known = [model.communities["community"].to_numpy(dtype=np.int64)]
    if model.has_reports_table:
        known.append(model.reports["community"].to_numpy(dtype=np.int64))
    return want[~np.isin(want, np.concatenate(known))].tolist()


def resolve_dynamic_options(options, model: IndexModel):
    """``options`` with every dynamic-selection knob set: the value given, else the project's
    ``global_search.dynamic_search_*`` (when the index was reached through a settings file), else
    graphrag's default; ``dynamic_from`` records which for each."""
    from_file = read_dynamic_settings(model.settings_file) if model.settings_file is not None else {}
    values, origin = {}, []
    for knob, (_kind, default) in DYNAMIC_SEARCH_KEYS.items():
        given = getattr(options, knob)
        if given is not None:
            values[knob], src = given, "option"
        elif model.settings_file is not None and knob in from_file:
            values[knob], src = from_file[knob], model.settings_file.name
        else:
            values[knob], src = default, "graphrag default"
        origin.append((knob, src))
    return dataclasses.replace(options, **values, dynamic_from=tuple(origin))


def report_descriptions(model: IndexModel, use_summary: bool = False):
    """The text each report is rated by: ``full_content`` (as the costs read it), or ``summary``
    (``dynamic_search_use_summary``, read from the reports table only then; '' where it is missing)."""
    return report_description_column(model, use_summary).to_numpy(dtype=object)


def report_description_column(model: IndexModel, use_summary: bool = False) -> pd.Series:
    """:func:`report_descriptions` as the column itself."""
    if not use_summary:
        return model.reports["content"]
    path = model.files.get("reports")
    n = len(model.reports)
    df = read_table(path, ["summary"]) if path is not None else None
    col = df["summary"] if df is not None and "summary" in df.columns else None
    return text_column(col, n)


def dynamic_input(
    model: IndexModel, counter=None, *, use_summary: bool = False, query: str = ""
) -> DynamicInput | None:
    """The selector's tables as arrays (None when no line reads the layout). With a token
    ``counter``, each report row's rating-call prompt tokens per line (``rating_prompt_tokens_by_family``)."""
    fams = dynamic_families(model)
    if not fams:
        return None
    prompt = None
    if counter is not None:
        texts = report_description_column(model, use_summary)
        prompt = rating_prompt_tokens_by_family(fams, texts, query, counter)
    return _arrays(model, fams, prompt)


def _arrays(model: IndexModel, fams: tuple[str, ...], prompt) -> DynamicInput:
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
        return DynamicInput(
            cid, clv, np.full(cid.size, -1, dtype=np.int64), off, val, rep_ids, rep_lv, match, prompt
        )
    children = ct["children"] if "children" in ct.columns else None
    if children is None or (len(ct) and children.isna().all()):
        off, val = np.zeros(cid.size + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    else:
        off, val = children_csr(children)
    return DynamicInput(
        cid,
        clv,
        ct["parent"].to_numpy(dtype=np.int64),
        off,
        val,
        rep_ids,
        rep_lv,
        report_prompt_tokens=prompt,
    )


def _scenario(
    sc: Scenario | None, what_if: bool = False, kept_costs: KeptCosts | None = None
) -> DynamicScenario | None:
    if sc is None:
        return None
    return DynamicScenario(
        sc.rating_calls,
        tuple(sc.kept_ids),
        tuple(sc.waves),
        tuple(sc.relevant_ids or ()) if what_if else None,
        sc.prompt_tokens,
        kept_costs,
    )


def _layout_error(model: IndexModel, fams: tuple[str, ...]) -> str | None:
    """The exception graphrag 1.x raises reading this layout for the selector, before any rating:
    its query reads create_final_nodes, _entities and _communities (``cli/query.py``@v1.2.0 ``run_global_search``:
    ``_resolve_output_files`` over create_final_nodes, _entities, _communities, _community_reports), and
    ``read_indexer_communities`` filters on its ``community`` column (``indexer_adapters.py``@v1.2.0
    L184), which 0.1-0.4 layouts lack."""
    if fams != ("1.x",):
        return None
    # the tables in the order cli/query.py@v1.2.0 run_global_search loads them; the first missing one
    # raises in utils/storage.py@v1.2.0 load_table_from_storage
    # (create_final_entities is loaded too, but only by the CLI: the Python API and --verify take the
    # frames the caller read, and graphrag's selector never reads entities, so it is not required here)
    for key, name in (("nodes", "create_final_nodes"), ("communities", "create_final_communities")):
        if key not in model.files:
            return f"ValueError: Could not find {name}.parquet in storage!"
    if "community" not in model.schemas.get("communities", {}):
        return "AttributeError: 'DataFrame' object has no attribute 'community'"
    return None


def kept_rows(report_ids: np.ndarray, report_levels: np.ndarray, kept_ids, community_level) -> np.ndarray:
    """The report rows of the kept communities: for each, the last candidate row of its number
    (the selector's ``self.reports`` dict), in ascending community order."""
    crow = (
        np.arange(report_ids.size)
        if community_level is None
        else np.flatnonzero(report_levels <= community_level)
    )
    ids = report_ids[crow]
    # the last row of each number: a stable sort by number, then the last of each run
    o = np.argsort(ids, kind="stable")
    s = ids[o]
    last = np.ones(s.size, dtype=bool)
    last[:-1] = s[1:] != s[:-1]
    u, rows = s[last], crow[o[last]]
    kept = np.asarray(sorted(kept_ids), dtype=np.int64)
    pos = np.searchsorted(u, kept)
    return rows[pos]


def kept_costs(
    coster, model: IndexModel, family: str, kept_ids, community_level, orders: int = KEPT_ORDERS
) -> KeptCosts:
    """Global search's map step over the kept reports (``GlobalCommunityContext.build_context`` passes
    the selector's reports to ``build_community_context``): packed by the costs' context batching in
    ascending community order and in ``orders - 1`` seeded permutations. Occurrence weights as each
    line computes them (1.x from create_final_nodes at N, 2.x/3.x from the communities' members)."""
    rep = model.reports
    rows = kept_rows(
        rep["community"].to_numpy(dtype=np.int64),
        rep["level"].to_numpy(dtype=np.int64),
        kept_ids,
        community_level,
    )
    behaviour = "v1" if family == "1.x" else "v2"
    rng = np.random.default_rng(86)
    maps, toks = [], []
    exact = True
    for i in range(max(1, orders) if rows.size > 1 else 1):
        order = rows if i == 0 else rows[rng.permutation(rows.size)]
        b = coster.selection_batches(order, behaviour, community_level)
        maps.append(int(b.n_batches))
        toks.append(int(b.total_tokens))
        exact = bool(b.counter_exact)
    return KeptCosts(maps[0], toks[0], (min(maps), max(maps)), (min(toks), max(toks)), len(maps), exact)


def dynamic_by_level(
    model: IndexModel,
    levels,
    *,
    threshold: int = 1,
    keep_parent: bool = False,
    num_repeats: int = 1,
    max_level: int = 2,
    relevant=None,
    coster=None,
    use_summary: bool = False,
    query: str = "",
) -> dict:
    """{community_level: DynamicByVersion} for each N of ``levels`` (None = no cap); {} when no
    graphrag line reads the layout. ``relevant``: community numbers for the what-if (None: none).
    With a :class:`~graphrag_audit.analysis.costs.ContextCoster` (``coster``), the rating calls'
    prompt tokens (its tokenizer; ``use_summary``, ``query`` as graphrag's settings) and the
    what-if's map calls and tokens."""
    fams = dynamic_families(model)
    if not fams:
        return {}
    fixed_error = _layout_error(model, fams)
    inp = (
        None
        if fixed_error
        else dynamic_input(
            model, None if coster is None else coster.counter, use_summary=use_summary, query=query
        )
    )
    out = {}
    for n in levels:
        if inp is None:
            out[n] = DynamicByVersion(
                {
                    f: DynamicVersion(
                        family=f,
                        graphrag=FAMILIES[f],
                        error=fixed_error,
                        descends=False,
                        start_ids=(),
                        cut_off_ids=(),
                        unreachable_ids=(),
                        none_relevant=None,
                        all_relevant=None,
                    )
                    for f in fams
                }
            )
            continue
        st = DynamicSettings(
            community_level=n,
            threshold=threshold,
            keep_parent=keep_parent,
            num_repeats=num_repeats,
            max_level=max_level,
        )
        versions = {}
        for f in fams:
            try:
                r = simulate_family(inp, f, st, what_if=relevant)
            except EndlessSelection as exc:  # a cycle in the children: graphrag never returns
                versions[f] = DynamicVersion(
                    family=f,
                    graphrag=FAMILIES[f],
                    error=f"never ends: {exc}",
                    descends=True,
                    start_ids=(),
                    cut_off_ids=(),
                    unreachable_ids=(),
                    none_relevant=None,
                    all_relevant=None,
                )
                continue
            wi = None
            if relevant is not None and r.what_if is not None:
                kc = kept_costs(coster, model, f, r.what_if.kept_ids, n) if coster is not None else None
                wi = _scenario(r.what_if, what_if=True, kept_costs=kc)
            versions[f] = DynamicVersion(
                family=f,
                graphrag=r.graphrag,
                error=r.error,
                descends=r.descends,
                start_ids=tuple(r.start_ids),
                cut_off_ids=tuple(r.cut_off_ids),
                unreachable_ids=tuple(r.unreachable_ids),
                none_relevant=_scenario(r.none_relevant),
                all_relevant=_scenario(r.all_relevant),
                what_if=wi,
            )
        out[n] = DynamicByVersion(versions)
    return out
