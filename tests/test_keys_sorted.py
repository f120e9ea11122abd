"""model/keys.py's sort-based set helpers against numpy's own np.unique / np.isin (the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from graphrag_audit.model.keys import has_duplicates, in_sorted, sorted_unique


@pytest.mark.parametrize("seed", range(5))
def test_sort_helpers_match_numpy(seed):
    rng = np.random.default_rng(seed)
    for n, hi in ((0, 5), (1, 5), (50, 10), (2000, 10**11), (2000, 1500)):
        a = rng.integers(-3, hi, n)
        b = rng.integers(-3, hi, max(n // 2, 1))
        u = sorted_unique(b)
        assert np.array_equal(u, np.unique(b))
        assert np.array_equal(in_sorted(a, u), np.isin(a, b))
        assert has_duplicates(a) == (len(np.unique(a)) < len(a))
    assert in_sorted(np.array([1, 2]), np.array([], dtype=np.int64)).tolist() == [False, False]
    assert not has_duplicates(np.array([7])) and has_duplicates(np.array([7, 3, 7]))
