"""Map calls and tokens attached to each selection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from builders import SEED, write_v1, write_v3
from conftest import shared_index

from graphrag_audit.analysis.audit import AuditOptions, audit, audit_with_model
from graphrag_audit.analysis.costs import ContextCoster, V1TextUnitCounts
from graphrag_audit.graphrag.context import text_unit_counts
from graphrag_audit.io.load import load_index


def test_dulce_v1_notebook_llm_calls():
    # graphrag's v1.2.2 global-search notebook on this index printed "LLM calls: 4" (3 map + 1 reduce)
    report = audit(shared_index("dulce-v1"), AuditOptions(level=2))
    v1 = report.level(2).selected["v1"]
    assert v1.count == 56
    assert (v1.cost.map_calls, v1.cost.reduce_calls, v1.cost.llm_calls) == (3, 1, 4)
    assert v1.cost.tokens_exact is True


def test_costs_grow_with_what_is_sent(tmp_path):
    report = audit(write_v3(tmp_path / "i", SEED), AuditOptions(tokenizer="estimate", max_context_tokens=60))
    for r in report.levels:
        s = r.selected
        assert s["v2"].cost.tokens >= s["v1"].cost.tokens
        assert s["v2"].cost.reports_in_context == s["v2"].count
        # every row token count is known for the rows sent
        assert (s["v2"].row_tokens >= 0).all()
    assert report.level(2).selected["v2"].cost.map_calls > report.level(0).selected["v2"].cost.map_calls


def test_no_costs_option(tmp_path):
    report = audit(write_v3(tmp_path / "i", SEED), AuditOptions(costs=False))
    assert report.level(1).selected["v2"].cost is None
    assert "tokens" not in report.to_dict()["levels"][1]["selected"]["v2"]


# graphrag 1.2.0's own build_community_context (run by tests/test_verify_graphrag.py) counted these
# tokens for the v1 selections: its occurrence weights come from create_final_nodes, where the
# report for community -1 has a weight (verbs-v0.5, real-csekg-v1: there it is the maximum) and an
# updated index lists other memberships than its communities table (real-climate-update-v09).
GRAPHRAG_120_V1_TOKENS = {
    ("verbs-v0.5", 0): 9503,
    ("verbs-v0.5", 1): 15313,
    ("verbs-v0.5", 2): 18751,
    ("real-csekg-v1", 0): 7441,
    ("real-csekg-v1", 1): 22572,
    ("real-csekg-v1", 2): 23447,
    ("real-climate-update-v09", 2): 337923,
}


@pytest.mark.parametrize("name", sorted({k[0] for k in GRAPHRAG_120_V1_TOKENS}))
def test_v1_tokens_are_graphrag_1_2_0s(name):
    report = audit(shared_index(name))
    for (index, n), tokens in GRAPHRAG_120_V1_TOKENS.items():
        if index == name:
            assert report.level(n).selected["v1"].cost.tokens == tokens, n


@pytest.mark.parametrize(
    "name",
    [
        "verbs-v0.5",
        "real-csekg-v1",
        "real-climate-update-v09",
        "dulce-v1",
        "real-textbook-v1",
        "real-golf-zh-v1",
    ],
)
def test_v1_counts_are_the_plain_count_over_node_rows(name):
    """V1TextUnitCounts (distinct pairs with their least level) = text_unit_counts over the node
    rows (matched to entities by node id) with level <= N, at every N."""
    model = load_index(shared_index(name))
    v1 = V1TextUnitCounts.of(model)
    r, e = model.rollup_rows, model.entities
    nodes = pd.read_parquet(model.files["nodes"], columns=["id", "level"])
    # the roll-up rows are the file's node rows sorted stably by level (graphrag 1.x writes them
    # entity by entity)
    in_level_order = np.argsort(nodes["level"].to_numpy(), kind="stable")
    node_ids = nodes["id"].iloc[in_level_order].reset_index(drop=True)
    assert len(node_ids) == len(r)
    assert r["level"].tolist() == nodes["level"].iloc[in_level_order].tolist()
    rows = pd.DataFrame(
        {
            "entity": np.asarray(node_ids.to_numpy(), dtype=object),
            "community": r["community"].to_numpy(),
            "level": r["level"].to_numpy(),
        }
    )
    tu = pd.Series(e["text_unit_ids"].to_numpy(), index=e["id"].to_numpy())
    for n in sorted(set(rows["level"].tolist())) + [None]:
        want = text_unit_counts(rows, tu, n).sort_index()
        got = v1.at(n).sort_index()
        assert got.index.tolist() == want.index.tolist() and got.tolist() == want.tolist(), n


def test_v1_without_node_ids_matching_entities_has_no_weight_column(tmp_path):
    """graphrag 1.x matches create_final_nodes to entities by id; when none match it has no
    entities, computes no weights and raises nothing (builders.write_v1's node ids are n-0, n-1...)."""
    model, report = audit_with_model(write_v1(tmp_path / "i", SEED))
    coster = ContextCoster(model)
    for r in report.levels:
        n, v1 = r.community_level, r.selected["v1"]
        assert coster.selection_weights(v1.rows, "v1", n) is None
        assert coster.selection_batches(v1.rows, "v1", n).has_weight_column is False
        assert v1.cost.note is None and "cost_note" not in v1.to_dict()


@pytest.mark.parametrize(
    "name",
    [
        "verbs-v0.5",
        "real-csekg-v1",
        "real-climate-update-v09",
        "dulce-v1",
        "real-golf-zh-v1",
        "dulce-v0.3-create_final",
    ],
)
def test_v1_counts_shortcut_equals_the_full_node_row_count(name):
    """Communities whose node rows are exactly their membership rows take the level-independent
    counts (only -1 and the rows of an updated index are sorted): the same counts at every N as
    counting every node row."""
    from graphrag_audit.analysis.costs import community_text_unit_counts

    model = load_index(shared_index(name))
    fast, full = V1TextUnitCounts.of(model, community_text_unit_counts(model)), V1TextUnitCounts.of(model)
    # the shortcut applies to indexes graphrag wrote in one run, not to updated ones
    assert (fast.base is not None) == (name not in ("real-climate-update-v09", "dulce-v0.3-create_final"))
    for n in list(range(model.max_level + 2)) + [None]:
        a, b = fast.at(n), full.at(n)
        assert (a is None) == (b is None), n
        if a is not None:
            assert a.sort_index().to_dict() == b.sort_index().to_dict(), n


def test_v1_counts_shortcut_on_a_synthetic_index(tmp_path):
    from synthetic import leiden_like, write_index

    from graphrag_audit.analysis.costs import community_text_unit_counts

    write_index(leiden_like(3000, max_cluster_size=12, seed=3), tmp_path / "i", "1.0-1.2")
    model = load_index(tmp_path / "i")
    fast, full = V1TextUnitCounts.of(model, community_text_unit_counts(model)), V1TextUnitCounts.of(model)
    assert fast.base is not None and len(fast.pair_community) < len(full.pair_community)
    for n in list(range(model.max_level + 2)) + [None]:
        assert fast.at(n).sort_index().to_dict() == full.at(n).sort_index().to_dict(), n


# ---- the arrow paths against the plain computations they shortcut (issue 15) -------------
# Both stay: the arrow paths serve parquet indexes (measured at 100k entities: text-unit codes
# 0.015 s against 1.8 s, community text-unit counts 0.22 s against 4.3 s), the plain ones the
# CSV indexes (Python lists) and the keys arrow cannot hold. These tests hold the pairs equal.
def _plain_text_unit_counts(model):
    from graphrag_audit.analysis.costs import _entity_text_units

    return text_unit_counts(model.members[["entity", "community", "level"]], _entity_text_units(model), None)


def _arrow_vs_plain(model):
    from graphrag_audit.analysis.costs import (
        _arrow_text_unit_codes,
        _text_unit_codes,
        _text_unit_counts_arrow,
    )

    col = model.entities["text_unit_ids"]
    fast = _arrow_text_unit_codes(col)
    assert fast is not None  # parquet: the arrow path applies
    import pyarrow as pa

    plain = _text_unit_codes(pd.Series(pa.array(col.array).to_pylist(), dtype=object))  # as CSV gives them
    assert np.array_equal(fast[0], plain[0]) and np.array_equal(fast[1], plain[1])
    got, want = _text_unit_counts_arrow(model), _plain_text_unit_counts(model)
    assert got is not None
    assert got.sort_index().to_dict() == want.sort_index().to_dict()


@pytest.mark.parametrize("name", ["dulce-v1", "real-csekg-v1", "real-golf-zh-v1", "real-textbook-v1"])
def test_arrow_text_unit_paths_equal_the_plain_ones_on_real_indexes(name):
    _arrow_vs_plain(load_index(shared_index(name)))


@pytest.mark.parametrize("layout", ["3.x", "1.0-1.2"])
def test_arrow_text_unit_paths_equal_the_plain_ones_on_a_synthetic_index(tmp_path, layout):
    from synthetic import leiden_like, write_index

    write_index(leiden_like(3000, max_cluster_size=12, seed=5), tmp_path / "i", layout)
    _arrow_vs_plain(load_index(tmp_path / "i"))


def test_arrow_text_unit_paths_with_nulls_and_repeats(tmp_path):
    """Null lists, null items, a text unit twice in one list: the same codes and counts both ways."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphrag_audit.analysis.costs import _arrow_text_unit_codes, _text_unit_codes

    lists = pa.array([["a", "b", None], None, ["b", "b"], [], ["c"]], pa.list_(pa.string()))
    col = pd.Series(pd.arrays.ArrowExtensionArray(lists))
    fast = _arrow_text_unit_codes(col)
    plain = _text_unit_codes(pd.Series(lists.to_pylist(), dtype=object))
    assert fast[0].tolist() == plain[0].tolist() == [2, 0, 2, 0, 1]
    assert fast[1].tolist() == plain[1].tolist() == [0, 1, 1, 1, 2]
    idx = write_v3(tmp_path / "i", SEED)
    ents = pq.read_table(idx / "entities.parquet")
    tus = ents.column("text_unit_ids").to_pylist()
    tus[0] = None
    tus[1] = (tus[1] or []) + [None] + (tus[1] or [])[:1]
    pq.write_table(
        ents.set_column(
            ents.schema.get_field_index("text_unit_ids"),
            "text_unit_ids",
            pa.array(tus, pa.list_(pa.string())),
        ),
        idx / "entities.parquet",
    )
    model = load_index(idx)
    assert len(_plain_text_unit_counts(model))  # (the damaged index still has counts to compare)
    _arrow_vs_plain(model)


@pytest.mark.parametrize("first", [[True] * 6, [True, False, True, True, False, True]])
@pytest.mark.parametrize("rows", [[0, 2, 5, 3, 0], [0, -1, 5, 3, -1]])
def test_first_row_positions_and_units_against_a_loop(first, rows):
    """Both paths of each (every entity row a first occurrence or not, every row known or not)
    give the position among the first-occurrence rows and its text-unit count, as a loop does."""
    from graphrag_audit.analysis.costs import _first_row_positions, _units_of

    first = np.array(first)
    rows = np.array([r for r in rows if r < 0 or first[r]], dtype=np.int64)
    firsts = [i for i, f in enumerate(first) if f]
    expect = [firsts.index(r) if r >= 0 else -1 for r in rows]
    pos = _first_row_positions(rows, first)
    assert pos.tolist() == expect
    per_ent = np.arange(10, 10 + len(firsts), dtype=np.int64)
    assert _units_of(pos, per_ent).tolist() == [int(per_ent[p]) if p >= 0 else 0 for p in expect]


def _brute_distinct(c_codes, n_c, ent_units):
    """Distinct text units of each community code: the union over its rows' entities."""
    sets = [set() for _ in range(n_c)]
    for c, units in zip(c_codes.tolist(), ent_units):
        sets[c].update(units)
    return [len(s) for s in sets]


def _level_rows(rng, nested: bool, n_ent: int = 40, depth: int = 4):
    """Membership rows (community code, level, entity) of a random hierarchy: each level splits
    the previous level's communities; ``nested=False`` moves some entities between branches,
    drops some and skips a level, so containment fails here and there."""
    rows, comm, n_c = [], np.zeros(n_ent, dtype=np.int64), 1
    levels = [lv for lv in range(depth) if nested or lv != 2]
    for lv in levels:
        if lv:  # split each community in two at a random cut
            new = np.empty(n_ent, dtype=np.int64)
            for c in np.unique(comm):
                members = np.flatnonzero(comm == c)
                half = rng.random(len(members)) < 0.5
                new[members[half]], new[members[~half]] = n_c, n_c + 1
                n_c += 2
            comm = new
        present = np.ones(n_ent, dtype=bool) if nested else rng.random(n_ent) > 0.15
        shown = comm.copy()
        if not nested:
            moved = rng.random(n_ent) < 0.1
            shown[moved] = rng.choice(np.unique(comm), moved.sum())  # another branch, same level
        rows += [(int(shown[e]), lv, e) for e in np.flatnonzero(present)]
    return rows, n_c


@pytest.mark.parametrize("seed", range(40))
def test_distinct_text_units_level_by_level_against_brute_force(seed):
    """Random hierarchies, nested or damaged: when the level-by-level count answers, it is the
    union per community; it answers on every nested one, and refuses an entity twice in a level
    and a community at two levels."""
    from graphrag_audit.analysis.costs import _distinct_pairs_level_by_level

    rng = np.random.default_rng(seed)
    nested = seed % 2 == 0
    rows, n_c = _level_rows(rng, nested)
    if seed % 5 == 1:  # an entity twice at one level: a second community of that level
        l0 = max(lv for _, lv, _ in rows)  # a level of several communities
        c0, _, e0 = next(r for r in rows if r[1] == l0)
        other = next(c for c, lv, _ in rows if lv == l0 and c != c0)
        rows.append((other, l0, e0))
    if seed % 5 == 3:  # a community at two levels: a deepest row moved into a level-0 community
        l1 = max(lv for _, lv, _ in rows)
        i = next(i for i, r in enumerate(rows) if r[1] == l1)
        rows[i] = (rows[0][0], l1, rows[i][2])
    if seed % 3 == 0:
        rng.shuffle(rows)  # rows out of level order
    n_ent = 40
    per_ent = [sorted({int(x) for x in rng.integers(0, 25, rng.integers(1, 4))}) for _ in range(n_ent)]
    flat = np.array([u for us in per_ent for u in us], dtype=np.int64)
    start = np.concatenate(([0], np.cumsum([len(us) for us in per_ent])[:-1])).astype(np.int64)
    c = np.array([r[0] for r in rows], dtype=np.int64)
    lv = np.array([r[1] for r in rows], dtype=np.int64)
    e = np.array([r[2] for r in rows], dtype=np.int64)
    lens = np.array([len(per_ent[x]) for x in e], dtype=np.int64)
    got = _distinct_pairs_level_by_level(c, n_c, lv, e, n_ent, lens, start[e], flat, 25)
    twice_in_level = len({(a, b) for a, _, b in [(r[1], 0, r[2]) for r in rows]}) < len(rows)
    two_levels = any(len({r[1] for r in rows if r[0] == k}) > 1 for k in range(n_c))
    if twice_in_level or two_levels:
        assert got is None
        return
    assert got is not None
    assert got.tolist() == _brute_distinct(c, n_c, [per_ent[x] for x in e])


@pytest.mark.parametrize(
    "name",
    [
        "dulce-v1",
        "dulce-v3",
        "real-csekg-v1",
        "real-golf-zh-v1",
        "real-textbook-v1",
        "real-insurance-v3",
        "real-datasaur-medical-v3",
        "verbs-v3",
        "real-climate-update-v09",
    ],
)
def test_level_by_level_counts_equal_the_blocks_on_real_indexes(name, monkeypatch):
    """The occurrence counts both ways on real indexes (graphrag's plain computation too), and
    the level-by-level way is the one that answered wherever the tree is nested."""
    import graphrag_audit.analysis.costs as C

    model = load_index(shared_index(name))
    if C._entity_text_units_absent(model):
        pytest.skip(f"{name}: the entities carry no text units")
    answered = []
    real = C._distinct_pairs_level_by_level
    monkeypatch.setattr(
        C, "_distinct_pairs_level_by_level", lambda *a: answered.append(real(*a)) or answered[-1]
    )
    by_level = C.community_text_unit_counts(model)
    monkeypatch.setattr(C, "COUNT_LEVEL_BY_LEVEL", False)
    by_blocks = C.community_text_unit_counts(model)
    assert (
        by_level.sort_index().to_dict()
        == by_blocks.sort_index().to_dict()
        == _plain_text_unit_counts(model).sort_index().to_dict()
    )
    assert answered and (answered[0] is not None or name == "real-climate-update-v09")


# ---- the costs workers (analysis/background_costs.py) ---------------------------------------------
def _background(tmp_path):
    from graphrag_audit.analysis.background_costs import BackgroundCosts
    from graphrag_audit.graphrag.selection import select_all

    model = load_index(write_v3(tmp_path / "i", SEED))
    return BackgroundCosts(model, AuditOptions(tokenizer="estimate", max_context_tokens=12000)), select_all(
        model
    )


def test_a_job_queued_after_the_packing_runs_even_when_it_starts_after_the_block(tmp_path):
    """audit() reads the dynamic simulation's result after leaving the workers' block. A job the
    workers have not started by then must still run (it was cancelled: a CancelledError from
    audit(), seen once in CI). Both workers are held until the block is being left."""
    import threading

    bg, selections = _background(tmp_path)
    gate = threading.Event()
    with bg:
        bg.pack(selections)
        held = [bg.with_coster(lambda _c: gate.wait(30)) for _ in range(2)]
        job = bg.with_coster(lambda coster: coster is not None)
        bg.result()
        threading.Timer(0.5, gate.set).start()  # after the block starts closing, in practice
    assert all(h.result() for h in held)
    assert job.result() is True


def test_a_failure_in_the_block_drops_the_jobs_not_started(tmp_path):
    import threading

    bg, selections = _background(tmp_path)
    gate = threading.Event()
    with pytest.raises(RuntimeError, match="elsewhere"):
        with bg:
            bg.pack(selections)
            held = [bg.with_coster(lambda _c: gate.wait(30)) for _ in range(2)]
            job = bg.with_coster(lambda _c: True)
            threading.Timer(0.5, gate.set).start()
            raise RuntimeError("a failure elsewhere")
    assert all(h.done() for h in held)  # finished, or dropped before they started
    assert job.cancelled()
