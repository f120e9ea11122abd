"""audit(): load -> model -> analyses -> one AuditReport. No I/O besides reading the index."""

from __future__ import annotations

import os
import time
from typing import Callable

from graphrag_audit.analysis.checks import Thresholds, level_findings
from graphrag_audit.graphrag.compat import migration_findings
from graphrag_audit.analysis.depth import analyse_depth
from graphrag_audit.analysis.integrity import check_integrity
from graphrag_audit.analysis.levels import (LISTED_ROWS, TreeIndex, level_results, level_stats, report_listing,
                                            tree_levels)
from graphrag_audit.io.load import load_index
from graphrag_audit.io.locate import location_findings
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import AuditOptions, AuditReport, IndexCounts, IndexInfo  # noqa: F401 (re-export)
from graphrag_audit.graphrag.selection import select_all


Progress = Callable[[str], None]


def _then_release(between_phases, fn, *args):
    """``fn(*args)``, then ``between_phases()`` (the CLI gives freed temporaries back to the OS
    there before the next phase)."""
    try:
        return fn(*args)
    finally:
        if between_phases is not None:
            between_phases()


def audit(index: IndexModel | str | os.PathLike, options: AuditOptions | None = None,
          progress: Progress | None = None, between_phases: Callable[[], None] | None = None) -> AuditReport:
    """The per-level audit of an index (a directory, or a loaded :class:`IndexModel`).
    ``between_phases`` is called after each phase (in the worker thread too): the CLI passes
    ``cli.memory.release_freed_memory``."""
    return audit_with_model(index, options, progress, between_phases=between_phases)[1]


def audit_with_model(index: IndexModel | str | os.PathLike, options: AuditOptions | None = None,
                     progress: Progress | None = None, *, listed_rows: int = LISTED_ROWS,
                     between_phases: Callable[[], None] | None = None) -> tuple[IndexModel, AuditReport]:
    """(the loaded model, its :class:`AuditReport`): for callers that also need the tables
    (``--verify``, the HTML report's tree, the output guard). The report holds no model.
    ``listed_rows``: reports listed per behaviour at ``options.level`` (``AuditReport.listing``);
    ``between_phases`` as for :func:`audit`."""
    options = options or AuditOptions()
    step = progress or (lambda _msg: None)
    timings = {}
    t0 = time.perf_counter()
    if isinstance(index, IndexModel):
        model = index
    else:
        step("reading tables")
        model = load_index(index, between_phases=between_phases)
    timings["load"] = time.perf_counter() - t0

    # The costs run in a worker thread beside the tree checks and the per-level statistics:
    # first what no selection changes (occurrence counts, each report's row measure), then the
    # map batches of every selection. Most of both sides is arrow and numpy work that releases
    # the GIL, so the two cores both work.
    pool = prepared = costed_v1 = costs = None
    if options.costs and model.has_reports_table:
        from concurrent.futures import ThreadPoolExecutor

        from graphrag_audit.analysis.costs import V1TextUnitCounts, prepared_coster, selection_costs

        pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphrag-audit")
        prepared = pool.submit(_then_release, between_phases, prepared_coster, model, options.tokenizer,
                               options.max_context_tokens)
        # graphrag < 2.0 weighs by create_final_nodes (None when the model has no node ids)
        v1_counts = pool.submit(_then_release, between_phases, V1TextUnitCounts.of, model,
                                lambda: prepared.result().counts)

        def v1_costs():  # in a worker, beside the other behaviours' packing in this thread
            coster = prepared.result()
            coster.use_v1_counts(v1_counts.result())
            return selection_costs(coster, selections, ("v1",))
    try:
        step("checking the tree")
        t = time.perf_counter()
        ti = TreeIndex(model)
        findings = check_integrity(model) + location_findings(model) + migration_findings(model)
        tl = tree_levels(model, ti)
        if between_phases is not None:
            between_phases()
        timings["tree"] = time.perf_counter() - t

        step("selecting reports per level")
        t = time.perf_counter()
        selections = select_all(model)
        if prepared is not None:
            costed_v1 = pool.submit(v1_costs)
        stats = level_stats(model, ti, selections)
        timings["selection"] = time.perf_counter() - t

        if costed_v1 is not None:
            step("counting tokens and map calls")
            t = time.perf_counter()
            from graphrag_audit.analysis.costs import level_costs

            results = selection_costs(prepared.result(), selections, ("v2", "level_only"))
            results.update(costed_v1.result())
            costs = level_costs(model, selections, options, progress=step, results=results)
            timings["costs"] = time.perf_counter() - t  # what was left when the rest was done
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    levels = level_results(model, ti, selections, costs=costs, num_repeats=options.num_repeats, stats=stats)
    del stats

    step("analysing branch depth")
    t = time.perf_counter()
    v1_spreads = {r.community_level: r.selected["v1"].entities_per_report for r in levels
                  if r.community_level is not None}
    depth = analyse_depth(model, ti, v1_spreads)
    findings += level_findings(options.level, depth, levels,
                               Thresholds(options.max_unreachable, options.max_inflation))
    timings["depth"] = time.perf_counter() - t
    listing = report_listing(model, ti, levels, options.level, listed_rows)
    return model, AuditReport(index=index_info(model, depth, tl), options=options, tree_levels=tl, levels=levels,
                              depth=depth, findings=findings, timings=timings,
                              report_entities=ti.rep_n_entities, listing=listing)


def index_info(model: IndexModel, depth, tree_levels) -> IndexInfo:
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
        ),
        name=m.path.name or str(m.path),
        has_reports_table=bool(m.has_reports_table),
    )
