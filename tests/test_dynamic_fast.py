"""graphrag/dynamic_fast.py: each fast path of the dynamic-selection simulation against the plain
computation it stands in for (issue 22, S7): 1.x's containment edges by title owner against the
sorted (level, community) grouping and against the set formula of ``restore_community_hierarchy``;
the byte estimate of the rating prompts from arrow lengths against counting the formatted prompts;
the loader's dictionary codes as title codes against the titles themselves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_audit.graphrag.dynamic import (
    RATE_QUERY,
    _sorted_group_edges,
    children_from_nodes_v1,
    rating_prompt_tokens_by_family,
)
from graphrag_audit.graphrag.dynamic_fast import dictionary_title_codes, framed_estimate, unique_owner_edges
from graphrag_audit.graphrag.tokens import get_token_counter
from graphrag_audit.io.coerce import key_column


# ---- containment edges ------------------------------------------------------------------------
@st.composite
def node_tables(draw):
    """create_final_nodes-like rows (title, community, level): per level each title in at most one
    community (Leiden) or, with ``shared``, some titles in two communities of one level; community
    -1 rows, duplicate rows, a level with no row, rows in level order or shuffled, numbers spread
    wide or not."""
    n_titles = draw(st.integers(1, 12))
    levels = sorted(draw(st.sets(st.integers(0, 5), min_size=1, max_size=4)))
    spread = draw(st.sampled_from([1, 1, 1_000_003]))
    rows = []
    for lv in levels:
        n_comm = draw(st.integers(1, 5))
        for t in range(n_titles):
            if draw(st.integers(0, 4)) == 0:
                continue  # the title has no row at this level
            c = draw(st.integers(-1, n_comm - 1))
            rows.append((t, c * spread if c >= 0 else -1, lv))
            if draw(st.integers(0, 9)) == 0:
                rows.append(rows[-1])  # a duplicate row
    if draw(st.booleans()) and rows:  # a title in two communities of one level
        t, c, lv = draw(st.sampled_from(rows))
        rows.append((t, (c + 1) * spread + 7, lv))
    if draw(st.booleans()):
        rows = draw(st.permutations(rows))
    return n_titles, rows


def _set_formula(rows) -> list[tuple[int, int]]:
    """restore_community_hierarchy (graphrag 1.2.0) by Python sets: levels present, sorted, taken
    pairwise; a next-level community is a child of every current-level community holding all its
    titles; pairs by level pair, then (parent, child)."""
    sets: dict[tuple[int, int], set] = {}
    for t, c, lv in rows:
        sets.setdefault((lv, c), set()).add(t)
    levels = sorted({lv for lv, _ in sets})
    out = []
    for a, b in zip(levels[:-1], levels[1:]):
        cur = sorted(c for lv, c in sets if lv == a)
        nxt = sorted(c for lv, c in sets if lv == b)
        out += sorted((p, c) for p in cur for c in nxt if sets[(b, c)] <= sets[(a, p)])
    return out


@settings(max_examples=250, deadline=None, database=None)
@given(case=node_tables())
def test_unique_owner_edges_equal_the_sorted_grouping_and_the_set_formula(case):
    n_titles, rows = case
    t = np.array([r[0] for r in rows], dtype=np.int64)
    c = np.array([r[1] for r in rows], dtype=np.int64)
    lv = np.array([r[2] for r in rows], dtype=np.int64)
    plain = _sorted_group_edges(c, lv, t, n_titles)
    want = _set_formula(rows)
    assert list(zip(plain[0].tolist(), plain[1].tolist())) == want
    fast = unique_owner_edges(c, lv, t, n_titles)
    shared = any(
        len({cc for tt, cc, ll in rows if tt == x and ll == level}) > 1
        for x, _, level in rows
        if level != max(lv.tolist())
    )
    if fast is None:
        assert shared  # only a title in two communities of a level with a next level falls back
    else:
        assert not shared
        assert list(zip(fast[0].tolist(), fast[1].tolist())) == want


def test_children_from_nodes_v1_takes_the_fast_path_on_leiden_rows_and_falls_back_otherwise(monkeypatch):
    import graphrag_audit.graphrag.dynamic as dyn

    # two roots (0: titles a-d, 1: e-f), 0 -> 2 (a, b), 3 (c); 1 -> 4 (e, f); community 5 has no report
    titles = ["a", "b", "c", "d", "e", "f", "a", "b", "c", "e", "f", "d"]
    comm = [0, 0, 0, 0, 1, 1, 2, 2, 3, 4, 4, 5]
    level = [0] * 6 + [1] * 6
    called = []
    monkeypatch.setattr(dyn, "_sorted_group_edges", lambda *a: called.append(1) or _sorted_group_edges(*a))
    off, val, match = children_from_nodes_v1(
        np.arange(6), np.array(comm), np.array(level), np.array(titles), np.array([0, 1, 2, 3, 4, 5])
    )
    assert [val[off[i] : off[i + 1]].tolist() for i in range(6)] == [[2, 3, 5], [4], [], [], [], []]
    assert match and not called
    # "a" also in community 1 at level 0: 2 = {a, b} is no subset of 1 = {a, e, f}; the plain path decides
    off, val, _ = children_from_nodes_v1(
        np.arange(6),
        np.array(comm + [1]),
        np.array(level + [0]),
        np.array(titles + ["a"]),
        np.array([0, 1, 2, 3, 4, 5]),
    )
    assert [val[off[i] : off[i + 1]].tolist() for i in range(6)] == [[2, 3, 5], [4], [], [], [], []]
    assert called


# ---- rating prompts from arrow lengths ----------------------------------------------------------
texts_st = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
    | st.sampled_from(["{question}", "{description}", "日本語", "Привет", "🙂", ""]),
    max_size=12,
)


@settings(max_examples=80, deadline=None, database=None)
@given(
    descriptions=texts_st,
    query=st.text(max_size=20) | st.sampled_from(["{x}", "Вопрос"]),
    chunks=st.integers(1, 3),
)
def test_framed_estimate_equals_counting_the_formatted_prompts(descriptions, query, chunks):
    est = get_token_counter("estimate")
    cut = len(descriptions) // chunks
    parts = [descriptions[i * cut : (i + 1) * cut if i < chunks - 1 else None] for i in range(chunks)]
    column = pd.Series(
        pd.arrays.ArrowExtensionArray(
            pa.chunked_array([pa.array(p, pa.string()) for p in parts], pa.string())
        )
    )
    want = [est.count(RATE_QUERY.format(description=d, question=query)) for d in descriptions]
    head, tail = RATE_QUERY.split("{description}")
    got = framed_estimate(est, head.format(), column, tail.format(question=query))
    assert got is not None and got.tolist() == want
    # through the public function, for the 3.x line too
    by_family = rating_prompt_tokens_by_family(("1.x", "3.x"), column, query, est)
    assert by_family["1.x"].tolist() == want
    assert (
        by_family["3.x"].tolist()
        == rating_prompt_tokens_by_family(("3.x",), descriptions, query, est)["3.x"].tolist()
    )


def test_framed_estimate_leaves_other_counters_and_columns_to_the_plain_path():
    est = get_token_counter("estimate")
    arrow = pd.Series(["a", "bb"], dtype="string[pyarrow]")
    assert framed_estimate(get_token_counter("cl100k_base"), "", arrow, "") is None
    assert framed_estimate(est, "", pd.Series(["a", "bb"], dtype=object), "") is None
    assert framed_estimate(est, "", pd.Series(["a", None], dtype="string[pyarrow]"), "") is None
    assert framed_estimate(est, "", ["a", "bb"], "") is None
    assert framed_estimate(est, "x", arrow, "yz").tolist() == [est.count("xayz"), est.count("xbbyz")]
    # the exact counter gets the column's strings
    cl = get_token_counter("cl100k_base")
    got = rating_prompt_tokens_by_family(("2.x",), arrow, "q", cl)["2.x"].tolist()
    assert got == [cl.count(RATE_QUERY.format(description=d, question="q")) for d in ("a", "bb")]


# ---- title codes from the loader's dictionary ---------------------------------------------------
@pytest.mark.parametrize("titles", [["x", "y", "x", "", "z", "y"], [], ["ä", "a", "ä"]])
def test_dictionary_title_codes_are_equal_iff_the_titles_are(titles):
    col = pd.Series(key_column(pd.Series(titles, dtype="string[pyarrow]")))
    got = dictionary_title_codes(col)
    assert got is not None
    codes, n = got
    assert len(codes) == len(titles) and (codes < n).all() and (codes >= 0).all()
    assert all(
        (codes[i] == codes[j]) == (titles[i] == titles[j])
        for i in range(len(titles))
        for j in range(len(titles))
    )
    assert dictionary_title_codes(pd.Series(titles, dtype=object)) is None


# ---- dense keys through a lookup table ------------------------------------------------------------
@settings(max_examples=150, deadline=None, database=None)
@given(
    universe=st.sets(
        st.integers(-5, 60) | st.sampled_from([2**62, -(2**62), 2**63 - 1, -(2**63)]), max_size=20
    ),
    ids=st.lists(st.integers(-8, 70) | st.sampled_from([2**63 - 1, -(2**63), 2**62 + 3]), max_size=30),
)
def test_dense_index_equals_the_binary_search(universe, ids):
    from graphrag_audit.graphrag.dynamic import _dense
    from graphrag_audit.graphrag.dynamic_fast import DenseIndex

    u = np.array(sorted(universe), dtype=np.int64)
    a = np.array(ids, dtype=np.int64)
    want = [u.tolist().index(x) if x in universe else -1 for x in ids]
    assert DenseIndex(u)(a).tolist() == want
    assert _dense(a, u).tolist() == want


def test_dense_index_uses_a_table_for_compact_numbers_only():
    from graphrag_audit.graphrag.dynamic_fast import DenseIndex

    assert DenseIndex(np.arange(-1, 1000, dtype=np.int64))._lut is not None
    wide = DenseIndex(np.array([0, 10**12], dtype=np.int64))
    assert wide._lut is None and wide(np.array([10**12, 5])).tolist() == [1, -1]


# ---- the children column through C iterators --------------------------------------------------------
@pytest.mark.parametrize("rows", [[[1, 2], [], [3]], [[1], None, [2, 3]], [], [np.array([4, 5]), [6]]])
def test_children_csr_equals_the_row_lists(rows):
    from graphrag_audit.graphrag.dynamic import children_csr

    off, val = children_csr(rows)
    assert [val[off[i] : off[i + 1]].tolist() for i in range(len(rows))] == [
        [] if r is None else [int(x) for x in r] for r in rows
    ]


# ---- one family's simulation, ids converted on demand ---------------------------------------------
def test_simulate_family_ids_equal_simulate_all():
    from graphrag_audit.graphrag.dynamic import (
        DynamicInput,
        DynamicSettings,
        children_csr,
        simulate_all,
        simulate_family,
    )

    # 0 -> 2, 3; 2 -> 4; 1 (root); 3 without a report; levels 0, 0, 1, 1, 2
    off, val = children_csr([[2, 3], [], [4], [], []])
    inp = DynamicInput(
        np.arange(5),
        np.array([0, 0, 1, 1, 2]),
        np.array([-1, -1, 0, 0, 2]),
        off,
        val,
        np.array([0, 1, 2, 4]),
        np.array([0, 0, 1, 2]),
    )
    for n in (0, 1, 2, None):
        st_ = DynamicSettings(community_level=n)
        for fam in ("2.x", "3.x"):
            r = simulate_all(inp, (fam,), st_, what_if=[2])[fam]
            f = simulate_family(inp, fam, st_, what_if=[2])
            assert (f.candidate_ids, f.start_ids, f.rateable_ids, f.unreachable_ids, f.cut_off_ids) == (
                r.candidate_ids,
                r.start_ids,
                r.rateable_ids,
                r.unreachable_ids,
                r.cut_off_ids,
            )
            assert (f.none_relevant, f.all_relevant, f.what_if, f.error, f.descends) == (
                r.none_relevant,
                r.all_relevant,
                r.what_if,
                r.error,
                r.descends,
            )
            assert f.all_relevant_run.relevant_ids is None
            assert f.all_relevant_run.kept_ids == r.all_relevant.kept_ids
    # hand-worked (dynamic_community_selection.py@v3.0.0), community_level 2, all relevant:
    # 0 and 1 rated, 0's candidate child 2 queued, then 4; 3 has no report, so nothing is cut off
    f = simulate_family(inp, "3.x", DynamicSettings(community_level=2))
    assert (f.start_ids, f.cut_off_ids, f.all_relevant.waves, f.all_relevant.kept_ids) == (
        (0, 1),
        (),
        (2, 1, 1),
        (1, 4),
    )
    assert simulate_family(inp, "2.x", DynamicSettings(community_level=2)).cut_off_ids == (2, 4)
