"""The budget planner (graphrag_audit.analysis.plan), its hand-off writer and the ``plan`` command.

Expected values are derived independently of the code under test:

* hand-worked trees with their optimal plans worked out in the comments;
* brute force: every subset of report-bearing communities of a small tree is tried, the exact
  covers (antichains holding every coverable entity exactly once) are kept, and the plan is
  compared with the cover whose *split set* (communities strictly above a member) is
  lexicographically greatest in the priority order π = (level ascending, entities descending,
  community number ascending) among the covers that fit the budget — the objective documented
  in graphrag_audit/analysis/plan.py and docs/plan.md;
* properties on random trees (hypothesis), with level frontiers computed from the definition in
  docs/graphrag-semantics.md#frontier (frontier(N) = communities at level N plus leaves above N).

"Coverable" entity = one that some community with a report contains. "Fits" for the fake
costs below = the cost computed here, in the test, from the tree dict.
"""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from builders import write_v1, write_v3
from conftest import shared_index
from graphrag_side import need, run_script, side_params, versions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from graphrag_audit.analysis.plan import Budget, ContextCost, Cost, PlanTree, plan_context, plan_report
from graphrag_audit.cli import app
from graphrag_audit.errors import IndexInputError
from graphrag_audit.graphrag.selection import select_all
from graphrag_audit.handoff import MANIFEST_NAME, PlanWriteError, write_plan
from graphrag_audit.io.load import load_index

HYP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------
# plain restatements over the tree dict {community: (level, parent, [entities])}
# ---------------------------------------------------------------------------------------
def parents(tree):
    return {c: p for c, (_, p, _) in tree.items()}


def ancestors(tree, c):
    par = parents(tree)
    out = []
    while par[c] != -1:
        c = par[c]
        out.append(c)
    return out


def children_of(tree, c):
    return [k for k, (_, p, _) in tree.items() if p == c]


def pi_order(tree):
    return sorted(tree, key=lambda c: (tree[c][0], -len(tree[c][2]), c))


def split_set(tree, members):
    return {a for m in members for a in ancestors(tree, m)}


def coverable(tree, reported):
    return {e for c in reported for e in tree[c][2]}


def exact_covers(tree, reported):
    """Every antichain of report-bearing communities holding each coverable entity exactly once."""
    rep = sorted(reported)
    target = coverable(tree, reported)
    anc = {c: set(ancestors(tree, c)) for c in tree}
    out = []
    for mask in range(1 << len(rep)):
        f = [rep[i] for i in range(len(rep)) if mask >> i & 1]
        ents = [e for c in f for e in tree[c][2]]
        if len(ents) != len(target) or set(ents) != target:
            continue
        if any(a in anc[b] for a in f for b in f):
            continue
        out.append(sorted(f))
    return out


def covers_by_structure(tree):
    """Every frontier of a tree in which every community has a report and children partition their
    parent: per root, either the root or one frontier of each child, combined."""

    def of(c):
        kids = children_of(tree, c)
        out = [[c]]
        if kids:
            combos = [[]]
            for k in kids:
                combos = [a + b for a in combos for b in of(k)]
            out += combos
        return out

    roots = [c for c, (_, p, _) in tree.items() if p == -1]
    combos = [[]]
    for r in roots:
        combos = [a + b for a in combos for b in of(r)]
    return sorted(sorted(f) for f in combos)


def lex_best(tree, covers, fits):
    """The fitting cover whose split set, read in π order, is lexicographically greatest."""
    order = pi_order(tree)
    anc = {c: ancestors(tree, c) for c in tree}
    best, best_vec = None, None
    for f in covers:
        if not fits(f):
            continue
        split = {a for m in f for a in anc[m]}
        vec = tuple(1 if c in split else 0 for c in order)
        if best_vec is None or vec > best_vec:
            best, best_vec = f, vec
    return best


def finest_level(tree, e):
    return max(lv for (lv, _, es) in tree.values() if e in es)


def spec_frontier(tree, n):
    """docs/graphrag-semantics.md#frontier: {communities at level n} ∪ {leaves at level < n}."""
    has_child = {p for (_, p, _) in tree.values() if p != -1}
    return sorted(c for c, (lv, _, _) in tree.items() if lv == n or (lv < n and c not in has_child))


def member_of(tree, members, e):
    hits = [c for c in members if e in tree[c][2]]
    assert len(hits) == 1, (e, hits)
    return hits[0]


def build(tmp: Path, tree, reported=None):
    reported = sorted(tree) if reported is None else sorted(reported)
    write_v3(tmp, tree, reports=[(c, tree[c][0]) for c in reported])
    return load_index(tmp)


def tokens_of(tree, c):
    """A fake, monotone token count: 10 per report + 1 per entity (a split never costs less)."""
    return 10 + len(tree[c][2])


def fake_cost(model, tree, cap=40):
    comm = model.reports["community"].to_numpy()

    def cost(rows):
        toks = [tokens_of(tree, int(comm[r])) for r in rows]
        calls, cur, cur_n = 0, 0, 0
        for t in toks:  # next-fit packing in row order, like graphrag's loop (no shuffle)
            if cur + t > cap and cur_n:
                calls += 1
                cur, cur_n = 0, 0
            cur += t
            cur_n += 1
        return Cost(sum(toks), calls + (1 if cur_n else 0))

    return cost


# ---------------------------------------------------------------------------------------
# random trees
# ---------------------------------------------------------------------------------------
@st.composite
def trees(draw, max_nodes=14, max_depth=3):
    """Nested trees: children partition their parent's entities (a single child = a chain);
    community numbers grow breadth-first, so a child's number exceeds its parent's."""
    tree = {}
    queue = []
    ent = 0
    for _ in range(draw(st.integers(1, 4))):
        k = draw(st.integers(1, 8))
        queue.append((0, -1, [f"e{ent + i}" for i in range(k)]))
        ent += k
    nxt = 0
    while queue:
        lv, parent, ents = queue.pop(0)
        c = nxt
        nxt += 1
        tree[c] = (lv, parent, ents)
        if (
            lv < max_depth
            and len(tree) + len(queue) < max_nodes
            and len(ents) > 1
            and draw(st.integers(0, 3)) > 0
        ):
            n_kids = draw(st.integers(1, min(3, len(ents))))
            cuts = (
                sorted(draw(st.sets(st.integers(1, len(ents) - 1), min_size=n_kids - 1, max_size=n_kids - 1)))
                if n_kids > 1
                else []
            )
            bounds = [0, *cuts, len(ents)]
            for a, b in zip(bounds, bounds[1:]):
                queue.append((lv + 1, c, ents[a:b]))
    return tree


@st.composite
def trees_with_gaps(draw):
    tree = draw(trees())
    reported = {c for c in tree if draw(st.integers(0, 4)) > 0}  # ~1 in 5 communities has no report
    if not reported:
        reported = {min(tree)}
    return tree, reported


# ---------------------------------------------------------------------------------------
# hand-worked trees
# ---------------------------------------------------------------------------------------
# H1: 1{a..h} -> 3{a..e} (-> 7{a,b,c}, 8{d,e}), 4{f,g,h};  2{i,j} -> 5{i}, 6{j}
H1 = {
    1: (0, -1, list("abcdefgh")),
    2: (0, -1, list("ij")),
    3: (1, 1, list("abcde")),
    4: (1, 1, list("fgh")),
    5: (1, 2, ["i"]),
    6: (1, 2, ["j"]),
    7: (2, 3, list("abc")),
    8: (2, 3, list("de")),
}
# π over splittable communities: 1 (L0, 8 entities), 2 (L0, 2), 3 (L1, 5).
#   K=1: nothing fits; the coarsest frontier {1,2} is returned with fits=False.
#   K=2: {1,2}.  K=3: split 1 -> {2,3,4}; 2 (-> 4 reports) and 3 (-> 4) do not fit.
#   K=4: split 1, split 2 -> {3,4,5,6}; 3 (-> 5) does not fit. {2,4,7,8} also has 4 reports but
#        leaves 2 unsplit to split 3, which comes later in π.
#   K=5: {4,5,6,7,8}.
H1_PLANS = {2: [1, 2], 3: [2, 3, 4], 4: [3, 4, 5, 6], 5: [4, 5, 6, 7, 8], 9: [4, 5, 6, 7, 8]}


@pytest.mark.parametrize("k,expected", sorted(H1_PLANS.items()))
def test_h1_report_budgets(tmp_path, k, expected):
    plan = plan_context(build(tmp_path, H1), Budget("reports", k))
    assert plan.communities == expected and plan.fits
    assert plan.report_count == len(expected)


def test_h1_too_small_budget(tmp_path):
    plan = plan_context(build(tmp_path, H1), Budget("reports", 1))
    assert not plan.fits and plan.communities == [1, 2] and plan.baseline_level is None


def test_h1_levels_and_disclosure(tmp_path):
    plan = plan_context(build(tmp_path, H1), Budget("reports", 4))
    # every entity at level >= 1; 3 (level 1) could still be split
    assert plan.baseline_level == 1 and plan.complete_level == 1 and plan.deepest_level == 1
    # finest available: 4, 5, 6 are leaves -> f,g,h,i,j = 5 of 10 entities
    assert plan.entities_at_finest == 5 and plan.entities_represented == 10 and plan.coverage == 0.5
    by_root = {s.root: s for s in plan.subtrees}
    assert by_root[1].status == "budget" and by_root[1].finest_available == 2
    assert by_root[2].status == "finest" and by_root[2].finest_available == 1
    plan5 = plan_context(build(tmp_path / "b", H1), Budget("reports", 5))
    by_root = {s.root: s for s in plan5.subtrees}
    # the plan reaches level 2 in root 1; root 2's finest report (level 1) is coarser: disclosed
    assert plan5.deepest_level == 2
    assert by_root[2].coarser_than_target and not by_root[1].coarser_than_target


@pytest.mark.parametrize(
    "p,expected",
    [
        (0.3, [2, 3, 4]),
        (0.31, [3, 4, 5, 6]),
        (0.5, [3, 4, 5, 6]),
        (0.51, [4, 5, 6, 7, 8]),
        (1.0, [4, 5, 6, 7, 8]),
    ],
)
def test_h1_coverage(tmp_path, p, expected):
    # coverage of the report plans: K=2: 0; K=3 {2,3,4}: 4 final (3 entities) = 0.3;
    # K=4 {3,4,5,6}: 4,5,6 final = 0.5; K=5: every member final = 1.0
    plan = plan_context(build(tmp_path, H1), Budget("coverage", p))
    assert plan.communities == expected and plan.fits


def test_h1_tokens(tmp_path):
    # tokens = 10 + entities per report: {1,2} = 18+12 = 30; {2,3,4} = 12+15+13 = 40;
    # {3,4,5,6} = 15+13+11+11 = 50; {4,5,6,7,8} = 13+11+11+13+12 = 60
    model = build(tmp_path, H1)
    for t, expected in [
        (30, [1, 2]),
        (49, [2, 3, 4]),
        (50, [3, 4, 5, 6]),
        (59, [3, 4, 5, 6]),
        (60, [4, 5, 6, 7, 8]),
    ]:
        plan = plan_context(model, Budget("tokens", t), fake_cost(model, H1))
        assert plan.communities == expected, t
        assert plan.cost.tokens <= t


# H2: gaps. 1{a,b,c,d} (report) -> 2{a,b} (report), 3{c,d} (no report, leaf);
#     4{e,f} (no report) -> 5{e}, 6{f} (reports); 7{g} (no report, leaf): g is uncoverable.
H2 = {
    1: (0, -1, list("abcd")),
    2: (1, 1, list("ab")),
    3: (1, 1, list("cd")),
    4: (0, -1, list("ef")),
    5: (1, 4, ["e"]),
    6: (1, 4, ["f"]),
    7: (0, -1, ["g"]),
}
H2_REPORTED = {1, 2, 5, 6}


def test_h2_gaps(tmp_path):
    model = build(tmp_path, H2, H2_REPORTED)
    plan = plan_context(model, Budget("reports", 10))
    # 4 has no report: replaced by 5, 6; splitting 1 would drop c, d: kept whole
    assert plan.communities == [1, 5, 6] and plan.fits
    assert plan.entities_uncoverable == 1 and plan.uncoverable_communities == [7]
    assert plan.entities_represented == 6 and plan.entities_clustered == 7
    by_root = {s.root: s for s in plan.subtrees}
    assert by_root[1].status == "blocked" and by_root[1].blocked[0]["community"] == 1
    assert "no report" in by_root[1].blocked[0]["reason"]
    assert not plan_context(model, Budget("reports", 2)).fits


# H3: spreading. 1{6} -> 3{3} (-> 7, 8, 9), 4{3} (-> 10, 11, 12); 2{4} -> 5{2}, 6{2}
H3 = {
    1: (0, -1, list("abcdef")),
    2: (0, -1, list("ghij")),
    3: (1, 1, list("abc")),
    4: (1, 1, list("def")),
    5: (1, 2, list("gh")),
    6: (1, 2, list("ij")),
    7: (2, 3, ["a"]),
    8: (2, 3, ["b"]),
    9: (2, 3, ["c"]),
    10: (2, 4, ["d"]),
    11: (2, 4, ["e"]),
    12: (2, 4, ["f"]),
}


@pytest.mark.parametrize(
    "k,expected",
    [
        (3, [2, 3, 4]),
        (4, [3, 4, 5, 6]),
        (5, [3, 4, 5, 6]),
        (6, [4, 5, 6, 7, 8, 9]),
        (7, [4, 5, 6, 7, 8, 9]),
        (8, [5, 6, 7, 8, 9, 10, 11, 12]),
    ],
)
def test_h3_spreads_before_going_deeper(tmp_path, k, expected):
    # K=5: {7,8,9,4,2} also has 5 reports but exhausts root 1 while root 2 stays whole
    assert plan_context(build(tmp_path, H3), Budget("reports", k)).communities == expected


# H4: level before size. 1{a..o} -> 2{a..j}, 3{k,l}, 4{m,n,o}; 2 -> 5{a..f}, 6{g..j};
#     3 -> 7{k}, 8{l}; 4 -> 9{m}, 10{n}, 11{o}; 5 -> 12{a,b,c}, 13{d,e,f}
H4 = {
    1: (0, -1, list("abcdefghijklmno")),
    2: (1, 1, list("abcdefghij")),
    3: (1, 1, list("kl")),
    4: (1, 1, list("mno")),
    5: (2, 2, list("abcdef")),
    6: (2, 2, list("ghij")),
    7: (2, 3, ["k"]),
    8: (2, 3, ["l"]),
    9: (2, 4, ["m"]),
    10: (2, 4, ["n"]),
    11: (2, 4, ["o"]),
    12: (3, 5, list("abc")),
    13: (3, 5, list("def")),
}
# Level frontiers: LF(0) = {1} (1 report), LF(1) = {2,3,4} (3), LF(2) = {5..11} (7), LF(3) = 8.
# π over splittable communities: 1 (L0), 2 (L1, 10), 4 (L1, 3), 3 (L1, 2), 5 (L2, 6).
#   K=5: from LF(1): split 2 -> {3,4,5,6} (4); 4 -> 6 does not fit; 3 -> {4,5,6,7,8} (5); 5 -> 6 no.
#        The small level-1 community 3 is refined before the larger level-2 community 5
#        ({3,4,6,12,13} also has 5 reports but leaves level 1 unfinished).
#   K=6: split 2, then 4 -> {3,5,6,9,10,11}; 3 and 5 no longer fit.
#   K=7: LF(2) fits; 5 (-> 8) does not.  K=8: every leaf.


@pytest.mark.parametrize(
    "k,expected",
    [
        (1, [1]),
        (3, [2, 3, 4]),
        (4, [3, 4, 5, 6]),
        (5, [4, 5, 6, 7, 8]),
        (6, [3, 5, 6, 9, 10, 11]),
        (7, [5, 6, 7, 8, 9, 10, 11]),
        (8, [6, 7, 8, 9, 10, 11, 12, 13]),
    ],
)
def test_h4_level_before_size(tmp_path, k, expected):
    plan = plan_context(build(tmp_path, H4), Budget("reports", k))
    assert plan.communities == expected


# ---------------------------------------------------------------------------------------
# brute force over every frontier of small trees
# ---------------------------------------------------------------------------------------
def _check_against_brute_force(tree, reported, model):
    covers = exact_covers(tree, reported)
    cost = fake_cost(model, tree)
    pt = PlanTree(model)
    for k in range(1, len(reported) + 2):
        plan = plan_context(model, Budget("reports", k), tree=pt)
        best = lex_best(tree, covers, lambda f: len(f) <= k)
        if best is None:
            assert not plan.fits
            assert len(plan.communities) == min(len(f) for f in covers)  # the coarsest frontier
        else:
            assert plan.fits and plan.communities == best, (k, plan.communities, best)
    totals = sorted({sum(tokens_of(tree, c) for c in f) for f in covers})
    for t in totals + [totals[-1] + 5]:
        plan = plan_context(model, Budget("tokens", t), cost, tree=pt)
        best = lex_best(tree, covers, lambda f: sum(tokens_of(tree, c) for c in f) <= t)
        assert plan.communities == best, (t, plan.communities, best)
    # coverage: binary search over the report cap K for the plans P(K) of the reports budget: the
    # plan is some P(K) that reaches the share while P(K - 1) does not; the smallest such K whenever
    # "P(K) reaches the share" is monotone in K (it need not be: docs/plan.md#coverage)
    cov_ent = coverable(tree, reported)
    final = {c for c in reported if not any(set(f) & set(_descendants(tree, c)) for f in covers)}
    for p in (0.25, 0.5, 0.75, 1.0):
        reach = {}
        for k in range(0, len(reported) + 1):
            best = lex_best(tree, covers, lambda f: len(f) <= k)
            at_finest = None if best is None else sum(len(tree[c][2]) for c in best if c in final)
            reach[k] = (best, best is not None and (not cov_ent or at_finest >= p * len(cov_ent) - 1e-9))
        got = plan_context(model, Budget("coverage", p), tree=pt)
        assert got.fits
        boundaries = [reach[k][0] for k in range(1, len(reported) + 1) if reach[k][1] and not reach[k - 1][1]]
        assert got.communities in boundaries, (p, got.communities, boundaries)
        flags = [reach[k][1] for k in range(len(reported) + 1)]
        if flags == sorted(flags):  # monotone: the smallest K
            assert got.communities == boundaries[0], p


def _descendants(tree, c):
    out, stack = [], children_of(tree, c)
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(children_of(tree, x))
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_brute_force_all_reports(tree):
    assert covers_by_structure(tree) == sorted(exact_covers(tree, set(tree)))  # two enumerations agree
    with tempfile.TemporaryDirectory() as d:
        model = build(Path(d), tree)
        _check_against_brute_force(tree, set(tree), model)


@HYP
@given(trees_with_gaps())
def test_brute_force_with_missing_reports(case):
    tree, reported = case
    with tempfile.TemporaryDirectory() as d:
        model = build(Path(d), tree, reported)
        _check_against_brute_force(tree, reported, model)


def seeded_tree(rng, max_nodes=14):
    """The same nested trees as :func:`trees`, from a seeded ``random.Random`` (a fixed sweep)."""
    tree, queue, ent, nxt = {}, [], 0, 0
    for _ in range(rng.randint(1, 4)):
        k = rng.randint(1, 8)
        queue.append((0, -1, [f"e{ent + i}" for i in range(k)]))
        ent += k
    while queue:
        lv, parent, ents = queue.pop(0)
        c, nxt = nxt, nxt + 1
        tree[c] = (lv, parent, ents)
        if lv < 3 and len(tree) + len(queue) < max_nodes and len(ents) > 1 and rng.random() < 0.75:
            n_kids = rng.randint(1, min(3, len(ents)))
            bounds = [0, *sorted(rng.sample(range(1, len(ents)), n_kids - 1)), len(ents)]
            for a, b in zip(bounds, bounds[1:]):
                queue.append((lv + 1, c, ents[a:b]))
    return tree


def test_brute_force_seeded_sweep(tmp_path):
    """300 seeded random trees, every report budget, against the brute-force lexicographic optimum."""
    import random

    rng = random.Random(20251130)
    for i in range(300):
        tree = seeded_tree(rng)
        model = build(tmp_path / str(i), tree)
        pt = PlanTree(model)
        covers = covers_by_structure(tree)
        for k in range(1, len(tree) + 1):
            best = lex_best(tree, covers, lambda f: len(f) <= k)
            got = plan_context(model, Budget("reports", k), tree=pt)
            assert (got.communities if got.fits else None) == best, (i, k, tree)


@pytest.mark.parametrize("tree", [H1, H3, H4])
def test_brute_force_hand_trees(tmp_path, tree):
    _check_against_brute_force(tree, set(tree), build(tmp_path, tree))


# ---------------------------------------------------------------------------------------
# properties on larger random trees
# ---------------------------------------------------------------------------------------
def _assert_frontier(tree, reported, plan):
    members = plan.communities
    assert all(c in reported for c in members)
    for a in members:
        assert not set(ancestors(tree, a)) & set(members), "ancestor and descendant together"
    ents = [e for c in members for e in tree[c][2]]
    assert len(ents) == len(set(ents)), "an entity held twice"
    assert set(ents) == coverable(tree, reported), "a coverable entity missing"
    assert plan.entities_represented == len(set(ents)) and plan.entities_duplicated == 0


def _v2_selection(tree, n):
    """docs/graphrag-semantics.md#selection-v2 when every community has a report: every report with level <= n."""
    return sorted(c for c, (lv, _, _) in tree.items() if lv <= n)


def _served(tree, members, n):
    """Entities held by some member at level >= min(n, the entity's finest level)."""
    ents = {e for (_, _, es) in tree.values() for e in es}
    return {
        e
        for e in ents
        if any(e in tree[c][2] and tree[c][0] >= min(n, finest_level(tree, e)) for c in members)
    }


@HYP
@given(trees(max_nodes=30, max_depth=4), st.data())
def test_plans_are_frontiers_fit_and_beat_every_level(tree, data):
    """For random budgets of each kind: the plan is a frontier and fits (or, when it does not, even
    the roots exceed the budget). "Best single community_level that fits" is defined twice:
    N* = the largest N whose spec frontier(N) fits — then every entity's plan community has level
    >= min(N*, the entity's finest level); and N2 = the largest N whose graphrag >= 2.0 selection
    (every report with level <= N) fits — then the plan serves at least as many entities at level
    >= min(N2, finest) as that selection does (monotone costs only: reports, tokens)."""
    max_level = max(lv for (lv, _, _) in tree.values())
    with tempfile.TemporaryDirectory() as d:
        model = build(Path(d), tree)
        pt = PlanTree(model)
        cost = fake_cost(model, tree)
        for kind in ("reports", "tokens", "map_calls"):
            if kind == "reports":
                value = data.draw(st.integers(1, len(tree) + 1))
                measure = len
            elif kind == "tokens":
                value = data.draw(st.integers(1, sum(tokens_of(tree, c) for c in tree) + 1))
                measure = lambda f: sum(tokens_of(tree, c) for c in f)  # noqa: E731
            else:
                value = data.draw(st.integers(1, 8))
                measure = lambda f: (
                    cost(np.flatnonzero(model.reports["community"].isin(f).to_numpy())).map_calls
                )  # noqa: E731
            plan = plan_context(model, Budget(kind, value), cost, tree=pt)
            _assert_frontier(tree, set(tree), plan)
            if plan.fits:
                assert measure(plan.communities) <= value
            else:  # only when even the roots do not fit
                roots = [c for c, (_, p, _) in tree.items() if p == -1]
                assert measure(roots) > value and plan.communities == sorted(roots)
                continue
            # the best whole level: the finest spec frontier(N) that fits
            fit_levels = [n for n in range(max_level + 1) if measure(spec_frontier(tree, n)) <= value]
            if fit_levels:
                n_star = max(fit_levels)
                for e in {e for (_, _, es) in tree.values() for e in es}:
                    c = member_of(tree, plan.communities, e)
                    assert tree[c][0] >= min(n_star, finest_level(tree, e)), (kind, value, n_star, e)
            if kind != "map_calls":  # monotone costs: graphrag >= 2.0's own level selections cost more
                v2_levels = [n for n in range(max_level + 1) if measure(_v2_selection(tree, n)) <= value]
                if v2_levels:
                    n2 = max(v2_levels)
                    assert len(_served(tree, plan.communities, n2)) >= len(
                        _served(tree, _v2_selection(tree, n2), n2)
                    )


@HYP
@given(trees_with_gaps(), st.integers(1, 14))
def test_plans_with_missing_reports_are_frontiers(case, k):
    tree, reported = case
    with tempfile.TemporaryDirectory() as d:
        model = build(Path(d), tree, reported)
        plan = plan_context(model, Budget("reports", k))
        _assert_frontier(tree, reported, plan)
        uncoverable = {e for (_, _, es) in tree.values() for e in es} - coverable(tree, reported)
        assert plan.entities_uncoverable == len(uncoverable)
        if plan.fits:
            assert plan.report_count <= k


# ---------------------------------------------------------------------------------------
# refusals and odd input
# ---------------------------------------------------------------------------------------
def test_refuses_cycles(tmp_path):
    tree = {1: (0, 2, ["a"]), 2: (1, 1, ["a"]), 3: (0, -1, ["b"])}
    with pytest.raises(IndexInputError, match="cycle"):
        plan_context(build(tmp_path, tree), Budget("reports", 5))


def test_refuses_several_parents(tmp_path):
    model = build(tmp_path, H1)
    f = model.forest  # 7 now sits under 3 and 2
    model = replace(
        model,
        forest=replace(
            f, edge_parents=np.append(f.edge_parents, 2), edge_children=np.append(f.edge_children, 7)
        ),
    )
    with pytest.raises(IndexInputError, match="several parents"):
        PlanTree(model)


@pytest.mark.parametrize(
    "tree,what",
    [
        ({1: (0, -1, ["a", "b"]), 2: (1, 1, ["a"]), 3: (1, 1, ["a", "b"])}, "sibling"),
        ({1: (0, -1, ["a"]), 2: (1, 1, ["a", "z"]), 3: (0, -1, ["z"])}, "parent lacks"),
    ],
)
def test_refuses_entity_sets_that_are_not_nested(tmp_path, tree, what):
    with pytest.raises(IndexInputError, match=what):
        PlanTree(build(tmp_path, tree))


def test_report_without_community_is_left_out(tmp_path):
    write_v3(tmp_path, H1, reports=[(c, H1[c][0]) for c in sorted(H1)] + [(99, 1)])
    plan = plan_context(load_index(tmp_path), Budget("reports", 9))
    assert 99 not in plan.communities and plan.orphan_communities == [99]
    assert any("absent from the tree" in n for n in plan.notes)


def test_budget_validation():
    for kind, v in [
        ("reports", 0),
        ("tokens", 1.5),
        ("map_calls", -1),
        ("coverage", 0),
        ("coverage", 1.2),
        ("coverage", math.nan),
        ("nope", 3),
    ]:
        with pytest.raises(ValueError):
            Budget(kind, v)


def test_map_calls_budget_needs_a_cost(tmp_path):
    with pytest.raises(ValueError, match="cost function"):
        plan_context(build(tmp_path, H1), Budget("map_calls", 2))


# ---------------------------------------------------------------------------------------
# side by side with the levels; dynamic preview
# ---------------------------------------------------------------------------------------
def test_level_options_and_dynamic_preview(tmp_path):
    model = build(tmp_path, H1)
    rep = plan_report(model, Budget("reports", 4), num_repeats=2)
    o = {(x.community_level, x.behaviour): x for x in rep.options}
    # v2 at N=1: every report with level <= 1 = 1..6; ancestors sent: 1, 2 (with 3..6)
    assert o[(1, "v2")].community_ids == [1, 2, 3, 4, 5, 6] and o[(1, "v2")].ancestors_sent == 2
    assert o[(1, "v1")].community_ids == [3, 4, 5, 6] and o[(1, "v1")].ancestors_sent == 0
    assert not o[(1, "v2")].fits and o[(1, "v1")].fits and o[(2, "v1")].reports == 5
    assert rep.best_level("v2") == 0 and rep.best_level("v1") == 1
    # entities at their finest: at N=1 v1 sends 4 (f,g,h), 5 (i), 6 (j)
    assert o[(1, "v1")].entities_at_finest == 5 and o[(None, "v1")].entities_at_finest == 10
    dyn = {d["community_level"]: d for d in rep.dynamic}
    assert dyn[0] == {
        "community_level": 0,
        "candidates": 2,
        "level0_reports": 2,
        "rating_calls": {"min": 4, "max": 4},
        "raises_keyerror": False,
    }
    assert dyn[2]["candidates"] == 8 and dyn[2]["rating_calls"] == {"min": 4, "max": 16}


def test_dynamic_preview_flags_missing_level0(tmp_path):
    model = build(tmp_path, H1, reported={3, 4, 5, 6, 7, 8})
    dyn = {d["community_level"]: d for d in plan_report(model, Budget("reports", 9)).dynamic}
    assert dyn[1]["raises_keyerror"] and dyn[1]["level0_reports"] == 0 and dyn[1]["candidates"] == 4


# ---------------------------------------------------------------------------------------
# exact costs: the same numbers as the per-level audit
# ---------------------------------------------------------------------------------------
def _assert_same_as_audit(model, tokenizer):
    from graphrag_audit.analysis.audit import AuditOptions, audit
    from graphrag_audit.analysis.plan import ContextCost

    report = audit(model, AuditOptions(tokenizer=tokenizer, max_context_tokens=3000))
    cost = ContextCost(model, tokenizer, 3000)
    sels = select_all(model)
    for r in report.levels:
        for b in ("v2", "v1", "level_only"):
            stats = r.selected[b]
            got = cost.selection(sels[r.community_level][b].rows, b, r.community_level)
            if (
                b != "v1"
                or model.rollup_rows is model.members
                or not {"entity_id", "entity_row"} & set(model.rollup_rows)
            ):
                assert cost(sels[r.community_level][b].rows) == got  # level-independent weights
            assert (got.tokens, got.map_calls) == (stats.cost.tokens, stats.cost.map_calls), (r, b)


def test_context_cost_matches_audit_synthetic(tmp_path):
    _assert_same_as_audit(build(tmp_path, H3), "estimate")


def test_context_cost_matches_audit_real():
    _assert_same_as_audit(load_index(shared_index("verbs-v3")), "cl100k_base")


def test_context_cost_matches_audit_with_graphrag_1_weights():
    """graphrag < 2.0 weighs by create_final_nodes at each N (here the -1 report carries the
    largest weight): the planner's level options use the same per-level weights as the audit."""
    model = load_index(shared_index("real-csekg-v1"))
    _assert_same_as_audit(model, "cl100k_base")
    rep = plan_report(model, Budget("tokens", 10**9), ContextCost(model))
    o = {(x.community_level, x.behaviour): x for x in rep.options}
    assert o[(1, "v1")].cost.tokens == 22572  # graphrag 1.2.0's own count (tests/analysis/test_costs.py)


# ---------------------------------------------------------------------------------------
# the hand-off directory
# ---------------------------------------------------------------------------------------
def _write_and_read(tmp_path, tree, budget, reported=None):
    src = tmp_path / "src"
    model = build(src, tree, reported)
    plan = plan_context(model, budget)
    out = tmp_path / "out"
    write_plan(model, plan.communities, out)
    return model, plan, out, load_index(out)


def test_written_directory_holds_exactly_the_plan(tmp_path):
    model, plan, out, back = _write_and_read(tmp_path, H1, Budget("reports", 4))
    assert plan.communities == [3, 4, 5, 6]
    assert sorted(back.reports["community"].tolist()) == [3, 4, 5, 6]
    assert sorted(back.communities["community"].tolist()) == [3, 4, 5, 6]
    sel = select_all(back)
    assert sel[None]["v2"].community_ids(back) == [3, 4, 5, 6]
    assert sel[None]["v1"].community_ids(back) == [3, 4, 5, 6]
    # the largest written level selects it too (the CLI's --community-level)
    assert sel[1]["v2"].community_ids(back) == [3, 4, 5, 6]
    # same arrow schema, rows in source order, every column copied, parent/children made consistent
    for name in ("communities.parquet", "community_reports.parquet"):
        a, b = pq.read_table(tmp_path / "src" / name), pq.read_table(out / name)
        assert a.schema.equals(b.schema, check_metadata=False)
        src_rows = a.to_pandas()
        src_rows = src_rows[src_rows["community"].isin([3, 4, 5, 6])].reset_index(drop=True)
        got = b.to_pandas()
        assert got["community"].tolist() == src_rows["community"].tolist()
        for col in got.columns:
            if col in ("parent", "children"):
                continue
            assert got[col].astype(str).tolist() == src_rows[col].astype(str).tolist(), col
        assert (got["parent"] == -1).all() and all(len(x) == 0 for x in got["children"])
    # other tables copied byte for byte
    assert (out / "entities.parquet").read_bytes() == (tmp_path / "src" / "entities.parquet").read_bytes()
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["communities"] == [3, 4, 5, 6] and manifest["original_parent"]["3"] == 1


def test_written_directory_costs_the_same(tmp_path):
    from graphrag_audit.analysis.plan import ContextCost

    src = tmp_path / "src"
    model = build(src, H3)
    cost = ContextCost(model, "estimate", 120)
    plan = plan_context(model, Budget("map_calls", 3), cost)
    assert plan.fits and plan.cost.map_calls <= 3
    write_plan(model, plan.communities, tmp_path / "out")
    back = load_index(tmp_path / "out")
    got = ContextCost(back, "estimate", 120)(select_all(back)[None]["v2"].rows)
    assert got == plan.cost


@HYP
@given(trees_with_gaps(), st.integers(1, 14))
def test_written_directory_round_trip_random(case, k):
    tree, reported = case
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        model = build(d / "src", tree, reported)
        plan = plan_context(model, Budget("reports", k))
        write_plan(model, plan.communities, d / "out")
        back = load_index(d / "out")
        assert select_all(back)[None]["v2"].community_ids(back) == plan.communities


def test_write_refusals(tmp_path):
    src = tmp_path / "src"
    model = build(src, H1)
    plan = plan_context(model, Budget("reports", 4))
    for bad in (src, src / "inside", tmp_path):
        with pytest.raises(PlanWriteError, match="refusing"):
            write_plan(model, plan.communities, bad)
    full = tmp_path / "full"
    full.mkdir()
    (full / "x.txt").write_text("keep me")
    with pytest.raises(PlanWriteError, match="not empty"):
        write_plan(model, plan.communities, full)
    write_plan(model, plan.communities, full, force=True)
    assert (full / "x.txt").read_text() == "keep me" and (full / "communities.parquet").exists()
    v1 = load_index(
        write_v1(tmp_path / "v1", H1)
    )  # graphrag 1.x layouts are written too (tests/io/test_plan_write.py)
    write_plan(v1, [3, 4, 5, 6], tmp_path / "v1out")
    assert (tmp_path / "v1out" / "create_final_nodes.parquet").is_file()


# graphrag's own read_indexer_reports on a written directory, run in a side interpreter with
# graphrag >= 2.0 (tests/graphrag_side.py): the tables read with pd.read_parquet (the Python API),
# and, where graphrag has it (>= 3.0.2), with the typed conversions graphrag query's DataReader applies
_GRAPHRAG_READS = """
import json, sys
import pandas as pd
from graphrag.query.indexer_adapters import read_indexer_reports
d, levels = sys.argv[1], json.loads(sys.argv[2])
ways = {"read_parquet": lambda r, c: (r, c)}
try:
    from graphrag.data_model.dfs import communities_typed, community_reports_typed
    ways["typed"] = lambda r, c: (community_reports_typed(r), communities_typed(c))
except ImportError:
    pass
out = {}
for how, load in ways.items():
    rep, com = load(pd.read_parquet(d + "/community_reports.parquet"), pd.read_parquet(d + "/communities.parquet"))
    out[how] = {str(n): sorted(int(r.short_id) for r in read_indexer_reports(rep.copy(), com.copy(), n))
                for n in levels}
print(json.dumps(out))
"""


def _graphrag_selects(python, out, levels):
    proc = run_script(python, _GRAPHRAG_READS, str(out), json.dumps(levels))
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    version = tuple(int(x) for x in versions(python)[0].split(".")[:3] if x.isdigit())
    assert ("typed" in got) == (version >= (3, 0, 2)), got  # graphrag query's DataReader since 3.0.2
    return got


@pytest.mark.parametrize("python", side_params(min_major=2))
def test_graphrag_reads_the_written_directory(python, tmp_path):
    """graphrag's own read_indexer_reports on the written directory selects exactly the plan."""
    python = need(python, min_major=2)
    model, plan, out, _ = _write_and_read(tmp_path, H3, Budget("reports", 6))
    assert plan.communities == [4, 5, 6, 7, 8, 9]
    for how, got in _graphrag_selects(python, out, [None, 2]).items():
        assert got == {"None": plan.communities, "2": plan.communities}, how


@pytest.mark.parametrize("python", side_params(min_major=2))
def test_graphrag_reads_the_written_real_directory(python, tmp_path):
    python = need(python, min_major=2)
    from graphrag_audit.analysis.plan import ContextCost

    model = load_index(shared_index("verbs-v3"))
    plan = plan_context(model, Budget("map_calls", 5), ContextCost(model, "estimate"))
    write_plan(model, plan.communities, tmp_path / "out")
    for how, got in _graphrag_selects(python, tmp_path / "out", [None]).items():
        assert got == {"None": plan.communities}, how


# ---------------------------------------------------------------------------------------
# the command
# ---------------------------------------------------------------------------------------
runner = CliRunner()


def test_cli_needs_a_budget(tmp_path):
    d = build(tmp_path / "i", H1).output_dir
    res = runner.invoke(app, ["plan", str(d)])
    assert res.exit_code == 2 and "at least one budget" in res.output
    res = runner.invoke(app, ["plan", str(d), "--coverage", "2"])
    assert res.exit_code == 2


def test_cli_json_lists_the_plan(tmp_path):
    d = build(tmp_path / "i", H1).output_dir
    res = runner.invoke(app, ["plan", str(d), "--reports", "4", "-f", "json", "--tokenizer", "estimate"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["plan"]["communities"] == [3, 4, 5, 6] and doc["plan"]["reports"] == 4
    assert all(isinstance(c, int) for c in doc["plan"]["communities"])
    assert {(x["community_level"], x["behaviour"]) for x in doc["community_levels"]} >= {
        (0, "v2"),
        (None, "v1"),
    }
    assert "map_calls" in doc["plan"] and doc["dynamic_selection"][0]["candidates"] == 2


def test_cli_text_markdown_and_too_small(tmp_path):
    d = build(tmp_path / "i", H1).output_dir
    res = runner.invoke(app, ["plan", str(d), "--reports", "5", "--no-costs", "--width", "120"])
    assert res.exit_code == 0 and "5 reports" in res.stdout and "coarser" in res.stdout
    res = runner.invoke(app, ["plan", str(d), "--reports", "5", "-f", "markdown", "--no-costs"])
    assert res.exit_code == 0 and res.stdout.startswith("## graphrag-audit plan")
    res = runner.invoke(app, ["plan", str(d), "--reports", "1", "--no-costs"])
    assert res.exit_code == 1 and "DOES NOT FIT" in res.stdout
    res = runner.invoke(app, ["plan", str(d), "--map-calls", "1", "--no-costs"])
    assert res.exit_code == 2


def test_cli_write(tmp_path):
    d = build(tmp_path / "i", H1).output_dir
    out = tmp_path / "out"
    res = runner.invoke(
        app, ["plan", str(d), "--reports", "4", "--write", str(out), "-f", "json", "--tokenizer", "estimate"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["handoff"]["reports"] == 4 and doc["handoff"]["max_level"] == 1
    back = load_index(out)
    assert select_all(back)[None]["v2"].community_ids(back) == [3, 4, 5, 6]
    res = runner.invoke(app, ["plan", str(d), "--reports", "4", "--write", str(out)])
    assert res.exit_code == 2 and "not empty" in res.output
    res = runner.invoke(app, ["plan", str(d), "--reports", "4", "--write", str(d)])
    assert res.exit_code == 2 and "refusing" in res.output


def test_cli_escapes_untrusted_path(tmp_path):
    d = tmp_path / "evil\x1b[31mdir"
    build(d, H1)
    res = runner.invoke(app, ["plan", str(d), "--reports", "4", "--no-costs"])
    assert res.exit_code == 0 and "\x1b[31m" not in res.stdout
    res = runner.invoke(app, ["plan", str(d), "--reports", "4", "--no-costs", "-f", "markdown"])
    assert "\x1b" not in res.stdout


# ---------------------------------------------------------------------------------------
# real indexes
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["verbs-v3", "real-b2b-gaps-v2", "real-insurance-v3", "dulce-v1"])
def test_real_index_plans_are_frontiers(name):
    model = load_index(shared_index(name))
    pt = PlanTree(model)
    for k in (10, 40, 200):
        plan = plan_context(model, Budget("reports", k), tree=pt)
        assert plan.entities_duplicated == 0
        assert plan.entities_represented == pt.n_clustered - plan.entities_uncoverable
        anc = {a for c in plan.communities for a in _tree_ancestors(pt, c)}
        assert not anc & set(plan.communities)
        if plan.fits:
            assert plan.report_count <= k


def _tree_ancestors(pt, c):
    out = []
    while pt.parent[c] != -1:
        c = pt.parent[c]
        out.append(c)
    return out


def test_real_verbs_v3_map_call_plans():
    from graphrag_audit.analysis.plan import ContextCost

    model = load_index(shared_index("verbs-v3"))
    cost = ContextCost(model, "cl100k_base")
    for m in (5, 10, 20):
        rep = plan_report(model, Budget("map_calls", m), cost)
        assert rep.plan.fits and rep.plan.cost.map_calls <= m
        assert rep.plan.cost == cost(rep.plan.rows)
        # at least as fine as the finest whole level whose <2.0 selection fits
        best = rep.best_level("v1")
        if best is not None:
            assert rep.plan.baseline_level >= best


# ---- the same-budget table marks the hypothetical rows hyp. (issue 38 §2) ----------------------
# graphrag/compat.py (confirmed with the real graphrag): graphrag < 2.0 cannot read a 3.x layout (it reads
# create_final_nodes), so its rows are its rule applied to the rebuilt tree; graphrag >= 2.0 runs on it.
# Seed at N = 0, 1, 2, None (docs/graphrag-semantics.md#selection): >= 2.0 sends 2, 5, 7, 7; < 2.0 2, 3, 4, 4.
def test_plan_comparison_marks_hypothetical_rows(tmp_path):
    from builders import SEED

    from graphrag_audit.render.markdown import render_plan_markdown
    from graphrag_audit.render.plan_common import comparison_rows
    from graphrag_audit.render.text import render_plan_text

    rep = plan_report(load_index(write_v3(tmp_path / "seed", SEED)), Budget("reports", 4))
    assert {(o.behaviour, o.status) for o in rep.options} == {("v2", "exact"), ("v1", "hypothetical")}
    rows = [(r[0], r[1], r[2]) for r in comparison_rows(rep)]
    assert rows == [
        ("0", "graphrag >= 2.0", "2"),
        ("0", "graphrag < 2.0", "hyp. 2"),
        ("1", "graphrag >= 2.0", "5"),
        ("1", "graphrag < 2.0", "hyp. 3"),
        ("2", "graphrag >= 2.0", "7"),
        ("2", "graphrag < 2.0", "hyp. 4"),
        ("None", "graphrag >= 2.0", "7"),
        ("None", "graphrag < 2.0", "hyp. 4"),
    ]
    note = (
        "hyp. = the rule of graphrag < 2.0 applied to the rebuilt tree, not what it sends here "
        "(levels tells what)."
    )
    md = render_plan_markdown(rep)
    assert "| 1 | graphrag &lt; 2.0 | hyp. 3 |" in md and "| 1 | graphrag &gt;= 2.0 | 5 |" in md
    assert note.replace("<", "&lt;") in md
    assert note in " ".join(render_plan_text(rep, width=1000).split())
    # a 1.x layout: graphrag >= 2.0 cannot read it; graphrag 1.x runs on it
    rep1 = plan_report(load_index(write_v1(tmp_path / "seed1", SEED)), Budget("reports", 4))
    assert [r[2] for r in comparison_rows(rep1)][:4] == ["hyp. 2", "2", "hyp. 5", "3"]
