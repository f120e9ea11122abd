"""The block machinery of the occurrence counts (analysis/costs.py) against plain references:
blocks found by slicing grouped rows or by a stable sort of ungrouped ones, the pairs of each
block, and the 32-bit / 64-bit distinct-pair counts; then whole counts with tiny blocks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from graphrag_audit.analysis import costs
from graphrag_audit.io.load import load_index


def _reference_blocks(c_codes, bounds, lens_r, start_r, tu, width):
    """The pairs of each block the way the code did before (one scan of every row per block)."""
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        rows = np.flatnonzero((c_codes >= lo) & (c_codes < hi))
        pairs = [int(c_codes[r]) * width + int(tu[start_r[r] + k]) for r in rows for k in range(lens_r[r])]
        yield rows, pairs


@pytest.mark.parametrize("grouped", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pair_blocks_equal_a_scan_per_block(monkeypatch, grouped, seed):
    rng = np.random.default_rng(seed)
    n_c, n_rows = 40, 300
    c_codes = np.sort(rng.integers(0, n_c, n_rows)) if grouped else rng.integers(0, n_c, n_rows)
    c_codes[:n_c] = np.arange(n_c) if not grouped else c_codes[:n_c]
    lens_r = rng.integers(0, 5, n_rows)  # rows without text units too
    tu = rng.integers(0, 30, int(lens_r.sum()) + 10)
    start_r = rng.integers(0, 10, n_rows) + np.concatenate(([0], np.cumsum(lens_r)[:-1]))
    width = 31
    monkeypatch.setattr(costs, "PAIRS_PER_BLOCK", 37)
    got = list(costs._pair_blocks(c_codes, n_c, lens_r, start_r, tu, width))
    assert len(got) > 5
    # the block bounds as _pair_blocks computes them, for the reference
    bounds = [got[0][3]] + [g[4] for g in got]
    assert bounds[0] == 0 and bounds[-1] == n_c
    for (rows, ln, pair, lo, hi), (want_rows, want_pairs) in zip(
        got, _reference_blocks(c_codes, np.array(bounds), lens_r, start_r, tu, width)
    ):
        assert rows.tolist() == want_rows.tolist()
        assert ln.tolist() == lens_r[want_rows].tolist()
        assert pair.tolist() == want_pairs
        counts = costs._distinct_pairs_per_community(pair, lo, hi, width)
        want = np.zeros(hi - lo, dtype=np.int64)
        for p in set(want_pairs):
            want[p // width - lo] += 1
        assert counts.tolist() == want.tolist()


def test_distinct_pairs_beyond_32_bits():
    """A block whose key range does not fit 32 bits is counted on int64 keys, alike."""
    width = 2**31 + 11
    pair = (
        np.array(
            [0 * width + 5, 0 * width + 5, 1 * width + (2**31), 2 * width + 1, 2 * width + 2, 2 * width + 1],
            dtype=np.int64,
        )
        + 3 * width
    )
    assert costs._distinct_pairs_per_community(pair, 3, 6, width).tolist() == [1, 1, 2]


def _shuffled_members(model, seed):
    """The model with its membership rows in a random order (not grouped by community)."""
    order = np.random.default_rng(seed).permutation(len(model.members))
    # (no key match: it indexes the membership rows as they were)
    return dataclasses.replace(
        model, members=model.members.iloc[order].reset_index(drop=True), key_match=None
    )


@pytest.mark.parametrize("by_level", [False, True])
@pytest.mark.parametrize("layout", ["3.x", "1.0-1.2"])
def test_counts_with_tiny_blocks_equal_the_plain_ones(tmp_path, monkeypatch, layout, by_level):
    """Whole occurrence counts with blocks of a few pairs (grouped rows and shuffled rows), and
    level by level (``by_level``; rows shuffled out of level order too), equal graphrag's
    computation written plainly; graphrag < 2.0's node-row counts equal with and without the
    shortcut."""
    from synthetic import leiden_like, write_index
    from test_costs import _plain_text_unit_counts

    write_index(leiden_like(2000, max_cluster_size=10, seed=9), tmp_path / "i", layout)
    monkeypatch.setattr(costs, "PAIRS_PER_BLOCK", 97)
    monkeypatch.setattr(costs, "COUNT_LEVEL_BY_LEVEL", by_level)
    answered = []
    level_by_level = costs._distinct_pairs_level_by_level
    monkeypatch.setattr(
        costs,
        "_distinct_pairs_level_by_level",
        lambda *a: answered.append(level_by_level(*a)) or answered[-1],
    )
    model = load_index(tmp_path / "i")
    want = _plain_text_unit_counts(model).sort_index().to_dict()
    assert costs._text_unit_counts_arrow(model).sort_index().to_dict() == want
    full = costs.V1TextUnitCounts.of(model)
    if layout == "1.0-1.2":
        fast = costs.V1TextUnitCounts.of(model, costs.community_text_unit_counts(model))
        for n in list(range(model.max_level + 2)) + [None]:
            assert fast.at(n).sort_index().to_dict() == full.at(n).sort_index().to_dict(), n
    shuffled = _shuffled_members(load_index(tmp_path / "i"), 4)
    assert costs._text_unit_counts_arrow(shuffled).sort_index().to_dict() == want
    # the level-by-level count answered every time it was asked (a synthetic tree is nested)
    assert (len(answered) >= 2 and all(a is not None for a in answered)) if by_level else not answered
