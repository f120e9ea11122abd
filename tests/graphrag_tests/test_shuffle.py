"""context.shuffle_order against the standard library's random.shuffle, which graphrag calls
(``random.seed(86); random.shuffle(reports)``)."""

from __future__ import annotations

import random

import pytest

from graphrag_audit.graphrag.context import shuffle_order


def reference(n: int, seed: int) -> list[int]:
    """Written out here, as graphrag does it (the module-level generator, seeded)."""
    x = list(range(n))
    random.seed(seed)
    random.shuffle(x)
    return x


@pytest.mark.parametrize("seed", [86, 0, 2**40 + 3])
def test_equals_random_shuffle(seed):
    for n in [*range(0, 70), 255, 256, 257, 1000, 6001, 50_000]:
        assert shuffle_order(n, seed).tolist() == reference(n, seed), n


def test_a_fresh_array_each_call_and_no_shuffle_without_a_seed():
    a = shuffle_order(100)
    a[:] = 0
    assert shuffle_order(100).tolist() == reference(100, 86)
    assert shuffle_order(5, None).tolist() == [0, 1, 2, 3, 4]
