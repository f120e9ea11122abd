"""audit(): load -> model -> analyses -> one AuditReport. No I/O besides reading the index."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graphrag_audit.analysis.checks import dynamic_findings, level_findings
from graphrag_audit.analysis.costs import ContextCoster, level_costs
from graphrag_audit.analysis.drift_search import drift_findings, drift_search_audit, read_drift_settings
from graphrag_audit.analysis.dynamic import with_dynamic
from graphrag_audit.analysis.integrity import check_integrity
from graphrag_audit.analysis.levels import (
    LISTED_ROWS,
    TreeIndex,
    analyse_depth,
    level_results,
    level_stats,
    report_listing,
    tree_levels,
)
from graphrag_audit.analysis.local_search import (
    line_statuses,
    local_findings,
    local_search_audit,
    local_what_if,
    read_local_settings,
    unclustered_for_local,
)
from graphrag_audit.analysis.reduce import reduce_findings, with_global_reduce
from graphrag_audit.errors import IndexInputError
from graphrag_audit.graphrag.compat import migration_findings
from graphrag_audit.graphrag.selection import select_all
from graphrag_audit.graphrag.tokens import TOKEN_COUNTER_NAMES, get_token_counter
from graphrag_audit.io.load import load_index
from graphrag_audit.io.locate import location_findings
from graphrag_audit.io.settings import DYNAMIC_SEARCH_KEYS, read_dynamic_settings, read_query_settings
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import AuditOptions, AuditReport, IndexCounts, IndexInfo

if TYPE_CHECKING:
    from graphrag_audit.graphrag.token_cache import TokenCache

Progress = Callable[[str], None]

#: graphrag's defaults (1.2.0 ``ENCODING_MODEL``/``GLOBAL_SEARCH_MAX_TOKENS``; 2.7.2 and 3.3.0
#: ``global_search.max_context_tokens`` 12_000, LiteLLM's cl100k_base for OpenAI models)
COST_DEFAULTS = {"tokenizer": "cl100k_base", "max_context_tokens": 12000}


def audit(
    index: IndexModel | str | os.PathLike,
    options: AuditOptions | None = None,
    progress: Progress | None = None,
) -> AuditReport:
    """The per-level audit of an index (a directory, or a loaded :class:`IndexModel`)."""
    return audit_with_model(index, options, progress)[1]


def resolve_options(options: AuditOptions, model: IndexModel) -> AuditOptions:
    """``options`` with every dynamic-selection and cost knob set: the value given, else the project
    settings' (when the index was reached through a settings file; io/settings.py names the keys per
    graphrag version), else graphrag's default; ``dynamic_from`` and ``costs_from`` say which."""
    path = model.settings_file
    found = {k: (v, path.name) for k, v in read_dynamic_settings(path).items()} if path is not None else {}
    if path is not None and options.costs and any(getattr(options, k) is None for k in COST_DEFAULTS):
        for knob, (value, key) in read_query_settings(path).items():
            if knob == "tokenizer" and options.tokenizer is None and value not in TOKEN_COUNTER_NAMES:
                raise IndexInputError(
                    path,
                    f"{key} is {str(value)[:40]!r}, an encoding graphrag-audit "
                    f"does not count with (cl100k_base, o200k_base): pass --tokenizer",
                )
            found[knob] = (value, f"{path.name} {key}")
    defaults = {knob: default for knob, (_kind, default) in DYNAMIC_SEARCH_KEYS.items()} | COST_DEFAULTS
    values: dict[str, Any] = {}
    dynamic_from: list[tuple[str, str]] = []
    costs_from: list[tuple[str, str]] = []
    for knob, default in defaults.items():
        given = getattr(options, knob)
        values[knob], src = (
            (given, "option") if given is not None else found.get(knob, (default, "graphrag default"))
        )
        (costs_from if knob in COST_DEFAULTS else dynamic_from).append((knob, src))
    return dataclasses.replace(
        options, **values, dynamic_from=tuple(dynamic_from), costs_from=tuple(costs_from)
    )


def _search_counter(model: IndexModel, options: AuditOptions, counter, tokenizer: str | None, origin: dict):
    """The counter of a search mode whose context builder counts with ``tokenizer`` (None: graphrag's
    default, cl100k_base): the costs' ``counter`` when --tokenizer was given or it is the same encoding."""
    wanted = tokenizer or str(COST_DEFAULTS["tokenizer"])
    if ("tokenizer", "option") in options.costs_from or wanted == counter.name:
        return counter
    if wanted not in TOKEN_COUNTER_NAMES:
        assert model.settings_file is not None  # the default is a counter's name
        raise IndexInputError(
            model.settings_file,
            f"{origin['tokenizer']} is {wanted[:40]!r}, an encoding graphrag-audit does not count "
            "with (cl100k_base, o200k_base): pass --tokenizer",
        )
    return get_token_counter(wanted)


def audit_with_model(
    index: IndexModel | str | os.PathLike,
    options: AuditOptions | None = None,
    progress: Progress | None = None,
    *,
    listed_rows: int = LISTED_ROWS,
    check_model: Callable[[IndexModel], None] | None = None,
    token_cache: TokenCache | None = None,
) -> tuple[IndexModel, AuditReport]:
    """(the loaded model, its :class:`AuditReport`), for callers that need the tables too.
    ``listed_rows``: reports listed per behaviour at ``options.level``; ``check_model`` is called on
    the model before any analysis; ``token_cache``: exact counts the costs take before counting."""
    options = options or AuditOptions()
    step = progress or (lambda _msg: None)
    timings: dict[str, float] = {}
    clock = [time.perf_counter()]

    def lap(phase: str) -> None:  # the time since the last lap, added to ``phase``
        now = time.perf_counter()
        timings[phase] = timings.get(phase, 0.0) + now - clock[0]
        clock[0] = now

    if isinstance(index, IndexModel):
        model = index
    else:
        step("reading tables")
        model = load_index(index, progress)  # a remote index: a step per file read
    lap("load")
    if check_model is not None:
        check_model(model)
    options = resolve_options(options, model)

    step("checking the tree")
    ti = TreeIndex(model).with_text_units(model)
    clustered = ti.clustered()
    findings = check_integrity(model) + location_findings(model) + migration_findings(model)
    tl = tree_levels(model, ti)
    lap("tree")

    step("selecting reports per level")
    selections = select_all(model)
    stats = level_stats(model, ti, selections)
    lap("selection")

    step("analysing branch depth")  # graphrag < 2.0's spreads come from the statistics
    depth = analyse_depth(
        model, ti, {n: by_b["v1"].entities_per_report for n, by_b in stats.items() if n is not None}
    )
    lap("depth")

    costs = coster = None
    if options.costs and model.has_reports_table:
        step("counting tokens and map calls")
        assert options.tokenizer is not None and options.max_context_tokens is not None  # resolved above
        coster = ContextCoster(model, options.tokenizer, options.max_context_tokens, token_cache)
        costs = level_costs(model, selections, options, progress=step, coster=coster)
        lap("costs")

    assert options.num_repeats is not None  # resolve_options sets it
    levels = level_results(model, stats, costs, options.num_repeats)
    del stats
    step("simulating dynamic selection")
    levels = with_dynamic(model, levels, options, coster)
    lap("dynamic")

    # local search packs reports by tokens: with --no-costs (no token counts) it is not audited;
    # DRIFT's local steps are the same probes packed with its own budget (analysis/drift_search.py)
    local = drift = None
    if coster is not None:
        local_settings, drift_settings = read_local_settings(model), read_drift_settings(model)
        # local search counts with the encoding its own model names (2.x: it may differ from global search's,
        # analysis/local_search.py); DRIFT's local steps with graphrag's default whatever the settings name in
        # 1.x and 2.x: get_drift_search_engine (query/factory.py @v1.2.0, @v2.7.2) gives DRIFTSearchContextBuilder
        # no tokenizer, and its local_mixed_context packs with cl100k_base (3.x: the model's, cl100k_base here)
        counters = [
            _search_counter(model, options, coster.counter, local_settings.tokenizer, local_settings.origin),
            _search_counter(model, options, coster.counter, None, {}),
        ]
        drift_budget = (drift_settings.budget, drift_settings.top_k)
        local = local_search_audit(
            model, local_settings, counters[0], drift=drift_budget, drift_counter=counters[1]
        )
        if local is not None:
            drift = drift_search_audit(model, local, drift_settings, selections)
            for by_level, counter in zip((local.by_level, drift.by_level), counters):
                for entry in by_level.values() if counter is not coster.counter else ():
                    entry["tokenizer"] = counter.name  # another encoding than the costs'
            if options.entities:  # --entities: at --level, the deepest level when beyond the tree
                n = min(options.level, max(local.by_level))
                local.by_level[n] |= {"what_if": local_what_if(model, local, n, options.entities)}
            levels = [  # community_level None: none (local and DRIFT search take an int)
                dataclasses.replace(
                    r,
                    local_search=local.by_level.get(r.community_level),
                    drift_search=drift.by_level.get(r.community_level),
                )
                for r in levels
            ]
        levels = with_global_reduce(model, levels, options.tokens_per_word, coster.counter)

    findings += level_findings(options, depth, levels, clustered, model.has_reports_table)
    findings += dynamic_findings(options.level, depth.max_level, levels, {f.rule for f in findings})
    findings = unclustered_for_local(findings, line_statuses(model))
    if local is not None:
        findings += local_findings(local, options.level, options.max_local_coarse, options.max_local_empty)
    if drift is not None:
        findings += drift_findings(drift, options.level)
    findings += reduce_findings(levels, options.level)
    lap("depth")  # with the level findings
    m = model
    info = IndexInfo(
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
            levels=len(tl),
            clustered_entities=int(clustered[0]),
            clustered_text_units=clustered[1],
        ),
        name=m.path.name or str(m.path),
        has_reports_table=bool(m.has_reports_table),
    )
    return model, AuditReport(
        index=info,
        options=options,
        tree_levels=tuple(tl),
        levels=tuple(levels),
        depth=depth,
        findings=tuple(findings),
        timings=timings,
        report_entities=ti.rep_n_entities,
        listing=report_listing(model, ti, levels, options.level, listed_rows),
    )
