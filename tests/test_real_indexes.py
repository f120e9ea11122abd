"""Every real index in ../shared/indexes: loads, right generation, expected shapes and selections.

Expected selections come from a literal pandas restatement of graphrag's own
``read_indexer_reports`` (3.x for >= 2.0; 1.2 / 0.x for < 2.0), not from the engine.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from conftest import SHARED_INDEXES, real_index_params, shared_index

from graphrag_audit.analysis.audit import AuditOptions, audit, audit_with_model
from graphrag_audit.graphrag.selection import select_all
from graphrag_audit.io.load import load_index


def readme_generations() -> dict[str, str]:
    text = (SHARED_INDEXES / "README.md").read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        m = re.match(r"\|\s*([\w.\-]+)\s*\|\s*([^|]+?)\s*\|", line)
        if m and m.group(1) not in ("folder", "---"):
            gen = m.group(2)
            gen = gen.split("→")[-1].strip().strip("`")
            out[m.group(1)] = gen
    return out


@pytest.mark.parametrize("name", real_index_params())
def test_generation_matches_readme(name):
    model = load_index(shared_index(name))
    assert model.generation.label == readme_generations()[name]
    assert model.generation.evidence


def _graphrag3_reports(folder, n):
    """graphrag 3.x read_indexer_reports, restated with the same pandas operations."""
    comm = (
        pd.read_parquet(folder / "communities.parquet")
        if (folder / "communities.parquet").exists()
        else pd.read_parquet(folder / "create_final_communities.parquet")
    )
    reports = pd.read_parquet(
        folder
        / (
            "community_reports.parquet"
            if (folder / "community_reports.parquet").exists()
            else "create_final_community_reports.parquet"
        )
    )
    nodes = comm.explode("entity_ids")
    if n is not None:
        nodes = nodes[(nodes.level <= n) | nodes.level.isna()]
        reports = reports[(reports.level <= n) | reports.level.isna()]
    nodes = nodes.copy()
    nodes["community"] = nodes["community"].fillna(-1).astype(int)
    kept = nodes.groupby(["title"]).agg({"community": "max"}).reset_index()["community"].drop_duplicates()
    reports = reports.copy()
    reports["community"] = reports["community"].astype(int)
    return sorted(reports.merge(kept, on="community", how="inner")["community"].astype(int).tolist())


def _graphrag1_reports(folder, n):
    """graphrag 1.2 (and 0.x) read_indexer_reports on create_final_nodes, restated in pandas."""
    nodes = pd.read_parquet(folder / "create_final_nodes.parquet", columns=["title", "community", "level"])
    reports = pd.read_parquet(
        folder / "create_final_community_reports.parquet", columns=["community", "level"]
    )
    if n is not None:
        nodes = nodes[nodes.level <= n]
        reports = reports[reports.level <= n]
    nodes = nodes.copy()
    nodes["community"] = nodes["community"].fillna(-1).astype(int)
    kept = nodes.groupby(["title"]).agg({"community": "max"}).reset_index()["community"].drop_duplicates()
    reports = reports.copy()
    reports["community"] = reports["community"].fillna(-1).astype(int)
    return sorted(reports.merge(kept, on="community", how="inner")["community"].tolist())


@pytest.mark.parametrize("name", real_index_params())
def test_selection_equals_graphrag_restatement(name):
    folder = shared_index(name)
    model = load_index(folder)
    if not model.has_reports_table:
        pytest.skip(f"{name} has no community_reports table")
    sel = select_all(model)
    v2_native = "entity_ids" in (
        model.communities.columns.tolist()
        + list(__import__("pyarrow.parquet", fromlist=["x"]).read_schema(model.files["communities"]).names)
        if "communities" in model.files
        else []
    )
    for n in sel:
        if v2_native:
            assert sel[n]["v2"].community_ids(model) == _graphrag3_reports(folder, n), (name, n, "v2")
        if (folder / "create_final_nodes.parquet").exists():
            assert sel[n]["v1"].community_ids(model) == _graphrag1_reports(folder, n), (name, n, "v1")


@pytest.mark.parametrize(
    "name,n,v2,v1,level_only",
    [
        ("verbs-v3", 2, 120, 97, 32),
        ("dulce-v1", 2, 72, 56, 29),
        ("dulce-v3", 2, 10, 9, 0),
    ],
)
def test_published_numbers(name, n, v2, v1, level_only):
    model = load_index(shared_index(name))
    sel = select_all(model)
    level = n if n in sel else None
    got = {b: len(sel[level][b].rows) for b in ("v2", "v1", "level_only")}
    if n not in sel:  # dulce-v3 has levels 0-1; N=2 filters nothing
        got["level_only"] = 0
    assert got == {"v2": v2, "v1": v1, "level_only": level_only}


def test_verbs_v3_tree_shape():
    model, report = audit_with_model(shared_index("verbs-v3"), AuditOptions(costs=False))
    assert [t.communities for t in report.tree_levels] == [23, 65, 32, 2]
    assert [t.leaves for t in report.tree_levels] == [11, 54, 31, 2]
    assert len(model.communities) == 122
    assert report.depth.histogram == {"0": 11, "1": 7, "2": 4, "3": 1}
    row = report.depth.per_level[2]
    assert (row.roots_stuck, row.roots_total) == (18, 23)
    assert "depth-mismatch" in {f.rule for f in report.findings}


@pytest.mark.parametrize(
    "name,rule,check",
    [
        (
            "real-b2b-gaps-v2",
            "community-without-report",
            lambda f: f.evidence["count"] == 65 and f.evidence["per_level"]["0"] == 10,
        ),
        ("real-csekg-v1", "minus-one-report", lambda f: f.communities == (-1,)),
        ("verbs-v0.5", "minus-one-report", lambda f: True),
        ("real-climate-update-v09", "multiple-parents", lambda f: f.evidence["count"] > 0),
        ("real-climate-update-v09", "multiple-periods", lambda f: len(f.evidence["periods"]) == 2),
        ("real-insurance-v3", "community-without-report", lambda f: f.evidence["count"] == 2),
        ("verbs-v3", "unclustered-entities", lambda f: f.evidence["count"] == 25),
        ("real-iswc-v0", "string-community-ids", lambda f: True),
        ("dulce-v0.1-create_final", "v2-unreadable", lambda f: True),
        ("real-genesis-zh-deep", "no-reports-table", lambda f: True),
    ],
)
def test_expected_findings(name, rule, check):
    report = audit(shared_index(name), AuditOptions(costs=False))
    hits = [f for f in report.findings if f.rule == rule]
    assert len(hits) == 1, [f.rule for f in report.findings]
    assert check(hits[0])


@pytest.mark.parametrize("name", real_index_params())
def test_json_validates_against_schema(name):
    jsonschema = pytest.importorskip("jsonschema")
    from importlib import resources

    from graphrag_audit.render import render

    schema = json.loads(
        resources.files("graphrag_audit").joinpath("schema/audit-report.schema.json").read_text()
    )
    out = json.loads(render(audit(shared_index(name), AuditOptions(tokenizer="estimate")), "json"))
    jsonschema.Draft202012Validator(schema).validate(out)
    assert out["index"]["generation"] == readme_generations()[name]
    ns = [lv["community_level"] for lv in out["levels"]]
    assert ns[-1] is None and ns[:-1] == list(range(len(ns) - 1))
    for lv in out["levels"]:
        for b in ("v2", "v1", "level_only"):
            got = lv["selected"][b]
            assert got["community_ids"] == sorted(got["community_ids"]) and got["count"] == len(
                got["community_ids"]
            )
