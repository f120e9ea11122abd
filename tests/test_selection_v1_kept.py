"""graphrag < 2.0's kept community numbers per level (selection.v1_kept_from_rows, counted per
number) against the per-entity computation it replaced (kept here as the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from graphrag_audit.graphrag.selection import INT_MIN, v1_kept_from_rows
from graphrag_audit.model.keys import sorted_unique


def _reference(codes, comm, lev, levels):
    """The previous code: the max of every entity seen so far, made distinct at every level."""
    width = int(codes.max()) + 1 if len(codes) else 0
    running = np.full(width, INT_MIN, dtype=np.int64)
    first = np.full(width, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    by_first = np.argsort(first, kind="stable")
    first_sorted = first[by_first]
    start = 0
    for n in levels:
        end = len(lev) if n is None else int(np.searchsorted(lev, n, side="right"))
        if end > start:
            np.maximum.at(running, codes[start:end], comm[start:end])
            start = end
        seen = by_first[:int(np.searchsorted(first_sorted, end, side="left"))]
        yield n, sorted_unique(running[seen])


def _brute(codes, comm, lev, levels):
    """Straight from the rule: per N, each entity's max number over its rows <= N, distinct."""
    for n in levels:
        best = {}
        for e, c, l in zip(codes.tolist(), comm.tolist(), lev.tolist()):
            if n is None or l <= n:
                best[e] = max(best.get(e, c), c)
        yield n, sorted(set(best.values()))


def _rows(rng, n_rows, n_ent, n_levels, numbers):
    codes = rng.integers(0, n_ent, n_rows)
    comm = rng.choice(numbers, n_rows)
    lev = np.sort(rng.integers(0, n_levels, n_rows))
    return codes, comm.astype(np.int64), lev


@pytest.mark.parametrize("seed", range(6))
def test_v1_kept_equals_the_reference_and_the_rule(seed):
    rng = np.random.default_rng(seed)
    # numbers that shrink with depth, repeats, -1 (no community) and the int64 minimum itself
    numbers = np.array([INT_MIN, -1, 0, 1, 2, 5, 7, 40, 2**40], dtype=np.int64)
    codes, comm, lev = _rows(rng, 400, 60, 6, numbers)
    lev[lev == 3] = 2  # an empty level
    levels = list(range(7)) + [None]
    got = [(n, k.tolist()) for n, k in v1_kept_from_rows(codes, comm, lev, levels)]
    want = [(n, k.tolist()) for n, k in _reference(codes, comm, lev, levels)]
    assert got == want
    assert got == [(n, k) for n, k in _brute(codes, comm, lev, levels)]


def test_v1_kept_edge_shapes():
    empty = np.zeros(0, dtype=np.int64)
    assert [(n, k.tolist()) for n, k in v1_kept_from_rows(empty, empty, empty, [0, None])] == [(0, []), (None, [])]
    one = np.array([0]), np.array([INT_MIN]), np.array([0])
    assert [(n, k.tolist()) for n, k in v1_kept_from_rows(*one, [0, None])] == [(0, [INT_MIN]), (None, [INT_MIN])]
    # an entity whose max moves down a level's rows, then up: counts leave one number for another
    codes, comm, lev = np.array([0, 1, 0, 1, 0]), np.array([3, 3, 9, 1, 2]), np.array([0, 0, 1, 1, 2])
    got = [(n, k.tolist()) for n, k in v1_kept_from_rows(codes, comm, lev, [0, 1, 2, None])]
    assert got == [(n, k.tolist()) for n, k in _reference(codes, comm, lev, [0, 1, 2, None])]
    assert got == [(0, [3]), (1, [3, 9]), (2, [3, 9]), (None, [3, 9])]
