"""Tokens and map calls of a set of reports, by graphrag's own context batching (context.py).

:class:`ContextCoster` is the one place that turns report rows into graphrag's batches: the
per-level audit (:func:`level_costs`) and the planner both use it. Each report's fixed row
text is measured once (``context.row_measures``: arrow byte lengths for the estimate, one
count per report for the exact tokenizers) and reused across every level and behaviour; the
occurrence-weight counts are level-independent for graphrag's "every community of the entity at
level <= N" rule, so they are computed once too (:func:`community_text_unit_counts`, on integer
codes). graphrag < 2.0 reads those memberships from ``create_final_nodes`` instead, where they
do depend on N (−1 rows, updated indexes): :class:`V1TextUnitCounts` holds them for every N at
once, and :meth:`ContextCoster.selection_batches` packs the ``v1`` selections with them.
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from graphrag_audit.graphrag.context import (
    ContextBatches,
    RowTextNeeded,
    RowTokenCache,
    build_batches,
    row_measures,
    text_unit_counts,
)
from graphrag_audit.graphrag.tokens import get_token_counter
from graphrag_audit.model.index import IndexModel
from graphrag_audit.model.keys import (
    LevelSlots,
    dictionary_parts,
    factorize_ints,
    is_nondecreasing,
    node_entity_rows,
    sorted_unique,
    stable_order,
)
from graphrag_audit.results.audit import Costs

COSTED = ("v2", "v1", "level_only")


def _entity_text_units(model: IndexModel) -> pd.Series | None:
    e = model.entities
    if e is None or "text_unit_ids" not in e.columns or e["text_unit_ids"].isna().all():
        return None
    key = e["id"] if model.member_key == "id" else e["title"]
    return pd.Series(e["text_unit_ids"].to_numpy(), index=key.to_numpy())


def community_text_unit_counts(model: IndexModel) -> pd.Series | None:
    """Distinct text units of each community's entities (the raw occurrence weights), or None
    when the entities carry no text units: ``context.text_unit_counts`` over ``model.members``
    and :func:`_entity_text_units`, computed on integer codes when the text-unit lists are
    arrow-backed (each distinct entity key is matched once, text units are dictionary-encoded).

    Two paths, both kept (issue 15): :func:`_text_unit_counts_arrow` for parquet indexes,
    ``context.text_unit_counts`` (graphrag's computation written plainly) for CSV lists and keys
    arrow cannot hold. Measured on the 1.x layout: 0.22 s against 4.3 s at 100k entities, 9 s
    against 411 s at 1M (a loaded machine); tests/test_costs.py holds them equal. Within the
    arrow path the count goes level by level from the deepest up where the membership allows
    (:func:`_distinct_pairs_level_by_level`; issue 22: 1M deep-narrow 1.44 -> 0.92 s, 34M
    membership pairs against 3.4M distinct ones), else by blocks of pairs."""
    if _entity_text_units_absent(model):
        return None
    fast = _text_unit_counts_arrow(model)
    if fast is not None:
        return fast
    return text_unit_counts(model.members[["entity", "community", "level"]], _entity_text_units(model), None)


class V1TextUnitCounts:
    """graphrag < 2.0's raw occurrence counts, for any ``community_level`` N (:meth:`at`).

    graphrag 1.x's ``read_indexer_entities(final_nodes, final_entities, N)`` builds each
    entity's ``community_ids`` from the ``create_final_nodes`` rows with ``level <= N``,
    matched to ``entities.id`` by the node ``id`` (first entity row per id) — not from
    ``communities.entity_ids``. The two differ: an entity outside any community at a level
    ``<= N`` has a node row with community −1, so a report for community −1 gets a weight (and
    can become the maximum every other weight is divided by), and the nodes of an updated index
    (``graphrag update``) list other memberships and levels than the communities table. The
    count of community c at N is the number of distinct text units t such that some node row
    (entity, c, level L <= N) has t among its entity's text units: each distinct (c, t) pair is
    kept once with the least such L, so every N is one ``bincount``.
    """

    def __init__(
        self,
        communities: np.ndarray,
        pair_community: np.ndarray,
        pair_level: np.ndarray,
        first_entity_level: int | None,
        base: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ):
        self.communities = communities  # community number of each code
        self.pair_community = pair_community  # code of each distinct (community, text unit) pair
        self.pair_level = pair_level  # the least node-row level that brings the pair in
        self.first_entity_level = first_entity_level  # least level of a node row that matches an entity
        # (community, level, count) of the communities whose node rows are exactly their
        # membership rows, at their own level: the level-independent counts, taken as they are
        self.base = base

    @classmethod
    def of(cls, model: IndexModel, base=None) -> V1TextUnitCounts | None:
        """None when graphrag < 2.0 would weigh as :func:`community_text_unit_counts` does (no
        ``create_final_nodes`` ids) or computes no weights (no text units).

        ``base``: :func:`community_text_unit_counts` of the model (or a function returning it, called
        only once the node rows are matched), when computed. The node rows of
        the communities whose rows are exactly their membership rows (an index graphrag wrote in
        one run) then take those counts; only the other rows (community −1, the rows of an
        updated index) go through the pair sort.

        Both ways stay (issue 15), held equal by tests/test_costs.py: measured on the 1.x layout,
        the shortcut takes 0.10 s against 0.22 s at 100k entities and 0.6-0.9 s against 1.2-1.3 s
        of CPU at 1M (its traced peak is higher there: 360 MiB against 308 MiB)."""
        r = model.rollup_rows
        if not ("entity_id" in r.columns or "entity_row" in r.columns) or _entity_text_units_absent(model):
            return None
        e = model.entities
        key = e["id"]
        match = model.key_match if model.member_key == "id" else None
        # graphrag keeps an entity's first row (the key match knows them when it keyed by id)
        first = match.first if match is not None else ~key.duplicated(keep="first").to_numpy()
        lens, tu = _text_unit_codes(e["text_unit_ids"])
        # each node row's entity: its row among the first-occurrence entity rows (load may have
        # found the entity rows already, and dropped the node ids)
        rows = (
            r["entity_row"].to_numpy(dtype=np.int64)
            if "entity_row" in r.columns
            else node_entity_rows(r["entity_id"], e, first)
        )
        if rows is not None:
            pos = _first_row_positions(rows, first)
        else:
            pos = _node_positions(r["entity_id"], pa.array(key[first], from_pandas=True))
        if pos is None:
            pos = pd.Index(key[first].to_numpy(dtype=object)).get_indexer(
                r["entity_id"].to_numpy(dtype=object)
            )
        per_ent, tu, ent_start = _first_rows_text_units(lens, tu, first)
        units = _units_of(pos, per_ent)
        has = units > 0
        comm_all = r["community"].to_numpy(dtype=np.int64)
        lev_all = r["level"].to_numpy(dtype=np.int64)
        matched = lev_all[pos >= 0]
        first_entity_level = int(matched.min()) if len(matched) else None
        base_part = None
        if base is not None:
            split = _node_rows_as_members(model, first, per_ent, pos, has, comm_all, lev_all, base)
            if split is not None:
                has, base_part = split
        c_codes, c_uniques = _community_codes(comm_all[has])
        n_c = len(c_uniques)
        lens_r, start_r, lev_r = units[has], ent_start[pos[has]], lev_all[has]
        width = max(int(tu.max()) + 1 if len(tu) else 1, 1)
        span = int(lev_r.max()) + 1 if len(lev_r) else 1
        out_c, out_l = [], []
        for rows, ln, pair, _lo, _hi in _pair_blocks(c_codes, n_c, lens_r, start_r, tu, width):
            k = np.sort(
                pair * span + np.repeat(lev_r[rows], ln)
            )  # by pair, then level: the first is the least
            pk = k // span
            head = np.concatenate(([True], pk[1:] != pk[:-1])) if len(k) else np.zeros(0, dtype=bool)
            out_c.append(pk[head] // width)
            out_l.append(k[head] % span)

        def cat(parts: list) -> np.ndarray:
            return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

        return cls(c_uniques, cat(out_c), cat(out_l), first_entity_level, base_part)

    def at(self, community_level: int | None) -> pd.Series | None:
        """Raw counts at N (None: every level), int64 by community, communities with 0 left out;
        None when no node row at a level <= N matches an entity: graphrag then has no entities
        and computes no weights (no weight column, no ZeroDivisionError)."""
        if self.first_entity_level is None or (
            community_level is not None and self.first_entity_level > community_level
        ):
            return None
        sel = (
            self.pair_community
            if community_level is None
            else self.pair_community[self.pair_level <= community_level]
        )
        per_c = np.bincount(sel, minlength=len(self.communities)).astype(np.int64)
        nz = per_c > 0
        comm, counts = self.communities[nz], per_c[nz]
        if self.base is not None:  # disjoint from the pair communities (see _node_rows_as_members)
            bc, bl, bv = self.base
            keep = slice(None) if community_level is None else bl <= community_level
            comm, counts = np.concatenate([bc[keep], comm]), np.concatenate([bv[keep], counts])
        return pd.Series(counts, index=pd.Index(comm), name="text_units")


def _node_rows_as_members(
    model: IndexModel,
    first: np.ndarray,
    per_ent: np.ndarray,
    pos: np.ndarray,
    has: np.ndarray,
    comm_all: np.ndarray,
    lev_all: np.ndarray,
    base,
):
    """(node rows still to count, (community, level, count) taken from ``base``) when the node
    rows of known communities at their own level hold exactly the (community, entity) pairs of
    the membership rows that ``base`` counted, and the other node rows name none of those
    communities; None otherwise (then every row is counted from the node rows).

    Under that condition the node-row count of such a community is its ``base`` count at every
    N >= its level and 0 below: the same entities, so the same distinct text units.

    ``base``: the counts, or a function returning them (audit hands a future's getter: the
    counts are made meanwhile); it is called only once the rows are known to match."""
    if model.member_key != "id":
        return None
    match = model.key_match
    if match is None or not np.array_equal(match.first, first):
        return None
    if not first.any():
        return None
    c = model.communities
    index = pd.Index(c["community"].to_numpy(dtype=np.int64))
    if not index.is_unique:
        return None
    level = c["level"].to_numpy(dtype=np.int64)
    # membership rows whose entity has text units: (communities-table row, entity position)
    mpos = _first_row_positions(match.member_row, first)
    m_has = mpos >= 0
    m_has &= per_ent[np.maximum(mpos, 0)] > 0
    mpos = mpos[m_has]
    mcode = index.get_indexer(model.members["community"].to_numpy(dtype=np.int64)[m_has])
    if (mcode < 0).any():
        return None
    # node rows of known communities at their own level
    at = index.get_indexer(comm_all)
    in_members = has & (at >= 0)
    in_members &= level[np.maximum(at, 0)] == lev_all
    same = _pair_sets_equal(at[in_members], pos[in_members], mcode, mpos, level, int(first.sum()) + 1)
    if not same:
        return None
    if callable(base):
        base = base()
    if base is None or not len(base):
        return None
    bcode = index.get_indexer(base.index.to_numpy(dtype=np.int64))
    if (bcode < 0).any():
        return None
    rest = has & ~in_members
    if np.isin(comm_all[rest], base.index.to_numpy(dtype=np.int64)).any():
        return None
    return rest, (base.index.to_numpy(dtype=np.int64), level[bcode], base.to_numpy(dtype=np.int64))


def _pair_sets_equal(
    a_c: np.ndarray, a_e: np.ndarray, b_c: np.ndarray, b_e: np.ndarray, level: np.ndarray, width: int
) -> bool:
    """``set(zip(a_c, a_e)) == set(zip(b_c, b_e))`` for pairs of (communities-table row, entity
    position < ``width``); ``level`` is the level of each communities-table row.

    When no entity of ``b`` is in two communities of one level (:class:`LevelSlots`), the sets
    are equal iff ``b`` holds every pair of ``a`` and both have as many distinct pairs. No sort;
    the sorted comparison otherwise."""
    level_code = pd.factorize(level)[0]
    slots = LevelSlots.of(b_c, b_e, level_code, width)
    if slots is None:
        return bool(np.array_equal(sorted_unique(a_c * width + a_e), sorted_unique(b_c * width + b_e)))
    return bool(slots.holds(a_c, a_e).all()) and slots.count_of(a_c, a_e) == slots.count()


def _text_unit_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(number of text units of each entity row, their integer codes flattened; nulls dropped).

    Two paths, both kept (issue 15): arrow list columns (parquet) through
    :func:`_arrow_text_unit_codes`, Python lists (CSV) through the loop below. Measured: 0.015 s
    against 1.8 s at 100k entities, 0.12 s against 80 s at 1M; tests/test_costs.py holds them
    equal."""
    got = _arrow_text_unit_codes(col)
    if got is not None:
        return got
    lens = np.zeros(len(col), dtype=np.int64)
    flat: list = []
    for i, v in enumerate(col.to_numpy(dtype=object)):
        if v is None or (isinstance(v, float) and v != v):
            continue
        items = [x for x in list(v) if x is not None and not (isinstance(x, float) and x != x)]
        lens[i] = len(items)
        flat.extend(items)
    codes, _ = pd.factorize(pd.Series(flat, dtype=object))
    return lens, codes.astype(np.int64)


def _arrow_text_unit_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_text_unit_codes` of an arrow list column (``load`` dictionary-encodes the items,
    so no string is hashed here); None for other columns."""
    if not isinstance(col.dtype, pd.ArrowDtype):
        return None
    lists = pa.array(col.array)
    if not (pa.types.is_list(lists.type) or pa.types.is_large_list(lists.type)):
        return None
    values = pc.list_flatten(lists)
    owner = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    if not pa.types.is_dictionary(values.type):
        values = pc.dictionary_encode(values)
    if isinstance(values, pa.ChunkedArray):  # chunks share one dictionary
        idx = pa.chunked_array([c.indices for c in values.chunks], type=values.type.index_type)
    else:
        idx = values.indices
    valid = pc.is_valid(idx).to_numpy(zero_copy_only=False)
    codes = pc.fill_null(idx, 0).to_numpy(zero_copy_only=False).astype(np.int64)[valid]
    return np.bincount(owner[valid], minlength=len(col)).astype(np.int64), codes


def _entity_text_units_absent(model: IndexModel) -> bool:
    e = model.entities
    return e is None or "text_unit_ids" not in e.columns or bool(e["text_unit_ids"].isna().all())


def _text_unit_counts_arrow(model: IndexModel) -> pd.Series | None:
    """The fast path of :func:`community_text_unit_counts`; None when it does not apply.

    Entity rows are matched to membership rows through their keys (each distinct key once), the
    text units are integer codes (``load`` dictionary-encodes them), and the distinct
    (community, text unit) pairs are counted in blocks of communities, so memory stays bounded."""
    e = model.entities
    try:
        got = _arrow_text_unit_codes(e["text_unit_ids"])
        if got is None:
            return None
        lens, tu = got  # per entity row: its text units (nulls dropped), as integer codes
        match = model.key_match
        if match is not None:  # keys hashed once, shared with the integrity checks
            first = match.first  # graphrag keeps an entity's first row
            pos = _first_row_positions(match.member_row, first)
        else:
            key = e["id"] if model.member_key == "id" else e["title"]
            first = ~key.duplicated(keep="first").to_numpy()  # graphrag keeps an entity's first row
            pos = _key_positions(model.members["entity"], pa.array(key[first], from_pandas=True))
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except (pa.ArrowException, TypeError, ValueError, IndexError):
        return None
    if pos is None:
        return None
    empty = pd.Series([], dtype=np.int64, name="text_units")
    if len(model.members) == 0 or not len(tu):
        return empty
    # the text units of each first-occurrence entity row, grouped by that row (per-row arrays
    # are int32 where the values allow and freed as they go: this runs beside the tree checks)
    per_ent, tu, ent_start = _first_rows_text_units(lens, tu, first)
    tu = _narrow(tu)
    units = _units_of(pos, per_ent)
    has = units > 0  # membership rows whose entity has text units
    if not has.any():
        return empty
    c_codes, c_uniques = _community_codes(model.members["community"].to_numpy(dtype=np.int64)[has])
    n_c = len(c_uniques)
    c_codes = _narrow(c_codes)
    lens_r, start_r = units[has], _narrow(ent_start[pos[has]])
    # each row's entity and level for the level-by-level count (views, not copies, when every
    # row's entity has text units)
    ent, level = pos, model.members["level"].to_numpy(dtype=np.int64)
    if not has.all():
        ent, level = ent[has], level[has]
    # measured (issue 15, tracemalloc): freeing these lowers this function's peak by 3.6 MiB at
    # 100k entities, ~36 MB at 1M, while it runs beside the tree checks; the other manual dels
    # of the costs and integrity checks saved under 1.1 MiB at 100k and went
    del units, pos, has
    width = int(tu.max()) + 1  # any width above every code keeps the pairs distinct
    per_c = None
    if COUNT_LEVEL_BY_LEVEL:
        per_c = _distinct_pairs_level_by_level(
            c_codes, n_c, level, ent, len(per_ent), lens_r, start_r, tu, width
        )
    del ent, level
    if per_c is None:
        per_c = np.zeros(n_c, dtype=np.int64)
        for _rows, _ln, pair, lo, hi in _pair_blocks(c_codes, n_c, lens_r, start_r, tu, width):
            per_c[lo:hi] += _distinct_pairs_per_community(pair, lo, hi, width)
    nz = per_c > 0
    return pd.Series(per_c[nz], index=pd.Index(c_uniques)[nz], name="text_units")


#: count the distinct text units bottom-up, level by level, where the membership allows
#: (:func:`_distinct_pairs_level_by_level`); False: always by blocks of pairs (tests compare both)
COUNT_LEVEL_BY_LEVEL = True


def _distinct_pairs_level_by_level(
    c_codes: np.ndarray,
    n_c: int,
    level: np.ndarray,
    ent: np.ndarray,
    n_ent: int,
    lens_r: np.ndarray,
    start_r: np.ndarray,
    tu: np.ndarray,
    width: int,
) -> np.ndarray | None:
    """Distinct text units of each community code (the counts of the blocks path), worked out
    from the deepest level up, or None when a level holds an entity twice or a community code
    sits at two levels (then the blocks path counts them).

    Row r (a membership row whose entity has text units) puts entity ``ent[r]`` in community
    ``c_codes[r]`` at ``level[r]``; the entity's text units are ``tu[start_r[r]:start_r[r] +
    lens_r[r]]``. A community k at level L+1 whose every row's entity sits, at level L, in one
    community p is contained in p: p's distinct text units are then k's (already distinct)
    together with those of p's other rows, and the rows of p whose entity is in such a k need not
    be expanded again. Any other row is expanded from its entity's text units. On a hierarchy
    (each entity's communities nested level by level) every entity is expanded once, at its
    deepest level, and each level sorts about as many pairs as its communities have distinct
    text units: at 1M deep-narrow 3.4M distinct pairs over all levels against 34M membership
    pairs for the blocks path."""
    order = None if is_nondecreasing(level) else stable_order(level)
    if order is not None:
        c_codes, level, ent = c_codes[order], level[order], ent[order]
        lens_r, start_r = lens_r[order], start_r[order]
    cuts = np.flatnonzero(level[1:] != level[:-1]) + 1
    starts, ends = np.concatenate(([0], cuts)), np.concatenate((cuts, [len(level)]))
    at_level = np.full(n_c, -1, dtype=np.int64)  # the level of each community code met so far
    per_c = np.zeros(n_c, dtype=np.int64)
    below = None  # (community codes, entities, slot of each entity, pair codes, pair units) one level down
    for lo, hi in zip(starts[::-1], ends[::-1]):
        c, e = c_codes[lo:hi].astype(np.int64), ent[lo:hi]
        met = at_level[c]
        if ((met >= 0) & (met != level[lo])).any():  # a community at two levels
            return None
        at_level[c] = level[lo]
        if len(e) and int(np.bincount(e, minlength=n_ent).max()) > 1:  # an entity twice at this level
            return None
        slot = np.full(n_ent, -1, dtype=np.int64)  # each entity's community at this level
        slot[e] = c
        inherited = None
        expand = np.ones(len(e), dtype=bool)
        if below is not None:
            kc, ke, kslot, pc_, pt = below
            holder = slot[ke]  # the community here of each lower row's entity (-1: none)
            lo_h = np.full(n_c, np.iinfo(np.int64).max, dtype=np.int64)
            hi_h = np.full(n_c, -1, dtype=np.int64)
            np.minimum.at(lo_h, kc, holder)
            np.maximum.at(hi_h, kc, holder)
            inside = (lo_h == hi_h) & (lo_h >= 0)  # lower communities held whole by one community here
            k = kslot[e]
            expand = ~((k >= 0) & inside[np.maximum(k, 0)])
            keep = inside[pc_]
            inherited = (lo_h[pc_[keep]], pt[keep])
            del holder, lo_h, hi_h, k, keep, below
        pc_, pt = _distinct_level_pairs(
            inherited, c[expand], lens_r[lo:hi][expand], start_r[lo:hi][expand], tu, width
        )
        per_c += np.bincount(pc_, minlength=n_c)
        below = (c, e, slot, pc_, pt)
    return per_c


def _distinct_level_pairs(
    inherited: tuple[np.ndarray, np.ndarray] | None,
    c: np.ndarray,
    ln: np.ndarray,
    start: np.ndarray,
    tu: np.ndarray,
    width: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(community codes, text-unit codes) of the distinct pairs of one level: the ``inherited``
    pairs (already distinct per lower community) and those of the rows expanded here (row r: community
    ``c[r]``, text units ``tu[start[r]:start[r] + ln[r]]``). Sorted as 32-bit offsets from the
    least community's first key when the level's key range fits."""
    ln = ln.astype(np.int64)
    own_c = np.repeat(c.astype(np.int64), ln)
    in_c, in_t = inherited if inherited is not None else (own_c[:0], own_c[:0])
    if not (len(own_c) or len(in_c)):
        return own_c, own_c
    lo = min(int(a.min()) for a in (own_c, in_c) if len(a))
    hi = max(int(a.max()) for a in (own_c, in_c) if len(a))
    kind = np.uint32 if (hi - lo + 1) * width <= 2**32 else np.int64
    at = np.repeat(start.astype(np.int64) - (np.cumsum(ln) - ln), ln)
    at += np.arange(len(own_c), dtype=np.int64)
    keys = np.concatenate(
        [((in_c - lo) * width + in_t).astype(kind), ((own_c - lo) * width + tu[at]).astype(kind)]
    )
    del at, own_c
    keys.sort()
    if len(keys) > 1:
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
    keys = keys.astype(np.int64)
    return keys // width + lo, keys % width


def _pair_blocks(
    c_codes: np.ndarray, n_c: int, lens_r: np.ndarray, start_r: np.ndarray, tu: np.ndarray, width: int
):
    """The (community, text unit) pairs of membership rows, ``community code * width + text unit
    code``, in blocks of whole communities of about ``PAIRS_PER_BLOCK`` pairs each (memory stays
    bounded). Row r has community ``c_codes[r]`` and the text units
    ``tu[start_r[r]:start_r[r] + lens_r[r]]``. Yields (rows of the block in row order, their
    text-unit counts ``lens_r[rows]``, the pairs row by row, the block's community codes
    ``lo .. hi - 1``).

    The rows of a block are found once for all blocks (:func:`_block_rows`), not by a scan of
    every row per block: a 1M-entity deep tree has 36 blocks over 12M membership rows."""
    load_c = np.bincount(c_codes, weights=lens_r, minlength=n_c)
    cuts = np.searchsorted(
        np.cumsum(load_c), np.arange(1, int(lens_r.sum()) // PAIRS_PER_BLOCK + 1) * PAIRS_PER_BLOCK
    )
    bounds = np.unique(np.concatenate(([0], cuts + 1, [n_c])).clip(0, n_c))
    for lo, hi, rows in _block_rows(c_codes, bounds):
        ln = lens_r[rows]
        total = int(ln.sum())
        ends = np.cumsum(ln)
        # text unit k of row r sits at tu[start_r[r] + k]: one repeat gives every pair's position
        at = np.repeat(start_r[rows].astype(np.int64) - (ends - ln), ln)
        at += np.arange(total, dtype=np.int64)
        pair = np.repeat(c_codes[rows].astype(np.int64) * width, ln)
        pair += tu[at]
        yield rows, ln, pair, int(lo), int(hi)


def _block_rows(c_codes: np.ndarray, bounds: np.ndarray):
    """(lo, hi, the rows whose code is in ``lo .. hi - 1``, ascending) for consecutive
    ``bounds``: slices of the rows when the codes never decrease (membership rows grouped by
    community, as graphrag writes them), else of the rows stably sorted by block."""
    if len(c_codes) < 2 or bool((c_codes[1:] >= c_codes[:-1]).all()):
        at = np.searchsorted(c_codes, bounds, side="left")
        for b in range(len(bounds) - 1):
            yield bounds[b], bounds[b + 1], np.arange(at[b], at[b + 1], dtype=np.int64)
        return
    block = np.searchsorted(bounds, c_codes, side="right") - 1  # the block of each row
    small = np.int16 if len(bounds) < 2**15 else np.int64  # radix sort for small integers
    order = np.argsort(block.astype(small), kind="stable")
    at = np.searchsorted(block[order], np.arange(len(bounds)), side="left")
    for b in range(len(bounds) - 1):
        yield bounds[b], bounds[b + 1], order[at[b] : at[b + 1]]


def _distinct_pairs_per_community(pair: np.ndarray, lo: int, hi: int, width: int) -> np.ndarray:
    """Distinct pairs of each community code ``lo .. hi - 1`` among ``pair`` (``code * width +
    text unit``): sorted as 32-bit offsets from ``lo * width`` when the block's range fits."""
    local = pair - lo * width
    if (hi - lo) * width <= 2**32:
        local = local.astype(np.uint32)
    local = sorted_unique(local)
    return np.bincount(local // np.int64(width), minlength=hi - lo)


def _first_row_positions(rows: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Position among the first-occurrence entity rows (``first``) of each entity row in
    ``rows``, which are first-occurrence rows or −1 (kept −1): ``rows`` itself when every entity
    row is a first occurrence (no duplicate keys, the usual index), as the ranks are then the rows."""
    if first.all():
        return np.asarray(rows, dtype=np.int64)
    rank = np.cumsum(first) - 1
    if not len(rank):
        return np.full(len(rows), -1, dtype=np.int64)
    return np.where(rows >= 0, rank[np.maximum(rows, 0)], -1)


def _first_rows_text_units(lens: np.ndarray, tu: np.ndarray, first: np.ndarray):
    """(text units per first-occurrence entity row, their codes grouped by that row, where each
    row's run starts) from every entity row's ``lens`` and flattened codes ``tu``: graphrag keeps
    an entity's first row."""
    per_ent = lens[first]
    return (
        per_ent,
        tu[np.repeat(first, lens)],
        np.concatenate(([0], np.cumsum(per_ent)[:-1])).astype(np.int64),
    )


def _units_of(pos: np.ndarray, per_ent: np.ndarray) -> np.ndarray:
    """Text units of each row's entity (``pos`` among the first-occurrence rows, −1: none: 0)."""
    known = pos >= 0
    if known.all():  # every row's entity known (the usual index): one gather
        return per_ent.astype(np.int32, copy=False)[pos]
    units = np.zeros(len(pos), dtype=np.int32)
    units[known] = per_ent[pos[known]]
    return units


def _community_codes(communities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(``pd.factorize`` codes, the community of each code) of rows' community numbers."""
    codes, n = factorize_ints(communities)
    uniques = np.empty(n, dtype=np.int64)
    uniques[codes] = communities
    return codes, uniques


def _narrow(a: np.ndarray) -> np.ndarray:
    """``a`` as int32 when its values fit (half the memory of a per-row array), else as it is."""
    if len(a) and a.dtype != np.int32 and -(2**31) <= int(a.min()) and int(a.max()) < 2**31:
        return a.astype(np.int32)
    return a


#: distinct-pair counting works on blocks of about this many (community, text unit) pairs
PAIRS_PER_BLOCK = 1_000_000


def _key_positions(entity: pd.Series, keys: pa.Array) -> np.ndarray | None:
    """Position of each membership row's entity key in ``keys`` (-1: not there)."""
    parts = dictionary_parts(entity)
    if parts is not None:  # each distinct key looked up once
        codes, dictionary = parts
        at = _index_in(dictionary, keys)
        return at[codes] if len(at) else np.full(len(codes), -1, dtype=np.int64)
    arr = entity.array
    if isinstance(arr, (pd.Categorical, pd.arrays.ArrowExtensionArray)):
        return None
    return _index_in(pa.array(entity, from_pandas=True), keys)


def _node_positions(ids: pd.Series, keys: pa.Array) -> np.ndarray | None:
    """Position of each node row's ``id`` in ``keys`` (-1: not there), hashed by arrow: each key
    once, each node id probed once. None when the ids are not arrow strings without nulls."""
    arr = ids.array
    if not isinstance(arr, pd.arrays.ArrowExtensionArray):
        return _key_positions(ids, keys)
    try:
        values = pa.array(arr)
        if (
            not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type))
            or values.null_count
        ):
            return None
        return _index_in(values, keys)
    except MemoryError:
        raise
    except (pa.ArrowException, TypeError, ValueError):
        return None


def _index_in(values: pa.Array, keys: pa.Array) -> np.ndarray:
    if values.null_count:
        raise ValueError("missing entity keys")
    if keys.type != values.type:
        keys = keys.cast(values.type)
    at = pc.index_in(values, value_set=keys)
    return pc.fill_null(at, -1).to_numpy(zero_copy_only=False).astype(np.int64)


#: per-row raw counts meaning "graphrag computes no occurrence weight here" (no weight column)
_NO_WEIGHTS = np.zeros(0, dtype=np.int64)


class ContextCoster:
    """``batches(rows)``: graphrag's map batches for the report rows ``rows`` (parquet order).

    Each report's fixed row text is measured once (:func:`context.row_measures`, for every row
    graphrag's rank filter keeps) and each row's raw occurrence count is looked up once; a call
    then only formats the distinct weight strings and packs.
    """

    def __init__(
        self,
        model: IndexModel,
        tokenizer: str = "cl100k_base",
        max_context_tokens: int = 12000,
        token_cache=None,
    ):
        self.counter = get_token_counter(tokenizer, token_cache)
        self.additive = bool(getattr(self.counter, "additive", False))
        self.cache = RowTokenCache(self.counter) if self.additive else None
        self.max_context_tokens = int(max_context_tokens)
        rep = model.reports
        self.comm = rep["community"].to_numpy()
        self._title_col = rep["title"]  # arrow-backed text stays in arrow until counted
        self._content_col = rep["content"]
        self._text: tuple[np.ndarray, np.ndarray] | None = None
        self.ranks = rep["rank"].to_numpy(dtype=np.float64)
        self.model = model
        self._v1: V1TextUnitCounts | None | bool = False  # False: not computed yet
        self._v1_lock = threading.Lock()
        self._v1_raw: dict[int | None, np.ndarray] = {}
        self.counts = community_text_unit_counts(model)
        self._raw = None  # raw occurrence count of each report row
        if self.counts is not None:
            self._raw = (
                self.counts.reindex(self.comm).fillna(0).to_numpy(dtype=np.int64)
                if len(self.counts)
                else np.zeros(len(self.comm), dtype=np.int64)
            )
        self._fixed: dict[bool, np.ndarray] = {}
        self._memo: dict[tuple, tuple[ContextBatches, str | None]] = {}
        # the memo keeps the batches of at most this many selected rows in all, oldest out first
        # (each entry holds three arrays a row: a 1,000-level index selects millions of rows)
        self._memo_budget = 8 * len(self.comm) + 65536
        self._memo_rows = 0
        self._memo_lock = threading.Lock()
        self.zero_weight_sets = 0
        self.last_note: str | None = None

    @property
    def titles(self) -> np.ndarray:
        return self._texts()[0]

    @property
    def contents(self) -> np.ndarray:
        return self._texts()[1]

    def _texts(self) -> tuple[np.ndarray, np.ndarray]:
        if self._text is None:
            self._text = (self._title_col.to_numpy(dtype=object), self._content_col.to_numpy(dtype=object))
        return self._text

    def fixed_measures(self, with_weight: bool) -> np.ndarray:
        """Measure of every report row's fixed text (rows the rank filter drops: -1)."""
        got = self._fixed.get(with_weight)
        if got is None:
            got = row_measures(
                self.counter,
                self.comm,
                self._title_col,
                self._content_col,
                self.ranks,
                with_weight=with_weight,
                rows=np.flatnonzero(self.ranks >= 0),
            )
            self._fixed[with_weight] = got
        return got

    def noted_selection_batches(
        self, rows: np.ndarray, behaviour: str, community_level: int | None
    ) -> tuple[ContextBatches, str | None]:
        """:meth:`selection_batches` with its note (thread-safe, see :meth:`noted_batches`)."""
        return self.noted_batches(rows, raw=self._behaviour_raw(behaviour, community_level))

    def use_v1_counts(self, counts: V1TextUnitCounts | None) -> None:
        """Take graphrag < 2.0's counts made elsewhere (``V1TextUnitCounts.of(model, self.counts)``)."""
        with self._v1_lock:
            self._v1 = counts

    def selection_batches(
        self, rows: np.ndarray, behaviour: str, community_level: int | None
    ) -> ContextBatches:
        """The batches of ``behaviour``'s selection ``rows`` at ``community_level``: graphrag
        < 2.0 (``v1``) weighs reports by its own per-level counts (:class:`V1TextUnitCounts`)."""
        return self.batches(rows, raw=self._behaviour_raw(behaviour, community_level))

    def selection_weights(
        self, rows: np.ndarray, behaviour: str, community_level: int | None
    ) -> np.ndarray | None:
        """The occurrence weights :meth:`selection_batches` packs with (None: no weight column)."""
        return self._weights(
            np.asarray(rows, dtype=np.int64), self._behaviour_raw(behaviour, community_level)
        )

    def v1_counts(self) -> V1TextUnitCounts | None:
        """graphrag < 2.0's per-level counts (:class:`V1TextUnitCounts`), computed once (``audit``
        asks for them from a second worker while the first packs the other behaviours)."""
        with self._v1_lock:
            if self._v1 is False:
                self._v1 = V1TextUnitCounts.of(self.model, self.counts)
            return self._v1

    def _behaviour_raw(self, behaviour: str, community_level: int | None) -> np.ndarray | None:
        if behaviour != "v1":
            return None
        if self.v1_counts() is None:
            return None
        if community_level not in self._v1_raw:
            counts = self._v1.at(community_level)
            self._v1_raw[community_level] = _NO_WEIGHTS if counts is None else self.raw_counts(counts)
        return self._v1_raw[community_level]

    def raw_counts(self, counts: pd.Series | None) -> np.ndarray | None:
        """Raw occurrence count of every report row under ``counts`` (community -> count)."""
        if counts is None:
            return None
        return (
            counts.reindex(self.comm).fillna(0).to_numpy(dtype=np.int64)
            if len(counts)
            else np.zeros(len(self.comm), dtype=np.int64)
        )

    def _weights(self, rows: np.ndarray, raw_all: np.ndarray | None = None) -> np.ndarray | None:
        """graphrag's normalised occurrence weights (``context.occurrence_weights``);
        ``raw_all``: per-row raw counts to use instead of the level-independent ones."""
        weights, note = self._noted_weights(rows, raw_all)
        if note:
            self.last_note = note
        return weights

    def _noted_weights(
        self, rows: np.ndarray, raw_all: np.ndarray | None
    ) -> tuple[np.ndarray | None, str | None]:
        raw_all = self._raw if raw_all is None else raw_all
        if raw_all is None or raw_all is _NO_WEIGHTS:
            return None, None
        raw = raw_all[rows]
        if not len(raw):
            return np.zeros(0, dtype=np.float64), None
        top = int(raw.max())
        if top == 0:
            self.zero_weight_sets += 1
            return None, "every selected report has occurrence weight 0: graphrag raises ZeroDivisionError"
        return raw / top, None  # same IEEE result as Python int/int true division (counts < 2**53)

    def batches(self, rows: np.ndarray, raw: np.ndarray | None = None) -> ContextBatches:
        """``raw``: per-row raw occurrence counts (:meth:`raw_counts`) replacing the default ones.
        Sets ``last_note`` (see :meth:`noted_batches`)."""
        b, self.last_note = self.noted_batches(rows, raw)
        return b

    def noted_batches(
        self, rows: np.ndarray, raw: np.ndarray | None = None
    ) -> tuple[ContextBatches, str | None]:
        """(the batches, a note on them or None); safe to call from several threads at once."""
        rows = np.asarray(rows, dtype=np.int64)
        eff = self._raw if raw is None else raw
        # the key is a digest of the rows and their weights, not the bytes themselves: a
        # 1,000-level index selects millions of rows over its levels
        h = hashlib.blake2b(rows.tobytes(), digest_size=32)
        if not (eff is None or eff is _NO_WEIGHTS):
            h.update(b"|" + eff[rows].tobytes())
        key = (len(rows), h.digest())
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        weights, note = self._noted_weights(rows, raw)
        b = None
        if self.additive:
            try:
                b = build_batches(
                    self.comm[rows],
                    None,
                    None,
                    self.ranks[rows],
                    weights,
                    token_counter=self.counter,
                    max_context_tokens=self.max_context_tokens,
                    cache=self.cache,
                    fixed_measures=self.fixed_measures(weights is not None)[rows],
                )
            except RowTextNeeded:  # rows that must be counted whole (odd weight strings)
                b = None
        if b is None:
            b = build_batches(
                self.comm[rows],
                self.titles[rows],
                self.contents[rows],
                self.ranks[rows],
                weights,
                token_counter=self.counter,
                max_context_tokens=self.max_context_tokens,
                cache=self.cache,
            )
        with self._memo_lock:
            if key not in self._memo:
                self._memo[key] = (b, note)
                self._memo_rows += len(rows)
            while self._memo_rows > self._memo_budget and len(self._memo) > 1:
                oldest = next(iter(self._memo))
                del self._memo[oldest]
                self._memo_rows -= oldest[0]
        return b, note


def cost_fields(b: ContextBatches, note: str | None = None) -> Costs:
    """The :class:`~graphrag_audit.results.Costs` of one selection's batches."""
    maps = b.n_batches
    return Costs(
        tokens=b.total_tokens,
        map_calls=maps,
        reduce_calls=1 if maps else 0,
        llm_calls=maps + (1 if maps else 0),
        reports_in_context=b.reports_in_context,
        dropped_by_rank=b.dropped_by_rank,
        oversize_reports=b.oversize_reports,
        tokenizer=b.token_counter,
        tokens_exact=b.counter_exact,
        note=note or None,
    )


def prepared_coster(
    model: IndexModel, tokenizer: str = "cl100k_base", max_context_tokens: int = 12000
) -> ContextCoster:
    """A :class:`ContextCoster` with the occurrence counts and every report's fixed row measure
    already computed: the work that does not depend on any selection (``audit`` runs it in a
    worker thread while the tree is checked and the selections are made)."""
    coster = ContextCoster(model, tokenizer, max_context_tokens)
    if coster.additive:
        coster.fixed_measures(coster.counts is not None)
    return coster


def selection_costs(coster: ContextCoster, selections: dict, behaviours=COSTED) -> dict:
    """{(N, behaviour): (Costs, tokens of each row)} for ``behaviours`` (default v2, v1 and
    level_only) at every N. Several threads may run it on one coster (other behaviours)."""
    out = {}
    for b in behaviours:
        for n, by_b in selections.items():
            batches, note = coster.noted_selection_batches(by_b[b].rows, b, n)
            cost = cost_fields(batches, note)
            tokens = batches.row_tokens  # kept for every selection: int32 when it fits (half the memory)
            if len(tokens) and -(2**31) <= tokens.min() and tokens.max() < 2**31:
                tokens = tokens.astype(np.int32)
            out[(n, b)] = (cost, tokens)
    return out


def level_costs(
    model: IndexModel,
    selections: dict,
    options,
    progress=None,
    coster: ContextCoster | None = None,
    results: dict | None = None,
) -> dict:
    """{(N, behaviour): (Costs, tokens of each row)} for v2, v1 and level_only at every N, which
    ``levels.level_results`` builds into the selections (``results``: what
    :func:`selection_costs` returned, when it already ran). ``progress`` hears of each level."""
    if results is None:
        if coster is None:
            coster = ContextCoster(model, options.tokenizer, options.max_context_tokens)
        results = selection_costs(coster, selections)
    out = {}
    for n in selections:
        for b in COSTED:
            out[(n, b)] = results[(n, b)]
        if progress:
            progress(f"counted tokens up to community_level {n}")
    return out
