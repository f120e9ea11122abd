"""The shortcuts of the tree and selection phases (issue 22, S9) against plain references.

* ``levels.TreeIndex.members_of`` gives exactly the rows of a row-by-row gather (same entities,
  same order), on membership rows in any order, with repeated rows, unknown communities and gaps.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import synthetic as S
from deep_indexes import parent_cycle_index, single_child_chains_index

from graphrag_audit.analysis.levels import TreeIndex
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
    for k in (1, 2, 5, 40, 63, 64, 65, 200):
        cases.append(np.flatnonzero(rng.random(n_comm) < min(1.0, k / n_comm)))
        start = np.sort(rng.choice(n_comm, size=min(k, n_comm), replace=False))
        cases.append(np.unique(np.concatenate([np.arange(s, min(s + 3, n_comm)) for s in start])))
    for ccodes in cases:
        ccodes = ccodes.astype(np.int64)
        got = ti.members_of(ccodes)
        assert np.array_equal(got, _ref_members_of(mem_ccode, mem_ecode, ccodes)), (seed, len(ccodes))
        assert got.dtype == mem_ecode.dtype


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
