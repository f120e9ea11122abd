"""shuffle.PermutationCache: the same orders as random.shuffle itself, whatever is kept or dropped."""

from __future__ import annotations

import numpy as np

from graphrag_audit.graphrag.context import shuffle_order
from graphrag_audit.graphrag.shuffle import PermutationCache, python_permutation


def test_cache_hands_out_random_shuffles_own_orders_and_stays_in_budget():
    cache = PermutationCache(budget=9000)
    sizes = [5000, 7000, 5000, 1, 0, 2, 7000, 6500, 5000, 7000]  # repeats, drops, tiny sizes
    for n in sizes:
        got = cache.get(n, 86)
        assert got.dtype == np.int64 and got.tolist() == python_permutation(n, 86).tolist(), n
        got[:] = -1  # the caller's copy: the cache must not share it
        assert cache._size <= max(cache.budget, n)
    assert cache.get(7000, 86).tolist() == python_permutation(7000, 86).tolist()
    assert cache.get(7000, 7).tolist() == python_permutation(7000, 7).tolist()  # seeds kept apart


def test_shuffle_order_is_random_shuffle_and_a_fresh_array():
    for n in (2, 3, 100, 6001):
        a = shuffle_order(n)
        want = list(range(n))
        import random

        random.seed(86)
        random.shuffle(want)
        assert a.tolist() == want
        a[:] = 0
        assert shuffle_order(n).tolist() == want
