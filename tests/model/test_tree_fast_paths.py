"""The shortcuts of the tree and selection phases (issue 22, S9) against plain references.

* ``levels.TreeIndex.members_of`` gives exactly the rows of a row-by-row gather (same entities,
  same order), on membership rows in any order, with repeated rows, unknown communities and gaps.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from graphrag_audit.analysis.levels import TreeIndex


def _bare_tree(mem_ccode: np.ndarray, mem_ecode: np.ndarray, n_comm: int) -> TreeIndex:
    ti = TreeIndex.__new__(TreeIndex)
    ti.index = pd.RangeIndex(n_comm)
    ti.mem_ccode, ti.mem_ecode, ti._members = mem_ccode, mem_ecode, None
    return ti


def _ref_members_of(mem_ccode, mem_ecode, ccodes) -> np.ndarray:
    """Each code's membership rows, code after code, rows in table order."""
    parts = [mem_ecode[mem_ccode == c] for c in ccodes]
    return np.concatenate(parts) if parts else mem_ecode[:0]


@pytest.mark.parametrize("seed", range(6))
def test_members_of_equals_the_row_by_row_gather(seed):
    rng = np.random.default_rng(seed)
    n_comm = int(rng.integers(1, 300))
    rows = int(rng.integers(0, 3000))
    mem_ccode = rng.integers(0, n_comm, rows)
    if seed % 2:  # grouped by community, as the loaders write them
        mem_ccode = np.sort(mem_ccode)
    mem_ecode = rng.integers(-1, 500, rows)  # -1: a key the entities do not hold
    ti = _bare_tree(mem_ccode, mem_ecode, n_comm)
    cases = [np.arange(n_comm), np.arange(0), np.array([n_comm - 1]), np.arange(n_comm // 3, n_comm // 2)]
    for k in (1, 2, 5, 40, 63, 64, 65, 200):
        cases.append(np.flatnonzero(rng.random(n_comm) < min(1.0, k / n_comm)))
        start = np.sort(rng.choice(n_comm, size=min(k, n_comm), replace=False))
        cases.append(np.unique(np.concatenate([np.arange(s, min(s + 3, n_comm)) for s in start])))
    for ccodes in cases:
        ccodes = ccodes.astype(np.int64)
        got = ti.members_of(ccodes)
        assert np.array_equal(got, _ref_members_of(mem_ccode, mem_ecode, ccodes)), (seed, len(ccodes))
        assert got.dtype == mem_ecode.dtype
