"""The selection engine against an independent brute-force reference.

The reference functions below restate docs/graphrag-semantics.md#selection in plain Python loops:
  v2: every report with level <= N whose community has a communities row with level <= N
      (literally: group the communities rows with level <= N by title, keep each title's max
      community number, inner-join the reports with level <= N on community);
  v1: per entity, the max community number among its rows with level <= N, then the reports
      with level <= N among those numbers.
"""

from __future__ import annotations

import random

import pytest
from builders import SEED, write_v1, write_v3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphrag_audit.graphrag.selection import select_all
from graphrag_audit.io.load import load_index


def ref_v2(comm_rows, report_rows, n):
    best = {}
    for c, lv, title in comm_rows:
        if n is None or lv <= n:
            best[title] = max(best.get(title, c), c)
    kept = set(best.values())
    return sorted(c for c, lv in report_rows if (n is None or lv <= n) and c in kept)


def ref_v1(entity_rows, report_rows, n):
    best = {}
    for e, c, lv in entity_rows:
        if n is None or lv <= n:
            best[e] = max(best.get(e, c), c)
    kept = set(best.values())
    return sorted(c for c, lv in report_rows if (n is None or lv <= n) and c in kept)


def frontier(tree, n):
    """{communities at level n} ∪ {leaves at level < n}, by walking the tree dict."""
    has_child = {p for (_, p, _) in tree.values() if p != -1}
    out = set()
    for c, (lv, _, _) in tree.items():
        leaf = c not in has_child
        if (n is None and leaf) or (n is not None and (lv == n or (lv < n and leaf))):
            out.add(c)
    return out


def ids(sel, model, n, b):
    return sel[n][b].community_ids(model)


# ---- the seed example ------------------------------------------------------------------------
@pytest.mark.parametrize("writer", [write_v3, write_v1], ids=["3.x", "1.x"])
def test_seed_example(tmp_path, writer):
    model = load_index(writer(tmp_path / "seed", SEED))
    sel = select_all(model)
    assert ids(sel, model, 1, "v2") == [5, 6, 20, 21, 22]
    assert ids(sel, model, 1, "v1") == [20, 21, 22]
    assert ids(sel, model, 0, "v2") == [5, 6] == ids(sel, model, 0, "v1")
    assert ids(sel, model, 2, "v2") == [5, 6, 20, 21, 22, 77, 78]
    assert ids(sel, model, 2, "v1") == [21, 22, 77, 78]
    assert ids(sel, model, None, "v1") == [21, 22, 77, 78]
    assert ids(sel, model, None, "v2") == [5, 6, 20, 21, 22, 77, 78]
    assert ids(sel, model, 1, "level_only") == [20, 21, 22]
    assert ids(sel, model, 1, "dynamic") == [5, 6, 20, 21, 22]
    assert list(sel) == [0, 1, 2, None]


def test_missing_report_is_not_replaced_by_ancestor(tmp_path):
    reports = [(c, lv) for c, (lv, _, _) in SEED.items() if c != 21]  # C21{C} lost its report
    model = load_index(write_v1(tmp_path / "i", SEED, reports=reports))
    sel = select_all(model)
    # entity C's deepest community at level <= 1 is 21: no report, and 5 is not sent instead
    assert ids(sel, model, 1, "v1") == [20, 22]
    assert ids(sel, model, 1, "v2") == [5, 6, 20, 22]


def test_report_without_community_row(tmp_path):
    tree = dict(SEED)
    reports = [(c, lv) for c, (lv, _, _) in tree.items()] + [(99, 1)]
    model = load_index(write_v3(tmp_path / "i", tree, reports=reports))
    sel = select_all(model)
    assert 99 not in ids(sel, model, 1, "v2")  # inner join drops it
    assert 99 not in ids(sel, model, 1, "v1")
    assert 99 in ids(sel, model, 1, "dynamic")  # dynamic mode skips the join
    assert 99 in ids(sel, model, 1, "level_only")


def test_report_level_differs_from_community_level(tmp_path):
    # report of C77 (a level-2 community) claims level 1
    reports = [(c, (1 if c == 77 else lv)) for c, (lv, _, _) in SEED.items()]
    model = load_index(write_v3(tmp_path / "i", SEED, reports=reports))
    sel = select_all(model)
    # v2 at N=1: the report passes its own level filter, but community 77's row has level 2
    assert 77 not in ids(sel, model, 1, "v2")
    assert 77 in ids(sel, model, 2, "v2")
    assert 77 in ids(sel, model, 1, "dynamic")


def test_minus_one_report_v1_quirk(tmp_path):
    tree = {5: (0, -1, ["A", "B"]), 20: (1, 5, ["A"]), 21: (1, 5, ["B"])}
    reports = [(5, 0), (20, 1), (21, 1), (-1, 0)]
    model = load_index(write_v1(tmp_path / "i", tree, reports=reports, entities=["A", "B", "Z"]))
    sel = select_all(model)
    for n in (0, 1, None):  # Z's only row is community -1 at level 0
        assert -1 in ids(sel, model, n, "v1")
        assert -1 not in ids(sel, model, n, "v2")


def test_max_number_not_deepest(tmp_path):
    # child 3 has a smaller number than its parent 10: the < 2.0 roll-up keeps the max number (10)
    tree = {10: (0, -1, ["A", "B"]), 3: (1, 10, ["A"]), 4: (1, 10, ["B"])}
    model = load_index(write_v1(tmp_path / "i", tree))
    sel = select_all(model)
    assert ids(sel, model, 1, "v1") == [10]
    assert frontier(tree, 1) == {3, 4}


# ---- random trees ----------------------------------------------------------------------------
@st.composite
def random_tree(draw):
    rnd = random.Random(draw(st.integers(0, 10**9)))
    n_roots = draw(st.integers(1, 4))
    max_depth = draw(st.integers(0, 4))
    tree_nodes = []  # (tmp id, level, parent tmp id)
    ents = {}
    counter = [0]

    def grow(level, parent):
        me = len(tree_nodes)
        tree_nodes.append((me, level, parent))
        if level < max_depth and rnd.random() < 0.6:
            for _ in range(rnd.randint(1, 3)):
                grow(level + 1, me)
        else:
            mine = [f"e{counter[0] + i}" for i in range(rnd.randint(1, 3))]
            counter[0] += len(mine)
            ents[me] = mine

    for _ in range(n_roots):
        grow(0, -1)
    # entities of inner nodes = union of their children's
    for me, level, parent in sorted(tree_nodes, key=lambda t: -t[1]):
        if parent != -1:
            ents.setdefault(parent, [])
            ents[parent] = ents[parent] + ents[me]
    depth_ordered = draw(st.booleans())
    order = sorted(tree_nodes, key=lambda t: (t[1], t[0]))  # BFS-like: numbers grow with depth
    numbers = list(range(len(order)))
    if not depth_ordered:
        rnd.shuffle(numbers)
    num = {t[0]: numbers[i] for i, t in enumerate(order)}
    tree = {
        num[me]: (level, num[parent] if parent != -1 else -1, sorted(ents[me]))
        for me, level, parent in tree_nodes
    }
    keep = draw(st.floats(0.5, 1.0))
    reports = [(c, lv) for c, (lv, _, _) in tree.items() if rnd.random() < keep]
    if draw(st.booleans()):
        reports.append((max(tree) + 7, rnd.randint(0, max_depth)))  # a report with no community row
    if reports and draw(st.booleans()):
        i = rnd.randrange(len(reports))
        reports[i] = (reports[i][0], reports[i][1] + 1)  # a report whose level disagrees
    return tree, reports, depth_ordered


def _entity_rows(tree):
    return [(e, c, lv) for c, (lv, _, es) in tree.items() for e in es]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(random_tree(), st.sampled_from(["3.x", "1.x"]))
def test_engine_matches_reference(tmp_path_factory, case, layout):
    tree, reports, depth_ordered = case
    out = tmp_path_factory.mktemp("idx")
    (write_v3 if layout == "3.x" else write_v1)(out, tree, reports=reports)
    model = load_index(out)
    sel = select_all(model)
    comm_rows = [(c, lv, f"Community {c}") for c, (lv, _, _) in tree.items()]
    levels = list(range(max([lv for lv, _, _ in tree.values()] + [lv for _, lv in reports]) + 1)) + [None]
    assert list(sel) == levels
    for n in levels:
        v2 = ids(sel, model, n, "v2")
        v1 = ids(sel, model, n, "v1")
        assert v2 == ref_v2(comm_rows, reports, n)
        assert v1 == ref_v1(_entity_rows(tree), reports, n)
        assert ids(sel, model, n, "level_only") == sorted(c for c, lv in reports if n is None or lv == n)
        assert ids(sel, model, n, "dynamic") == sorted(c for c, lv in reports if n is None or lv <= n)
        clean = set(reports) == {(c, lv) for c, (lv, _, _) in tree.items()}
        if clean:
            assert set(v1) <= set(v2)
            if depth_ordered:
                assert set(v1) == frontier(tree, n)


def test_v1_differs_from_frontier_when_numbers_do_not_grow_with_depth(tmp_path):
    tree = {0: (0, -1, ["A", "B", "C"]), 2: (1, 0, ["A", "B"]), 1: (1, 0, ["C"])}
    model = load_index(write_v1(tmp_path / "i", tree))
    sel = select_all(model)
    assert set(ids(sel, model, 1, "v1")) == frontier(tree, 1) == {1, 2}
    tree = {5: (0, -1, ["A", "B"]), 1: (1, 5, ["A"]), 9: (1, 5, ["B"])}
    model = load_index(write_v1(tmp_path / "j", tree))
    sel = select_all(model)
    assert ids(sel, model, 1, "v1") == [5, 9]  # A's max number is 5 (its parent), not 1
