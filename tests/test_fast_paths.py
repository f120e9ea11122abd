"""The shortcuts the performance work (issue 5) took, each against the plain computation it
replaces: array tree links against the networkx graph, integer factorization against
``pd.factorize``, the threaded loader against a table that fails, the JSON pass-through of
community id lists against the generic cleaner."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_ref import edges as forest_edges
from tree_ref import first_parents, reference_graph

from graphrag_audit.analysis.levels import CommunityIds
from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.load import load_index
from graphrag_audit.model.forest import CommunityForest
from graphrag_audit.model.keys import factorize_ints

FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures"


# ---- factorize_ints == pd.factorize --------------------------------------------------------
int_arrays = st.one_of(
    st.lists(st.integers(-3, 8), max_size=40),  # anything
    st.lists(st.tuples(st.integers(0, 30), st.integers(1, 4)), max_size=12).map(  # runs
        lambda runs: [v for v, k in runs for _ in range(k)]
    ),
    st.lists(st.integers(0, 6), max_size=40).map(
        lambda xs: pd.factorize(np.array(xs, dtype=np.int64))[0].tolist()
    ),
)


@settings(max_examples=300, deadline=None, database=None)
@given(values=int_arrays)
def test_factorize_ints_equals_pandas(values):
    a = np.array(values, dtype=np.int64)
    codes, n = factorize_ints(a)
    want, uniques = pd.factorize(a)
    assert codes.tolist() == want.tolist() and n == len(uniques)


# ---- the forest of the parent column == the networkx graph ---------------------------------
@st.composite
def parent_tables(draw):
    """A communities table with every parent oddity: duplicate rows, self-parents, parents
    with no row, several parents for one community, rows out of order."""
    n = draw(st.integers(1, 14))
    comm = draw(st.lists(st.integers(0, n + 3), min_size=1, max_size=n + 4))
    parent = [draw(st.integers(-1, n + 5)) for _ in comm]
    return pd.DataFrame(
        {
            "community": np.array(comm, dtype=np.int64),
            "level": np.array([draw(st.integers(0, 3)) for _ in comm], dtype=np.int64),
            "parent": np.array(parent, dtype=np.int64),
        }
    )


@settings(max_examples=300, deadline=None, database=None)
@given(table=parent_tables())
def test_the_forest_of_the_parent_column_is_the_networkx_graph(table):
    import networkx as nx

    # the graph the parent column describes, built row by row (independently of the forest)
    g = nx.DiGraph()
    g.add_nodes_from(dict.fromkeys(table["community"].tolist()))
    missing = {}
    for c, p in zip(table["community"].tolist(), table["parent"].tolist()):
        if p >= 0 and p in g:
            g.add_edge(p, c)
        elif p >= 0:
            missing[c] = p
    forest = CommunityForest.from_parent_column(table)
    assert forest.nodes.tolist() == list(g.nodes)
    edges = list(zip(forest.edge_parents.tolist(), forest.edge_children.tolist()))
    assert edges == list(dict.fromkeys(edges)) and set(edges) == set(g.edges)
    assert forest.missing_parents == missing
    # the first parent of each community: its first predecessor in the graph
    index = pd.Index(forest.nodes)
    want = [index.get_loc(next(iter(g.pred[c]))) if g.pred[c] else -1 for c in forest.nodes.tolist()]
    assert forest.first_parent.tolist() == want
    assert forest.other_parents == {c: tuple(list(g.pred[c])[1:]) for c in g.nodes if len(g.pred[c]) > 1}
    assert forest.multi_parent == sorted(c for c in g.nodes if g.in_degree(c) > 1)
    # cycles: networkx's strongly connected components and self-loops
    want_cyc = {n for comp in nx.strongly_connected_components(g) if len(comp) > 1 for n in comp}
    want_cyc |= {u for u, _ in nx.selfloop_edges(g)}
    assert forest.cycle_nodes == sorted(want_cyc)
    assert forest.roots == sorted(c for c in g.nodes if g.in_degree(c) == 0)


def test_first_parent_of_a_membership_tree_is_the_smallest_parent_number():
    """A membership-derived tree adds edges sorted by parent number, while its nodes follow the
    table: the first parent is the first edge added (the smaller parent), whatever the node order."""
    communities = pd.DataFrame({"community": [9, 4, 20], "level": [0, 0, 1], "n_entities": [1, 1, 1]})
    members = pd.DataFrame(
        {"entity": ["a", "b", "a", "b"], "community": [9, 4, 20, 20], "level": [0, 0, 1, 1]}
    )
    forest = CommunityForest.from_membership(communities, members)
    assert forest.nodes.tolist() == [9, 4, 20]
    assert forest.nodes[forest.first_parent[2]] == 4 and forest.other_parents == {20: (9,)}
    assert forest.shared.tolist() == [1, 1]


def test_the_forest_matches_the_parent_column():
    model = load_index(FIXTURES / "seed-v3")
    want = reference_graph(model)
    f = model.forest
    assert f.nodes.tolist() == list(want.nodes)
    assert [
        (int(n), {"level": lv, "n_entities": k})
        for n, lv, k in zip(f.nodes.tolist(), f.level.tolist(), f.n_entities.tolist())
    ] == list(want.nodes(data=True))
    assert list(zip(f.edge_parents.tolist(), f.edge_children.tolist())) == list(want.edges)


def test_the_levels_command_never_imports_networkx():
    """networkx serves only the GraphML export: ``levels`` in every machine format runs without it."""
    import subprocess
    import sys

    root = FIXTURES.parent
    for fmt in ("text", "json", "markdown", "github"):
        code = (
            "import atexit, runpy, sys\n"
            "atexit.register(lambda: sys.stderr.write('NETWORKX=%s\\n' % ('networkx' in sys.modules)))\n"
            f"sys.argv = ['graphrag-audit', 'levels', {str(FIXTURES / 'balanced-v3')!r}, '--format', {fmt!r}, "
            "'--tokenizer', 'estimate']\n"
            "runpy.run_module('graphrag_audit', run_name='__main__')\n"
        )
        res = subprocess.run(
            [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300
        )
        assert res.returncode in (0, 1), res.stderr
        assert "NETWORKX=False" in res.stderr, (fmt, res.stderr[-2000:])


@pytest.mark.parametrize("fixture", ["seed-v05", "seed-v01"])
def test_membership_trees_are_built_at_load(fixture):
    model = load_index(FIXTURES / fixture)
    if model.tree_source != "membership":
        pytest.skip(f"{fixture} has a parent column")
    want = reference_graph(model)
    assert forest_edges(model.forest) == set(want.edges)
    f = model.forest
    got = {int(f.nodes[i]): int(f.nodes[p]) for i, p in enumerate(f.first_parent.tolist()) if p >= 0}
    assert got == first_parents(want)
    assert dict(zip(zip(f.edge_parents.tolist(), f.edge_children.tolist()), f.shared.tolist())) == {
        (u, v): d["shared"] for u, v, d in want.edges(data=True)
    }


# ---- the threaded loader keeps the error order ---------------------------------------------
def _copy_index(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


def _garble(path):
    """Zero the column data but keep the footer: the schema reads, the rows do not."""
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    data[4 : len(data) - footer] = bytes(len(data) - footer - 4)
    path.write_bytes(bytes(data))


def test_entities_error_is_reported_when_everything_else_is_fine(tmp_path):
    idx = _copy_index(FIXTURES / "seed-v3", tmp_path / "i")
    _garble(idx / "entities.parquet")
    with pytest.raises(IndexInputError) as err:
        load_index(idx)
    assert "entities.parquet" in str(err.value)


def test_communities_error_wins_over_an_entities_error(tmp_path):
    idx = _copy_index(FIXTURES / "seed-v3", tmp_path / "i")
    _garble(idx / "entities.parquet")
    t = pq.read_table(idx / "communities.parquet")
    pq.write_table(
        t.set_column(t.schema.get_field_index("level"), "level", pa.array(["x"] * len(t))),
        idx / "communities.parquet",
    )
    with pytest.raises(IndexInputError) as err:
        load_index(idx)
    assert "communities.parquet" in str(err.value)


def test_a_broken_nodes_table_read_last_is_still_a_one_line_error(tmp_path):
    """graphrag 1.x: create_final_nodes is read last, beside the key match; load_index returns a
    complete model, so its error comes from load_index itself, as the input error it is, and
    nothing hangs."""
    import subprocess
    import sys

    idx = _copy_index(FIXTURES / "seed-v1", tmp_path / "i")
    _garble(idx / "create_final_nodes.parquet")
    with pytest.raises(IndexInputError) as err:
        load_index(idx)  # the communities, reports and entities are fine
    assert "create_final_nodes.parquet" in str(err.value)
    run = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "levels", str(idx)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "create_final_nodes.parquet" in lines[0] and "Traceback" not in run.stderr
    for command in (["tree", str(idx), "-f", "mermaid"], ["plan", str(idx), "--reports", "3"]):
        run = subprocess.run(
            [sys.executable, "-m", "graphrag_audit", *command], capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 2 and "create_final_nodes.parquet" in run.stderr, command


@pytest.mark.parametrize(
    "first", [None, "create_final_communities.parquet", "create_final_community_reports.parquet"]
)
def test_an_entities_error_keeps_its_place_in_the_1x_layout(tmp_path, first):
    """graphrag 1.x: the worker makes the roll-up rows from create_final_nodes with the entities
    it read before; a broken entities table is still reported after a broken communities or
    reports table, and alone it is reported as itself."""
    idx = _copy_index(FIXTURES / "seed-v1", tmp_path / "i")
    _garble(idx / "create_final_entities.parquet")
    if first is not None:
        _garble(idx / first)
    with pytest.raises(IndexInputError) as err:
        load_index(idx)
    assert (first or "create_final_entities.parquet") in str(err.value)


@pytest.mark.parametrize(
    "other",
    [
        "create_final_communities.parquet",
        "create_final_entities.parquet",
        "create_final_community_reports.parquet",
    ],
)
def test_a_nodes_error_comes_first_in_the_1x_layout_too(tmp_path, other):
    idx = _copy_index(FIXTURES / "seed-v1", tmp_path / "i")
    _garble(idx / "create_final_nodes.parquet")
    _garble(idx / other)
    with pytest.raises(IndexInputError) as err:
        load_index(idx)
    assert "create_final_nodes.parquet" in str(err.value)


@pytest.mark.parametrize("broken", ["create_final_communities.parquet", "create_final_entities.parquet"])
def test_1x_errors_of_the_other_tables_are_reported(tmp_path, broken):
    idx = _copy_index(FIXTURES / "seed-v1", tmp_path / "i")
    _garble(idx / broken)
    with pytest.raises(IndexInputError) as err:
        load_index(idx)
    assert broken in str(err.value)


def test_1x_node_ids_are_matched_while_reading(tmp_path):
    """load_index returns everything read and matched: the node rows' entity rows, and the key
    match, equal to the pandas computation it replaces."""
    model = load_index(FIXTURES / "seed-v1")
    assert "entity_row" in model.rollup_rows.columns and "entity_id" not in model.rollup_rows.columns
    match = model.key_match
    assert match is not None
    keys, members = model.entities["id"], model.members["entity"]
    assert np.array_equal(match.clustered, keys.isin(set(members)).to_numpy())
    assert np.array_equal(match.first, ~keys.duplicated(keep="first").to_numpy())
    first_row = {k: i for i, k in reversed(list(enumerate(keys)))}
    assert match.member_row.tolist() == [first_row.get(k, -1) for k in members]


# ---- JSON: id lists are written in slices, exactly as json.dumps writes the lists ------------
def test_community_ids_render_like_plain_lists(monkeypatch):
    import graphrag_audit.render.json as rj

    monkeypatch.setattr(rj, "_CHUNK_IDS", 7)  # several slices per list
    ids = sorted(random.Random(5).sample(range(10**6), 500))
    doc = {
        "a": CommunityIds(ids),
        "b": ids,
        "c": [CommunityIds([]), CommunityIds([0, -1, 2**62])],
        "d": {"e": CommunityIds(ids[:8]), "f": 1.5},
    }
    plain = {"a": ids, "b": ids, "c": [[], [0, -1, 2**62]], "d": {"e": ids[:8], "f": 1.5}}
    spec = {"*": ({"*": None},), "d": {}}
    got = "".join(rj._stream(doc, spec))
    assert got == json.dumps(plain, separators=(",", ":"))
    assert json.dumps(rj._clean(doc), separators=(",", ":")) == got  # and _clean makes plain lists
    assert CommunityIds(ids) == ids and ids == CommunityIds(ids) and CommunityIds(ids)[3] == ids[3]
    assert list(CommunityIds(ids)) == ids and CommunityIds(ids)[:5] == ids[:5] and ids[7] in CommunityIds(ids)


# ---- children column against the parent column --------------------------------------------
@settings(max_examples=300, deadline=None, database=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 9),
            st.integers(-1, 9),
            st.one_of(st.none(), st.lists(st.integers(-2, 11), max_size=4)),
        ),
        max_size=12,
    )
)
def test_children_vs_parent_equals_the_set_formula(rows):
    from graphrag_audit.analysis.integrity import _children_vs_parent

    comm = np.array([r[0] for r in rows], dtype=np.int64)
    parent = np.array([r[1] for r in rows], dtype=np.int64)
    children = [r[2] for r in rows]
    from_children = {(int(p), int(ch)) for p, kids in zip(comm, children) for ch in (kids or [])}
    from_parent = {(int(p), int(ch)) for ch, p in zip(comm, parent) if p >= 0}
    want = (
        sorted({p for p, _ in from_children ^ from_parent}),
        len(from_children - from_parent),
        len(from_parent - from_children),
    )
    assert _children_vs_parent(comm, children, parent) == want


# ---- containment == the set formula ---------------------------------
@st.composite
def memberships(draw):
    """Communities 0..n-1 at random levels with random single or multiple parents (some naming
    no row), and membership rows grouped by community or shuffled: Leiden-like trees where each
    child's entities are its parent's, and every kind of damage to that."""
    n = draw(st.integers(1, 8))
    level = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    edges = draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n - 1)), max_size=10))
    rows = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 6)), max_size=30))
    if draw(st.booleans()):  # make children subsets of their parents, as Leiden does
        for u, w in edges:
            rows += [(u, e) for c, e in rows if c == w and u < n]
    if draw(st.booleans()):
        rows.sort(key=lambda r: r[0])
    return n, level, edges, rows


@settings(max_examples=400, deadline=None, database=None)
@given(case=memberships())
def test_containment_equals_the_set_formula(case):
    from types import SimpleNamespace

    from graphrag_audit.analysis.integrity import _containment

    n, level, edges, rows = case
    communities = pd.DataFrame(
        {"community": np.arange(n, dtype=np.int64), "level": np.array(level, dtype=np.int64)}
    )
    members = pd.DataFrame(
        {
            "entity": pd.Series([f"e{e}" for _, e in rows], dtype=object),
            "community": np.array([c for c, _ in rows], dtype=np.int64),
        }
    )
    u = np.array([a for a, _ in edges], dtype=np.int64)
    v = np.array([b for _, b in edges], dtype=np.int64)
    holds = {c: {e for cc, e in rows if cc == c} for c in range(n + 1)}
    want = sorted({b for a, b in edges if a != b and holds[b] - holds[a]})
    from graphrag_audit.model.keys import key_codes

    got = _containment(
        SimpleNamespace(
            members=members, communities=communities, member_key_codes=lambda: key_codes(members["entity"])
        ),
        u,
        v,
    )
    assert (list(got[0].communities) if got else []) == want


# ---- node ids found through the node titles == every node id looked up ----------------------
def _node_rows_both(path):
    """(normalise.node_entity_rows, the plain answer: the first entities row with the node's id)
    for the nodes and entities tables at ``path``, read here with pandas."""
    from graphrag_audit.io.coerce import text_column
    from graphrag_audit.model.keys import node_entity_rows

    files = {p.stem: p for p in path.iterdir()}
    nodes = pd.read_parquet(files["create_final_nodes"], columns=["id", "title"])
    ents = load_index(path).entities
    first = ~ents["id"].duplicated(keep="first").to_numpy()
    by_id = {}
    for i, key in enumerate(ents["id"].tolist()):
        by_id.setdefault(key, i)
    plain = [by_id.get(k, -1) for k in nodes["id"].tolist()]
    got = node_entity_rows(text_column(nodes["id"], len(nodes)), ents, first)
    return got, plain


def _indexes_with_node_ids():
    """The real indexes with create_final_nodes and an entities table (graphrag < 2.0)."""
    from conftest import SHARED_INDEXES, real_index_params

    params = real_index_params()
    if params and not isinstance(params[0], str):
        return params  # the one skipped param saying ../shared/indexes is absent
    return [
        n
        for n in params
        if (SHARED_INDEXES / n / "create_final_nodes.parquet").exists()
        and any(
            p.name in ("create_final_entities.parquet", "entities.parquet")
            for p in (SHARED_INDEXES / n).iterdir()
        )
    ]


@pytest.mark.parametrize("name", _indexes_with_node_ids())
def test_node_entity_rows_on_real_indexes(name):
    from conftest import shared_index

    path = shared_index(name)
    got, plain = _node_rows_both(path)
    assert got is not None and got.tolist() == plain


@pytest.mark.parametrize("damage", ["none", "swap-ids", "duplicate-ids", "rename-titles", "unknown-ids"])
def test_node_entity_rows_on_damaged_nodes(tmp_path, damage):
    """Node titles that name another entity than the node id, entity ids repeated (the first
    row is graphrag's), titles unknown to the entities, ids unknown to the entities; and the
    audit's v1 costs equal on the loader's path (ids matched while reading) and the lazy one."""
    import shutil

    idx = tmp_path / "i"
    shutil.copytree(FIXTURES / "seed-v1", idx)
    nodes_path, ents_path = idx / "create_final_nodes.parquet", idx / "create_final_entities.parquet"
    nodes, ents = pq.read_table(nodes_path).to_pandas(), pq.read_table(ents_path).to_pandas()
    rng = random.Random(3)
    if damage == "swap-ids":
        ids = nodes["id"].tolist()
        for i in rng.sample(range(len(ids)), k=len(ids) // 2):
            ids[i] = rng.choice(ids)
        nodes["id"] = ids
    elif damage == "duplicate-ids":
        ents = pd.concat([ents, ents.iloc[::-1]], ignore_index=True)
        ents.loc[len(ents) // 2 :, "title"] = [f"other {i}" for i in range(len(ents) - len(ents) // 2)]
    elif damage == "rename-titles":
        nodes.loc[::3, "title"] = "renamed"
    elif damage == "unknown-ids":
        nodes.loc[::4, "id"] = "not-an-entity"
    pq.write_table(pa.Table.from_pandas(nodes, preserve_index=False), nodes_path)
    pq.write_table(pa.Table.from_pandas(ents, preserve_index=False), ents_path)
    got, plain = _node_rows_both(idx)
    assert got is not None and got.tolist() == plain
    if damage != "none":
        assert any(p >= 0 for p in plain)
    from graphrag_audit.analysis.audit import AuditOptions, audit

    loaded = load_index(idx)
    assert "entity_row" in loaded.rollup_rows.columns  # matched while reading
    lazy = load_index(idx)
    r = lazy.rollup_rows
    # the roll-up rows are the node rows sorted stably by level (load.py::_in_level_order)
    in_level_order = np.argsort(nodes["level"].to_numpy(), kind="stable")
    assert r["level"].tolist() == nodes["level"].iloc[in_level_order].tolist()
    r["entity_id"] = text_column_of(nodes["id"].iloc[in_level_order].reset_index(drop=True))
    del r["entity_row"]  # as an index read without the entities first: matched by the costs
    opts = AuditOptions(tokenizer="estimate")
    a, b = audit(loaded, opts), audit(lazy, opts)
    for x, y in zip(a.levels, b.levels):
        assert x.selected["v1"].cost == y.selected["v1"].cost


def text_column_of(values):
    from graphrag_audit.io.coerce import text_column

    return text_column(values, len(values))


# ---- rating prompts: the estimate counts the fixed text once (issue 22) -----------------------
texts_st = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
    | st.sampled_from(["{question}", "{description}", "{{x}}", "日本語", "Привет", "🙂", ""]),
    max_size=12,
)


@settings(max_examples=60, deadline=None, database=None)
@given(descriptions=texts_st, query=st.text(max_size=20) | st.sampled_from(["{x}", "{{", "Вопрос"]))
def test_rating_prompt_tokens_equal_the_formatted_prompts(descriptions, query):
    """``rating_prompt_tokens_by_family`` for several families at once equals counting
    ``RATE_QUERY.format(...)`` of each report, as graphrag formats it."""
    from graphrag_audit.graphrag.dynamic import RATE_QUERY, rating_prompt_tokens_by_family
    from graphrag_audit.graphrag.tokens import get_token_counter

    for name in ("estimate", "cl100k_base"):
        counter = get_token_counter(name)
        plain = np.array(
            [counter.count(RATE_QUERY.format(description=d, question=query)) for d in descriptions],
            dtype=np.int64,
        )
        extra_3x = 3 + 3 + counter.count("system") + 3 + counter.count("user") + counter.count(query)
        both = rating_prompt_tokens_by_family(("2.x", "3.x"), descriptions, query, counter)
        assert both["2.x"].tolist() == plain.tolist()
        assert both["3.x"].tolist() == (plain + extra_3x).tolist()
        one = rating_prompt_tokens_by_family(("1.x",), descriptions, query, counter)
        assert one["1.x"].tolist() == plain.tolist()
