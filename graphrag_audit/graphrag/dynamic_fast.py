"""Fast paths of the dynamic-selection simulation (:mod:`graphrag_audit.graphrag.dynamic`).

Each function here computes what a plain path in ``dynamic.py`` computes, only on the inputs it can
decide cheaply, and returns None otherwise (the caller then takes the plain path);
``tests/test_dynamic_fast.py`` checks each against its plain path.

* :func:`unique_owner_edges`: graphrag 1.x's ``restore_community_hierarchy`` edges (a next-level
  community is a child of every current-level community whose entity-title set contains its own)
  for node tables where every title sits in at most one community per level (Leiden output): each
  level is read once through a title -> community array, with no sort of the node rows. The plain
  path (``dynamic._sorted_group_edges``) sorts every row by (level, community) first, which at 1M
  entities (3-11M node rows) cost seconds.
* :func:`framed_estimate`: the byte estimate's count of ``prefix + text + suffix`` for every text of
  an arrow string column, from arrow's byte lengths: no Python string is built for the report texts
  (the plain path, ``TokenCounter.count_framed``, converts the column to Python strings and encodes
  each one again).
* :class:`DenseIndex`: a community number's position in the selector's sorted universe through a
  lookup table instead of a binary search, built once per index and used for every community_level
  and line.
* :func:`dictionary_title_codes`: integer codes for the node titles from the dictionary the loader
  already encoded them with, instead of hashing every title again (``pd.factorize``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from graphrag_audit.graphrag.tokens import EstimateTokenCounter
from graphrag_audit.model.keys import dictionary_parts, sorted_unique

__all__ = ["DenseIndex", "dictionary_title_codes", "framed_estimate", "unique_owner_edges"]

#: community-number spans up to this many times the row count (and at least this many numbers) are
#: indexed directly (number - smallest); wider spans go through a sorted lookup
_DIRECT_SPAN_FACTOR, _DIRECT_SPAN_MIN = 4, 1 << 16


def unique_owner_edges(
    communities: np.ndarray, levels: np.ndarray, titles: np.ndarray, n_titles: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(parents, children): the (community, sub-community) pairs of graphrag 1.x's
    ``restore_community_hierarchy`` over node rows (``communities``, ``levels``, integer ``titles``
    codes in ``[0, n_titles)``), in its order: level pair by level pair (the levels present, sorted,
    taken pairwise), each pair's edges by (parent, child). None when some title is in two
    communities of one level (then a child can have several parents: the plain path decides).

    With every title in at most one current-level community, a next-level community's title set is
    a subset of a current-level community's iff all its titles have the same owner there, and that
    owner is then its only parent."""
    nc = np.asarray(communities, dtype=np.int64)
    nl = np.asarray(levels, dtype=np.int64)
    t = np.asarray(titles, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    if nc.size == 0:
        return empty, empty.copy()
    dense, numbers = _dense_numbers(nc)
    per_level = _rows_by_level(nl)
    owner = np.full(max(int(n_titles), int(t.max()) + 1), -1, dtype=np.int64)
    span = numbers.size
    e_p, e_c = [], []
    prev = None  # (title codes, dense communities) of the previous level present
    for rows in per_level:
        tl, dl = t[rows], dense[rows]
        if prev is not None:
            pt, pd_ = prev
            owner[pt] = pd_
            if not np.array_equal(owner[pt], pd_):
                return None  # a title in two communities of the previous level
            o = owner[tl]
            owner[pt] = -1
            rep = np.full(span, -1, dtype=np.int64)
            rep[dl] = o  # one owner per next-level community (any of its rows: all must agree)
            bad = np.zeros(span, dtype=bool)
            bad[dl[o != rep[dl]]] = True
            present = np.zeros(span, dtype=bool)
            present[dl] = True
            kids = np.flatnonzero(present & ~bad & (rep >= 0))
            p, c = numbers[rep[kids]], numbers[kids]
            order = np.lexsort((c, p))
            e_p.append(p[order])
            e_c.append(c[order])
        prev = (tl, dl)
    if not e_p:
        return empty, empty.copy()
    return np.concatenate(e_p), np.concatenate(e_c)


def _dense_numbers(nc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each row's dense community index, the community number of each index): the number minus the
    smallest when the span is small (graphrag numbers communities 0..n-1, -1 for none), else the
    position among the sorted distinct numbers."""
    lo, hi = int(nc.min()), int(nc.max())
    span = hi - lo + 1
    if span <= max(_DIRECT_SPAN_MIN, _DIRECT_SPAN_FACTOR * nc.size):
        return nc - lo, np.arange(lo, hi + 1, dtype=np.int64)
    numbers = sorted_unique(nc)
    return np.searchsorted(numbers, nc).astype(np.int64), numbers


def _rows_by_level(nl: np.ndarray) -> list:
    """The rows of each level present, levels ascending, rows in table order: slices when the rows
    are already ordered by level (graphrag writes create_final_nodes level by level), else index
    arrays from one stable sort of the levels."""
    if nl.size and bool((nl[1:] >= nl[:-1]).all()):
        cuts = np.flatnonzero(nl[1:] != nl[:-1]) + 1
        bounds = [0, *cuts.tolist(), nl.size]
        return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    lo = int(nl.min())
    key = nl - lo
    if int(key.max()) < (1 << 16):
        key = key.astype(np.uint16)  # numpy's stable sort is a radix sort for 16-bit keys
    order = np.argsort(key, kind="stable")
    sk = key[order]
    cuts = np.flatnonzero(sk[1:] != sk[:-1]) + 1
    bounds = [0, *cuts.tolist(), nl.size]
    return [order[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def framed_estimate(counter, prefix: str, texts, suffix: str) -> np.ndarray | None:
    """``counter.count_framed(prefix, texts, suffix)`` for the byte estimate when ``texts`` is an
    arrow-backed string column without nulls (a pandas Series or arrow array): the UTF-8 byte length
    of every text read from arrow. None for any other counter or column."""
    if not isinstance(counter, EstimateTokenCounter):
        return None
    arr = texts.array if isinstance(texts, pd.Series) else texts
    if isinstance(arr, pd.arrays.ArrowExtensionArray):
        arr = pa.array(arr)
    if not isinstance(arr, (pa.Array, pa.ChunkedArray)):
        return None
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)) or arr.null_count:
        return None
    lengths = pc.binary_length(arr)
    if isinstance(lengths, pa.ChunkedArray):
        lengths = lengths.combine_chunks() if lengths.num_chunks else pa.array([], lengths.type)
    body = lengths.to_numpy(zero_copy_only=False).astype(np.int64)
    frame = len(prefix.encode("utf-8", "surrogatepass")) + len(suffix.encode("utf-8", "surrogatepass"))
    return counter.tokens_from_measure(body + frame)


def dictionary_title_codes(titles) -> tuple[np.ndarray, int] | None:
    """(code of each row, number of codes) for a dictionary-encoded title column (the loader's
    entity keys: arrow dictionary or pandas Categorical, no missing value): equal codes iff equal
    titles. None for any other column."""
    parts = dictionary_parts(titles)
    if parts is None:
        return None
    codes, dictionary = parts
    return codes, len(dictionary)


class DenseIndex:
    """The position of each id in ``universe`` (sorted, distinct int64; -1 when absent), as
    ``dynamic._dense`` finds it by binary search: through a lookup table when the universe's numbers
    span at most a few times their count (graphrag numbers communities 0..n-1), by binary search
    otherwise. Built once per universe, called once per community_level and family."""

    __slots__ = ("_hi", "_lo", "_lut", "universe")

    def __init__(self, universe: np.ndarray):
        self.universe = np.asarray(universe, dtype=np.int64)
        self._lut = None
        self._lo = self._hi = 0
        if self.universe.size:
            lo, hi = int(self.universe[0]), int(self.universe[-1])
            span = hi - lo + 1
            if span <= max(_DIRECT_SPAN_MIN, _DIRECT_SPAN_FACTOR * self.universe.size):
                lut = np.full(span, -1, dtype=np.int64)
                lut[self.universe - lo] = np.arange(self.universe.size, dtype=np.int64)
                self._lut, self._lo, self._hi = lut, lo, hi

    def __call__(self, ids) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        u = self.universe
        if u.size == 0:
            return np.full(ids.shape, -1, dtype=np.int64)
        if self._lut is None:
            pos = np.minimum(np.searchsorted(u, ids), u.size - 1)
            return np.where(u[pos] == ids, pos, -1).astype(np.int64)
        inside = (ids >= self._lo) & (ids <= self._hi)  # compared before subtracting: no overflow
        k = np.where(inside, ids, self._lo) - self._lo
        return np.where(inside, self._lut[k], -1)
