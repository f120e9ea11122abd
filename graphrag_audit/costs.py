"""Tokens and map calls of a set of reports, by graphrag's own context batching (context.py).

:class:`ContextCoster` is the one place that turns report rows into graphrag's batches: the
per-level audit (:func:`attach_costs`) and the planner both use it. Each report's fixed row
text is counted once (RowTokenCache) and reused across every level and behaviour; the
occurrence-weight counts are level-independent for graphrag's "every community of the entity at
level <= N" rule, so they are computed once too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from graphrag_audit.context import (
    ContextBatches,
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
    return pd.Series(e["text_unit_ids"].to_numpy(), index=key.to_numpy())


class ContextCoster:
    """``batches(rows)``: graphrag's map batches for the report rows ``rows`` (parquet order)."""

    def __init__(self, model: IndexModel, tokenizer: str = "cl100k_base", max_context_tokens: int = 12000):
        self.counter = get_token_counter(tokenizer)
        self.cache = RowTokenCache(self.counter) if getattr(self.counter, "additive", False) else None
        self.max_context_tokens = int(max_context_tokens)
        rep = model.reports
        self.comm = rep["community"].to_numpy()
        self.titles = rep["title"].to_numpy(dtype=object)
        self.contents = rep["content"].to_numpy(dtype=object)
        self.ranks = rep["rank"].to_numpy(dtype=np.float64)
        etu = _entity_text_units(model)
        self.counts = (text_unit_counts(model.members[["entity", "community", "level"]], etu, None)
                       if etu is not None else None)
        self._memo: dict[bytes, tuple[ContextBatches, str | None]] = {}
        self.zero_weight_sets = 0
        self.last_note: str | None = None

    def batches(self, rows: np.ndarray) -> ContextBatches:
        rows = np.asarray(rows, dtype=np.int64)
        key = rows.tobytes()
        hit = self._memo.get(key)
        if hit is not None:
            self.last_note = hit[1]
            return hit[0]
        weights = None
        self.last_note = None
        if self.counts is not None:
            try:
                weights = occurrence_weights(self.comm[rows], None, None, None, counts=self.counts)
            except WeightNormalizationError:
                self.zero_weight_sets += 1
                self.last_note = "every selected report has occurrence weight 0: graphrag raises ZeroDivisionError"
        b = build_batches(self.comm[rows], self.titles[rows], self.contents[rows], self.ranks[rows], weights,
                          token_counter=self.counter, max_context_tokens=self.max_context_tokens, cache=self.cache)
        self._memo[key] = (b, self.last_note)
        return b


def cost_fields(b: ContextBatches) -> dict:
    maps = b.n_batches
    return {
        "tokens": b.total_tokens,
        "map_calls": maps,
        "reduce_calls": 1 if maps else 0,
        "llm_calls": maps + (1 if maps else 0),
        "reports_in_context": b.reports_in_context,
        "dropped_by_rank": b.dropped_by_rank,
        "oversize_reports": b.oversize_reports,
        "tokenizer": b.token_counter,
        "tokens_exact": b.counter_exact,
    }


def attach_costs(model: IndexModel, selections: dict, levels: list[dict], options, progress=None) -> None:
    """Fill ``SelectionStats.cost`` and ``row_tokens`` for v2, v1 and level_only at every N."""
    coster = ContextCoster(model, options.tokenizer, options.max_context_tokens)
    by_n = {r["community_level"]: r for r in levels}
    for n, by_b in selections.items():
        for b in COSTED:
            stats = by_n[n]["selected"][b]
            batches = coster.batches(by_b[b].rows)
            stats.cost = cost_fields(batches)
            if coster.last_note:
                stats.cost["cost_note"] = coster.last_note
            stats.row_tokens = batches.row_tokens
        if progress:
            progress(f"counted tokens up to community_level {n}")
