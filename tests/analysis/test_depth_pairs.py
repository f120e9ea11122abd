"""depth._pair_counts against the row-wise np.unique it replaced (kept here as the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from graphrag_audit.analysis.depth import _pair_counts


@pytest.mark.parametrize("seed", range(5))
def test_pair_counts_equal_the_row_wise_unique(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 50, 500)
    b = rng.integers(-3, 9, 500)  # negative levels too
    (pa_, pb), pc = np.unique(np.stack([a, b]), axis=1, return_counts=True)
    assert _pair_counts(a, b) == (pa_.tolist(), pb.tolist(), pc.tolist())


def test_pair_counts_edge_shapes():
    assert _pair_counts(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)) == ([], [], [])
    assert _pair_counts(np.array([4]), np.array([7])) == ([4], [7], [1])
