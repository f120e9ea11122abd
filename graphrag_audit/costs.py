"""Tokens and map calls of each selection, by graphrag's own context batching (context.py).

Each report's fixed row text is counted once (RowTokenCache) and reused across every level
and behaviour; the occurrence-weight counts are level-independent for graphrag's "every
community of the entity at level <= N" rule, so they are computed once too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from graphrag_audit.context import (
    RowTokenCache,
    WeightNormalizationError,
    build_batches,
    occurrence_weights,
    text_unit_counts,
)
from graphrag_audit.model import IndexModel
from graphrag_audit.tokens import get_token_counter

COSTED = ("v2", "v1", "level_only")


def _entity_text_units(model: IndexModel) -> pd.Series | None:
    e = model.entities
    if e is None or "text_unit_ids" not in e.columns or e["text_unit_ids"].isna().all():
        return None
    key = e["id"] if model.member_key == "id" else e["title"]
    s = pd.Series(e["text_unit_ids"].to_numpy(), index=key.to_numpy())
    return s


def attach_costs(model: IndexModel, selections: dict, levels: list[dict], options, progress=None) -> None:
    """Fill ``SelectionStats.cost`` and ``row_tokens`` for v2, v1 and level_only at every N."""
    counter = get_token_counter(options.tokenizer)
    cache = RowTokenCache(counter) if getattr(counter, "additive", False) else None
    rep = model.reports
    comm = rep["community"].to_numpy()
    titles = rep["title"].to_numpy(dtype=object)
    contents = rep["content"].to_numpy(dtype=object)
    ranks = rep["rank"].to_numpy(dtype=np.float64)
    etu = _entity_text_units(model)
    counts = None
    if etu is not None:
        counts = text_unit_counts(model.members[["entity", "community", "level"]], etu, None)
    by_n = {r["community_level"]: r for r in levels}
    for n, by_b in selections.items():
        for b in COSTED:
            rows = by_b[b].rows
            stats = by_n[n]["selected"][b]
            note = None
            weights = None
            if counts is not None:
                try:
                    weights = occurrence_weights(comm[rows], None, None, n, counts=counts)
                except WeightNormalizationError:
                    note = "every selected report has occurrence weight 0: graphrag raises ZeroDivisionError"
                    weights = None
            batches = build_batches(comm[rows], titles[rows], contents[rows], ranks[rows], weights,
                                    token_counter=counter, max_context_tokens=options.max_context_tokens,
                                    cache=cache)
            maps = batches.n_batches
            stats.cost = {
                "tokens": batches.total_tokens,
                "map_calls": maps,
                "reduce_calls": 1 if maps else 0,
                "llm_calls": maps + (1 if maps else 0),
                "reports_in_context": batches.reports_in_context,
                "dropped_by_rank": batches.dropped_by_rank,
                "oversize_reports": batches.oversize_reports,
                "tokenizer": batches.token_counter,
                "tokens_exact": batches.counter_exact,
            }
            if note:
                stats.cost["cost_note"] = note
            stats.row_tokens = batches.row_tokens
        if progress:
            progress(f"counted tokens up to community_level {n}")
