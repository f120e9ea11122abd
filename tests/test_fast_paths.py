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
from hypothesis import given, settings, strategies as st

from graphrag_audit.errors import IndexInputError
from graphrag_audit.levels import CommunityIds, _first_parents
from graphrag_audit.load import load_index
from graphrag_audit.normalise import factorize_ints
from graphrag_audit.tree import build_tree, graph_links, parent_links

FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures"


# ---- factorize_ints == pd.factorize --------------------------------------------------------
int_arrays = st.one_of(
    st.lists(st.integers(-3, 8), max_size=40),  # anything
    st.lists(st.tuples(st.integers(0, 30), st.integers(1, 4)), max_size=12).map(  # runs
        lambda runs: [v for v, k in runs for _ in range(k)]),
    st.lists(st.integers(0, 6), max_size=40).map(lambda xs: pd.factorize(np.array(xs, dtype=np.int64))[0].tolist()),
)


@settings(max_examples=300, deadline=None, database=None)
@given(values=int_arrays)
def test_factorize_ints_equals_pandas(values):
    a = np.array(values, dtype=np.int64)
    codes, n = factorize_ints(a)
    want, uniques = pd.factorize(a)
    assert codes.tolist() == want.tolist() and n == len(uniques)


# ---- parent_links == the networkx graph ----------------------------------------------------
@st.composite
def parent_tables(draw):
    """A communities table with every parent oddity: duplicate rows, self-parents, parents
    with no row, several parents for one community, rows out of order."""
    n = draw(st.integers(1, 14))
    comm = draw(st.lists(st.integers(0, n + 3), min_size=1, max_size=n + 4))
    parent = [draw(st.integers(-1, n + 5)) for _ in comm]
    return pd.DataFrame({"community": np.array(comm, dtype=np.int64),
                         "level": np.array([draw(st.integers(0, 3)) for _ in comm], dtype=np.int64),
                         "parent": np.array(parent, dtype=np.int64)})


@settings(max_examples=300, deadline=None, database=None)
@given(table=parent_tables())
def test_parent_links_describe_the_same_graph_as_networkx(table):
    import networkx as nx

    # the graph the parent column describes, built row by row (independently of parent_links)
    g = nx.DiGraph()
    g.add_nodes_from(dict.fromkeys(table["community"].tolist()))
    missing = {}
    for c, p in zip(table["community"].tolist(), table["parent"].tolist()):
        if p >= 0 and p in g:
            g.add_edge(p, c)
        elif p >= 0:
            missing[c] = p
    g.graph["missing_parents"] = missing
    built = build_tree(table, None)  # and build_tree makes that very graph, in the same order
    assert list(built.nodes) == list(g.nodes) and list(built.edges) == list(g.edges)
    assert built.graph["missing_parents"] == missing
    links = parent_links(table)
    assert links.nodes.tolist() == list(g.nodes)
    edges = list(zip(links.parents.tolist(), links.children.tolist()))
    assert len(edges) == len(set(edges)) and set(edges) == set(g.edges)
    assert links.missing_parents == g.graph["missing_parents"]
    # the first parent of each community: its first predecessor in the graph
    index = pd.Index(links.nodes)
    got = _first_parents(links, index)
    want = [index.get_loc(next(iter(g.pred[c]))) if g.pred[c] else -1 for c in links.nodes.tolist()]
    assert got.tolist() == want
    # and graph_links of that graph agrees too
    again = graph_links(g)
    assert set(zip(again.parents.tolist(), again.children.tolist())) == set(edges)
    assert _first_parents(again, index).tolist() == want


def test_first_parent_follows_insertion_order_not_node_order():
    """A membership-derived graph adds edges sorted by parent number, while its nodes follow the
    table: the first parent is the first edge added, as ``tree.pred`` has always said."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from([9, 4, 20])  # table order: 9 before 4
    g.add_edge(4, 20)
    g.add_edge(9, 20)
    links = graph_links(g)
    index = pd.Index(links.nodes)
    assert index[_first_parents(links, index)[index.get_loc(20)]] == 4


def test_tree_is_built_on_first_use_and_matches_the_parent_column():
    model = load_index(FIXTURES / "seed-v3")
    assert model._tree is None  # the levels audit never needs networkx
    g = model.tree
    assert g is model.tree  # built once
    want = build_tree(model.communities, None)
    assert list(g.nodes(data=True)) == list(want.nodes(data=True))
    assert list(g.edges) == list(want.edges)


def test_the_levels_audit_never_builds_the_networkx_graph():
    from graphrag_audit.audit import AuditOptions, audit
    from graphrag_audit.render import render

    report = audit(FIXTURES / "balanced-v3", AuditOptions(tokenizer="estimate"))
    for fmt in ("json", "markdown", "github"):
        render(report, fmt)
    assert report.model._tree is None


def test_membership_trees_are_built_at_load():
    model = load_index(FIXTURES / "seed-v05")
    assert model.tree_source == "membership" and model._tree is not None
    assert set(zip(model.tree_links.parents.tolist(), model.tree_links.children.tolist())) == set(model.tree.edges)


# ---- the threaded loader keeps the error order ---------------------------------------------
def _copy_index(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


def _garble(path):
    """Zero the column data but keep the footer: the schema reads, the rows do not."""
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    data[4: len(data) - footer] = bytes(len(data) - footer - 4)
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
    pq.write_table(t.set_column(t.schema.get_field_index("level"), "level",
                                pa.array(["x"] * len(t))), idx / "communities.parquet")
    with pytest.raises(IndexInputError) as err:
        load_index(idx)
    assert "communities.parquet" in str(err.value)


# ---- JSON: id lists pass through unchanged -------------------------------------------------
def test_community_ids_render_like_plain_lists():
    from graphrag_audit.render.json import _clean

    ids = sorted(random.Random(5).sample(range(10**6), 500))
    doc = {"a": CommunityIds(ids), "b": ids, "c": [CommunityIds([]), CommunityIds([0, -1, 2**62])]}
    cleaned = _clean(doc)
    assert cleaned["a"] is doc["a"]  # passed through, not copied item by item
    assert json.dumps(cleaned) == json.dumps({"a": ids, "b": ids, "c": [[], [0, -1, 2**62]]})


# ---- children column against the parent column --------------------------------------------
@settings(max_examples=300, deadline=None, database=None)
@given(rows=st.lists(st.tuples(st.integers(0, 9), st.integers(-1, 9),
                               st.one_of(st.none(), st.lists(st.integers(-2, 11), max_size=4))), max_size=12))
def test_children_vs_parent_equals_the_set_formula(rows):
    from graphrag_audit.integrity import _children_vs_parent

    comm = np.array([r[0] for r in rows], dtype=np.int64)
    parent = np.array([r[1] for r in rows], dtype=np.int64)
    children = [r[2] for r in rows]
    from_children = {(int(p), int(ch)) for p, kids in zip(comm, children) for ch in (kids or [])}
    from_parent = {(int(p), int(ch)) for ch, p in zip(comm, parent) if p >= 0}
    want = (sorted({p for p, _ in from_children ^ from_parent}), len(from_children - from_parent),
            len(from_parent - from_children))
    assert _children_vs_parent(comm, children, parent) == want
