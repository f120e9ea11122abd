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


@pytest.mark.parametrize("seed", range(3))
def test_split_dictionary_encode_equals_one_encode(seed, monkeypatch):
    """Two halves on a helper thread, unified, give arrow's own single dictionary_encode: the same
    dictionary (first-appearance order) and codes, nulls and chunked input included; also when
    the helper is still busy and this thread encodes the second half itself."""
    from concurrent.futures import ThreadPoolExecutor
    import threading

    import pyarrow as pa
    import pyarrow.compute as pc

    from graphrag_audit.model import keys

    monkeypatch.setattr(keys, "SPLIT_ENCODE_MIN", 4)
    rng = np.random.default_rng(seed)
    words = [f"e{i}" for i in range(300)] + ["", "ü"]
    for n in (4, 5, 997, 5000):
        values = [None if rng.random() < 0.02 else words[int(rng.integers(len(words)))] for _ in range(n)]
        for items in (pa.array(values), pa.chunked_array([pa.array(values[: n // 3]), pa.array(values[n // 3:])])):
            want = pc.dictionary_encode(items)
            want = want.combine_chunks() if isinstance(want, pa.ChunkedArray) else want
            with ThreadPoolExecutor(max_workers=1) as pool:
                got = pa.array(keys.dictionary_keys(items, pool.submit))
                busy = threading.Event()
                pool.submit(busy.wait)  # the helper is busy: this thread takes the second half
                stolen = pa.array(keys.dictionary_keys(items, pool.submit))
                busy.set()
            for g in (got, stolen):
                g = g.combine_chunks() if isinstance(g, pa.ChunkedArray) else g
                assert g.dictionary.equals(want.dictionary) and g.indices.equals(want.indices)
