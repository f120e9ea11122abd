"""The shortcuts of the tree and selection phases (issue 22, S9) against plain references.

* ``levels.TreeIndex.members_of`` copies a few runs of consecutive community codes slice by slice:
  it must give exactly the rows the gather over every code gives (same entities, same order),
  on membership rows in any order, with repeated rows, unknown communities and gaps.
* ``levels.codes_in`` skips hashing when the index is 0 … n-1: it must equal
  ``pd.Index.get_indexer`` on every index, including ones that only look like a range.
* ``level_sets.CoveredSets`` with ``missing=False`` and from an empty set: the level-set tests
  (tests/test_level_sets.py) compare it with a from-scratch count; here the statistics of real
  and adversarial indexes are compared with the code path kept as the reference.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import synthetic as S
from deep_indexes import parent_cycle_index, single_child_chains_index

from graphrag_audit.analysis import levels as L
from graphrag_audit.analysis.levels import TreeIndex, codes_in, level_stats, tree_levels
from graphrag_audit.graphrag.selection import select_all
from graphrag_audit.io.load import load_index


def _bare_tree(mem_ccode: np.ndarray, mem_ecode: np.ndarray, n_comm: int) -> TreeIndex:
    ti = TreeIndex.__new__(TreeIndex)
    ti.index = pd.RangeIndex(n_comm)
    ti.mem_ccode, ti.mem_ecode, ti._members = mem_ccode, mem_ecode, None
    return ti


def _ref_members_of(mem_ccode, mem_ecode, ccodes) -> np.ndarray:
    """Each code's membership rows, code after code, rows in table order."""
    parts = [mem_ecode[mem_ccode == c] for c in ccodes]
    return np.concatenate(parts) if parts else mem_ecode[:0]


@pytest.mark.parametrize("seed", range(6))
def test_members_of_equals_the_row_by_row_gather(seed):
    rng = np.random.default_rng(seed)
    n_comm = int(rng.integers(1, 300))
    rows = int(rng.integers(0, 3000))
    mem_ccode = rng.integers(0, n_comm, rows)
    if seed % 2:  # grouped by community, as the loaders write them
        mem_ccode = np.sort(mem_ccode)
    mem_ecode = rng.integers(-1, 500, rows)  # -1: a key the entities do not hold
    ti = _bare_tree(mem_ccode, mem_ecode, n_comm)
    cases = [np.arange(n_comm), np.arange(0), np.array([n_comm - 1]), np.arange(n_comm // 3, n_comm // 2)]
    for k in (1, 2, 5, 40, 63, 64, 65, 200):  # around L.MAX_RUNS runs
        cases.append(np.flatnonzero(rng.random(n_comm) < min(1.0, k / n_comm)))
        start = np.sort(rng.choice(n_comm, size=min(k, n_comm), replace=False))
        cases.append(np.unique(np.concatenate([np.arange(s, min(s + 3, n_comm)) for s in start])))
    for ccodes in cases:
        ccodes = ccodes.astype(np.int64)
        got = ti.members_of(ccodes)
        assert np.array_equal(got, _ref_members_of(mem_ccode, mem_ecode, ccodes)), (seed, len(ccodes))
        assert got.dtype == mem_ecode.dtype
        runs = L._code_runs(ccodes)
        if runs is not None and len(ccodes):  # the runs cover exactly the codes
            assert np.array_equal(np.concatenate([np.arange(a, b + 1) for a, b in zip(*runs)]), ccodes)


def test_members_of_slices_are_copies():
    ti = _bare_tree(np.array([0, 0, 1, 2]), np.array([5, 6, 7, 8]), 3)
    got = ti.members_of(np.array([0, 1, 2]))
    got[:] = -9  # CoveredSets maps the array in place: the grouped rows must stay intact
    assert np.array_equal(ti.members_of(np.array([0, 1, 2])), [5, 6, 7, 8])


@pytest.mark.parametrize(
    "index",
    [
        pd.Index(np.arange(6)),
        pd.RangeIndex(6),
        pd.Index(np.arange(1, 7)),
        pd.Index([0, 1, 2, 2, 3, 5]),
        pd.Index([0, 2, 1, 3, 4, 5]),
        pd.Index([0, 1, 2, 3, 4, 6]),
        pd.Index(np.arange(6, dtype=np.uint64)),
        pd.Index(np.arange(6, dtype=np.int32)),
        pd.Index([-1, 0, 1, 2, 3, 4]),
        pd.Index(np.zeros(0, dtype=np.int64)),
        pd.Index([0]),
        pd.Index(np.arange(5, dtype=float)),
    ],
)
def test_codes_in_equals_get_indexer(index):
    values = [
        np.array([0, 5, 6, -1, 3, 3, 2**40, -(2**40)], dtype=np.int64),
        np.array([0, 1, 5, 2**63 + 7], dtype=np.uint64),
        np.zeros(0, dtype=np.int64),
        np.array([1, 4, 0], dtype=np.int32),
    ]
    for v in values:
        if index.dtype.kind == "i" and v.dtype.kind == "u" and len(index) and index.min() < 0:
            continue  # pandas refuses mixed signed/unsigned there; codes_in hands such cases to it too
        try:
            want = index.get_indexer(v)
        except pd.errors.InvalidIndexError:  # repeated values: codes_in must not answer either
            with pytest.raises(pd.errors.InvalidIndexError):
                codes_in(index, v)
            continue
        got = codes_in(index, v)
        assert np.array_equal(got, want), (index, v)


def _stats_tuple(stats: dict) -> list:
    return [
        (
            n,
            b,
            s.count,
            s.entities_covered,
            s.text_units_covered,
            s.ancestors_sent,
            s.by_level,
            s.community_ids.array.tolist(),
        )
        for n, by_b in stats.items()
        for b, s in by_b.items()
    ]


def _reference_ti(model) -> TreeIndex:
    """A TreeIndex with every shortcut off: hashed codes, the gather for every set, the -1 mapping
    pass always."""
    ti = TreeIndex(model)
    ti.mem_ccode = ti.index.get_indexer(model.members["community"].to_numpy())
    return ti.with_text_units(model)


@pytest.fixture(scope="module")
def indexes(tmp_path_factory):
    out = []
    for shape, n in (("deep-narrow", 3000), ("many-tiny", 1500)):
        for layout in ("3.x", "1.0-1.2"):
            d = tmp_path_factory.mktemp(f"{shape}-{layout}")
            S.write_index(S.leiden_shape(shape, n, seed=5), d, layout)
            out.append(d)
    out.append(parent_cycle_index(tmp_path_factory.mktemp("cycle") / "idx", 60))
    out.append(single_child_chains_index(tmp_path_factory.mktemp("chains") / "idx", 3, 70))
    return out


def test_tree_and_selection_statistics_equal_the_reference(indexes, monkeypatch):
    for d in indexes:
        model = load_index(d)
        ti = TreeIndex(model).with_text_units(model)
        fast = (
            ti.clustered(),
            tree_levels(model, ti),
            _stats_tuple(level_stats(model, ti, select_all(model))),
        )
        with monkeypatch.context() as mp:
            mp.setattr(L, "MAX_RUNS", 0)  # every members_of through the gather
            ref = _reference_ti(model)
            ref._sets()._missing = True
            slow = (
                ref.clustered(),
                tree_levels(model, ref),
                _stats_tuple(level_stats(model, ref, select_all(model))),
            )
        assert fast == slow, d


def _ref_first_rows(codes: np.ndarray, width: int):
    first = np.full(width, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    by_first = np.argsort(first, kind="stable")
    return by_first, first[by_first]


def test_first_rows_equals_the_scatter():
    """selection._first_rows (graphrag < 2.0's entities in order of their first row) against the
    minimum-scatter it replaces, on first-appearance codes, other numberings, missing codes
    (-1) and codes with no row."""
    from graphrag_audit.graphrag.selection import _first_rows

    rng = np.random.default_rng(3)
    fast = 0
    for i in range(2000):
        n, k = int(rng.integers(0, 40)), int(rng.integers(1, 9))
        raw = rng.integers(0, k, n)
        codes = (pd.factorize(raw)[0] if i % 3 else raw).astype(np.int64)
        if i % 7 == 0 and n:
            codes[rng.integers(0, n)] = -1
        width = (int(codes.max()) + 1 if n else 0) + (2 if i % 11 == 0 else 0)
        if width == 0 and n:
            continue  # nothing to scatter into (the caller never asks)
        want = _ref_first_rows(codes, width)
        got = _first_rows(codes, width)
        fast += bool(i % 3) and i % 7 != 0 and i % 11 != 0
        for g, w in zip(got, want):
            assert np.array_equal(g, w) and g.dtype == w.dtype, (codes, width)
    assert fast > 500


def _random_containment_case(rng):
    """A random forest (levels, one parent one level up, sometimes two parents, skipped levels or
    unknown communities) and membership rows grouped by community, levels ascending unless
    shuffled, with entities missing from parents, in two communities of a level, repeated."""
    from graphrag_audit.analysis.integrity import _containment  # noqa: F401 (module import check)

    n_levels = int(rng.integers(1, 5))
    per = rng.integers(1, 5, n_levels)
    level = np.repeat(np.arange(n_levels), per)
    comm = np.arange(len(level), dtype=np.int64) * int(rng.choice([1, 3]))
    if rng.random() < 0.2:
        comm = rng.permutation(comm)
    u, v = [], []
    for i in range(len(comm)):
        if level[i] > 0:
            above = np.flatnonzero(level == level[i] - (2 if rng.random() < 0.05 and level[i] > 1 else 1))
            u.append(comm[rng.choice(above)])
            v.append(comm[i])
            if rng.random() < 0.04:  # a second parent
                u.append(comm[rng.choice(above)])
                v.append(comm[i])
    n_ent = int(rng.integers(1, 12))
    members = {}
    parent_of = dict(zip(v, u))
    for i in np.argsort(level, kind="stable"):
        c = int(comm[i])
        if c in parent_of and rng.random() < 0.9:
            pool = members.get(int(parent_of[c]), [])
            ents = [e for e in pool if rng.random() < 0.6]
            if rng.random() < 0.15:
                ents.append(int(rng.integers(0, n_ent)))  # maybe not in the parent
        else:
            ents = sorted(set(rng.integers(0, n_ent, int(rng.integers(0, 5))).tolist()))
        if ents and rng.random() < 0.1:
            ents.append(ents[0])  # a repeated row
        members[c] = ents
    order = [int(comm[i]) for i in np.argsort(level, kind="stable")]
    if rng.random() < 0.15:
        order = rng.permutation(order).tolist()
    mc = np.array([c for c in order for _ in members[c]], dtype=np.int64)
    ec = np.array([e for c in order for e in members[c]], dtype=np.int64)
    if len(mc) and rng.random() < 0.05:
        mc[rng.integers(0, len(mc))] = 10**6  # a community with no row
    table = pd.DataFrame({"community": comm, "level": level})
    return table, mc, ec, n_ent + 1, np.array(u, dtype=np.int64), np.array(v, dtype=np.int64)


def test_level_by_level_containment_is_sound():
    """integrity._contained_level_by_level says True only when a brute-force check of every
    membership row against its parents agrees, and does say True on most contained cases."""
    from graphrag_audit.analysis.integrity import _contained_level_by_level

    rng = np.random.default_rng(11)
    proven = contained = 0
    for _ in range(3000):
        table, mc, ec, width, u, v = _random_containment_case(rng)
        pairs = set(zip(mc.tolist(), ec.tolist()))
        truth = all((int(p), e) in pairs for p, c in zip(u, v) for (cc, e) in pairs if cc == c)
        got = _contained_level_by_level(table, mc, ec, width, u, v)
        assert not (got and not truth), (table, mc, ec, u, v)
        contained += truth
        proven += got
    assert proven > contained // 2 > 100


def test_integrity_findings_equal_without_the_shortcut(indexes, monkeypatch):
    """check_integrity's findings with and without the level-by-level proof, on generated shapes,
    cycles, long chains and a few real indexes."""
    from conftest import shared_index

    from graphrag_audit.analysis import integrity as I

    dirs = list(indexes)
    for name in ("dulce-v1", "verbs-v3", "real-genesis-zh-deep", "real-textbook-v1"):
        try:
            dirs.append(shared_index(name))
        except pytest.skip.Exception:  # not on this machine: the generated ones still run
            continue
    for d in dirs:
        model = load_index(d)
        fast = [(f.rule, f.message) for f in I.check_integrity(model)]
        with monkeypatch.context() as mp:
            mp.setattr(I, "_contained_level_by_level", lambda *a: False)
            slow = [(f.rule, f.message) for f in I.check_integrity(model)]
        assert fast == slow, d
