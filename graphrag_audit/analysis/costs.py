"""Tokens and map calls of a set of reports, by graphrag's own context batching (context.py).

:class:`ContextCoster` serves the per-level audit, the planner, the dynamic what-if and ``--verify``.
Occurrence counts: over the membership rows for graphrag >= 2.0, over the ``create_final_nodes`` rows at
``level <= N`` for graphrag < 2.0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from graphrag_audit.graphrag.context import (
    ContextBatches,
    RowTokenCache,
    build_batches,
    explode_text_units,
    text_unit_counts,
)
from graphrag_audit.graphrag.tokens import get_token_counter
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import Costs

COSTED = ("v2", "v1", "level_only")


def entity_text_units_absent(model: IndexModel) -> bool:
    e = model.entities
    return e is None or "text_unit_ids" not in e.columns or bool(e["text_unit_ids"].isna().all())


def _entity_text_units(model: IndexModel, key_column: str) -> pd.Series:
    e = model.entities
    assert e is not None
    return pd.Series(e["text_unit_ids"].array, index=e[key_column].to_numpy())


def community_text_unit_counts(model: IndexModel) -> pd.Series | None:
    """graphrag >= 2.0's raw occurrence weights, or None when the entities carry no text units."""
    if entity_text_units_absent(model):
        return None
    key = "id" if model.member_key == "id" else "title"
    members = model.members[["entity", "community", "level"]]
    match = model.key_match
    rows = match.member_row if match is not None and len(match.member_row) == len(members) else None
    return text_unit_counts(members, _entity_text_units(model, key), entity_rows=rows)


def v1_node_pairs(model: IndexModel) -> tuple[pd.DataFrame, int | None] | None:
    """(the distinct (``community``, ``text_unit``) pairs of the ``create_final_nodes`` rows, each with its
    least level; the least level of a node row matching an entity), or None without node ids or text units.

    graphrag 1.x ``read_indexer_entities`` (query/indexer_adapters.py @dac0b86) builds each entity's
    ``community_ids`` from the node rows at ``level <= N`` matched to the first ``entities.id`` row."""
    r = model.rollup_rows
    if not ("entity_id" in r.columns or "entity_row" in r.columns) or entity_text_units_absent(model):
        return None
    assert model.entities is not None
    ids = model.entities["id"].to_numpy(dtype=object)
    if "entity_row" in r.columns:  # load matched the node ids to entity rows (-1: none)
        row = r["entity_row"].to_numpy(dtype=np.int64)
        matched = row >= 0
        key = np.where(matched, ids[np.maximum(row, 0)] if len(ids) else None, None)
    else:
        key = r["entity_id"].to_numpy(dtype=object)
        matched = pd.Series(key).isin(pd.Series(ids).dropna()).to_numpy()
    level = r["level"].to_numpy(dtype=np.int64)
    rows = pd.DataFrame({"entity": key, "community": r["community"].to_numpy(), "level": level})
    pairs = rows.merge(explode_text_units(_entity_text_units(model, "id")), on="entity")
    pairs = pairs.sort_values("level", kind="stable").drop_duplicates(["community", "text_unit"])
    first_level = int(level[matched].min()) if matched.any() else None
    return pairs[["community", "text_unit", "level"]], first_level


def v1_text_unit_counts(node_pairs, community_level: int | None) -> pd.Series | None:
    """graphrag < 2.0's raw occurrence counts at N; None when no node row at level <= N matches an entity
    (graphrag then computes no weights)."""
    pairs, first_level = node_pairs
    if first_level is None or (community_level is not None and first_level > community_level):
        return None
    if community_level is not None:
        pairs = pairs[pairs["level"] <= community_level]
    return pairs.groupby("community", sort=False).size().astype(np.int64).rename("text_units")


class ContextCoster:
    """graphrag's map batches for report rows (parquet order), each report's fixed text counted once."""

    def __init__(
        self,
        model: IndexModel,
        tokenizer: str = "cl100k_base",
        max_context_tokens: int = 12000,
        token_cache=None,
    ):
        self.counter = get_token_counter(tokenizer, token_cache)
        self.additive = bool(getattr(self.counter, "additive", False))
        self.max_context_tokens = int(max_context_tokens)
        rep = model.reports
        self.comm = rep["community"].to_numpy()
        self.titles = rep["title"].to_numpy(dtype=object)
        self.contents = rep["content"].to_numpy(dtype=object)
        self.ranks = rep["rank"].to_numpy(dtype=np.float64)
        columns = (self.comm, self.titles, self.contents, self.ranks)
        self.cache = RowTokenCache(self.counter, *columns) if self.additive else None
        self._raw = self._raw_counts(community_text_unit_counts(model))  # of each report row
        self._v1_pairs = v1_node_pairs(model)
        self._v1_raw: dict[int | None, np.ndarray | None] = {}

    def _raw_counts(self, counts: pd.Series | None) -> np.ndarray | None:
        if counts is None:
            return None
        if not len(counts):
            return np.zeros(len(self.comm), dtype=np.int64)
        return counts.reindex(self.comm).fillna(0).to_numpy(dtype=np.int64)

    def _weights(
        self, rows: np.ndarray, behaviour: str | None, community_level: int | None
    ) -> tuple[np.ndarray | None, str | None]:
        """graphrag's normalised occurrence weights and a note; graphrag < 2.0 weighs by its own per-level
        counts."""
        raw_all = self._raw
        if behaviour == "v1" and self._v1_pairs is not None:
            if community_level not in self._v1_raw:
                counts = v1_text_unit_counts(self._v1_pairs, community_level)
                self._v1_raw[community_level] = None if counts is None else self._raw_counts(counts)
            raw_all = self._v1_raw[community_level]
        if raw_all is None:
            return None, None
        raw = raw_all[rows]
        if not len(raw):
            return np.zeros(0, dtype=np.float64), None
        top = int(raw.max())
        if top == 0:
            return None, "every selected report has occurrence weight 0: graphrag raises ZeroDivisionError"
        return raw / top, None  # same IEEE result as Python int/int true division (counts < 2**53)

    def selection_weights(
        self, rows: np.ndarray, behaviour: str, community_level: int | None
    ) -> np.ndarray | None:
        """The occurrence weights :meth:`selection_batches` packs with."""
        return self._weights(np.asarray(rows, dtype=np.int64), behaviour, community_level)[0]

    def selection_batches(
        self, rows: np.ndarray, behaviour: str, community_level: int | None
    ) -> ContextBatches:
        return self.noted_batches(rows, behaviour, community_level)[0]

    def batches(self, rows: np.ndarray) -> ContextBatches:
        return self.noted_batches(rows)[0]

    def noted_batches(
        self, rows: np.ndarray, behaviour: str | None = None, community_level: int | None = None
    ) -> tuple[ContextBatches, str | None]:
        """(the batches, a note or None) of ``behaviour``'s selection ``rows`` at ``community_level``."""
        rows = np.asarray(rows, dtype=np.int64)
        weights, note = self._weights(rows, behaviour, community_level)
        b = build_batches(
            self.comm[rows],
            self.titles[rows],
            self.contents[rows],
            self.ranks[rows],
            weights,
            token_counter=self.counter,
            max_context_tokens=self.max_context_tokens,
            fixed=None if self.cache is None else self.cache.fixed(rows, weights is not None),
        )
        return b, note


def level_costs(
    model: IndexModel, selections: dict, options, progress=None, coster: ContextCoster | None = None
) -> dict:
    """{(N, behaviour): (Costs, tokens of each row)} for v2, v1 and level_only at every N selected."""
    if coster is None:
        coster = ContextCoster(model, options.tokenizer, options.max_context_tokens)
    out = {}
    for n, by_b in selections.items():
        for b in COSTED:
            batches, note = coster.noted_batches(by_b[b].rows, b, n)
            tokens = batches.row_tokens  # kept for every selection: int32 when it fits (half the memory)
            if len(tokens) and -(2**31) <= tokens.min() and tokens.max() < 2**31:
                tokens = tokens.astype(np.int32)
            maps = batches.n_batches
            cost = Costs(
                tokens=batches.total_tokens,
                map_calls=maps,
                reduce_calls=1 if maps else 0,
                llm_calls=maps + (1 if maps else 0),
                reports_in_context=batches.reports_in_context,
                dropped_by_rank=batches.dropped_by_rank,
                oversize_reports=batches.oversize_reports,
                tokenizer=batches.token_counter,
                tokens_exact=batches.counter_exact,
                note=note or None,
                max_batch_tokens=max(batches.batch_tokens, default=0),
            )
            out[(n, b)] = (cost, tokens)
        if progress:
            progress(f"counted tokens up to community_level {n}")
    return out
