"""The per-level set questions of ``levels.TreeIndex`` (covered entities, their text units, rows
that are an ancestor of another selected row) against from-scratch counts, on generated deep trees
(tests/synthetic.py) in both layouts, trees with parent cycles and long single-child chains, for
every community_level and behaviour, in the audit's order and in a shuffled order."""

from __future__ import annotations

import random

import numpy as np
import pytest
import synthetic as S
from deep_indexes import parent_cycle_index, single_child_chains_index
from test_scale import ref_ancestors_in

from graphrag_audit.analysis.levels import TreeIndex, level_stats
from graphrag_audit.graphrag.selection import BEHAVIOURS, select_all
from graphrag_audit.io.load import load_index


def _ref_covered(ti: TreeIndex, ccodes: np.ndarray) -> tuple[int, np.ndarray]:
    """Distinct entities of the membership rows of ``ccodes`` from scratch, and their mask."""
    mask = np.zeros(ti.n_member_entities, dtype=bool)
    ents = ti.mem_ecode[np.isin(ti.mem_ccode, ccodes[ccodes >= 0])]
    mask[np.where(ents < 0, ents + len(mask), ents)] = True
    return int(mask.sum()), mask


def _ref_ancestor_rows(parent: np.ndarray, ccodes: np.ndarray) -> int:
    """Entries of ``ccodes`` reached from another entry by one or more parent steps (test_scale's climb)."""
    ok = ccodes[ccodes >= 0]
    return int(np.isin(ok, ref_ancestors_in(parent, ccodes)).sum())


def _check(model, order_seed: int | None) -> int:
    ti = TreeIndex(model).with_text_units(model)
    selections = select_all(model)
    asked = [(n, b) for n in selections for b in BEHAVIOURS]
    if order_seed is not None:
        random.Random(order_seed).shuffle(asked)
    parent = ti.forest.first_parent
    for n, b in asked:
        ccodes = ti.rep_ccode[selections[n][b].rows]
        want, mask = _ref_covered(ti, ccodes)
        assert ti.covered(ccodes) == want, (n, b)
        assert np.array_equal(ti.entity_mask(ccodes), mask), (n, b)
        assert ti.ancestor_rows(ccodes) == _ref_ancestor_rows(parent, ccodes), (n, b)
    return len(selections)


@pytest.fixture(scope="module")
def deep_indexes(tmp_path_factory):
    out = {}
    for shape, n in (("deep-narrow", 6000), ("many-tiny", 3000), ("default", 3000)):
        for layout in ("3.x", "1.0-1.2"):
            d = tmp_path_factory.mktemp(f"{shape}-{layout}")
            S.write_index(S.leiden_shape(shape, n, seed=2), d, layout)
            out[(shape, layout)] = d
    return out


@pytest.mark.parametrize("shape", ["deep-narrow", "many-tiny", "default"])
@pytest.mark.parametrize("layout", ["3.x", "1.0-1.2"])
def test_incremental_sets_equal_the_per_level_computation(deep_indexes, shape, layout):
    model = load_index(deep_indexes[(shape, layout)])
    levels = _check(model, None)
    if shape == "deep-narrow":
        assert levels > 10
    _check(model, 7)


def test_level_stats_equal_the_from_scratch_counts(deep_indexes):
    model = load_index(deep_indexes[("deep-narrow", "3.x")])
    fast = level_stats(model, TreeIndex(model).with_text_units(model), select_all(model))
    slow_ti = TreeIndex(model).with_text_units(model)
    parent = slow_ti.forest.first_parent
    for n, by_b in fast.items():
        for b, s in by_b.items():
            ccodes = slow_ti.rep_ccode[s.rows]
            want, mask = _ref_covered(slow_ti, ccodes)
            assert s.entities_covered == want
            assert s.text_units_covered == slow_ti.covered_text_units(mask)
            assert s.ancestors_sent == _ref_ancestor_rows(parent, ccodes)


@pytest.mark.parametrize("kind", ["cycle", "chains"])
def test_cycles_and_long_chains(tmp_path, kind):
    if kind == "cycle":
        d = parent_cycle_index(tmp_path / "idx", 120)
    else:  # 80 levels of single-child chains
        d = single_child_chains_index(tmp_path / "idx", 4, 80)
    model = load_index(d)
    _check(model, None)
    _check(model, 3)
