"""The community forest view (treeview.py) and its terminal rendering (render/text.py).

Expected values are worked by hand on the seed example (docs/graphrag-semantics.md#selection
applied on paper) or recomputed here by plain recursion over the parent -> child edges of the
loaded tree.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from builders import SEED, write_v1, write_v3
from conftest import real_index_params, shared_index
from rich.cells import cell_len
from tree_ref import reference_graph

from graphrag_audit.analysis.treeview import UnknownCommunity, build_forest, layout
from graphrag_audit.io.load import load_index
from graphrag_audit.render.text import fit, render_tree

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd or REPO,
    )


@pytest.fixture()
def seed(tmp_path):
    return load_index(write_v3(tmp_path / "seed", SEED))


# ---- the forest ----------------------------------------------------------------------------
def test_seed_forest_structure(seed):
    f = build_forest(seed)
    assert f.roots == (5, 6)
    got = {
        c: (n.level, n.parent, n.children, n.entities, n.size, n.leaves, n.leaf, n.reports, n.sent)
        for c, n in f.nodes.items()
    }
    assert got == {
        5: (0, -1, (20, 21), 3, 5, 3, False, 1, None),
        6: (0, -1, (22,), 1, 2, 1, False, 1, None),
        20: (1, 5, (77, 78), 2, 3, 2, False, 1, None),
        21: (1, 5, (), 1, 1, 1, True, 1, None),
        22: (1, 6, (), 1, 1, 1, True, 1, None),
        77: (2, 20, (), 1, 1, 1, True, 1, None),
        78: (2, 20, (), 1, 1, 1, True, 1, None),
    }
    assert f.nodes[77].title == "Report 77"  # builders' report titles
    assert f.path_to(78) == [5, 20, 78]


# Hand-worked (docs/graphrag-semantics.md#selection). v2 at N = reports with level <= N. v1 at N = per entity the max
# community number among its rows <= N: N=0 A,B,C->5 D->6; N=1 A,B->20 C->21 D->22;
# N=2 A->77 B->78 C->21 D->22.
SEED_SENT = {
    0: {5: "both", 6: "both", 20: "neither", 21: "neither", 22: "neither", 77: "neither", 78: "neither"},
    1: {5: "v2-only", 6: "v2-only", 20: "both", 21: "both", 22: "both", 77: "neither", 78: "neither"},
    2: {5: "v2-only", 6: "v2-only", 20: "v2-only", 21: "both", 22: "both", 77: "both", 78: "both"},
}


@pytest.mark.parametrize("n", [0, 1, 2])
def test_seed_sent_marks(seed, n):
    f = build_forest(seed, n)
    assert {c: nd.sent for c, nd in f.nodes.items()} == SEED_SENT[n]
    marks = list(SEED_SENT[n].values())
    assert f.sent_reports == {
        "v2": sum(m in ("both", "v2-only") for m in marks),
        "v1": sum(m in ("both", "v1-only") for m in marks),
    }
    assert f.selection_level == n


def test_level_deeper_than_the_index_selects_like_the_deepest(seed):
    f = build_forest(seed, 7)
    assert f.community_level == 7 and f.selection_level == 2
    assert {c: nd.sent for c, nd in f.nodes.items()} == SEED_SENT[2]


def test_v1_only_mark_when_numbers_do_not_grow_with_depth(tmp_path):
    # graphrag 1.x layout whose nodes table puts entity A in community 3 already at level 0
    # and whose report for 3 says level 0, while the communities table has 3 at level 1.
    # N=0: v2 joins reports <= 0 {1, 3} with communities rows <= 0 {1} -> {1};
    #      v1: A's rows <= 0 are 1 and 3 -> max 3; B's only row <= 0 is 1 -> {1, 3}.
    tree = {1: (0, -1, ["A", "B"]), 3: (1, 1, ["A"]), 4: (1, 1, ["B"])}
    nodes = [("A", 1, 0), ("A", 3, 0), ("B", 1, 0), ("A", 3, 1), ("B", 4, 1)]
    model = load_index(write_v1(tmp_path / "v1", tree, reports=[(1, 0), (3, 0), (4, 1)], nodes=nodes))
    f = build_forest(model, 0)
    assert {c: nd.sent for c, nd in f.nodes.items()} == {1: "both", 3: "v1-only", 4: "neither"}
    text = render_tree(layout(f, max_lines=0), width=100)
    assert re.search(r"3 Report 3 .* v1 only\s*$", text, re.M)


def test_reports_outside_the_tree_are_listed(tmp_path):
    # a report for community 9, which has no communities row: neither behaviour sends it
    # (docs/graphrag-semantics.md#inner-join: the inner join drops a report whose community row is missing)
    model = load_index(
        write_v3(tmp_path / "x", SEED, reports=[(c, lv) for c, (lv, _, _) in SEED.items()] + [(9, 1)])
    )
    f = build_forest(model, 1)
    assert [(o.community, o.level) for o in f.outside_reports] == [(9, 1)]
    assert 9 not in f.nodes
    assert f.outside_reports[0].sent == "neither"
    assert "1 report(s) for communities not in the tree: 9 (level 1, not sent)" in render_tree(
        layout(f), width=120
    )


def test_community_without_report(tmp_path):
    model = load_index(write_v3(tmp_path / "x", SEED, reports=[(5, 0), (20, 1), (77, 2)]))
    f = build_forest(model, 2)
    assert not f.nodes[21].has_report and f.nodes[21].title == ""
    assert f.nodes[77].has_report
    text = render_tree(layout(f, max_lines=0), width=100)
    line = next(ln for ln in text.splitlines() if re.search(r"── 21 ", ln))
    assert "(no report)" in line and "both" not in line and "v2 only" not in line


# ---- layout ----------------------------------------------------------------------------------
def _tree_text_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("community · report title"))
    return [
        ln for ln in lines[start + 1 :] if ln and not ln.startswith(("showing ", "parent chain", "1 report"))
    ]


def test_seed_full_layout_is_the_tree_in_order(seed):
    v = layout(build_forest(seed), max_lines=0)
    assert [(r.kind, r.community, r.depth) for r in v.rows] == [
        ("community", 5, 0),
        ("community", 20, 1),
        ("community", 77, 2),
        ("community", 78, 2),
        ("community", 21, 1),
        ("community", 6, 0),
        ("community", 22, 1),
    ]
    assert v.hidden == 0
    text = render_tree(v, width=80)
    rows = _tree_text_lines(text)
    assert [re.sub(r"\s+Report.*", "", r) for r in rows] == [
        "5",
        "├── 20",
        "│   ├── 77",
        "│   └── 78",
        "└── 21",
        "6",
        "└── 22",
    ]


def test_seed_budget_collapses_and_summarises(seed):
    # budget 3: roots 5, 6 take 2 rows; showing 20 would also need a "more" row for 21 (2 rows),
    # 22 fits in the last row. 5 stays collapsed with its 4 descendants hidden.
    v = layout(build_forest(seed), max_lines=3)
    assert [(r.kind, r.community) for r in v.rows] == [("community", 5), ("community", 6), ("community", 22)]
    assert v.rows[0].hidden_below == 4 and v.rows[0].hidden_children == 2
    # budget 4: 20 and the "more" row for 21; that row then stands for one community, which
    # is shown instead (same cost). 20 is collapsed (77, 78 hidden), 6 too (22 hidden).
    v = layout(build_forest(seed), max_lines=4)
    assert [(r.kind, r.community) for r in v.rows] == [
        ("community", 5),
        ("community", 20),
        ("community", 21),
        ("community", 6),
    ]
    assert [r.hidden_below for r in v.rows] == [2, 2, 0, 1]


def test_depth_and_root(seed):
    f = build_forest(seed)
    v = layout(f, depth=1, max_lines=0)
    assert [r.community for r in v.rows] == [5, 20, 21, 6, 22]
    assert v.rows[1].hidden_below == 2  # 77, 78 are below the depth limit
    v = layout(f, root=20, max_lines=0)
    assert [(r.community, r.depth) for r in v.rows] == [(20, 0), (77, 1), (78, 1)]
    assert v.breadcrumb() == [5]
    assert "under 5" in render_tree(v, width=80)
    with pytest.raises(UnknownCommunity):
        layout(f, root=999)


def _children_map(model):
    """Reference parent -> children from the loaded tree, first parent as the documented rule."""
    tree = reference_graph(model)
    kids: dict[int, list[int]] = {int(n): [] for n in tree.nodes}
    for n in tree.nodes:
        preds = list(tree.predecessors(n))
        if preds:
            kids[int(preds[0])].append(int(n))
    return kids


def _subtree(kids, n):
    out, stack = [], [n]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(kids[x])
    return out


@pytest.mark.parametrize("name", real_index_params())
def test_layout_accounts_for_every_community(name):
    """On every real index and several budgets: rows fit the budget, every community in scope
    is shown or counted exactly once by a "more" row or a collapsed row, and rows are a
    depth-first walk of the tree."""
    model = load_index(shared_index(name))
    kids = _children_map(model)
    tree = reference_graph(model)
    multi = any(tree.in_degree(n) > 1 for n in tree.nodes)
    f = build_forest(model)
    for budget, depth in [(5, None), (30, None), (90, None), (0, None), (40, 1), (0, 2)]:
        v = layout(f, max_lines=budget, depth=depth)
        if budget:
            assert len(v.rows) <= max(budget, 1)
        shown = [r.community for r in v.rows if r.kind == "community"]
        assert len(shown) == len(set(shown))
        accounted = len(shown)
        for r in v.rows:
            if r.kind == "more":
                accounted += r.more_communities
            elif r.hidden_children and r.hidden_children == len(f.nodes[r.community].children):
                accounted += r.hidden_below
        assert accounted == len(tree.nodes) == v.in_scope
        if not multi:  # the reference subtree sizes hold where every community has one parent
            for r in v.rows:
                if r.kind == "more" and r.community >= 0:
                    hidden = [k for k in kids[r.community] if k not in set(shown)]
                    assert r.more == len(hidden)
                    assert r.more_communities == sum(len(_subtree(kids, k)) for k in hidden)
                    assert r.more_leaves == sum(1 for k in hidden for x in _subtree(kids, k) if not kids[x])
        # depth-first: a row's parent is the closest earlier row one level up
        stack: list[int] = []
        for r in v.rows:
            del stack[r.depth :]
            if r.kind == "community" and r.depth > 0:
                assert f.nodes[r.community].parent == stack[-1]
            if r.kind == "more" and r.community >= 0:
                assert stack[-1] == r.community
            stack.append(r.community)
            if depth is not None:
                assert r.depth <= depth + (1 if r.kind == "more" else 0)


def test_genesis_default_tree_is_about_100_lines():
    path = shared_index("real-genesis-zh-deep")
    res = run_cli("tree", path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert 80 <= len(lines) <= 105, len(lines)
    model = load_index(path)
    tree = reference_graph(model)
    assert len(tree.nodes) == 1038 and model.max_level == 6
    roots = sorted(int(n) for n in tree.nodes if tree.in_degree(n) == 0)
    body = _tree_text_lines(res.stdout)
    shown_roots = [int(ln.split()[0]) for ln in body if re.match(r"^\d", ln)]
    assert shown_roots == roots  # every root is shown
    # the heavy paths reach the deepest level (6) somewhere in the default view
    assert any(re.search(r"── \d+ .*\s6\s+[\d,]+\s+leaf", ln) for ln in body)
    more = [ln for ln in body if "more communit" in ln]
    assert more, "collapsed siblings are summarised"
    assert "showing " in res.stdout and " of 1,038 communities" in res.stdout


def test_chinese_titles_keep_columns_aligned():
    model = load_index(shared_index("real-cleanroom-specs-zh"))
    f = build_forest(model, 2)
    width = 100
    text = render_tree(layout(f, max_lines=0), width=width)
    rows = [ln for ln in _tree_text_lines(text) if "more communit" not in ln]
    assert len(rows) == 287
    row_re = re.compile(
        r"  +(\d+)  +([\d,]+)  (leaf|▸ [\d,]+ hidden|[\d,]+ hidden| ) *"
        r"(?:  (both|v2 only|v1 only|—))?$"
    )
    ends, wide, cut = set(), 0, 0
    for ln in rows:
        m = row_re.search(ln)
        assert m, ln
        ends.add(cell_len(ln[: m.end(1)]))  # the right edge of the level column, in cells
        assert cell_len(ln) <= width
        left = ln[: m.start()]
        wide += any(cell_len(ch) == 2 for ch in left)
        cut += "…" in left
    assert len(ends) == 1, ends
    assert wide >= 20 and cut >= 20  # the check really covers wide titles, cut and uncut


def test_fit_counts_cells():
    assert fit("洁净厂房", 8) == "洁净厂房"
    assert fit("洁净厂房", 9) == "洁净厂房 "
    assert fit("洁净厂房", 7) == "洁净厂…"  # 3 wide characters (6 cells) + '…' (1 cell)
    assert fit("洁净厂房", 6) == "洁净… "  # 洁净厂 + '…' would be 7 cells: cut one more, pad one
    assert fit("洁净厂房", 5) == "洁净…"
    assert fit("abcdef", 4) == "abc…"
    assert fit("abc", 0) == ""


def test_untrusted_titles_are_neutralised(tmp_path):
    titles = {
        5: "\x1b[31mred\x1b[0m [bold]markup[/bold]\nnext line",
        20: "\u202eevil\u202c bidi",
        77: "tab\there",
    }
    model = load_index(write_v3(tmp_path / "h", SEED, report_titles=titles))
    text = render_tree(layout(build_forest(model, 2), max_lines=0), width=100, color=False)
    assert "\x1b" not in text and "\u202e" not in text and "\t" not in text
    # markup shown literally, one line; ESC and the bidi controls as visible escapes
    assert "\\x1b[31mred\\x1b[0m [bold]markup[/bold] next line" in text
    assert "\\u202eevil\\u202c bidi" in text and "tab here" in text
    assert len(_tree_text_lines(text)) == 7
    coloured = render_tree(layout(build_forest(model, 2), max_lines=0), width=100, color=True)
    assert "\x1b[31m" not in coloured  # only our own styles: the title's escape is gone
    assert "\\x1b[31mred\\x1b[0m [bold]markup[/bold] next line" in coloured


def test_cli_tree_bad_input_is_one_line_exit_2(tmp_path):
    idx = write_v3(tmp_path / "seed", SEED)
    res = run_cli("tree", idx, "--root", "999")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "999" in res.stderr
    res = run_cli("tree", tmp_path / "missing")
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    res = run_cli("tree", idx, "-o", idx / "tree.txt")
    assert res.returncode == 2 and "refusing to write inside the index directory" in res.stderr
    assert not (idx / "tree.txt").exists()
    out = tmp_path / "tree.txt"
    res = run_cli("tree", idx, "--level", "2", "-o", out)
    assert res.returncode == 0 and res.stdout == ""
    assert "community_level 2: graphrag >= 2.0 sends 7 reports, < 2.0 sends hyp. 4" in out.read_text(
        encoding="utf-8"
    )


def test_parent_loop_becomes_an_extra_root(tmp_path):
    # 1 and 2 name each other as parent; 3 -> 4 is a clean root
    tree = {1: (0, 2, ["A"]), 2: (1, 1, ["A"]), 3: (0, -1, ["B"]), 4: (1, 3, ["B"])}
    f = build_forest(load_index(write_v3(tmp_path / "loop", tree)))
    assert f.roots == (3, 1) and f.cycle_roots == (1,)
    assert (f.nodes[1].children, f.nodes[2].children, f.nodes[1].size) == ((2,), (), 2)
    text = render_tree(layout(f, max_lines=0), width=90)
    assert "parent chain loops: shown as extra roots: 1" in text
    assert len(_tree_text_lines(text)) == 4


def test_several_parents_are_kept_and_shown():
    model = load_index(shared_index("real-climate-update-v09"))
    f = build_forest(model)
    tree = reference_graph(model)
    multi = {int(n): [int(p) for p in tree.predecessors(n)] for n in tree.nodes if tree.in_degree(n) > 1}
    assert multi, "this update output has communities under several parents"
    for c, preds in multi.items():
        assert f.nodes[c].parent == preds[0] and list(f.nodes[c].other_parents) == preds[1:]
    c = min(multi)
    text = render_tree(layout(f, root=multi[c][0], max_lines=0), width=140)
    assert f"{c} (also under {', '.join(map(str, multi[c][1:]))})" in text


# ---- hypothetical selections marked hyp. (issue 38 §2) -----------------------------------------
# The seed (SEED_SENT[1]): at N=1 the >= 2.0 rule sends 5 (5, 6, 20, 21, 22), the < 2.0 rule 3 (20, 21, 22).
# Whether a graphrag runs on the layout (graphrag/compat.py, confirmed with the real graphrag): graphrag
# >= 2.0 reads entities/communities/community_reports, so it cannot read the 0.1-0.4 and 1.x layouts;
# graphrag < 2.0 reads create_final_nodes, absent from a 3.x layout (hypothetical); on string ids
# (0.1-0.4) graphrag 1.0-1.2 selects 0 reports.
FIXTURES = REPO / "fixtures"
HYP_HEADER = {
    "seed-v3": (
        "community_level 1: graphrag >= 2.0 sends 5 reports, < 2.0 sends hyp. 3 (both 3, v2 only 2)",
        {"v2": "exact", "v1": "hypothetical"},
    ),
    "seed-v1": (
        "community_level 1: graphrag >= 2.0 cannot read this index (hyp. 5 reports), < 2.0 sends 3 "
        "(both 3, v2 only 2)",
        {"v2": "graphrag_cannot_read", "v1": "exact"},
    ),
    "seed-v01": (
        "community_level 1: graphrag >= 2.0 cannot read this index (hyp. 5 reports), < 2.0 sends 0 "
        "(hyp. 3) (both 3, v2 only 2)",
        {"v2": "graphrag_cannot_read", "v1": "hypothetical"},
    ),
}


@pytest.mark.parametrize("name", sorted(HYP_HEADER))
def test_tree_marks_the_hypothetical_side(name):
    header, status = HYP_HEADER[name]
    forest = build_forest(load_index(FIXTURES / name), 1)
    assert {b: forest.status(b) for b in ("v2", "v1")} == status
    text = render_tree(layout(forest, max_lines=0), width=400)
    assert header in text.splitlines()
    legend = next(ln for ln in text.splitlines() if ln.startswith("N=1 column:"))
    who = [w for b, w in (("v2", ">= 2.0"), ("v1", "< 2.0")) if status[b] != "exact"]
    assert legend.endswith(
        f"hyp. = the rule of graphrag {' and '.join(who)} applied to the rebuilt tree, not "
        f"what {'they send' if len(who) > 1 else 'it sends'} here (levels tells what)"
    )
    from graphrag_audit.render.graph import to_dot, to_mermaid
    from graphrag_audit.render.json import to_json

    doc = json.loads(to_json(forest))
    assert doc["sent_status"] == status and doc["sent_reports"] == {"v2": 5, "v1": 3}
    import jsonschema

    schema = json.loads((REPO / "graphrag_audit" / "schema" / "tree.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)
    dot = to_dot(forest)
    v2 = ">= 2.0 (hyp.)" if status["v2"] != "exact" else ">= 2.0"
    v1 = "< 2.0 (hyp.)" if status["v1"] != "exact" else "< 2.0"
    assert f'label="sent by graphrag {v2} and {v1}"' in dot
    assert f'label="sent only by graphrag {v2}"' in dot
    assert f"sent by graphrag {v2.replace('>', '#62;')} and {v1.replace('<', '#60;')}" in to_mermaid(forest)


def test_tree_without_level_has_no_status(seed):
    from graphrag_audit.render.json import to_json

    forest = build_forest(seed)
    assert forest.outcomes == {} and json.loads(to_json(forest))["sent_status"] is None
