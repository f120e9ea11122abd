"""The load phase against plain references: ``model.keys.node_entity_rows`` == the first entity row
with the node's id (a Python dict), the order tables are read in, the roll-up rows' order."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphrag_audit.io.coerce import text_column
from graphrag_audit.io.load import load_index
from graphrag_audit.model.keys import node_entity_rows


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
    got = node_entity_rows(
        text_column(pd.Series(node_ids, dtype="string[pyarrow]"), len(node_ids)), ents, first
    )
    assert got is not None and got.tolist() == _node_rows_plain(node_ids, e_ids)


# ---- the order in which tables are read (errors name the first broken one) ----
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


@pytest.mark.parametrize(
    "broken,named",
    [
        (["community_reports.parquet"], "community_reports.parquet"),
        (["entities.parquet", "community_reports.parquet"], "community_reports.parquet"),
        (["entities.parquet"], "entities.parquet"),
        (["communities.parquet", "community_reports.parquet", "entities.parquet"], "communities.parquet"),
    ],
)
def test_v3_error_order_is_communities_reports_entities(tmp_path, broken, named):
    """Of several broken tables, the error names the first one read."""
    from graphrag_audit.errors import IndexInputError

    idx = _index_with(tmp_path, broken)
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
def test_v1_error_order_is_nodes_communities_reports_entities(tmp_path, broken, named):
    """graphrag 1.x: of several broken tables, the error names the first one read."""
    from graphrag_audit.errors import IndexInputError

    with pytest.raises(IndexInputError) as err:
        load_index(_index_with(tmp_path, broken, "seed-v1"))
    assert named in str(err.value)


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
