"""audit(): load -> model -> analyses -> one AuditReport. No I/O besides reading the index."""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from typing import Callable

from graphrag_audit.analysis.checks import Thresholds, level_findings
from graphrag_audit.graphrag.compat import migration_findings
from graphrag_audit.analysis.depth import analyse_depth
from graphrag_audit.analysis.integrity import check_integrity
from graphrag_audit.analysis.levels import TreeIndex, level_results, tree_levels
from graphrag_audit.io.load import load_index
from graphrag_audit.io.locate import location_findings
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results import AuditReport
from graphrag_audit.graphrag.selection import select_all


@dataclass(frozen=True)
class AuditOptions:
    level: int = 2  # the community_level your application queries with (graphrag CLI default)
    tokenizer: str = "cl100k_base"
    max_context_tokens: int = 12000
    costs: bool = True
    num_repeats: int = 1  # dynamic selection rating calls per community
    max_unreachable: float = 0.25
    max_inflation: float = 1.2


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
    """Every analysis of ``index`` in one AuditReport. ``between_phases`` is called after each
    phase (in the worker thread too): the CLI passes ``cli.memory.release_freed_memory``."""
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
    pool = prepared = costed_v1 = None
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
        levels = level_results(model, ti, selections)
        timings["selection"] = time.perf_counter() - t

        if costed_v1 is not None:
            step("counting tokens and map calls")
            t = time.perf_counter()
            from graphrag_audit.analysis.costs import attach_costs

            results = selection_costs(prepared.result(), selections, ("v2", "level_only"))
            results.update(costed_v1.result())
            attach_costs(model, selections, levels, options, progress=step, results=results)
            timings["costs"] = time.perf_counter() - t  # what was left when the rest was done
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    for r in levels:
        dyn = r["selected"]["dynamic"]
        l0 = int(dyn.by_level.get("0", 0))
        dyn.extra["rating_calls"] = {"min": options.num_repeats * l0, "max": options.num_repeats * dyn.count,
                                     "num_repeats": options.num_repeats}

    step("analysing branch depth")
    t = time.perf_counter()
    v1_spreads = {r["community_level"]: r["selected"]["v1"].entities_per_report for r in levels
                  if r["community_level"] is not None}
    depth = analyse_depth(model, ti, v1_spreads)
    findings += level_findings(options.level, depth, levels,
                               Thresholds(options.max_unreachable, options.max_inflation))
    timings["depth"] = time.perf_counter() - t
    return AuditReport(model=model, options=asdict(options), tree_levels=tl, levels=levels,
                       depth=depth, findings=findings, timings=timings,
                       report_entities=ti.rep_n_entities)
