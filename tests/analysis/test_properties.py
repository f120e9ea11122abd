"""Property-based tests (hypothesis) over random community trees and random damage (issue 6).

Clean trees are generated the way graphrag builds them (docs/graphrag-semantics.md#tree): levels contiguous from
0, child = parent level + 1, a parent's entities are the union of its children's, entity sets
disjoint within a level, community numbers growing level by level. On those, every number the
audit reports is recomputed here by brute force from the generated tree.

Damaged indexes (rows dropped or duplicated, parents shuffled, cells nulled, columns retyped)
must either produce an AuditReport that renders in every format, or raise IndexInputError —
nothing else may escape.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pyarrow as pa
from hostile import Index
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from graphrag_audit.analysis.audit import AuditOptions, audit
from graphrag_audit.errors import IndexInputError
from graphrag_audit.render import render

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# dynamic-no-descent: graphrag 2.x's selector on any clean tree with a level 1 (dynamic-unreachable never:
# every community has a report)
ALLOWED_ON_CLEAN = {
    "depth-mismatch",
    "v2-inflation",
    "level-beyond-max",
    "single-child-chain",
    "duplicate-level",
    "unclustered-entities",
    "dynamic-no-descent",
}


@st.composite
def clean_trees(draw, max_roots=4, max_depth=3, max_children=3):
    """(tree {community: (level, parent, entities)}, extra unclustered entity names)."""
    shape = [[(-1,) for _ in range(draw(st.integers(1, max_roots)))]]  # per level: parent index in level-1
    for _ in range(draw(st.integers(0, max_depth))):
        nxt = []
        for i in range(len(shape[-1])):
            nxt += [(i,)] * draw(st.integers(0, max_children))
        if not nxt:
            break
        shape.append(nxt)
    total = sum(len(lv) for lv in shape)
    # distinct community numbers, increasing in breadth-first order (gaps allowed)
    gaps = draw(st.lists(st.integers(1, 3), min_size=total, max_size=total))
    numbers, k = [], draw(st.integers(0, 5))
    for g in gaps:
        numbers.append(k)
        k += g
    ids, pos = [], 0
    for lv in shape:
        ids.append(numbers[pos : pos + len(lv)])
        pos += len(lv)
    ents: dict[int, list[str]] = {}
    counter = iter(range(10**6))
    for depth in range(len(shape) - 1, -1, -1):  # leaves first: a parent holds its children's entities
        for i, (p,) in enumerate(shape[depth]):
            c = ids[depth][i]
            kids = (
                [ids[depth + 1][j] for j, (pp,) in enumerate(shape[depth + 1]) if pp == i]
                if depth + 1 < len(shape)
                else []
            )
            if kids:
                ents[c] = sorted({e for kid in kids for e in ents[kid]})
            else:
                ents[c] = [f"e{next(counter)}" for _ in range(draw(st.integers(1, 3)))]
    tree = {}
    for depth, lv in enumerate(shape):
        for i, (p,) in enumerate(lv):
            tree[ids[depth][i]] = (depth, -1 if p < 0 else ids[depth - 1][p], ents[ids[depth][i]])
    extra = [f"lonely{i}" for i in range(draw(st.integers(0, 2)))]
    return tree, extra


def _write(idx: Index) -> tuple[tempfile.TemporaryDirectory, Path]:
    tmp = tempfile.TemporaryDirectory(prefix="prop-")
    return tmp, idx.write(Path(tmp.name) / "index")


def _ancestors(tree, c):
    out = []
    p = tree[c][1]
    while p >= 0:
        out.append(p)
        p = tree[p][1]
    return out


def _check_stats_consistent(stats: dict) -> None:
    for b, s in stats.items():
        assert s.count == len(s.community_ids), b
        assert sum(s.by_level.values()) == s.count, b
        assert s.community_ids == sorted(s.community_ids), b


@SETTINGS
@given(data=clean_trees(), level=st.integers(0, 4))
def test_clean_tree_numbers_match_a_brute_force(data, level):
    tree, extra = data
    event(f"levels: {max(lv for lv, _, _ in tree.values()) + 1}")
    entities = sorted({e for _, _, es in tree.values() for e in es}) + extra
    tmp, d = _write(Index.base(tree, entities=entities))
    with tmp:
        report = audit(d, AuditOptions(level=level, costs=False))
        max_level = max(lv for lv, _, _ in tree.values())
        roots = sorted(c for c, (_, p, _) in tree.items() if p < 0)
        children = {c: [k for k, (_, p, _) in tree.items() if p == c] for c in tree}
        clustered = sorted({e for _, _, es in tree.values() for e in es})
        # ---- findings: nothing structural on a clean tree; the level-dependent ones exactly
        got = {f.rule: f for f in report.findings}
        assert set(got) <= ALLOWED_ON_CLEAN, sorted(set(got) - ALLOWED_ON_CLEAN)
        single = sorted(c for c, ks in children.items() if len(ks) == 1)
        assert ("single-child-chain" in got) == bool(single)
        if single:
            assert list(got["single-child-chain"].communities) == single
        assert ("level-beyond-max" in got) == (level > max_level)
        assert ("unclustered-entities" in got) == bool(extra)
        # depth-mismatch: more than 25% of roots or of entities cannot reach `level`
        subtree = {r: [c for c in tree if c == r or r in _ancestors(tree, c)] for r in roots}
        deepest = {r: max(tree[c][0] for c in subtree[r]) for r in roots}
        finest = {e: max(lv for lv, _, es in tree.values() if e in es) for e in clustered}
        if level <= max_level:
            share = max(
                sum(deepest[r] < level for r in roots) / len(roots),
                sum(finest[e] < level for e in clustered) / len(clustered),
            )
            assert ("depth-mismatch" in got) == (share > 0.25)
        else:
            assert "depth-mismatch" not in got
        # v2-inflation: >= 2.0 sends more than 1.2x the reports of < 2.0 at min(level, max level)
        at = min(level, max_level)
        n_v2 = sum(1 for c in tree if tree[c][0] <= at)
        n_v1 = len(
            {
                max((c for c in tree if tree[c][0] <= at and e in tree[c][2]), key=lambda c: tree[c][0])
                for e in clustered
            }
        )
        assert ("v2-inflation" in got) == (n_v2 / n_v1 > 1.2)
        # duplicate-level: every community one level up has exactly one child (same entities here)
        dup = [
            lv
            for lv in range(1, max_level + 1)
            if all(len(children[c]) == 1 for c in tree if tree[c][0] == lv - 1)
        ]
        assert [int(f.evidence["level"]) for f in report.findings if f.rule == "duplicate-level"] == dup
        if extra:
            assert got["unclustered-entities"].evidence["count"] == len(extra)
        # ---- counts
        info = report.index.counts
        assert info.communities == len(tree) and info.reports == len(tree)
        assert info.roots == len(roots) and info.levels == max_level + 1
        for tl in report.tree_levels:
            at = [c for c, (lv, _, _) in tree.items() if lv == tl.level]
            assert tl.communities == len(at)
            assert tl.leaves == sum(1 for c in at if not children[c])
            assert tl.reports == len(at)
            assert tl.entities == len({e for c in at for e in tree[c][2]})
        assert sum(tl.communities for tl in report.tree_levels) == len(tree)
        # ---- what each community_level sends, by brute force
        for r in report.levels:
            n = r.community_level
            s = r.selected
            _check_stats_consistent(s)
            upto = sorted(c for c, (lv, _, _) in tree.items() if n is None or lv <= n)
            v1 = set()
            for e in clustered:  # graphrag < 2.0: the deepest community <= n holding the entity
                holders = [c for c in upto if e in tree[c][2]]
                v1.add(max(holders, key=lambda c: tree[c][0]))
            assert s["v2"].community_ids == upto
            assert s["dynamic"].community_ids == upto
            assert s["v1"].community_ids == sorted(v1)
            assert set(s["v1"].community_ids) <= set(s["v2"].community_ids)  # v1 ⊆ v2 on clean trees
            exact = sorted(c for c, (lv, _, _) in tree.items() if n is None or lv == n)
            assert s["level_only"].community_ids == exact
            up = set(upto)
            anc = sum(1 for c in upto if any(c in _ancestors(tree, k) for k in up))
            assert s["v2"].ancestors_sent == anc
            assert s["v2"].entities_covered == len(clustered)
            assert s["v1"].entities_covered == len(clustered)
        # ---- branch depth
        for row in report.depth.per_level:
            n = row.community_level
            assert row.entities_total == len(clustered)
            assert row.entities_stuck == sum(1 for e in clustered if finest[e] < n)
            assert row.entities_served + row.entities_stuck == row.entities_total
            assert row.roots_reaching == sum(1 for r in roots if deepest[r] >= n)
            assert row.roots_reaching + row.roots_stuck == row.roots_total == len(roots)
        for root in report.depth.roots:
            r, under = root.community, subtree[root.community]
            assert root.level == 0 and root.deepest_level == deepest[r] == root.depth_reached
            assert root.descendants == len(under) - 1
            assert root.entities == len(tree[r][2])  # a clean root holds every entity below it
            leaves = [tree[c][0] for c in under if not children[c]]
            assert dict(root.leaves_per_level) == {str(lv): leaves.count(lv) for lv in set(leaves)}


def test_root_entities_come_from_the_root_level_rows_only():
    """Hand-worked damage: e1 is in root 0 (level 0) and in community 2 (level 1) under root 1.
    A root's entities are those of its own level's membership rows: root 0 holds e1 and e2, root 1
    holds e3 only (the level-1 row of e1 under root 1 is not a root-level row)."""
    tree = {0: (0, -1, ["e1", "e2"]), 1: (0, -1, ["e3"]), 2: (1, 1, ["e1"])}
    tmp, d = _write(Index.base(tree, entities=["e1", "e2", "e3"]))
    with tmp:
        report = audit(d, AuditOptions(level=1, costs=False))
    assert {r.community: r.entities for r in report.depth.roots} == {0: 2, 1: 1}
    assert {r.community: r.descendants for r in report.depth.roots} == {0: 0, 1: 1}


# ---- random damage -------------------------------------------------------------------------------
DAMAGE = [
    "drop_rows",
    "dup_rows",
    "shuffle_parent",
    "null_cells",
    "retype",
    "drop_reports",
    "wrong_level",
    "self_parent",
]


def _apply(idx: Index, op: str, data) -> None:
    comm = idx.communities
    n = len(comm["community"])
    if op in ("drop_rows", "dup_rows", "null_cells", "retype"):
        table = data.draw(st.sampled_from(["communities", "reports", "entities"]), label="table")
        cols = idx.table(table)
        m = len(next(iter(cols.values())))
        if not m:
            return
        rows = data.draw(st.lists(st.integers(0, m - 1), min_size=1, max_size=3), label="rows")
        if op == "drop_rows":
            keep = [i for i in range(m) if i not in set(rows)]
            for k in cols:
                cols[k] = [cols[k][i] for i in keep]
        elif op == "dup_rows":
            for k in cols:
                cols[k] = cols[k] + [cols[k][i] for i in rows]
        else:
            col = data.draw(st.sampled_from(sorted(cols)), label="column")
            if op == "null_cells":
                for i in rows:
                    cols[col][i] = None
            else:
                kind = data.draw(st.sampled_from(["string", "float", "list", "bool"]), label="type")
                vals = cols[col]
                if kind == "string":
                    cols[col] = [None if v is None else str(v) for v in vals]
                    idx.types[(table, col)] = pa.string()
                elif kind == "float":
                    cols[col] = [
                        None if v is None else (float(v) if isinstance(v, (int, float)) else 1.5)
                        for v in vals
                    ]
                    idx.types[(table, col)] = pa.float64()
                elif kind == "list":
                    cols[col] = [None if v is None else [v] for v in vals]
                    idx.types[(table, col)] = None  # inferred
                else:
                    cols[col] = [None if v is None else bool(v) for v in vals]
                    idx.types[(table, col)] = pa.bool_()
    elif op == "shuffle_parent" and n:
        perm = data.draw(st.permutations(list(range(n))), label="perm")
        comm["parent"] = [comm["parent"][i] for i in perm]
    elif op == "drop_reports":
        rep = idx.reports
        keep = data.draw(
            st.lists(st.booleans(), min_size=len(rep["community"]), max_size=len(rep["community"]))
        )
        for k in rep:
            rep[k] = [v for v, kept in zip(rep[k], keep) if kept]
    elif op == "wrong_level" and n:
        i = data.draw(st.integers(0, n - 1))
        comm["level"][i] = data.draw(st.integers(0, 5))
    elif op == "self_parent" and n:
        i = data.draw(st.integers(0, n - 1))
        comm["parent"][i] = comm["community"][i]


def _render_all(report) -> None:
    for fmt, kw in (
        ("text", {"width": 100, "color": True, "focus": 1}),
        ("json", {}),
        ("markdown", {}),
        ("github", {}),
    ):
        try:
            out = render(report, fmt, **kw)
        except ImportError:  # a renderer not written yet
            continue
        assert isinstance(out, str)
        if fmt == "json":
            json.loads(out)


@settings(
    max_examples=80,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    tree=clean_trees(max_roots=3, max_depth=2),
    ops=st.lists(st.sampled_from(DAMAGE), min_size=1, max_size=3),
    data=st.data(),
    level=st.integers(0, 3),
)
def test_damaged_index_audits_or_raises_index_input_error(tree, ops, data, level):
    t, extra = tree
    idx = Index.base(t, entities=sorted({e for _, _, es in t.values() for e in es}) + extra)
    for op in ops:
        _apply(idx, op, data)
    try:
        tmp, d = _write(idx)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return  # damage pyarrow itself cannot write: nothing to read
    with tmp:
        try:
            report = audit(d, AuditOptions(level=level, costs=False))
        except IndexInputError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(str(d))
            event(f"IndexInputError: {exc.problem.split('(')[0][:50]}")
            return
        event("audited")
        _render_all(report)
        for r in report.levels:
            s = r.selected
            _check_stats_consistent(s)
            dyn = set(s["dynamic"].community_ids)
            for b in ("v2", "v1", "level_only"):
                assert set(s[b].community_ids) <= dyn, b  # every behaviour sends reports with level <= N


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(tree=clean_trees(max_roots=3, max_depth=2), data=st.data())
def test_dropped_reports_are_exactly_the_communities_without_report(tree, data):
    t, _ = tree
    idx = Index.base(t)
    keep = data.draw(st.lists(st.booleans(), min_size=len(t), max_size=len(t)))
    dropped = sorted(c for c, k in zip(idx.reports["community"], keep) if not k)
    for col in idx.reports:
        idx.reports[col] = [v for v, k in zip(idx.reports[col], keep) if k]
    tmp, d = _write(idx)
    with tmp:
        report = audit(d, AuditOptions(level=0, costs=False))
        got = {f.rule: f for f in report.findings}
        assert ("community-without-report" in got) == bool(dropped)
        if dropped:
            assert list(got["community-without-report"].communities) == dropped
        # a report-less level 0 (every root dropped) stops dynamic selection
        roots_kept = any(k for c, k in zip(t, keep) if t[c][0] == 0)
        assert ("dynamic-no-level-0-report" in got) == (not roots_kept)  # no reports at all: KeyError too
        for r in report.levels:
            n = r.community_level
            sent = sorted(c for c, k in zip(t, keep) if k and (n is None or t[c][0] <= n))
            assert r.selected["v2"].community_ids == sent


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(tree=clean_trees(max_roots=3, max_depth=2), data=st.data())
def test_duplicated_rows_are_exactly_the_duplicate_communities(tree, data):
    t, _ = tree
    idx = Index.base(t)
    rows = data.draw(st.lists(st.integers(0, len(t) - 1), min_size=1, max_size=3))
    for col in idx.communities:
        idx.communities[col] = idx.communities[col] + [idx.communities[col][i] for i in rows]
    tmp, d = _write(idx)
    with tmp:
        report = audit(d, AuditOptions(level=0, costs=False))
        got = {f.rule: f for f in report.findings}
        expected = sorted({idx.communities["community"][i] for i in rows})
        assert list(got["duplicate-community"].communities) == expected
        assert report.index.counts.communities == len(t) + len(rows)
