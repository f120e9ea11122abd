"""What graphrag actually does with an index: the per-selection status (exact / hypothetical /
graphrag_cannot_read), the table's markers and footnotes in every format, the JSON status, and
the needs-migration finding.

Expectations come from running the real graphrag on these indexes (graphrag 1.2.0 with pandas
2.3.3, graphrag 3.3.0 with pandas 3.1.1, graphrag 0.3.0; see graphrag_audit/graphrag/compat.py for the
code each fact comes from) or from hand reasoning on the hand-made tables below:

* graphrag 1.2.0's read_indexer_reports selects 0 reports at every level from the three 0.1-0.4
  indexes; graphrag 0.3.0's selects 4/5 (dulce-v0.1), 7/17 (dulce-v0.3), 30/166/268/272
  (real-iswc-v0) at N = 0, 1, (2, 3).
* graphrag 3.3.0's ``graphrag query`` loader raises "Could not find entities.parquet in storage!"
  on dulce-v1, real-csekg-v1 and the 0.1-0.4 indexes; its read_indexer_reports handed
  dulce-v1's create_final_communities selects 10/43/72 at N = 0/1/2, raises TypeError on
  real-csekg-v1 (int32) and KeyError 'entity_ids' on the 0.3-era tables.
* graphrag 1.2.0's loader raises "Could not find create_final_nodes.parquet" on verbs-v3.
"""

from __future__ import annotations

import json
import re
from importlib import resources

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builders import write_v1, write_v3
from conftest import shared_index

from graphrag_audit.analysis.audit import AuditOptions, audit_with_model
from graphrag_audit.analysis.treeview import build_forest
from graphrag_audit.render import render as _render
from graphrag_audit.render.html import render_html

SCHEMA = json.loads(resources.files("graphrag_audit").joinpath("schema/audit-report.schema.json").read_text())


_FORESTS: dict[int, tuple] = {}  # id(report) -> (report, the tree graphrag-audit report draws)


def audit(index, options: AuditOptions):
    """The audit report; :func:`render` draws its HTML tree as ``graphrag-audit report`` does."""
    model, report = audit_with_model(index, options)
    _FORESTS[id(report)] = (report, build_forest(model, options.level, report.selections_by_level()))
    return report


def render(report, fmt: str, **kw) -> str:
    """Every format, html included (``report`` writes it)."""
    if fmt == "html":
        same, forest = _FORESTS[id(report)]
        assert same is report
        return render_html(report, forest)
    return _render(report, fmt, **kw)


def validate(doc: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def as_json(report) -> dict:
    doc = json.loads(render(report, "json"))
    validate(doc)
    return doc


def selected(doc: dict, n, behaviour: str) -> dict:
    return next(lv for lv in doc["levels"] if lv["community_level"] == n)["selected"][behaviour]


def statuses(doc: dict, behaviour: str) -> set[str]:
    return {lv["selected"][behaviour]["status"] for lv in doc["levels"]}


def text_of(report) -> str:
    return render(report, "text", width=240)


def md_level_rows(md: str) -> dict[str, list[str]]:
    """The per-level Markdown table's rows by N (the marker column and bold markers stripped)."""
    out = {}
    lines = md.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("|  | N | ≥2.0 reports"))
    for ln in lines[start + 2 :]:
        if not ln.startswith("|"):
            break
        cells = [c.strip().replace("**", "") for c in ln.strip("|").split("|")][1:]
        out[cells[0]] = cells
    return out


def html_level_rows(html: str) -> dict[str, list[str]]:
    sec = html[html.index('<section id="levels">') :]
    sec = sec[: sec.index("</section>")]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", sec)
    out = {}
    for r in rows[1:]:
        cells = re.findall(r"<td>(.*?)</td>", r)
        out[cells[0]] = cells
    return out


def footnotes(text: str) -> dict[str, str]:
    """Marker -> footnote text, from the lines starting with a superscript marker (a terminal
    wraps a long footnote: its continuation lines are joined until a blank line or the next one)."""
    out, key = {}, None
    for ln in text.splitlines():
        m = re.match(r"^([¹²³⁴⁵⁶⁷⁸⁹]) (.*)", ln.strip())
        if m:
            key = m.group(1)
            out[key] = m.group(2).strip()
        elif key is not None and ln.strip():
            out[key] += " " + ln.strip()
        else:
            key = None
    return out


def html_footnotes(html: str) -> dict[str, str]:
    return dict(re.findall(r'<p class="caption footnote">([¹²³⁴⁵⁶⁷⁸⁹]) (.*?)</p>', html))


# ---- hand-made tables ----------------------------------------------------------------------
def write_v0(out, communities_table: bool = True):
    """A graphrag 0.3-era index: string community ids in create_final_nodes and the reports, a
    communities table with ``id``/``title``/``level`` only (no ``community``, no ``entity_ids``).

    Tree: level 0: "0" = {a, b, c, d}, "1" = {e, f}; level 1: "2" = {a, b}, "3" = {c, d} (children
    of "0"); e and f have no level-1 community (null rows, as 0.x wrote them).
    By hand: graphrag < 2.0's per-entity max (ints) at N=0 keeps {0, 1} (2 reports), at N=1
    {1, 2, 3} (3 reports); the <= N rule sends 2 and 4; graphrag >= 1.0 keeps nothing."""
    out.mkdir(parents=True, exist_ok=True)
    rows = [
        ("a", "0", 0),
        ("b", "0", 0),
        ("c", "0", 0),
        ("d", "0", 0),
        ("e", "1", 0),
        ("f", "1", 0),
        ("a", "2", 1),
        ("b", "2", 1),
        ("c", "3", 1),
        ("d", "3", 1),
        ("e", None, 1),
        ("f", None, 1),
    ]
    pd.DataFrame(
        {
            "level": [r[2] for r in rows],
            "title": [r[0] for r in rows],
            "community": pd.array([r[1] for r in rows], dtype=object),
            "degree": 1,
            "human_readable_id": range(len(rows)),
            "id": [f"n{i}" for i in range(len(rows))],
        }
    ).astype({"community": "string"}).to_parquet(out / "create_final_nodes.parquet", index=False)
    pd.DataFrame(
        {
            "community": ["0", "1", "2", "3"],
            "full_content": ["c0", "c1", "c2", "c3"],
            "level": [0, 0, 1, 1],
            "rank": 5.0,
            "title": ["R0", "R1", "R2", "R3"],
            "summary": "s",
            "id": ["r0", "r1", "r2", "r3"],
        }
    ).to_parquet(out / "create_final_community_reports.parquet", index=False)
    if communities_table:
        pd.DataFrame(
            {"id": ["0", "1", "2", "3"], "title": [f"Community {i}" for i in range(4)], "level": [0, 0, 1, 1]}
        ).to_parquet(out / "create_final_communities.parquet", index=False)
    return out


TREE = {
    0: (0, -1, ["a", "b", "c", "d"]),
    1: (0, -1, ["e", "f"]),
    2: (1, 0, ["a", "b"]),
    3: (1, 0, ["c", "d"]),
}
# by hand: <= N sends 2 (N=0) and 4 (N=1); the < 2.0 frontier 2 and 3


def cast_int32(path, table: str):
    t = pq.read_table(path / table)
    i = t.schema.get_field_index("community")
    pq.write_table(
        t.set_column(i, pa.field("community", pa.int32()), t.column("community").cast(pa.int32())),
        path / table,
    )


# ---- 0.1-0.4: string community ids -----------------------------------------------------------
def test_string_ids_generated_every_format(tmp_path):
    report = audit(write_v0(tmp_path / "v0"), AuditOptions(level=1, costs=False))
    doc = as_json(report)
    assert doc["index"]["generation"] == "0.1-0.4"
    # graphrag 1.0-1.2: 0 reports; the numbers are the frontier graphrag 0.1-0.9 send
    for n, frontier, le_n in ((0, 2, 2), (1, 3, 4), (None, 3, 4)):
        v1, v2 = selected(doc, n, "v1"), selected(doc, n, "v2")
        assert (v1["status"], v1["count"]) == ("hypothetical", frontier)
        assert v1["graphrag_returns"] == {
            "graphrag": "1.0-1.2",
            "count": 0,
            "community_ids": [],
            "error": None,
        }
        assert (v2["status"], v2["count"]) == ("graphrag_cannot_read", le_n)
        assert v2["graphrag_returns"]["count"] is None
        assert v2["graphrag_returns"]["error"] == "ValueError: Could not find entities.parquet in storage!"
        assert "python_api" not in v2  # the Python API fails too (no entity_ids): same status
        assert "KeyError: 'entity_ids'" in v2["status_note"]
        assert selected(doc, n, "level_only")["status"] == "hypothetical"
    rules = {f["rule"] for f in doc["findings"]}
    assert {"string-community-ids", "v2-unreadable", "needs-migration"} <= rules

    text = text_of(report)
    assert "cannot read¹ (hyp. 4)" in text and "0² (hyp. 3)" in text
    notes = footnotes(text)
    assert notes["¹"].startswith("graphrag >= 2.0 cannot read this 0.1-0.4 index as written")
    assert notes["²"].startswith("graphrag 1.0-1.2 selects 0 reports from string community ids")
    # graphrag query 1.x global search stops earlier: its loader also needs create_final_entities
    assert "its loader finds no create_final_entities.parquet" in notes["²"]

    md = render(report, "markdown")
    rows = md_level_rows(md)
    assert rows["1"][1:3] == ["cannot read¹ (hyp. 4)", "0² (hyp. 3)"]
    assert rows["0"][1:3] == ["cannot read¹ (hyp. 2)", "0² (hyp. 2)"]
    md_notes = footnotes(md)
    assert md_notes["¹"].startswith("graphrag &gt;= 2.0 cannot read this 0.1-0.4 index")
    assert md_notes["²"].startswith("graphrag 1.0-1.2 selects 0 reports")

    html = render(report, "html")
    hrows = html_level_rows(html)
    assert hrows["1"][1:3] == ["cannot read¹ (hyp. 4)", "0² (hyp. 3)"]
    hnotes = html_footnotes(html)
    assert hnotes["¹"].startswith("graphrag &gt;= 2.0 cannot read") and hnotes["²"].startswith(
        "graphrag 1.0-1.2"
    )

    gh = render(report, "github").splitlines()[-1]
    assert (
        "graphrag >= 2.0 cannot read this index (its rule: 4, hypothetical), graphrag 1.0-1.2 selects 0 "
        "reports here (its rule: 3, hypothetical)"
    ) in gh


def test_string_ids_without_communities_table_names_the_missing_file(tmp_path):
    report = audit(write_v0(tmp_path / "v0", communities_table=False), AuditOptions(level=1, costs=False))
    v1 = selected(as_json(report), 1, "v1")
    assert v1["status"] == "hypothetical" and v1["graphrag_returns"]["count"] == 0
    # graphrag query 1.2.0's loader: "Could not find create_final_communities.parquet" (dulce-v0.1)
    assert "create_final_communities.parquet" in v1["status_note"]


@pytest.mark.parametrize(
    "name, frontier",
    [
        ("dulce-v0.1-create_final", {0: 4, 1: 5, None: 5}),
        ("dulce-v0.3-create_final", {0: 7, 1: 17, None: 17}),
        ("real-iswc-v0", {0: 30, 1: 166, 2: 268, 3: 272, None: 272}),
    ],
)
def test_string_ids_real(name, frontier):
    report = audit(shared_index(name), AuditOptions(level=1, costs=False))
    doc = as_json(report)
    for n, count in frontier.items():
        v1 = selected(doc, n, "v1")
        # graphrag 0.3.0 selects `count`; graphrag 1.2.0 selects 0
        assert (v1["status"], v1["count"], v1["graphrag_returns"]["count"]) == ("hypothetical", count, 0)
        assert selected(doc, n, "v2")["status"] == "graphrag_cannot_read"
    text = text_of(report)
    assert f"0² (hyp. {frontier[1]})" in text
    assert "needs-migration" in {f["rule"] for f in doc["findings"]}
    # why graphrag query --method global 1.2.0 stops before selecting (run on each index)
    stops = {
        "dulce-v0.1-create_final": "its loader finds no create_final_communities.parquet",
        "dulce-v0.3-create_final": "which this table lacks: AttributeError",
        "real-iswc-v0": "its loader finds no create_final_entities.parquet",
    }[name]
    assert stops in footnotes(text)["²"]
    for fmt in ("markdown", "html"):
        out = render(report, fmt)
        assert f"0² (hyp. {frontier[1]})" in out and "cannot read¹" in out
        assert "² graphrag 1.0-1.2 selects 0 reports" in out


# ---- 1.x layout read by graphrag >= 2.0 ----------------------------------------------------------
def test_v1_layout_generated(tmp_path):
    report = audit(write_v1(tmp_path / "v1", TREE), AuditOptions(level=1, costs=False))
    doc = as_json(report)
    assert doc["index"]["generation"] == "1.0-1.2"
    for n, le_n, frontier in ((0, 2, 2), (1, 4, 3)):
        v2, v1 = selected(doc, n, "v2"), selected(doc, n, "v1")
        assert (v2["status"], v2["count"]) == ("graphrag_cannot_read", le_n)
        assert v2["python_api"] == {"status": "exact"}  # create_final_communities has entity_ids
        assert (v1["status"], v1["count"]) == ("exact", frontier) and "graphrag_returns" not in v1
        assert selected(doc, n, "dynamic")["status"] == "exact"
    mig = [f for f in doc["findings"] if f["rule"] == "needs-migration"]
    assert len(mig) == 1 and mig[0]["severity"] == "warning"
    # graphrag 3.1+'s typed loader: communities and community_reports both need `children`, which 1.x lacks
    assert mig[0]["evidence"]["typed_loader_missing"] == {
        "communities": ["children"],
        "community_reports": ["children"],
    }
    assert "graphrag 3.1+'s typed loader needs communities.children, period and size" in mig[0]["message"]
    assert "index_migration_to_v2" in mig[0]["fix"]

    text = text_of(report)
    assert "cannot read¹ (hyp. 4)" in text
    assert footnotes(text)["¹"].startswith("graphrag >= 2.0 cannot read this 1.0-1.2 index as written")
    assert md_level_rows(render(report, "markdown"))["1"][1:3] == ["cannot read¹ (hyp. 4)", "3"]
    assert html_level_rows(render(report, "html"))["1"][1:3] == ["cannot read¹ (hyp. 4)", "3"]
    assert "graphrag >= 2.0 cannot read this index (its rule: 4, hypothetical)" in render(report, "github")
    # the inflation finding speaks of the rule, not of what graphrag sends
    infl = [f for f in doc["findings"] if f["rule"] == "v2-inflation"]
    assert infl and infl[0]["message"].startswith("at community_level 1, the graphrag >= 2.0 rule selects 4")


def test_dulce_v1_real():
    report = audit(shared_index("dulce-v1"), AuditOptions(level=2, costs=False))
    doc = as_json(report)
    # graphrag 3.3.0's read_indexer_reports on create_final_communities: 10/43/72; graphrag 1.2.0: 10/37/56
    for n, v2c, v1c in ((0, 10, 10), (1, 43, 37), (2, 72, 56)):
        v2, v1 = selected(doc, n, "v2"), selected(doc, n, "v1")
        assert (v2["status"], v2["count"], v2["python_api"]["status"]) == (
            "graphrag_cannot_read",
            v2c,
            "exact",
        )
        assert (v1["status"], v1["count"]) == ("exact", v1c)
    assert "needs-migration" in {f["rule"] for f in doc["findings"]}
    text = text_of(report)
    assert "cannot read¹ (hyp. 72)" in text
    assert "| 2 | cannot read¹ (hyp. 72) | 56 |" in render(report, "markdown").replace("**", "")


# ---- int32 community ids -------------------------------------------------------------------------
def test_int32_v3_layout_generated(tmp_path):
    path = write_v3(tmp_path / "i32", TREE)
    cast_int32(path, "communities.parquet")
    report = audit(path, AuditOptions(level=1, costs=False))
    doc = as_json(report)
    v2 = selected(doc, 1, "v2")
    # graphrag query 3.1+ casts to int64 and selects (3.3.0 on verbs-v3 cast to int32: 23/88/120/122);
    # read_indexer_reports from Python under pandas 3 raises TypeError
    assert (v2["status"], v2["count"]) == ("exact", 4) and "graphrag_returns" not in v2
    assert v2["python_api"]["status"] == "graphrag_cannot_read"
    assert v2["python_api"]["graphrag_returns"]["error"].startswith("TypeError")
    assert "int32-community-ids" in {f["rule"] for f in doc["findings"]}
    assert "needs-migration" not in {f["rule"] for f in doc["findings"]}
    # the v2 count is exact but carries a marker and a footnote; graphrag < 2.0's rule is hypothetical here
    text = text_of(report)
    assert re.search(r"\s4¹\s+hyp\. 3²", text)
    notes = footnotes(text)
    assert notes["¹"].startswith("communities.community is int32: graphrag query 3.1+ casts it to int64")
    assert notes["²"].startswith("hyp. = hypothetical: graphrag < 2.0 cannot read this 3.x index")
    assert md_level_rows(render(report, "markdown"))["1"][1:3] == ["4¹", "hyp. 3²"]
    assert html_level_rows(render(report, "html"))["1"][1:3] == ["4¹", "hyp. 3²"]
    assert "graphrag >= 2.0 sends 4 reports, the graphrag < 2.0 rule selects 3 (hypothetical)" in render(
        report, "github"
    )


def test_int32_v1_layout_generated(tmp_path):
    path = write_v1(tmp_path / "i32", TREE)
    cast_int32(path, "create_final_communities.parquet")
    doc = as_json(audit(path, AuditOptions(level=1, costs=False)))
    v2 = selected(doc, 1, "v2")
    assert v2["status"] == "graphrag_cannot_read"
    assert v2["python_api"]["status"] == "graphrag_cannot_read"
    assert "TypeError under pandas >= 3" in v2["status_note"]


def test_int32_real_csekg():
    report = audit(shared_index("real-csekg-v1"), AuditOptions(level=2, costs=False))
    doc = as_json(report)
    v2, v1 = selected(doc, 2, "v2"), selected(doc, 2, "v1")
    # graphrag 3.3.0 + pandas 3.1.1: TypeError in read_indexer_reports; graphrag 1.2.0: 55 reports at N=2
    assert v2["status"] == "graphrag_cannot_read" and v2["python_api"]["status"] == "graphrag_cannot_read"
    assert (v1["status"], v1["count"]) == ("exact", 55)
    assert "cannot read¹ (hyp. 70)" in text_of(report)


def test_int32_only_in_reports_is_exact():
    """output-pr2160: reports.community int32, communities.community int64: graphrag 3.3.0's
    read_indexer_reports selects 1/1/1 from Python under pandas 3.1.1 (the roll-up writes into
    the communities column only)."""
    doc = as_json(audit(shared_index("output-pr2160"), AuditOptions(costs=False)))
    for lv in doc["levels"]:
        v2 = lv["selected"]["v2"]
        assert (
            (v2["status"], v2["count"]) == ("exact", 1) and "python_api" not in v2 and "status_note" not in v2
        )


# ---- >= 2.0 layouts --------------------------------------------------------------------------------
def test_verbs_v3_v1_is_hypothetical():
    report = audit(shared_index("verbs-v3"), AuditOptions(level=2, costs=False))
    doc = as_json(report)
    assert statuses(doc, "v2") == {"exact"} and statuses(doc, "dynamic") == {"exact"}
    v1 = selected(doc, 2, "v1")
    # graphrag 1.2.0: "Could not find create_final_nodes.parquet in storage!"
    assert (v1["status"], v1["count"]) == ("hypothetical", 97)
    assert (
        v1["graphrag_returns"]["error"] == "ValueError: Could not find create_final_nodes.parquet in storage!"
    )
    assert "needs-migration" not in {f["rule"] for f in doc["findings"]}
    text = text_of(report)
    assert re.search(r"\s120\s+hyp\. 97¹\s", text)


def test_v3_layout_without_typed_columns(tmp_path):
    """communities without children/period/size: graphrag query 3.1+'s typed loader raises KeyError
    (3.3.0 on dulce-v1's tables renamed: KeyError 'children'); graphrag 2.x-3.0 read it."""
    path = write_v3(tmp_path / "bare", TREE)
    c = pd.read_parquet(path / "communities.parquet").drop(columns=["children", "period", "size"])
    c.to_parquet(path / "communities.parquet", index=False)
    report = audit(path, AuditOptions(level=1, costs=False))
    doc = as_json(report)
    v2 = selected(doc, 1, "v2")
    assert v2["status"] == "exact" and "KeyError: 'children'" in v2["status_note"]
    mig = [f for f in doc["findings"] if f["rule"] == "needs-migration"]
    assert len(mig) == 1 and mig[0]["evidence"]["typed_loader_missing"] == {
        "communities": ["children", "period", "size"]
    }
    assert md_level_rows(render(report, "markdown"))["1"][1] == "4¹"


def test_no_reports_table(tmp_path):
    path = write_v3(tmp_path / "norep", TREE)
    (path / "community_reports.parquet").unlink()
    doc = as_json(audit(path, AuditOptions(level=1, costs=False)))
    for b in ("v2", "v1", "dynamic"):
        assert statuses(doc, b) == {"graphrag_cannot_read"}
    assert (
        selected(doc, 1, "v2")["graphrag_returns"]["error"]
        == "ValueError: Could not find community_reports.parquet in storage!"
    )


def test_every_selection_of_every_real_index_has_a_status():
    from conftest import shared_folders

    names = shared_folders()
    if not names:
        pytest.skip("../shared/indexes is absent")
    for name in names:
        doc = as_json(audit(shared_index(name), AuditOptions(costs=False)))
        assert doc["schema_version"] == "1.2"
        gen = doc["index"]["generation"]
        for lv in doc["levels"]:
            s = lv["selected"]
            assert s["level_only"]["status"] == "hypothetical"
            if not doc["index"]["counts"]["reports"]:
                continue
            # graphrag >= 2.0 reads only its own layout; graphrag < 2.0 only create_final_nodes
            assert (s["v2"]["status"] == "exact") is (gen in ("2.x", "3.x")), (name, gen)
            assert (s["v1"]["status"] == "exact") is (gen in ("0.5-0.9", "1.0-1.2")), (name, gen)
