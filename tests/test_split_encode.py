"""model.split_encode: arrow's dictionary_encode on two halves gives the one-call result, and the
loaders that use it (entity_ids, node titles, text-unit ids, the entity-key match) are unchanged.
The reference is pyarrow's own ``pc.dictionary_encode`` (and, for the loaders, the load with the
split turned off)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from graphrag_audit.model import split_encode
from graphrag_audit.model.split_encode import dictionary_encode_split


def _reference(items) -> pa.DictionaryArray:
    enc = pc.dictionary_encode(items)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks() if enc.num_chunks else pa.array([], pa.dictionary(pa.int32(), items.type))
    return enc


def _same(items) -> None:
    want = _reference(items)
    for min_items in (0, 2, 3, 5, 10**9):
        got = dictionary_encode_split(items, min_items=min_items)
        assert got.type == want.type
        assert got.equals(want), (items, min_items, got, want)


@pytest.mark.parametrize("values", [
    [], ["a"], ["a", "a", "a"], ["a", "b"], [None], [None, None, "x", None], ["", "", None, ""],
    ["b", None, "a", "b", None, "c", "a"], ["x", "y", "z", "w"], ["z", "y", "x", "x", "y", "z"],
    ["é", "e\u0301", "é", "\x00", "\x00"],
])
@pytest.mark.parametrize("type_", [pa.string(), pa.large_string()])
def test_small_edge_cases_match_pyarrow(values, type_):
    _same(pa.array(values, type_))
    _same(pa.chunked_array([pa.array(values, type_)], type=type_))


def test_chunked_and_empty_chunks():
    _same(pa.chunked_array([], type=pa.string()))
    _same(pa.chunked_array([pa.array(["x", "y"]), pa.array([], pa.string()), pa.array(["y", "z", "x"])]))
    _same(pa.chunked_array([pa.array([None, None], pa.string()), pa.array(["q"])]))


def test_random_columns_match_pyarrow():
    rng = np.random.default_rng(7)
    for _ in range(400):
        n, k = int(rng.integers(0, 60)), int(rng.integers(1, 12))
        vals = [None if rng.random() < 0.1 else f"v{rng.integers(0, k)}" for _ in range(n)]
        a, b = sorted(int(x) for x in rng.integers(0, n + 1, size=2))
        _same(pa.array(vals, pa.string()))
        _same(pa.chunked_array([pa.array(vals[:a], pa.string()), pa.array(vals[a:b], pa.string()),
                                pa.array(vals[b:], pa.string())]))


def test_a_column_past_the_default_threshold_is_split_and_matches(monkeypatch):
    rng = np.random.default_rng(1)
    keys = np.array([f"id-{i:07d}" for i in range(50_000)], dtype=object)
    items = pa.array(keys[rng.integers(0, len(keys), size=300_000)], pa.string())
    calls = []
    real = split_encode._one
    monkeypatch.setattr(split_encode, "_one", lambda x: calls.append(len(x)) or real(x))
    monkeypatch.setattr(split_encode, "SPLIT_MIN_ITEMS", 100_000)
    monkeypatch.setattr(split_encode, "CHECK_LOAD", False)
    got = dictionary_encode_split(items)
    assert sorted(calls)[-2:] == [150_000, 150_000]  # two halves, then the joint dictionary
    assert got.equals(_reference(items))


def _frame_equal(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    for c in a.columns:
        x, y = a[c].array, b[c].array
        if isinstance(x, pd.arrays.ArrowExtensionArray):
            assert pa.array(x).equals(pa.array(y)), c
        else:
            pd.testing.assert_series_equal(a[c], b[c], check_names=False)


@pytest.mark.parametrize("layout", ["3.x", "1.0-1.2"])
def test_load_with_and_without_the_split_is_the_same(monkeypatch, tmp_path, layout):
    """Every dictionary-encoded column of the loaded model and the key match are the same with
    the split forced on every column and with it off (the one-call path)."""
    from graphrag_audit.io.load import load_index
    from tests.synthetic import leiden_like, write_index

    spec = leiden_like(600, seed=3)
    write_index(spec, tmp_path / layout, layout)
    monkeypatch.setattr(split_encode, "SPLIT_MIN_ITEMS", 10**12)
    off = load_index(tmp_path / layout)
    monkeypatch.setattr(split_encode, "SPLIT_MIN_ITEMS", 0)
    monkeypatch.setattr(split_encode, "CHECK_LOAD", False)
    on = load_index(tmp_path / layout)
    _frame_equal(off.members, on.members)
    _frame_equal(off.rollup_rows, on.rollup_rows)
    _frame_equal(off.entities, on.entities)
    assert (off.key_match is None) == (on.key_match is None)
    if off.key_match is not None:
        for f in ("clustered", "first", "member_row"):
            assert np.array_equal(getattr(off.key_match, f), getattr(on.key_match, f))


def _hostile(root, layout: str) -> None:
    """Duplicated entity ids, a null entity id, null and unknown entity_ids items, a community
    whose entity_ids repeat an entity, and a parent cycle, written into a generated index."""
    import pyarrow.parquet as pq

    names = {"3.x": ("communities", "entities", "community_reports"),
             "1.0-1.2": ("create_final_communities", "create_final_entities", "create_final_community_reports")}
    comm_f, ent_f = (root / f"{names[layout][0]}.parquet", root / f"{names[layout][1]}.parquet")
    ents = pq.read_table(ent_f).to_pandas()
    ents = pd.concat([ents, ents.iloc[[3, 5]]], ignore_index=True)  # two ids twice
    ents.loc[7, "id"] = None
    pq.write_table(pa.Table.from_pandas(ents, preserve_index=False), ent_f)
    comm = pq.read_table(comm_f).to_pandas()
    lists = [list(x) for x in comm["entity_ids"]]
    lists[0] = lists[0] + [None, "no-such-entity", lists[0][0]]
    lists[-1] = [None] + lists[-1]
    comm["entity_ids"] = lists
    leaf = int(comm["community"].iloc[-1])
    top = int(comm["community"].iloc[0])
    comm.loc[0, "parent"] = leaf  # top -> ... -> leaf -> top: a cycle (when leaf descends from top)
    comm.loc[len(comm) - 1, "parent"] = top
    pq.write_table(pa.Table.from_pandas(comm, preserve_index=False), comm_f)


@pytest.mark.parametrize("layout", ["3.x", "1.0-1.2"])
def test_audit_of_a_hostile_index_is_the_same_with_the_split(monkeypatch, tmp_path, layout):
    """The whole levels JSON (integrity findings included) with the split forced on every
    encoded column equals the one-call path's, on an index with duplicated and null ids,
    null and unknown members and a parent cycle."""
    from graphrag_audit.analysis.audit import AuditOptions, audit
    from graphrag_audit.render import render
    from tests.synthetic import leiden_like, write_index

    write_index(leiden_like(500, seed=5), tmp_path / layout, layout)
    _hostile(tmp_path / layout, layout)
    out = {}
    monkeypatch.setattr(split_encode, "CHECK_LOAD", False)
    for name, threshold in (("off", 10**12), ("on", 0)):
        monkeypatch.setattr(split_encode, "SPLIT_MIN_ITEMS", threshold)
        out[name] = render(audit(tmp_path / layout, AuditOptions(tokenizer="estimate")), "json")
    assert out["on"] == out["off"]
    for rule in ("parent-cycle", "dangling-membership", "child-not-subset"):  # the hostile parts reached the checks
        assert f'"rule":"{rule}"' in out["off"], rule


def test_busy_cores_skip_the_split_with_the_same_result(monkeypatch):
    items = pa.array([f"k{i % 7}" for i in range(50)], pa.string())
    calls = []
    real = split_encode._one
    monkeypatch.setattr(split_encode, "_one", lambda x: calls.append(len(x)) or real(x))
    monkeypatch.setattr(split_encode, "SPLIT_MIN_ITEMS", 10)
    monkeypatch.setattr(split_encode.os, "getloadavg", lambda: (64.0, 64.0, 64.0))
    busy = dictionary_encode_split(items)
    assert calls == [50]  # one call
    monkeypatch.setattr(split_encode.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    calls.clear()
    free = dictionary_encode_split(items)
    assert calls.count(25) == 2 and 50 not in calls  # two halves (then their dictionaries)
    assert busy.equals(free) and free.equals(_reference(items))
