"""audit(): load -> model -> analyses -> one AuditReport. No I/O besides reading the index."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from graphrag_audit.analysis.checks import Thresholds, dynamic_findings, level_findings
from graphrag_audit.analysis.cost_settings import resolve_cost_options
from graphrag_audit.analysis.costs import ContextCoster, level_costs
from graphrag_audit.analysis.depth import analyse_depth
from graphrag_audit.analysis.dynamic import dynamic_by_level, resolve_dynamic_options
from graphrag_audit.analysis.integrity import check_integrity
from graphrag_audit.analysis.levels import (
    LISTED_ROWS,
    TreeIndex,
    level_results,
    level_stats,
    report_listing,
    tree_levels,
)
from graphrag_audit.analysis.local_search import local_search_audit
from graphrag_audit.graphrag.compat import migration_findings
from graphrag_audit.graphrag.selection import select_all
from graphrag_audit.io.load import load_index
from graphrag_audit.io.locate import location_findings
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import (
    AuditOptions,
    AuditReport,
    IndexCounts,
    IndexInfo,  # noqa: F401 (re-export)
    LevelResult,
)

if TYPE_CHECKING:
    from graphrag_audit.graphrag.token_cache import TokenCache

Progress = Callable[[str], None]


def audit(
    index: IndexModel | str | os.PathLike,
    options: AuditOptions | None = None,
    progress: Progress | None = None,
) -> AuditReport:
    """The per-level audit of an index (a directory, or a loaded :class:`IndexModel`)."""
    return audit_with_model(index, options, progress)[1]


def audit_with_model(
    index: IndexModel | str | os.PathLike,
    options: AuditOptions | None = None,
    progress: Progress | None = None,
    *,
    listed_rows: int = LISTED_ROWS,
    check_model: Callable[[IndexModel], None] | None = None,
    token_cache: TokenCache | None = None,
) -> tuple[IndexModel, AuditReport]:
    """(the loaded model, its :class:`AuditReport`): for callers that also need the tables
    (``--verify``, the HTML report's tree, the output guard). The report holds no model.
    ``listed_rows``: reports listed per behaviour at ``options.level`` (``AuditReport.listing``);
    ``check_model`` is called on the model before any
    analysis (the CLI refuses ``--relevant`` ids that are no community there); ``token_cache``: exact
    counts the costs take before counting (graphrag/token_cache.py)."""
    options = options or AuditOptions()
    step = progress or (lambda _msg: None)
    timings = {}
    t0 = time.perf_counter()
    if isinstance(index, IndexModel):
        model = index
    else:
        step("reading tables")
        model = load_index(index)
    timings["load"] = time.perf_counter() - t0
    if check_model is not None:
        check_model(model)
    options = resolve_cost_options(resolve_dynamic_options(options, model), model)

    step("checking the tree")
    t = time.perf_counter()
    ti = TreeIndex(model).with_text_units(model)
    clustered = ti.clustered()
    findings = check_integrity(model) + location_findings(model) + migration_findings(model)
    tl = tree_levels(model, ti)
    timings["tree"] = time.perf_counter() - t

    step("selecting reports per level")
    t = time.perf_counter()
    selections = select_all(model)
    stats = level_stats(model, ti, selections)
    timings["selection"] = time.perf_counter() - t

    step("analysing branch depth")  # graphrag < 2.0's spreads come from the statistics
    t = time.perf_counter()
    depth = analyse_depth(
        model, ti, {n: by_b["v1"].entities_per_report for n, by_b in stats.items() if n is not None}
    )
    timings["depth"] = time.perf_counter() - t

    costs = coster = None
    if options.costs and model.has_reports_table:
        step("counting tokens and map calls")
        t = time.perf_counter()
        assert options.tokenizer is not None and options.max_context_tokens is not None  # resolved above
        coster = ContextCoster(model, options.tokenizer, options.max_context_tokens, token_cache)
        costs = level_costs(model, selections, options, progress=step, coster=coster)
        timings["costs"] = time.perf_counter() - t

    assert options.num_repeats is not None  # resolve_dynamic_options sets it
    levels = level_results(model, ti, selections, costs=costs, num_repeats=options.num_repeats, stats=stats)
    del stats

    step("simulating dynamic selection")
    t = time.perf_counter()
    levels = with_dynamic(model, levels, options, coster)
    timings["dynamic"] = time.perf_counter() - t

    local = local_search_audit(model, counter=coster.counter if coster is not None else options.tokenizer)
    if local is not None:
        by_level: dict = local.by_level  # community_level None: none (local search takes an int)
        levels = [dataclasses.replace(r, local_search=by_level.get(r.community_level)) for r in levels]

    t = time.perf_counter()
    findings += level_findings(
        options.level,
        depth,
        levels,
        Thresholds(options.max_unreachable, options.max_inflation, options.min_coverage),
        clustered=clustered,
        has_reports=model.has_reports_table,
    )
    findings += dynamic_findings(options.level, depth.max_level, levels, {f.rule for f in findings})
    timings["depth"] += time.perf_counter() - t  # with the level findings
    listing = report_listing(model, ti, levels, options.level, listed_rows)
    return model, AuditReport(
        index=index_info(model, depth, tl, clustered),
        options=options,
        tree_levels=tuple(tl),
        levels=tuple(levels),
        depth=depth,
        findings=tuple(findings),
        timings=timings,
        report_entities=ti.rep_n_entities,
        listing=listing,
    )


#: trees with more levels (entries of ``levels``, None included) get the dynamic simulation at ``--level``
#: and at None only: one simulation costs up to one wave per level, so every level would be quadratic
DYNAMIC_ALL_LEVELS = 16


def dynamic_levels(model: IndexModel, ns: list, options: AuditOptions, coster=None) -> dict:
    """{N: DynamicByVersion}: the per-graphrag-line simulation (analysis/dynamic.py) at each
    community_level N of ``ns`` (the audit's levels, None last), or at ``--level`` and None only
    on trees deeper than :data:`DYNAMIC_ALL_LEVELS`; with the costs' ``coster``, rating-call
    prompt tokens and the what-if's map step too."""
    if len(ns) > DYNAMIC_ALL_LEVELS:  # each N costs up to depth waves: deep trees get --level and None only
        ns = [n for n in ns if n is None or n == options.level] or [ns[-2] if len(ns) > 1 else ns[-1], ns[-1]]
    o = options  # resolve_dynamic_options has set every setting
    assert o.threshold is not None and o.keep_parent is not None and o.num_repeats is not None
    assert o.max_level is not None and o.use_summary is not None
    return dynamic_by_level(
        model,
        ns,
        threshold=o.threshold,
        keep_parent=o.keep_parent,
        num_repeats=o.num_repeats,
        max_level=o.max_level,
        relevant=options.relevant,
        coster=coster,
        use_summary=o.use_summary,
        query=options.query,
    )


def with_dynamic(
    model: IndexModel, levels: list[LevelResult], options: AuditOptions, coster=None
) -> list[LevelResult]:
    """``levels`` with each ``dynamic`` selection carrying its per-graphrag-line simulation
    (:func:`dynamic_levels`)."""
    dyn = dynamic_levels(model, [r.community_level for r in levels], options, coster)
    if not dyn:
        return levels
    return [
        LevelResult(
            r.community_level,
            {**r.selected, "dynamic": r.selected["dynamic"].with_(by_version=dyn[r.community_level])},
        )
        if r.community_level in dyn
        else r
        for r in levels
    ]


def index_info(
    model: IndexModel, depth, tree_levels, clustered: tuple[int, int | None] = (0, None)
) -> IndexInfo:
    """The header facts of an audit: what was read, from where, and how much."""
    m = model
    return IndexInfo(
        path=str(m.path),
        output_dir=str(m.output_dir),
        files={k: v.name for k, v in sorted(m.files.items())},
        notes=tuple(m.notes),
        generation=m.generation.label,
        generation_evidence=tuple(m.generation.evidence),
        tree_source=m.tree_source,
        community_id_type=m.id_kind,
        counts=IndexCounts(
            entities=m.entity_count,
            communities=int(len(m.communities)),
            reports=int(len(m.reports)),
            roots=len(depth.roots),
            levels=len(tree_levels),
            clustered_entities=int(clustered[0]),
            clustered_text_units=clustered[1],
        ),
        name=m.path.name or str(m.path),
        has_reports_table=bool(m.has_reports_table),
    )
