"""``update-run``: previous, delta and merged of one `graphrag update` run audited together
(issue 21). The layouts are generated (tests/synthetic.py) and merged here with pandas the way
graphrag's merge code does; the expectations come from those tables, never from the code under test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import synthetic
from test_update_checks import _graphrag_09_merge

ROOT = Path(__file__).resolve().parents[2]
TS = "20250301-101500"


def _v3_merge(prev: dict, delta: dict) -> dict:
    """graphrag 3.3.0's merge of communities, reports and entities (graphrag/index/update/communities.py
    and entities.py @ v3.3.0), written here again: delta community/parent + old max + 1, children
    left as they were, entities grouped by title keeping the first id."""
    oc, dc = prev["communities"], delta["communities"].copy()
    old_max = int(oc["community"].fillna(0).astype(int).max())
    mapping = {v: v + old_max + 1 for v in dc["community"].dropna().astype(int)}
    mapping[-1] = -1
    dc["community"] = dc["community"].astype(int).apply(lambda x: mapping.get(x, x))
    dc["parent"] = dc["parent"].astype(int).apply(lambda x: mapping.get(x, x))
    dc["period"] = "2025-03-01"
    com = pd.concat([oc, dc], ignore_index=True)
    com["title"] = "Community " + com["community"].astype(str)
    com["human_readable_id"] = com["community"]
    orp, drp = prev["community_reports"], delta["community_reports"].copy()
    drp["community"] = drp["community"].astype(int).apply(lambda x: mapping.get(x, x))
    drp["parent"] = drp["parent"].astype(int).apply(lambda x: mapping.get(x, x))
    rep = pd.concat([orp, drp], ignore_index=True)
    oe, de = prev["entities"], delta["entities"]
    ents = (
        pd.concat([oe, de], ignore_index=True)
        .groupby("title", sort=False)
        .first()
        .reset_index()[list(oe.columns)]
    )
    return {"communities": com, "community_reports": rep, "entities": ents}


def _read(folder: Path) -> dict:
    return {p.stem: pd.read_parquet(p) for p in folder.glob("*.parquet")}


def _write(tables: dict, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        df.to_parquet(folder / f"{name}.parquet", index=False)


@pytest.fixture(scope="module")
def project_v3(tmp_path_factory):
    """A graphrag >= 2.0 project after one update: output/ (merged), update_output/<ts>/{previous,delta}."""
    root = tmp_path_factory.mktemp("proj3")
    run = root / "update_output" / TS
    synthetic.write_index(synthetic.leiden_like(200, seed=5), run / "previous", "3.x", text_units=False)
    synthetic.write_index(synthetic.leiden_like(120, seed=6), run / "delta", "3.x", text_units=False)
    _write(_v3_merge(_read(run / "previous"), _read(run / "delta")), root / "output")
    return root


@pytest.fixture(scope="module")
def project_v1(tmp_path_factory):
    """A graphrag 0.4-1.2 project after one update: output/ (previous, still queried),
    update_output/ (merged) and update_output/delta/."""
    root = tmp_path_factory.mktemp("proj1")
    synthetic.write_index(synthetic.leiden_like(200, seed=7), root / "output", "1.0-1.2", text_units=False)
    synthetic.write_index(
        synthetic.leiden_like(120, seed=8), root / "update_output" / "delta", "1.0-1.2", text_units=False
    )
    merged, _ = _graphrag_09_merge(_read(root / "output"), _read(root / "update_output" / "delta"))
    _write(merged, root / "update_output")
    return root


def _cli(*args, cwd=ROOT):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def _audit(arg) -> dict:
    """The JSON document of ``update-run ARG``, built in-process (the CLI runs in the tests below)."""
    from graphrag_audit.analysis.update_run import audit_update_run
    from graphrag_audit.render.json import render_update_run_json

    return json.loads(render_update_run_json(audit_update_run(arg)))


def _validate(doc: dict) -> None:
    import jsonschema

    schema = json.loads(
        (ROOT / "graphrag_audit" / "schema" / "update-run.schema.json").read_text(encoding="utf-8")
    )
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    assert not errors, [e.message for e in errors]


def _counts(folder: Path, table: str) -> tuple[int, list[int]]:
    com = pd.read_parquet(folder / f"{table}.parquet")
    per = com.groupby("level").size()
    return len(com), [int(per.get(i, 0)) for i in range(int(com["level"].max()) + 1)]


@pytest.mark.parametrize("where", ["root", "update_output", "run"])
def test_v3_run_parts_and_queried_folder(project_v3, where):
    arg = {
        "root": project_v3,
        "update_output": project_v3 / "update_output",
        "run": project_v3 / "update_output" / TS,
    }[where]
    d = _audit(arg)
    _validate(d)
    assert d["schema_version"] == "1.0"
    assert d["layout"] == ">= 2.0" and d["run"] == TS and d["queried"] == "merged"
    parts = {p["role"]: p for p in d["parts"]}
    folders = {
        "previous": project_v3 / "update_output" / TS / "previous",
        "delta": project_v3 / "update_output" / TS / "delta",
        "merged": project_v3 / "output",
    }
    for role, folder in folders.items():
        p = parts[role]
        assert p["status"] == "audited" and Path(p["path"]).resolve() == folder.resolve()
        n, per_level = _counts(folder, "communities")
        assert (p["communities"], p["per_level"]) == (n, per_level)
        assert p["queried"] == (role == "merged")
    # the merge followed graphrag's offset: previous max + 1
    prev = pd.read_parquet(folders["previous"] / "communities.parquet")["community"]
    assert d["offset"]["offset"] == int(prev.max()) + 1 and d["offset"]["holds"]
    assert d["offset"]["found"] == len(pd.read_parquet(folders["merged"] / "communities.parquet"))
    merged_rules = {f["rule"] for f in parts["merged"]["findings"]}
    # graphrag does not remap children, and keeps the delta's entity ids in entity_ids
    assert {"multiple-periods", "children-parent-mismatch"} <= merged_rules
    assert not {f["rule"] for f in parts["previous"]["findings"]} & {
        "multiple-periods",
        "children-parent-mismatch",
        "delta-id-offset",
    }


def test_v3_run_text_says_which_folder_graphrag_queries(project_v3):
    # the un-remapped children lists are a warning: --fail-on warning exits 1
    r = _cli("update-run", str(project_v3), "--fail-on", "warning")
    assert r.returncode == 1, r.stderr
    out = r.stdout
    assert (
        f"graphrag queries: merged ({(project_v3 / 'output').resolve()}" in out
        or f"graphrag queries: merged ({project_v3 / 'output'}" in out
    )
    assert "offset check: delta numbers +" in out and "they match" in out
    assert out.count("<- graphrag queries this") == 1


def test_offset_broken_in_the_merged_table(project_v3, tmp_path):
    import shutil

    root = tmp_path / "p"
    shutil.copytree(project_v3, root)
    com = pd.read_parquet(root / "output" / "communities.parquet")
    late = com["period"] == "2025-03-01"
    com.loc[late, "community"] += 3  # a merge that did not use previous max + 1
    com.to_parquet(root / "output" / "communities.parquet", index=False)
    d = _audit(root)
    prev_max = int(
        pd.read_parquet(root / "update_output" / TS / "previous" / "communities.parquet")["community"].max()
    )
    delta = pd.read_parquet(root / "update_output" / TS / "delta" / "communities.parquet")["community"]
    expected = sorted(set(delta + prev_max + 1))
    got = sorted(set(com.loc[late, "community"]))
    assert not d["offset"]["holds"]
    assert d["offset"]["missing"] == sorted(set(expected) - set(got))[:50]
    assert d["offset"]["extra"] == sorted(set(got) - set(expected))[:50]
    merged = {f["rule"]: f for p in d["parts"] if p["role"] == "merged" for f in p["findings"]}
    assert merged["delta-id-offset"]["evidence"]["runs"][0]["first"] == int(com.loc[late, "community"].min())


def test_legacy_run_queries_the_output_folder(project_v1):
    for arg in (project_v1, project_v1 / "update_output"):
        d = _audit(arg)
        assert d["layout"] == "0.4-1.2" and d["run"] is None and d["queried"] == "previous"
        parts = {p["role"]: p for p in d["parts"]}
        assert Path(parts["previous"]["path"]).resolve() == (project_v1 / "output").resolve()
        assert Path(parts["merged"]["path"]).resolve() == (project_v1 / "update_output").resolve()
        assert Path(parts["delta"]["path"]).resolve() == (project_v1 / "update_output" / "delta").resolve()
        # graphrag < 2.0 offsets by the previous create_final_nodes' maximum
        nodes = pd.read_parquet(project_v1 / "output" / "create_final_nodes.parquet")
        assert d["offset"]["offset_from"] == "create_final_nodes"
        assert d["offset"]["offset"] == int(nodes["community"].max()) + 1 and d["offset"]["holds"]
        # the shifted -1 rows of the delta's nodes
        rules = {f["rule"] for f in parts["merged"]["findings"]}
        assert "membership-level-mismatch" in rules
        assert "membership-level-mismatch" not in {f["rule"] for f in parts["previous"]["findings"]}


def test_missing_part_is_reported_not_run(project_v3, tmp_path):
    import shutil

    root = tmp_path / "p"
    shutil.copytree(project_v3, root)
    shutil.rmtree(root / "update_output" / TS / "delta")
    d = _audit(root / "update_output" / TS)
    _validate(d)
    parts = {p["role"]: p for p in d["parts"]}
    assert parts["delta"]["status"] == "absent"
    assert d["offset"] is None and "delta absent" in d["offset_not_run"]


def test_not_an_update_run_is_exit_2(tmp_path):
    synthetic.write_index(synthetic.leiden_like(50, seed=1), tmp_path / "output", "3.x", text_units=False)
    r = _cli("update-run", str(tmp_path))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "no `graphrag update` run here" in r.stderr


def test_output_never_lands_in_a_part(project_v3):
    target = project_v3 / "update_output" / TS / "delta" / "out.json"
    r = _cli("update-run", str(project_v3), "-f", "json", "-o", str(target))
    assert r.returncode == 2 and not target.exists()


def test_schema_rejects_broken_documents(project_v3):
    import jsonschema

    doc = _audit(project_v3)
    for breakage in (
        lambda d: d.pop("parts"),
        lambda d: d.update(queried="output"),
        lambda d: d["parts"][0].update(status="passed"),
        lambda d: d["offset"].pop("holds"),
    ):
        broken = json.loads(json.dumps(doc))
        breakage(broken)
        with pytest.raises(AssertionError):
            _validate(broken)
    assert jsonschema  # the validator is installed (a dependency of the test suite)


def test_levels_on_a_run_folder_points_at_update_run(project_v3):
    r = _cli("levels", str(project_v3 / "update_output" / TS))
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
    assert "graphrag-audit update-run audits all three together" in r.stderr


# ---- the text at a width, with thousands separators and plurals (issue 38, part 5) ------------------
def _widest(text: str) -> int:
    from graphrag_audit.render.cells import cell_width

    return max(cell_width(line) for line in text.splitlines())


@pytest.mark.parametrize("project", ["project_v3", "project_v1"])
def test_text_follows_width_and_columns(project, request):
    root = request.getfixturevalue(project)
    wide = _cli("update-run", str(root), "--width", "400", "--fail-on", "never")
    assert wide.returncode == 0 and _widest(wide.stdout) > 80  # the layout line, paths and messages need more
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    at_columns = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "update-run", str(root), "--fail-on", "never"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    for r, limit in (
        (at_columns, 80),
        (_cli("update-run", str(root), "--width", "80", "--fail-on", "never"), 80),
        (_cli("update-run", str(root), "--width", "40", "--fail-on", "never"), 40),
    ):
        assert r.returncode == 0, r.stderr
        assert _widest(r.stdout) <= limit, [line for line in r.stdout.splitlines() if len(line) > limit]
        # the same words, only broken into more lines (a path may be cut inside)
        assert "".join(r.stdout.split()) == "".join(wide.stdout.split())


def test_text_counts_read_as_words():
    """A hand-made report: 1 community, 1,234 reports, 1 entity; 1 community number expected."""
    from graphrag_audit.render.text import render_update_run_text
    from graphrag_audit.results.update_run import OffsetCheck, UpdatePart, UpdateRunReport

    parts = (
        UpdatePart(
            "previous",
            "/p",
            False,
            "audited",
            generation="3.x",
            communities=1,
            reports=1234,
            entities=1,
            per_level=(1,),
        ),
        UpdatePart(
            "delta",
            "/d",
            False,
            "audited",
            generation="3.x",
            communities=2345,
            reports=1,
            entities=12345,
            per_level=(1000, 1345),
        ),
        UpdatePart(
            "merged",
            "/m",
            True,
            "audited",
            generation="3.x",
            communities=2346,
            reports=1235,
            entities=12346,
            per_level=(1001, 1345),
        ),
    )
    report = UpdateRunReport(
        "/r",
        ">= 2.0",
        "20250301-101500",
        1,
        "merged",
        2,
        parts,
        OffsetCheck(1, "communities", 1, 1, (), ()),
        "",
    )
    text = render_update_run_text(report, width=200)
    assert "generation 3.x: 1 community (1 per level), 1,234 reports, 1 entity" in text
    assert "generation 3.x: 2,345 communities (1,000/1,345 per level), 1 report, 12,345 entities" in text
    assert "1 community number expected, 1 in the merged table: they match" in text


def test_text_never_starts_a_line_with_a_workflow_command():
    """Paths and messages with '::' (inside a word, or starting one): at every width no line starts
    (after blanks) with '::'."""
    from graphrag_audit.findings import Finding
    from graphrag_audit.render.text import render_update_run_text
    from graphrag_audit.results.update_run import UpdatePart, UpdateRunReport

    bad = "/runs/" + "a" * 9 + "::error::pwned" + "b" * 25
    part = UpdatePart(
        "merged",
        bad,
        True,
        "audited",
        generation="3.x",
        communities=2,
        reports=2,
        findings=(Finding("multiple-periods", "warning", "x " * 20 + "::warning::y and " + bad, (), {}),),
    )
    report = UpdateRunReport(bad, ">= 2.0", None, 1, "merged", 2, (part,), None, "no delta")
    for width in range(40, 90):
        text = render_update_run_text(report, width=width)
        assert not [line for line in text.splitlines() if line.lstrip().startswith("::")], width
