"""context.greedy_batches against graphrag's row-by-row loop written plainly."""

from __future__ import annotations

import numpy as np
import pytest

from graphrag_audit.graphrag.context import greedy_batches


def _graphrag_loop(toks, max_tokens, header):
    """graphrag's loop: cut the batch when the row would pass the limit (and the batch has
    rows), then add the row."""
    starts, tokens, cur, cur_rows = [], [], header, 0
    for i, t in enumerate(toks):
        if cur + t > max_tokens and cur_rows:
            tokens.append(cur)
            cur, cur_rows = header, 0
        if not cur_rows:
            starts.append(i)
        cur += t
        cur_rows += 1
    if cur_rows:
        tokens.append(cur)
    return starts, tokens


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("max_tokens", [5, 60, 300, 10**6])
def test_greedy_batches_equal_graphrags_loop(seed, max_tokens):
    rng = np.random.default_rng(seed)
    toks = rng.integers(1, 80, int(rng.integers(0, 400)))
    toks[rng.random(len(toks)) < 0.05] = 500  # rows larger than a batch on their own
    header = 7
    csum = np.concatenate(([0], np.cumsum(toks, dtype=np.int64)))
    want = _graphrag_loop(toks.tolist(), max_tokens, header)
    assert greedy_batches(csum, max_tokens - header, header) == want


def test_greedy_batches_with_a_header_over_the_limit():
    csum = np.array([0, 3, 5, 9], dtype=np.int64)
    assert greedy_batches(csum, -4, 10) == ([0, 1, 2], [13, 12, 14])
    assert greedy_batches(np.zeros(1, dtype=np.int64), 5, 1) == ([], [])
