"""Mermaid, DOT, GraphML and JSON exports of the community forest.

Mermaid and DOT are checked with tiny parsers written here for exactly the subset export.py
emits: any line outside that subset fails the test, so a title that broke out of its quoted
label would be caught. (No Mermaid parser installs from PyPI: Mermaid is a JavaScript library.
Rendering with the npm package's mermaid.min.js 11 in headless Chromium was checked by hand
during development: the seed gives 7 nodes and 5 edges and HOSTILE's titles show verbatim; it
is not part of the suite, which would otherwise need npm at test time.)
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest
from builders import SEED, write_v3
from conftest import shared_index
from tree_ref import reference_graph

from graphrag_audit.analysis.treeview import build_forest, layout
from graphrag_audit.io.load import load_index
from graphrag_audit.render.graph import to_dot, to_graphml, to_mermaid
from graphrag_audit.render.json import to_json
from graphrag_audit.sanitise.common import plain

REPO = Path(__file__).resolve().parents[2]
SEED_EDGES = {(5, 20), (5, 21), (6, 22), (20, 77), (20, 78)}
HOSTILE = {
    5: 'Say "hi" <script>alert(1)</script> & co',
    20: "#quot; [x] {y} |z| `tick` back\\slash --> end; %% not a comment",
    21: "洁净厂房及其关键设施 \x1b[31mred\x1b[0m\nsecond line",
    77: 'a\\"b \\n c',
    78: "x\ufffey",
}


# ---- the tiny parsers ------------------------------------------------------------------------
def parse_mermaid(text: str) -> dict:
    """flowchart TD|LR; ID["label"]; ID --> ID; ID -.-> ID; classDef NAME STYLE; class IDS NAME;
    one legend: subgraph legend["title"], direction TB, legend_CLASS["label"] nodes, end."""
    lines = text.splitlines()
    m = re.fullmatch(r"flowchart (TD|LR)", lines[0])
    assert m, lines[0]
    nodes, edges, dotted, classes, legend = {}, [], [], {}, {}
    in_legend = False
    for ln in lines[1:]:
        if m := re.fullmatch(r' {4}subgraph legend\["([^"]*)"\]', ln):
            assert not in_legend and "title" not in legend
            in_legend, legend["title"] = True, m.group(1)
        elif in_legend and ln == "        direction TB":
            pass
        elif in_legend and (m := re.fullmatch(r' {8}(legend_\w+)\["([^"]*)"\]', ln)):
            legend[m.group(1)] = m.group(2)
        elif in_legend and ln == "    end":
            in_legend = False
        elif m := re.fullmatch(r' {4}([A-Za-z][\w]*)\["([^"]*)"\]', ln):
            assert m.group(1) not in nodes, f"node defined twice: {ln}"
            nodes[m.group(1)] = m.group(2)
        elif m := re.fullmatch(r" {4}([A-Za-z]\w*) --> ([A-Za-z]\w*)", ln):
            edges.append((m.group(1), m.group(2)))
        elif m := re.fullmatch(r" {4}([A-Za-z]\w*) -\.-> ([A-Za-z]\w*)", ln):
            dotted.append((m.group(1), m.group(2)))
        elif m := re.fullmatch(r" {4}classDef (\w+) [\w:#,.\- ]+", ln):
            pass
        elif m := re.fullmatch(r" {4}class ([\w,]+) (\w+)", ln):
            for n in m.group(1).split(","):
                classes[n] = m.group(2)
        else:
            raise AssertionError(f"line outside the Mermaid subset: {ln!r}")
    assert not in_legend, "subgraph not closed"
    for a, b in edges + dotted:
        assert a in nodes and b in nodes, (a, b)
    for label in [*nodes.values(), *legend.values()]:
        # no raw characters that Mermaid or its HTML labels would interpret
        bare = label.replace("<br/>", "")
        assert not re.search(r'[<>"`]', bare), label
        assert not re.search(r"#(?!quot;|\d+;)", bare), label
    legend_classes = {k: classes.pop(k) for k in list(classes) if k.startswith("legend_")}
    return {
        "nodes": nodes,
        "edges": edges,
        "dotted": dotted,
        "classes": classes,
        "direction": lines[0][-2:],
        "legend": legend,
        "legend_classes": legend_classes,
    }


def mermaid_decode(label: str) -> str:
    return re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), label.replace("#quot;", '"'))


_DQ = r'"(?:[^"\\]|\\.)*"'


def dot_unquote(s: str) -> str:
    assert s[0] == s[-1] == '"'
    out, i, body = [], 0, s[1:-1]
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            nxt = body[i + 1]
            assert nxt in '"\\n', f"unexpected escape \\{nxt} in {s!r}"
            out.append({'"': '"', "\\": "\\", "n": "\n"}[nxt])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def parse_dot(text: str) -> dict:
    lines = text.splitlines()
    assert lines[0] == "digraph communities {" and lines[-1] == "}"
    attr = rf"(\w+)=({_DQ}|[\w.#]+)"
    nodes, edges, legend, graph = {}, [], {}, {}
    in_legend = False
    for ln in lines[1:-1]:
        if m := re.fullmatch(rf" {{4}}(graph|node) \[((?:{attr})(?:, {attr})*)\];", ln):
            if m.group(1) == "graph":
                graph.update(re.findall(attr, m.group(2)))
            continue
        if ln == "    subgraph cluster_legend {":
            assert not in_legend and not legend
            in_legend = True
            continue
        if in_legend:
            if ln == "    }":
                in_legend = False
            elif m := re.fullmatch(rf" {{8}}graph \[((?:{attr})(?:, {attr})*)\];", ln):
                legend["title"] = dot_unquote(dict(re.findall(attr, m.group(1)))["label"])
            else:
                m = re.fullmatch(rf" {{8}}(legend_\w+) \[((?:{attr})(?:, {attr})*)\];", ln)
                assert m, f"line outside the DOT legend subset: {ln!r}"
                legend[m.group(1)] = {
                    k: (dot_unquote(v) if v.startswith('"') else v) for k, v in re.findall(attr, m.group(2))
                }
            continue
        if m := re.fullmatch(rf" {{4}}(\w+) -> (\w+)( \[{attr}(, {attr})*\])?;", ln):
            edges.append((m.group(1), m.group(2)))
            continue
        m = re.fullmatch(rf" {{4}}(\w+) \[((?:{attr})(?:, {attr})*)\];", ln)
        assert m, f"line outside the DOT subset: {ln!r}"
        attrs = {k: (dot_unquote(v) if v.startswith('"') else v) for k, v in re.findall(attr, m.group(2))}
        nodes[m.group(1)] = attrs
    assert not in_legend, "legend not closed"
    return {"nodes": nodes, "edges": edges, "legend": legend, "rankdir": graph.get("rankdir")}


def _cid(node_id: str) -> int:
    assert node_id.startswith("c")
    return int(node_id[1:])


@pytest.fixture()
def seed(tmp_path):
    return load_index(write_v3(tmp_path / "seed", SEED))


@pytest.fixture()
def hostile(tmp_path):
    return load_index(write_v3(tmp_path / "hostile", SEED, report_titles=HOSTILE))


# ---- Mermaid ---------------------------------------------------------------------------------
def test_mermaid_seed_has_7_nodes_and_5_edges(seed):
    parsed = parse_mermaid(to_mermaid(build_forest(seed, 2)))
    assert len(parsed["nodes"]) == 7 and len(parsed["edges"]) == 5
    assert {(_cid(a), _cid(b)) for a, b in parsed["edges"]} == SEED_EDGES
    assert {_cid(n) for n in parsed["nodes"]} == set(SEED)
    # at N=2: 5, 6, 20 only >= 2.0; 21, 22, 77, 78 both (hand-worked in test_treeview.py)
    assert {_cid(n): c for n, c in parsed["classes"].items()} == {
        5: "v2only",
        6: "v2only",
        20: "v2only",
        21: "both",
        22: "both",
        77: "both",
        78: "both",
    }
    assert mermaid_decode(parsed["nodes"]["c20"]) == "20 · level 1 · 2 entities<br/>Report 20"


def test_mermaid_escapes_hostile_titles(hostile):
    parsed = parse_mermaid(to_mermaid(build_forest(hostile, 1)))
    assert len(parsed["nodes"]) == 7 and len(parsed["edges"]) == 5
    for c, title in HOSTILE.items():
        label = parsed["nodes"][f"c{c}"]
        head, _, shown = label.partition("<br/>")
        # export.py puts a zero-width space after each backslash (Mermaid reads "\\n" as a break)
        assert mermaid_decode(shown) == plain(title, 48).replace("\\", "\\\u200b")
    assert "<script>" not in to_mermaid(build_forest(hostile, 1))


def test_cli_tree_mermaid_on_seed(tmp_path):
    idx = write_v3(tmp_path / "seed", SEED)
    res = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "tree", str(idx), "--format", "mermaid"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert res.returncode == 0, res.stderr
    parsed = parse_mermaid(res.stdout)
    assert len(parsed["nodes"]) == 7 and len(parsed["edges"]) == 5
    assert {(_cid(a), _cid(b)) for a, b in parsed["edges"]} == SEED_EDGES


def test_mermaid_of_a_collapsed_view_stays_pasteable():
    model = load_index(shared_index("real-genesis-zh-deep"))
    f = build_forest(model)
    v = layout(f, max_lines=90)
    parsed = parse_mermaid(to_mermaid(f, v))
    rows = [r for r in v.rows if r.kind == "community"]
    more = [r for r in v.rows if r.kind == "more"]
    assert len(parsed["nodes"]) == len(rows) + len(more)
    assert len(parsed["edges"]) == sum(1 for r in rows if r.depth > 0)
    assert len(parsed["dotted"]) == sum(1 for r in more if r.community >= 0)
    assert len(parsed["edges"]) + len(parsed["dotted"]) < 500  # Mermaid's default maxEdges
    # every solid edge is a real parent -> child edge of the tree
    tree = reference_graph(model)
    for a, b in parsed["edges"]:
        assert tree.has_edge(_cid(a), _cid(b))


# ---- DOT ---------------------------------------------------------------------------------
def test_dot_seed_and_hostile_titles(hostile):
    parsed = parse_dot(to_dot(build_forest(hostile, 2)))
    assert len(parsed["nodes"]) == 7 and len(parsed["edges"]) == 5
    assert {(_cid(a), _cid(b)) for a, b in parsed["edges"]} == SEED_EDGES
    for c, title in HOSTILE.items():
        head, shown = parsed["nodes"][f"c{c}"]["label"].split("\n")
        assert head.startswith(f"{c} · level ")
        assert shown == plain(title, 48)
    assert parsed["nodes"]["c5"]["fillcolor"] == "#fd8d3c"  # v2 only at N=2
    assert parsed["nodes"]["c77"]["fillcolor"] == "#74c476"  # both


# ---- GraphML -------------------------------------------------------------------------------
def test_graphml_roundtrip(hostile):
    g = nx.read_graphml(io.BytesIO(to_graphml(build_forest(hostile, 2)).encode("utf-8")))
    assert g.number_of_nodes() == 7 and g.number_of_edges() == 5
    assert {(_cid(a), _cid(b)) for a, b in g.edges} == SEED_EDGES
    for c, title in HOSTILE.items():
        assert g.nodes[f"c{c}"]["title"] == plain(title).replace("\ufffe", "")
    assert g.nodes["c20"]["sent"] == "v2-only" and g.nodes["c78"]["sent"] == "both"
    assert g.nodes["c5"]["entities"] == 3 and g.nodes["c77"]["level"] == 2


# ---- JSON ------------------------------------------------------------------------------------
def test_json_seed(hostile):
    doc = json.loads(to_json(build_forest(hostile, 1)))
    assert doc["community_level"] == 1 and doc["complete"] is True
    assert doc["roots"] == [5, 6]
    comms = {c["community"]: c for c in doc["communities"]}
    assert set(comms) == set(SEED)
    assert {(c["parent"], k) for k, c in comms.items() if c["parent"] >= 0} == SEED_EDGES
    assert {k: c["sent"] for k, c in comms.items()} == {
        5: "v2-only",
        6: "v2-only",
        20: "both",
        21: "both",
        22: "both",
        77: "neither",
        78: "neither",
    }
    assert doc["sent_reports"] == {"v2": 5, "v1": 3}
    assert comms[21]["title"] == plain(HOSTILE[21])
    assert to_json(build_forest(hostile, 1)).isascii()


def test_json_of_a_view_lists_collapsed_groups(seed):
    f = build_forest(seed)
    doc = json.loads(to_json(f, layout(f, max_lines=3)))
    assert doc["complete"] is False
    assert [c["community"] for c in doc["communities"]] == [5, 6, 22]
    assert {c["community"]: c["hidden_below"] for c in doc["communities"]} == {5: 4, 6: 0, 22: 0}


# ---- streamed exports (issue 22: never held whole) ---------------------------------------------
def test_tree_json_is_the_indented_document(hostile, seed):
    """``tree -f json`` is ``json.dumps(indent=2)``'s text of its document, ``##[`` escaped."""
    from graphrag_audit.sanitise.json import json_inert

    for model in (hostile, seed):
        for level in (None, 1):
            forest = build_forest(model, level)
            for view in (None, layout(forest, max_lines=3)):
                text = to_json(forest, view)
                assert text == json_inert(json.dumps(json.loads(text), indent=2, ensure_ascii=True)) + "\n"


def test_tree_export_to_a_file_is_streamed_and_identical(tmp_path, monkeypatch):
    """The CLI writes the exports through its atomic file write: the same bytes as stdout."""
    from typer.testing import CliRunner

    import graphrag_audit.render.cells as chunking
    from graphrag_audit.cli import app

    monkeypatch.setattr(chunking, "CHUNK_CHARS", 64)
    seed = REPO / "fixtures" / "seed-v3"
    for fmt in ("graphml", "json"):
        out = tmp_path / f"tree.{fmt}"
        r = CliRunner().invoke(app, ["tree", str(seed), "--level", "1", "-f", fmt, "-o", str(out)])
        assert r.exit_code == 0, r.output
        r2 = CliRunner().invoke(app, ["tree", str(seed), "--level", "1", "-f", fmt])
        assert r2.exit_code == 0 and out.read_text(encoding="utf-8") == r2.stdout
        assert out.stat().st_size > 64 * 4


# ---- direction, legend, size warning (issue 17) ----------------------------------------------
def test_forests_go_left_to_right_single_trees_top_down(seed):
    f = build_forest(seed, 2)  # roots 5 and 6: a forest
    assert parse_mermaid(to_mermaid(f))["direction"] == "LR"
    assert parse_dot(to_dot(f))["rankdir"] == "LR"
    one = layout(f, root=5)  # the subtree of 5 alone
    assert parse_mermaid(to_mermaid(f, one))["direction"] == "TD"
    assert parse_dot(to_dot(f, one))["rankdir"] == "TB"
    # one root shown, the others collapsed into "… more roots": still several trees
    model = load_index(shared_index("verbs-v3"))
    fv = build_forest(model, 2)
    v = layout(fv, max_lines=4)
    assert sum(1 for r in v.rows if r.kind == "more" and r.community < 0) == 1
    assert parse_mermaid(to_mermaid(fv, v))["direction"] == "LR"


# the seed is a 3.x layout: graphrag < 2.0 cannot read it (graphrag/compat.py), so its side is marked hyp.
LEGEND_WORDS = {
    "both": "sent by graphrag >= 2.0 and < 2.0 (hyp.)",
    "v2only": "sent only by graphrag >= 2.0",
    "v1only": "sent only by graphrag < 2.0 (hyp.)",
    "notsent": "not sent",
    "noreport": "no report",
    "more": "hidden communities (--max-lines, --depth)",
}


def test_mermaid_legend_names_exactly_the_fills_used(seed):
    parsed = parse_mermaid(to_mermaid(build_forest(seed, 2)))
    used = set(parsed["classes"].values())
    assert used == {"v2only", "both"}  # hand-worked in test_mermaid_seed_has_7_nodes_and_5_edges
    assert mermaid_decode(parsed["legend"]["title"]) == "legend: what community_level 2 sends"
    entries = {k: mermaid_decode(v) for k, v in parsed["legend"].items() if k != "title"}
    assert entries == {f"legend_{c}": LEGEND_WORDS[c] for c in used}
    # each legend node carries the class (so the fill) it explains
    assert parsed["legend_classes"] == {f"legend_{c}": c for c in used}


def test_dot_legend_fills_match_the_nodes(seed):
    parsed = parse_dot(to_dot(build_forest(seed, 1)))
    # at N=1: 5, 6 only >= 2.0 (orange), 20, 21, 22 both (green), 77, 78 not sent (grey)
    fills = {parsed["nodes"][f"c{c}"]["fillcolor"] for c in SEED}
    assert fills == {"#fd8d3c", "#74c476", "#d9d9d9"}
    legend = parsed["legend"]
    assert legend.pop("title") == "legend: what community_level 1 sends"
    assert {v["label"]: v["fillcolor"] for v in legend.values()} == {
        LEGEND_WORDS["v2only"]: "#fd8d3c",
        LEGEND_WORDS["both"]: "#74c476",
        LEGEND_WORDS["notsent"]: "#d9d9d9",
    }


def test_no_colour_no_legend_and_hidden_nodes_explained(seed):
    f = build_forest(seed)  # no --level: no fills
    assert parse_mermaid(to_mermaid(f))["legend"] == {}
    assert parse_dot(to_dot(f))["legend"] == {}
    v = layout(f, max_lines=1)  # root 5 and a dashed "… 1 more roots" node: the legend explains it
    parsed = parse_mermaid(to_mermaid(f, v))
    assert {k: mermaid_decode(x) for k, x in parsed["legend"].items()} == {
        "title": "legend",
        "legend_more": LEGEND_WORDS["more"],
    }
    assert parse_dot(to_dot(f, v))["legend"]["legend_more"]["style"] == "dashed"


def test_legend_no_report_entry(tmp_path):
    reports = [(c, lv) for c, (lv, _, _) in SEED.items() if c not in (20, 77)]
    forest = build_forest(load_index(write_v3(tmp_path / "gaps", SEED, reports=reports)), 2)
    parsed = parse_mermaid(to_mermaid(forest))
    assert parsed["classes"]["c20"] == parsed["classes"]["c77"] == "noreport"
    assert mermaid_decode(parsed["legend"]["legend_noreport"]) == "no report"
    assert parsed["legend_classes"]["legend_noreport"] == "noreport"
    dot = parse_dot(to_dot(forest))
    assert dot["nodes"]["c20"]["style"] == dot["legend"]["legend_noreport"]["style"] == "rounded,dashed"


def test_mermaid_size_warning_counts_javascript_characters():
    from graphrag_audit.render.graph import MERMAID_MAX_TEXT, mermaid_size_warning

    head = "flowchart TD\n"
    assert mermaid_size_warning(head + "a" * (MERMAID_MAX_TEXT - len(head))) is None
    assert "50,001 characters" in mermaid_size_warning(head + "a" * (MERMAID_MAX_TEXT - len(head) + 1))
    # an astral character is two UTF-16 units in JavaScript, as Mermaid measures the text
    astral = head + "\U0001f600" * ((MERMAID_MAX_TEXT - len(head)) // 2 + 1)
    assert len(astral) < MERMAID_MAX_TEXT and mermaid_size_warning(astral) is not None
    edges = head + "".join(f"    c{i} --> c{i + 1}\n" for i in range(501))
    assert "501 edges" in mermaid_size_warning(edges)


def test_cli_warns_on_stderr_above_mermaids_limit():
    idx = shared_index("real-genesis-zh-deep")
    res = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "tree", str(idx), "-f", "mermaid", "--max-lines", "0"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert res.returncode == 0, res.stderr
    size = len(res.stdout.encode("utf-16-le")) // 2
    assert size > 50_000
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphrag-audit: warning: the Mermaid diagram has ")
    assert f"{size:,} characters" in lines[0]
    parse_mermaid(res.stdout)  # the diagram itself is still written whole
    small = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "tree", str(idx), "-f", "mermaid"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert small.returncode == 0 and small.stderr == ""
