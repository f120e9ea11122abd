"""shuffle.permutation against the standard library's random.shuffle, which graphrag calls
(``random.seed(86); random.shuffle(reports)``): equal for every length tried, on every path."""

from __future__ import annotations

import random

import numpy as np
import pytest

from graphrag_audit.graphrag import shuffle
from graphrag_audit.graphrag.context import shuffle_order


def reference(n: int, seed: int) -> list[int]:
    """Written out here, not taken from the module under test."""
    x = list(range(n))
    random.seed(seed)
    random.shuffle(x)
    return x


def _lengths():
    bounds = [(1 << k) + d for k in range(1, 19) for d in (-1, 0, 1)]  # bit-length edges
    rng = random.Random(11)
    return sorted(
        set(
            list(range(0, 700))
            + bounds
            + [rng.randrange(700, 400_000) for _ in range(12)]
            + [114_841, 1_000_000]
        )
    )


@pytest.mark.parametrize("seed", [86, 0, 2**40 + 3])
def test_equals_random_shuffle(seed):
    for n in _lengths():
        if seed != 86 and n > 200_000:
            continue
        want = reference(n, seed)
        assert shuffle.numpy_permutation(n, seed).tolist() == want, n
        assert shuffle.permutation(n, seed).tolist() == want, n
        if n < 5000:
            assert shuffle.python_permutation(n, seed).tolist() == want, n


def test_shuffle_order_is_graphrags_order():
    for n in (0, 1, 2, 3, 97, 5000):
        assert shuffle_order(n).tolist() == reference(n, 86)
    assert shuffle_order(50, None).tolist() == list(range(50))


@pytest.mark.parametrize(
    "knob,value", [("_MAX_PASSES", 1), ("_MAX_PASSES", 2), ("_LOOP_STEPS", 10**9), ("_LOOP_STEPS", 2)]
)
def test_every_path_agrees(monkeypatch, knob, value):
    """Windows that do not settle fall back to the loop; runs of any length can take either way."""
    monkeypatch.setattr(shuffle, knob, value)
    for n in (2, 3, 300, 4097, 70_000):
        assert shuffle.numpy_permutation(n, 86).tolist() == reference(n, 86), (knob, value, n)


def test_falls_back_to_the_standard_library_when_the_check_fails(monkeypatch):
    monkeypatch.setattr(shuffle, "_agrees_with_random", lambda: False)
    monkeypatch.setattr(shuffle, "_draws", lambda n, seed: pytest.fail("the numpy draws were used"))
    n = shuffle.NUMPY_FROM + 1000
    assert shuffle.permutation(n, 86).tolist() == reference(n, 86)


def test_random_shuffle_below_the_crossover_and_numpy_from_it(monkeypatch):
    """Which path runs at which size (both give graphrag's order, tested above)."""
    assert shuffle._agrees_with_random()  # (its check runs both paths once: done before patching)
    monkeypatch.setattr(shuffle, "_draws", lambda n, seed: pytest.fail("numpy below"))
    for n in (2, 100, shuffle.NUMPY_FROM - 1):
        assert shuffle.permutation(n, 86).tolist() == reference(n, 86)
    monkeypatch.undo()
    monkeypatch.setattr(shuffle, "python_permutation", lambda n, seed: pytest.fail("random.shuffle above"))
    for n in (shuffle.NUMPY_FROM, shuffle.NUMPY_FROM + 1, 50_000):
        assert shuffle.permutation(n, 86).tolist() == reference(n, 86)


def test_check_passes_on_this_interpreter():
    assert shuffle._agrees_with_random()


def test_swaps_resolve_like_the_loop():
    """The swap resolution alone, on random draws (any j <= i), against doing the swaps."""
    rng = np.random.default_rng(4)
    for n in (2, 3, 10, 257, 3000):
        for _ in range(20):
            j = [int(rng.integers(0, i + 1)) for i in range(n - 1, 0, -1)]
            x = list(range(n))
            for i, ji in zip(range(n - 1, 0, -1), j):
                x[i], x[ji] = x[ji], x[i]
            assert shuffle._resolve_swaps(np.array(j, dtype=np.int64)).tolist() == x
