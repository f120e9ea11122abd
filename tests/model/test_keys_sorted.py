"""model/keys.py's sort-based set helpers against numpy's own np.unique (the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from graphrag_audit.model.keys import has_duplicates, sorted_unique


@pytest.mark.parametrize("seed", range(5))
def test_sort_helpers_match_numpy(seed):
    rng = np.random.default_rng(seed)
    for n, hi in ((0, 5), (1, 5), (50, 10), (2000, 10**11), (2000, 1500)):
        a = rng.integers(-3, hi, n)
        b = rng.integers(-3, hi, max(n // 2, 1))
        u = sorted_unique(b)
        assert np.array_equal(u, np.unique(b))
        assert has_duplicates(a) == (len(np.unique(a)) < len(a))
    assert not has_duplicates(np.array([7])) and has_duplicates(np.array([7, 3, 7]))


def test_narrow_ranges_give_numpys_answers_in_every_integer_type():
    """sorted_unique / has_duplicates take flags or counts over a narrow range of numbers and sort
    otherwise: both against np.unique, in small and unsigned types (no wrap-around) and beyond int64."""
    rng = np.random.default_rng(0)
    for t in range(3000):
        n = int(rng.integers(0, 50))
        dt = np.dtype(rng.choice([np.int64, np.int32, np.uint32, np.int8, np.uint8, np.uint64]))
        span = int(rng.choice([3, 100, 10**6]))
        base = int(rng.integers(-50, 50)) if dt.kind == "i" else 0
        if dt.itemsize == 1:
            span = min(span, 100)
        v = (rng.integers(0, span, n) + base).astype(dt)
        if dt == np.uint64 and t % 2:
            v = v + np.uint64(2**63 + 5)
        expected = np.unique(v)
        got = sorted_unique(v)
        assert got.dtype == expected.dtype and np.array_equal(got, expected), v
        assert has_duplicates(v) == (len(expected) < len(v)), v
