"""Fast paths of the load phase (issue 22, S9) against plain references.

* ``model.keys.repeated_dictionary_keys`` (node titles that repeat block by block, one block per
  level, as graphrag 0.x writes ``create_final_nodes``) == ``pyarrow.compute.dictionary_encode``;
* ``model.keys.node_entity_rows`` (ids gathered by title code) == the first entity row with the
  node's id, looked up in a Python dict.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from graphrag_audit.io.coerce import key_column, text_column
from graphrag_audit.io.load import _level_block, load_index
from graphrag_audit.model.keys import node_entity_rows, repeated_dictionary_keys


def _plain(items) -> pa.DictionaryArray:
    enc = pc.dictionary_encode(items)
    return enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc


def _got(items, block) -> pa.DictionaryArray:
    out = pa.array(repeated_dictionary_keys(items, block))
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def _chunked(values: list, cuts: list[int], type_=pa.string()):
    arr = pa.array(values, type_)
    bounds = [0] + sorted(c for c in cuts if 0 < c < len(values)) + [len(values)]
    return pa.chunked_array([arr.slice(a, b - a) for a, b in zip(bounds, bounds[1:])], type_)


def _cases():
    """(values, block): tiled columns (whole and partial last blocks, duplicates and empty keys
    inside a block), columns that differ from a tiling in one late key, nulls, and blocks that
    cannot tile (none, 0, the whole column, longer than it)."""
    rng = random.Random(22)
    out = []
    for _ in range(60):
        block = rng.randint(1, 12)
        first = [rng.choice(["a", "b", "", "ccc", "é", "a b", "0"]) for _ in range(block)]
        reps = rng.randint(1, 5)
        n = block * reps + rng.choice([0, 0, rng.randint(0, block - 1)])
        values = [first[i % block] for i in range(n)]
        kind = rng.choice(["tiled", "tiled", "one-off", "null", "shuffled"])
        if kind == "one-off" and n > block:
            at = rng.randrange(block, n)
            values[at] = values[at] + "x"
        elif kind == "null" and n:
            values[rng.randrange(n)] = None
        elif kind == "shuffled":
            rng.shuffle(values)
        out.append((values, rng.choice([block, block, None, 0, n, n + 3, max(block - 1, 1)])))
    out += [
        ([], None),
        ([], 3),
        (["a"], 1),
        (["a", "a"], 1),
        (["a", "b"], 1),
        (["x"] * 9, 3),
        (["a", "b", "a", "b", "a"], 2),
        (["a", "b", "a", "c"], 2),
    ]
    return out


@pytest.mark.parametrize("values,block", _cases())
def test_repeated_dictionary_keys_equals_dictionary_encode(values, block):
    rng = random.Random(len(values) * 31 + (block or 0))
    cuts = [rng.randint(0, len(values)) for _ in range(rng.randint(0, 3))]
    for items in (pa.array(values, pa.string()), pa.array(values, pa.large_string()), _chunked(values, cuts)):
        got, plain = _got(items, block), _plain(items)
        assert got.type == plain.type
        assert got.equals(plain), (values, block)


def test_repeated_dictionary_keys_tiles_only_when_it_repeats():
    """The tiled answer is taken from the first block alone: a change anywhere after it (here
    in the very last key) must send the column to the plain encoding."""
    first = [f"k{i}" for i in range(50)][::-1]
    tiled = first * 4
    changed = tiled[:-1] + ["new"]
    assert _got(pa.array(tiled), 50).equals(_plain(pa.array(tiled)))
    got = _got(pa.array(changed), 50)
    assert got.equals(_plain(pa.array(changed))) and got.dictionary.to_pylist()[-1] == "new"


@pytest.mark.parametrize(
    "levels,expected",
    [
        ([], None),
        ([0], 1),
        ([0, 0, 1, 1], 2),
        ([2, 2, 2], 3),
        ([0, 1, 0, 1], None),
        ([0, 0, 1, 2, 2], 2),
        ([1, 0], None),
    ],
)
def test_level_block(levels, expected):
    assert _level_block(np.array(levels, dtype=np.int64)) == expected


def _plain_titles(path):
    """The node titles as the loader reads them (pandas' string type; missing as ''), plainly
    dictionary-encoded, after checking that they are the file's titles."""
    from graphrag_audit.io.tables import read_table

    df = read_table(path, ["title"])
    titles = pa.array(text_column(df["title"], len(df)).array)
    titles = titles.combine_chunks() if isinstance(titles, pa.ChunkedArray) else titles
    raw = pq.read_table(path, columns=["title"]).column("title").to_pylist()
    assert titles.to_pylist() == ["" if t is None else t for t in raw]
    return _plain(titles)


@pytest.mark.parametrize("disturb", ["none", "last-key", "null-title", "short-level", "unordered-level"])
def test_tiled_nodes_load_as_the_plain_encoding(tmp_path, disturb, monkeypatch):
    """A graphrag 0.x style create_final_nodes (one block of rows per level, each in the same
    order, duplicate titles inside the block) and disturbed copies: the loader's roll-up keys
    equal the plain encoding of the titles; only the undisturbed one and the one with a short last level encode a single block."""
    from types import SimpleNamespace

    import graphrag_audit.model.keys as keys
    from graphrag_audit.io.load import _nodes

    encoded = []
    plain_keys = keys.dictionary_keys
    monkeypatch.setattr(
        keys, "dictionary_keys", lambda items: encoded.append(len(items)) or plain_keys(items)
    )

    block = [f"E{i % 37}" for i in range(120)]
    levels = [list(block) for _ in range(4)]
    if disturb == "last-key":
        levels[-1][-1] = "LATE"
    elif disturb == "null-title":
        levels[2][5] = None
    elif disturb == "short-level":
        levels[-1] = levels[-1][:-7]
    elif disturb == "unordered-level":
        levels[1] = levels[1][::-1]
    rows = {"id": [], "title": [], "community": [], "level": []}
    for level, titles in enumerate(levels):
        rows["id"] += [f"id-{t}" for t in titles]
        rows["title"] += titles
        rows["community"] += [level * 10 + (i % 3) for i in range(len(titles))]
        rows["level"] += [level] * len(titles)
    path = tmp_path / "create_final_nodes.parquet"
    schema = pa.schema(
        [("id", pa.string()), ("title", pa.string()), ("community", pa.int64()), ("level", pa.int64())]
    )
    pq.write_table(pa.table(rows, schema=schema), path, row_group_size=100)  # blocks across row groups
    got = pa.array(_nodes(SimpleNamespace(tables={"nodes": path}))["entity"].array)
    got = got.combine_chunks() if isinstance(got, pa.ChunkedArray) else got
    # a short last level is still the first block repeated (a prefix of it): tiled too
    assert encoded == ([120] if disturb in ("none", "short-level") else [len(rows["title"])])
    assert got.equals(_plain_titles(path))


def test_tiled_real_index_loads_as_the_plain_encoding():
    """dulce-v0.3 (graphrag 0.3: its create_final_nodes is one identical block per level)."""
    from conftest import shared_index

    path = shared_index("dulce-v0.3-create_final")
    nodes = next(path.rglob("create_final_nodes.parquet"))
    lev = pq.read_table(nodes, columns=["level"]).column("level").to_numpy()
    titles = pq.read_table(nodes, columns=["title"]).column("title")
    k = _level_block(lev)
    assert 0 < k < len(lev) and pc.all(pc.equal(titles.slice(k), titles.slice(0, len(titles) - k))).as_py()
    got = pa.array(load_index(path).rollup_rows["entity"].array)
    got = got.combine_chunks() if isinstance(got, pa.ChunkedArray) else got
    assert got.equals(_plain_titles(nodes))


def _node_rows_plain(node_ids: list, entity_ids: list) -> list[int]:
    first = {}
    for i, key in enumerate(entity_ids):
        first.setdefault(key, i)
    return [first.get(k, -1) for k in node_ids]


@pytest.mark.parametrize("seed", range(12))
def test_node_entity_rows_equals_first_row_with_the_id(seed):
    """Node titles that name another entity than the node id, entity ids and titles repeated,
    entity titles missing, node ids unknown, node rows in runs and in level blocks: the row
    found is always the first entity row with the node's id."""
    rng = random.Random(seed)
    n_ent = rng.randint(0, 30)
    e_ids = [f"e{rng.randint(0, 25)}" for _ in range(n_ent)]
    e_titles = [
        rng.choice([None, f"T{rng.randint(0, 25)}"]) if rng.random() < 0.2 else f"T{e_ids[i][1:]}"
        for i in range(n_ent)
    ]
    names = list(range(28))
    node_ids, node_titles = [], []
    for _level in range(rng.randint(1, 4)):
        order = names if rng.random() < 0.5 else rng.sample(names, len(names))
        for j in order[: rng.randint(0, len(order))]:
            node_ids.append(rng.choice([f"e{j}", f"e{j}", f"e{rng.randint(0, 27)}", "unknown"]))
            node_titles.append(rng.choice([f"T{j}", f"T{j}", f"T{rng.randint(0, 27)}", ""]))
    ents = pd.DataFrame(
        {
            "id": pd.Series(e_ids, dtype="string[pyarrow]"),
            "title": pd.Series(e_titles, dtype="string[pyarrow]"),
        }
    )
    first = ~ents["id"].duplicated(keep="first").to_numpy()
    titles = pd.Series(
        key_column(text_column(pd.Series(node_titles, dtype="string[pyarrow]"), len(node_titles)))
    )
    got = node_entity_rows(
        titles, text_column(pd.Series(node_ids, dtype="string[pyarrow]"), len(node_ids)), ents, first
    )
    assert got is not None and got.tolist() == _node_rows_plain(node_ids, e_ids)


# ---- the entities' keys handed over first, the reports read by whichever thread is free ----
def _index_with(tmp_path, broken: list[str], fixture: str = "seed-v3"):
    import shutil

    from conftest import FIXTURES

    idx = tmp_path / "i"
    shutil.copytree(FIXTURES / fixture, idx)
    for name in broken:
        path = idx / name
        data = bytearray(path.read_bytes())  # column data zeroed, footer kept: the schema reads
        footer = int.from_bytes(data[-8:-4], "little") + 8
        data[4 : len(data) - footer] = bytes(len(data) - footer - 4)
        path.write_bytes(bytes(data))
    return idx


def _schedule(monkeypatch, who: str, hold_s: float = 10) -> list[str]:
    """Force which thread reads the reports of a graphrag >= 2.0 index: ``"main"`` holds the worker
    in the encoding of the entities' text-unit ids (after it handed over their keys) until the
    reports are read, so the reading thread finds them not started; ``"worker"`` holds the
    reading thread in the communities until the worker has read them. Returns the names of the
    threads that read them."""
    import threading

    import graphrag_audit.io.load as load

    done, readers = threading.Event(), []
    reports, communities, encode = load._reports, load._communities, load.dictionary_lists

    def read_reports(files):
        readers.append(threading.current_thread().name)
        try:
            return reports(files)
        finally:
            done.set()

    def held_communities(files, schemas):
        done.wait(hold_s)
        return communities(files, schemas)

    def held_encode(column):
        done.wait(hold_s)
        return encode(column)

    monkeypatch.setattr(load, "_reports", read_reports)
    if who == "main":
        monkeypatch.setattr(load, "dictionary_lists", held_encode)
    else:
        monkeypatch.setattr(load, "_communities", held_communities)
    return readers


@pytest.mark.parametrize("who", ["main", "worker"])
@pytest.mark.parametrize(
    "broken,named",
    [
        (["community_reports.parquet"], "community_reports.parquet"),
        (["entities.parquet", "community_reports.parquet"], "community_reports.parquet"),
        (["entities.parquet"], "entities.parquet"),
        (["communities.parquet", "community_reports.parquet", "entities.parquet"], "communities.parquet"),
    ],
)
def test_v3_error_order_is_that_of_a_sequential_read(tmp_path, monkeypatch, broken, named, who):
    """Whichever thread reads the reports, the error is the one a sequential read meets first."""
    from graphrag_audit.errors import IndexInputError

    idx = _index_with(tmp_path, broken)
    _schedule(monkeypatch, who, hold_s=1)  # (a broken table may end a run before the hold is released)
    with pytest.raises(IndexInputError) as err:
        load_index(idx)
    assert named in str(err.value)


@pytest.mark.parametrize(
    "broken,named",
    [
        (["create_final_nodes.parquet", "create_final_communities.parquet"], "create_final_nodes.parquet"),
        (
            [
                "create_final_communities.parquet",
                "create_final_community_reports.parquet",
                "create_final_entities.parquet",
            ],
            "create_final_communities.parquet",
        ),
        (
            ["create_final_community_reports.parquet", "create_final_entities.parquet"],
            "create_final_community_reports.parquet",
        ),
        (["create_final_entities.parquet"], "create_final_entities.parquet"),
    ],
)
def test_v1_error_order_is_that_of_a_sequential_read(tmp_path, broken, named):
    """graphrag 1.x (create_final_nodes read last, with the entities' keys): the error is the one
    a sequential read meets first."""
    from graphrag_audit.errors import IndexInputError

    with pytest.raises(IndexInputError) as err:
        load_index(_index_with(tmp_path, broken, "seed-v1"))
    assert named in str(err.value)


@pytest.mark.parametrize("who", ["main", "worker"])
def test_v3_model_is_the_same_whichever_thread_reads_the_reports(monkeypatch, who):
    """The reports and the key match are those of a plain read, when the reading thread reads
    the reports while the worker encodes the text-unit ids and when the worker reads them."""
    from types import SimpleNamespace

    from conftest import FIXTURES

    import graphrag_audit.io.load as load
    from graphrag_audit.model.keys import match_entity_keys

    idx = FIXTURES / "seed-v3"
    readers = _schedule(monkeypatch, who)
    got = load_index(idx)
    expected = "MainThread" if who == "main" else "graphrag-audit-read"
    assert len(readers) == 1 and readers[0].startswith(expected), readers
    plain, kind = load._reports(SimpleNamespace(tables={"reports": idx / "community_reports.parquet"}))
    pd.testing.assert_frame_equal(got.reports, plain)
    plain_match = match_entity_keys(got.members["entity"], got.entities["id"])
    for field in ("clustered", "first", "member_row"):
        assert np.array_equal(getattr(got.key_match, field), getattr(plain_match, field)), field
    assert got.entities["text_unit_ids"].notna().all() and len(plain) and kind == "int"


def test_v1_model_equals_a_one_thread_read():
    """graphrag 1.x: the entities, the roll-up rows (made from the entities' keys) and the key
    match are those of a one-thread read of the same functions."""
    from types import SimpleNamespace

    from conftest import FIXTURES

    import graphrag_audit.io.load as load
    from graphrag_audit.model.keys import match_entity_keys

    idx = FIXTURES / "seed-v1"
    files = SimpleNamespace(
        tables={
            "entities": idx / "create_final_entities.parquet",
            "nodes": idx / "create_final_nodes.parquet",
        }
    )
    read = load._entity_keys(files)
    plain_entities = load._entities(read)
    rollup = load._rollup_with_entity_rows(load._rollup_rows(load._nodes(files)), read.keys)
    plain_rollup = load._in_level_order(rollup)
    got = load_index(idx)
    pd.testing.assert_frame_equal(got.entities, plain_entities)
    pd.testing.assert_frame_equal(got.rollup_rows, plain_rollup)
    assert "entity_row" in got.rollup_rows.columns and got.entities["text_unit_ids"].notna().all()
    plain_match = match_entity_keys(got.members["entity"], plain_entities["id"])
    for field in ("clustered", "first", "member_row"):
        assert np.array_equal(getattr(got.key_match, field), getattr(plain_match, field)), field


@pytest.mark.parametrize("order", ["level-by-level", "shuffled"])
def test_audit_is_the_same_whatever_the_node_row_order(tmp_path, order):
    """graphrag 1.x writes create_final_nodes entity by entity (the generator's 1.0-1.2 layout);
    the same rows level by level or in a random order give the same audit document, and the same
    loaded roll-up rows as sets."""
    import synthetic as S

    from graphrag_audit.analysis.audit import audit
    from graphrag_audit.render.json import render_json

    spec = S.leiden_like(2500, seed=11)
    a = S.write_index(spec, tmp_path / "a", "1.0-1.2")
    b_dir = tmp_path / "b"
    b_dir.mkdir()
    for stem, path in a.items():
        table = pq.read_table(path)
        if stem == "create_final_nodes":
            if order == "level-by-level":
                idx = np.lexsort((np.arange(table.num_rows), table.column("level").to_numpy()))
            else:
                idx = np.random.default_rng(3).permutation(table.num_rows)
            table = table.take(pa.array(idx))
            assert not table.equals(pq.read_table(path))
        pq.write_table(table, b_dir / path.name)

    def document(folder):
        return json.loads(render_json(audit(folder)))

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items()}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return "(path)" if isinstance(x, str) and str(tmp_path) in x else x

    doc_a, doc_b = strip(document(a["create_final_nodes"].parent)), strip(document(b_dir))
    assert doc_a == doc_b
    assert doc_a["levels"], "the audit found no levels"

    def rows(folder):
        r = load_index(folder).rollup_rows
        return sorted(zip(r["entity"].astype(str), r["community"], r["level"]))

    assert rows(a["create_final_nodes"].parent) == rows(b_dir)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint16, np.uint64, np.int8])
@pytest.mark.parametrize("span", [1, 3, 255, 256, 65535, 65536, 10**9])
def test_stable_order_equals_a_stable_argsort(dtype, span):
    from graphrag_audit.model.keys import stable_order

    rng = np.random.default_rng(span)
    info = np.iinfo(dtype)
    hi = min(span, int(info.max))
    lo = max(int(info.min), -hi) if info.min < 0 else 0
    for n in (0, 1, 2, 1000):
        values = rng.integers(lo, hi, n, endpoint=True).astype(dtype)
        assert np.array_equal(stable_order(values), np.argsort(values, kind="stable")), (dtype, span, n)


def test_rollup_rows_come_level_by_level(tmp_path):
    """graphrag 1.x's entity-by-entity create_final_nodes: the loaded roll-up rows are the file's
    rows sorted stably by level, each still with its own title-is-missing flag."""
    from graphrag_audit.io.load import _in_level_order

    rollup = pd.DataFrame(
        {
            "entity": ["a", "a", "a", "b", "c", "c"],
            "community": [1, 10, 100, 2, 3, 30],
            "level": [0, 1, 2, 0, 0, 1],
            "entity_row": [0, 0, 0, 1, 2, 2],
        }
    )
    rollup.attrs["title_na"] = np.array([False, False, False, True, False, False])
    got = _in_level_order(rollup)
    assert got["entity"].tolist() == ["a", "b", "c", "a", "c", "a"]
    assert got["community"].tolist() == [1, 2, 3, 10, 30, 100]
    assert got["level"].tolist() == [0, 0, 0, 1, 1, 2] and got["entity_row"].tolist() == [0, 1, 2, 0, 2, 0]
    assert got.attrs["title_na"].tolist() == [False, True, False, False, False, False]
    assert list(got.index) == list(range(6))
    assert _in_level_order(got) is got  # already level by level: untouched
