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
from graphrag_audit.render.graph import to_dot, to_graphml, to_json, to_mermaid
from graphrag_audit.io.load import load_index
from graphrag_audit.sanitise.common import plain
from tree_ref import reference_graph
from graphrag_audit.analysis.treeview import build_forest, layout

REPO = Path(__file__).resolve().parents[1]
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
    """flowchart TD; ID["label"]; ID --> ID; ID -.-> ID; classDef NAME STYLE; class IDS NAME."""
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    nodes, edges, dotted, classes = {}, [], [], {}
    for ln in lines[1:]:
        if m := re.fullmatch(r' {4}([A-Za-z][\w]*)\["([^"]*)"\]', ln):
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
    for a, b in edges + dotted:
        assert a in nodes and b in nodes, (a, b)
    for label in nodes.values():
        # no raw characters that Mermaid or its HTML labels would interpret
        bare = label.replace("<br/>", "")
        assert not re.search(r'[<>"`]', bare), label
        assert not re.search(r"#(?!quot;|\d+;)", bare), label
    return {"nodes": nodes, "edges": edges, "dotted": dotted, "classes": classes}


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
    nodes, edges = {}, []
    for ln in lines[1:-1]:
        if re.fullmatch(rf" {{4}}(graph|node) \[{attr}(, {attr})*\];", ln):
            continue
        if m := re.fullmatch(rf" {{4}}(\w+) -> (\w+)( \[{attr}(, {attr})*\])?;", ln):
            edges.append((m.group(1), m.group(2)))
            continue
        m = re.fullmatch(rf" {{4}}(\w+) \[((?:{attr})(?:, {attr})*)\];", ln)
        assert m, f"line outside the DOT subset: {ln!r}"
        attrs = {k: (dot_unquote(v) if v.startswith('"') else v) for k, v in re.findall(attr, m.group(2))}
        nodes[m.group(1)] = attrs
    return {"nodes": nodes, "edges": edges}


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
        5: "v2only", 6: "v2only", 20: "v2only", 21: "both", 22: "both", 77: "both", 78: "both"}
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
    res = subprocess.run([sys.executable, "-m", "graphrag_audit", "tree", str(idx), "--format", "mermaid"],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
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
        5: "v2-only", 6: "v2-only", 20: "both", 21: "both", 22: "both", 77: "neither", 78: "neither"}
    assert doc["sent_reports"] == {"v2": 5, "v1": 3}
    assert comms[21]["title"] == plain(HOSTILE[21])
    assert to_json(build_forest(hostile, 1)).isascii()


def test_json_of_a_view_lists_collapsed_groups(seed):
    f = build_forest(seed)
    doc = json.loads(to_json(f, layout(f, max_lines=3)))
    assert doc["complete"] is False
    assert [c["community"] for c in doc["communities"]] == [5, 6, 22]
    assert {c["community"]: c["hidden_below"] for c in doc["communities"]} == {5: 4, 6: 0, 22: 0}
