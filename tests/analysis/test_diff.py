"""``diff OLD NEW`` and ``levels --baseline``: expectations computed here, independently of
analysis/diff.py, from the generator's specs (Python sets), the raw tables of a real update, or
the two indexes' own levels JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import synthetic
from builders import write_update_previous
from conftest import FIXTURES, shared_index
from typer.testing import CliRunner

from graphrag_audit.analysis.audit import AuditOptions, audit_with_model
from graphrag_audit.analysis.diff import diff_reports
from graphrag_audit.cli import app

OPTS = AuditOptions(level=2, tokenizer="estimate")
EST = ("--tokenizer", "estimate")
SCHEMA = Path(__file__).resolve().parents[2] / "graphrag_audit" / "schema" / "diff.schema.json"


# ---- brute force -------------------------------------------------------------------------------
def facts(spec) -> dict:
    """community number -> (level, parent, member entity titles, report (title, content))."""
    sets = spec.members_by_number()
    rep = {
        int(c): (str(t), str(fc))
        for c, t, fc in zip(spec.reports["community"], spec.reports["title"], spec.reports["full_content"])
    }
    return {
        int(n): (int(lv), int(p), frozenset(sets.get(int(n), set())), rep.get(int(n)))
        for n, lv, p in zip(
            spec.communities["community"], spec.communities["level"], spec.communities["parent"]
        )
    }


def expected_by_id(old: dict, new: dict) -> tuple[set, set, set]:
    common = old.keys() & new.keys()
    return set(new) - set(old), set(old) - set(new), {c for c in common if old[c] != new[c]}


def ids(x) -> set:
    return set(np.asarray(x.array).tolist()) if hasattr(x, "array") else set(x)


def run_diff(tmp_path, old_spec, new_spec, layout="3.x"):
    a, b = tmp_path / "old", tmp_path / "new"
    synthetic.write_index(old_spec, a, layout)
    synthetic.write_index(new_spec, b, layout)
    om, orep = audit_with_model(a, OPTS)
    nm, nrep = audit_with_model(b, OPTS)
    return diff_reports(om, orep, nm, nrep), orep, nrep


def selected(report, n, b) -> set:
    return set(report.level(n).selected[b].community_ids.tolist())


@pytest.fixture(scope="module")
def base_spec():
    return synthetic.leiden_like(400, seed=3)


def _edit(spec):
    """Known differences: one report rewritten, one leaf removed, one root added, one entity leaves a leaf."""
    s = spec.copy()
    c = s.communities
    leaves = c.loc[~c["community"].isin(c["parent"])]
    deep = leaves.sort_values(["level", "community"]).iloc[-3:]
    rewrite, drop, shrink = (int(x) for x in deep["community"])
    r = s.reports
    r.loc[r["community"] == rewrite, "full_content"] = (
        r.loc[r["community"] == rewrite, "full_content"] + " Revised."
    )
    key_drop = s.key_of(drop)
    s.communities = c.loc[c["community"] != drop].reset_index(drop=True)
    s.membership = s.membership.loc[s.membership["key"] != key_drop].reset_index(drop=True)
    s.reports = r.loc[r["community"] != drop].reset_index(drop=True)
    key_shrink = s.key_of(shrink)
    m = s.membership
    first = m.index[m["key"] == key_shrink][0]
    s.membership = m.drop(index=first).reset_index(drop=True)
    new = int(s.communities["community"].max()) + 1
    key_new = int(max(s.communities["key"].max(), s.membership["key"].max())) + 1
    s.communities = pd.concat(
        [
            s.communities,
            pd.DataFrame(
                {
                    "key": [key_new],
                    "community": [new],
                    "level": [0],
                    "parent": [-1],
                    "period": [s.communities["period"][0]],
                }
            ),
        ],
        ignore_index=True,
    )
    s.membership = pd.concat(
        [s.membership, pd.DataFrame({"key": [key_new] * 3, "entity": [0, 1, 2]})], ignore_index=True
    )
    synthetic._append_report(s, new, 0, "A new community")
    return s, {"rewrite": rewrite, "drop": drop, "shrink": shrink, "new": new}


# ---- generated pairs ---------------------------------------------------------------------------
def test_known_differences_match_the_brute_force_sets(tmp_path, base_spec):
    new_spec, what = _edit(base_spec)
    d, orep, nrep = run_diff(tmp_path, base_spec, new_spec)
    fo, fn = facts(base_spec), facts(new_spec)
    added, removed, changed = expected_by_id(fo, fn)
    assert what["new"] in added and what["drop"] in removed and {what["rewrite"], what["shrink"]} <= changed
    c = d.communities
    assert c.matching == "community_id" and c.entity_key == "title"
    assert (ids(c.added), ids(c.removed), ids(c.changed)) == (added, removed, changed)
    assert c.matched == len(fo.keys() & fn.keys())
    assert c.reasons["report"] == sum(1 for k in fo.keys() & fn.keys() if fo[k][3] != fn[k][3])
    assert c.reasons["members"] == sum(1 for k in fo.keys() & fn.keys() if fo[k][2] != fn[k][2])
    assert not d.unchanged
    for s in d.selections:
        so, sn = (
            selected(orep, s.community_level, s.behaviour),
            selected(nrep, s.community_level, s.behaviour),
        )
        assert ids(s.added) == sn - so and ids(s.removed) == so - sn and ids(s.changed) == sn & so & changed
        assert (s.old.reports, s.new.reports) == (len(so), len(sn))
        o_sel = orep.level(s.community_level).selected[s.behaviour]
        assert (s.old.map_calls, s.old.tokens) == (o_sel.cost.map_calls, o_sel.cost.tokens)
        assert (
            s.new.coverage
            == nrep.level(s.community_level).selected[s.behaviour].entities_covered
            / nrep.index.counts.clustered_entities
        )


def test_report_texts_are_compared_a_block_at_a_time(tmp_path, base_spec, monkeypatch):
    """The matched reports' titles and contents are compared in blocks (bounded memory at 1M):
    with blocks of 3 reports the changed reports are still exactly the brute-force ones."""
    import graphrag_audit.analysis.diff as diff_module

    monkeypatch.setattr(diff_module, "REPORTS_PER_BLOCK", 3)
    new_spec, what = _edit(base_spec)
    d, _, _ = run_diff(tmp_path, base_spec, new_spec)
    fo, fn = facts(base_spec), facts(new_spec)
    assert d.communities.matched > 3 * 10
    assert (
        d.communities.reasons["report"] == sum(1 for k in fo.keys() & fn.keys() if fo[k][3] != fn[k][3]) >= 1
    )
    assert what["rewrite"] in ids(d.communities.changed)


def _permute_within_levels(spec, seed=7):
    """Community numbers reallocated (a bijection within each level, so children keep larger numbers)."""
    s = spec.copy()
    rng = np.random.default_rng(seed)
    perm = {}
    for _lv, grp in s.communities.groupby("level"):
        nums = grp["community"].to_numpy()
        perm.update(zip(nums.tolist(), rng.permutation(nums).tolist()))
    f = np.vectorize(lambda x: perm.get(int(x), int(x)))
    s.communities["community"] = f(s.communities["community"].to_numpy())
    s.communities["parent"] = f(s.communities["parent"].to_numpy())
    s.reports["community"] = f(s.reports["community"].to_numpy())
    return s, perm


def test_reallocated_ids_are_matched_by_member_entities(tmp_path, base_spec):
    new_spec, perm = _permute_within_levels(base_spec)
    moved = sum(1 for k, v in perm.items() if k != v)
    assert moved > len(perm) // 2
    rewrite = max(perm)  # and one report rewritten: the only change
    r = new_spec.reports
    r.loc[r["community"] == perm[rewrite], "full_content"] = (
        r.loc[r["community"] == perm[rewrite], "full_content"] + "!"
    )
    d, orep, nrep = run_diff(tmp_path, base_spec, new_spec)
    fo, fn = facts(base_spec), facts(new_spec)
    # brute force: under the permutation every community keeps level, parent and members
    assert all((fo[k][0], perm.get(fo[k][1], -1), fo[k][2]) == fn[perm[k]][:3] for k in fo)
    c = d.communities
    assert c.matching == "member_entities"
    assert ids(c.added) == set() and ids(c.removed) == set() and ids(c.changed) == {perm[rewrite]}
    assert c.matched == len(fo)
    for s in d.selections:
        so = {perm[x] for x in selected(orep, s.community_level, s.behaviour)}
        sn = selected(nrep, s.community_level, s.behaviour)
        assert so == sn  # the same reports, renumbered
        assert ids(s.added) == set() and ids(s.removed) == set() and ids(s.changed) == sn & {perm[rewrite]}
        assert s.old.reports == s.new.reports and s.old.entities_covered == s.new.entities_covered


def test_entity_names_follow_the_first_entities_row_of_each_id(tmp_path, base_spec):
    """NEW's entities table repeats one id further down under another title, and lacks another
    entity's row. The diff names an entity by the first entities row with its id, so only the
    communities holding the entity without a row change (that member is then compared by its id)."""
    a, b = tmp_path / "old", tmp_path / "new"
    synthetic.write_index(base_spec, a, "3.x")
    synthetic.write_index(base_spec, b, "3.x")
    ent = pq.read_table(b / "entities.parquet")
    twin, gone = 5, 9  # entities rows: one repeated under another title, one removed
    impostor = ent.slice(twin, 1).set_column(
        ent.schema.get_field_index("title"), "title", pa.array(["IMPOSTOR"])
    )
    gone_title = ent.column("title")[gone].as_py()
    keep = np.ones(len(ent), bool)
    keep[gone] = False
    pq.write_table(pa.concat_tables([ent.filter(pa.array(keep)), impostor]), b / "entities.parquet")
    om, orep = audit_with_model(a, OPTS)
    nm, nrep = audit_with_model(b, OPTS)
    d = diff_reports(om, orep, nm, nrep)
    holding = {n for n, titles in base_spec.members_by_number().items() if gone_title in titles}
    assert holding and ids(d.communities.changed) == holding
    assert d.communities.reasons["members"] == len(holding) and d.communities.matching == "community_id"


def test_an_index_against_itself_reports_no_change_every_format(tmp_path):
    bad = synthetic.drop_level0(synthetic.leiden_like(200, seed=5))  # error findings on both sides
    synthetic.write_index(bad, tmp_path / "a", "2.x")
    for fmt in ("text", "json", "markdown", "github"):
        res = CliRunner().invoke(
            app, ["diff", str(tmp_path / "a"), str(tmp_path / "a"), "-f", fmt, "--tokenizer", "estimate"]
        )
        assert res.exit_code == 0, res.output
        if fmt == "json":
            doc = json.loads(res.stdout)
            assert (
                doc["unchanged"] is True and doc["regressions"] == [] and doc["communities"]["changed"] == []
            )
            assert doc["findings"] == {"appeared": [], "disappeared": []}
        else:
            assert "no change" in res.stdout
    # the same index under levels fails on its errors: the diff's exit code reads regressions only
    assert CliRunner().invoke(app, ["levels", str(tmp_path / "a"), "--tokenizer", "estimate"]).exit_code == 1


def test_diff_json_follows_the_shipped_schema_and_fail_on(tmp_path, base_spec):
    jsonschema = pytest.importorskip("jsonschema")
    new_spec, _ = _edit(base_spec)
    big = synthetic.leiden_like(1200, seed=3)
    for name, spec in (("old", base_spec), ("new", new_spec), ("big", big)):
        synthetic.write_index(spec, tmp_path / name, "3.x")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    res = CliRunner().invoke(app, ["diff", str(tmp_path / "old"), str(tmp_path / "big"), "-f", "json", *EST])
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, schema)
    assert doc["schema_version"].split(".")[0] == "1" and doc["kind"] == "diff"
    sel = {(s["community_level"], s["behaviour"]): s for s in doc["selections"]}
    o, n = sel[(2, "v2")]["old"], sel[(2, "v2")]["new"]
    assert n["map_calls"] > o["map_calls"] * 1.1  # three times the entities
    rules = {f["rule"] for f in doc["regressions"]}
    assert "regression-map-calls" in rules and res.exit_code == 1
    assert (
        CliRunner()
        .invoke(app, ["diff", str(tmp_path / "old"), str(tmp_path / "big"), "--fail-on", "never", *EST])
        .exit_code
        == 0
    )
    res = CliRunner().invoke(
        app, ["diff", str(tmp_path / "old"), str(tmp_path / "big"), "-f", "github", *EST]
    )
    assert res.exit_code == 1
    assert any(line.startswith("::error title=regression-map-calls::") for line in res.stdout.splitlines())
    assert str(tmp_path) not in res.stdout  # absolute paths hidden without --include-titles
    res = CliRunner().invoke(
        app, ["diff", str(tmp_path / "old"), str(tmp_path / "big"), "-f", "markdown", *EST]
    )
    assert "| 2 | graphrag &gt;= 2.0 |" in res.stdout and str(tmp_path) not in res.stdout
    res = CliRunner().invoke(
        app,
        [
            "diff",
            str(tmp_path / "old"),
            str(tmp_path / "big"),
            "-f",
            "github",
            "--max-map-calls-increase",
            "100000%",
            "--max-coverage-drop",
            "100",
            *EST,
        ],
    )
    assert not any(line.startswith("::error") for line in res.stdout.splitlines())
    res = CliRunner().invoke(app, ["diff", str(tmp_path / "old"), str(tmp_path / "new"), "-f", "json", *EST])
    jsonschema.validate(json.loads(res.stdout), schema)


# ---- a real update: the merged output of graphrag update against the forest it started from ------
def test_real_update_output_against_its_previous_forest(tmp_path):
    real = shared_index("real-climate-update-v09")
    keep = write_update_previous(real, tmp_path / "previous")
    merged = set(pq.read_table(real / "create_final_communities.parquet").column("community").to_pylist())
    om, orep = audit_with_model(tmp_path / "previous", OPTS)
    nm, nrep = audit_with_model(real, OPTS)
    d = diff_reports(om, orep, nm, nrep)
    c = d.communities
    assert c.matching == "community_id"
    assert ids(c.added) == merged - keep and ids(c.removed) == set()
    back = diff_reports(nm, nrep, om, orep)
    assert ids(back.communities.removed) == merged - keep and ids(back.communities.added) == set()
    # the update's findings (two periods) appear; the reverse diff sees them disappear
    assert "multiple-periods" in {f.rule for f in d.appeared}
    assert "multiple-periods" in {f.rule for f in back.disappeared}
    same = diff_reports(nm, nrep, nm, nrep)
    assert same.unchanged and not same.regressions


# ---- levels --baseline ----------------------------------------------------------------------------
def test_baseline_regressions_are_the_json_differences(tmp_path, base_spec):
    small, big = tmp_path / "small", tmp_path / "big"
    synthetic.write_index(base_spec, small, "3.x")
    synthetic.write_index(synthetic.drop_report(synthetic.leiden_like(1200, seed=3)), big, "3.x")
    r = CliRunner()
    base = tmp_path / "base.json"
    assert (
        r.invoke(
            app, ["levels", str(small), "-f", "json", "-o", str(base), "--fail-on", "never", *EST]
        ).exit_code
        == 0
    )
    cur = json.loads(r.invoke(app, ["levels", str(big), "-f", "json", "--fail-on", "never", *EST]).stdout)
    old = json.loads(base.read_text())
    # expected, from the two documents: map calls and coverage judged only where both say "exact"
    want, hyp = set(), set()
    lo = {x["community_level"]: x["selected"] for x in old["levels"]}
    ln = {x["community_level"]: x["selected"] for x in cur["levels"]}
    for b in ("v2", "v1"):
        into = want if lo[2][b]["status"] == ln[2][b]["status"] == "exact" else hyp
        if ln[2][b]["map_calls"] > lo[2][b]["map_calls"] * 1.10:
            into.add(("regression-map-calls", b))
        co = lo[2][b]["entities_covered"] / old["index"]["counts"]["clustered_entities"]
        cn = ln[2][b]["entities_covered"] / cur["index"]["counts"]["clustered_entities"]
        if cn < co:
            into.add(("regression-coverage", b))
    new_rules = {f["rule"] for f in cur["findings"]} - {f["rule"] for f in old["findings"]}
    want |= {("regression-new-finding", x) for x in new_rules}
    # a 3.x layout: graphrag < 2.0 cannot read it, its numbers are hypothetical
    assert ("regression-map-calls", "v2") in want and new_rules and ("regression-map-calls", "v1") in hyp

    def regression_rules(res):
        return {
            (f["rule"], f["evidence"].get("behaviour") or f["evidence"].get("rule"))
            for f in json.loads(res.stdout)["findings"]
            if f["rule"].startswith("regression-")
        }

    res = r.invoke(app, ["levels", str(big), "--baseline", str(base), "-f", "json", *EST])
    assert regression_rules(res) == want and res.exit_code == 1
    # each hypothetical change is one note on stderr, never a finding
    notes = [line for line in res.stderr.splitlines() if "--baseline:" in line]
    assert sorted(line.split("--baseline: ")[1].split(" ")[0] for line in notes) == sorted(x for x, _b in hyp)
    res = r.invoke(
        app, ["levels", str(big), "--baseline", str(base), "-f", "json", "--include-hypothetical", *EST]
    )
    assert regression_rules(res) == want | hyp and res.exit_code == 1
    # against itself: nothing regressed, exit 0 even though the index has findings
    assert r.invoke(app, ["levels", str(small), "--baseline", str(base), *EST]).exit_code == 0
    res = r.invoke(
        app,
        [
            "levels",
            str(big),
            "--baseline",
            str(base),
            "--max-map-calls-increase",
            "1000000%",
            "--max-coverage-drop",
            "100%",
            "--fail-on",
            "error",
            "-f",
            "github",
            *EST,
        ],
    )
    assert not any(line.startswith("::error title=regression") for line in res.stdout.splitlines())


@pytest.mark.parametrize("kind", ["tree", "major", "garbage", "missing"])
def test_a_foreign_baseline_is_one_line_exit_2(tmp_path, kind):
    seed = FIXTURES / "seed-v3"
    r = CliRunner()
    path = tmp_path / "b.json"
    if kind == "tree":
        path.write_text(r.invoke(app, ["tree", str(seed), "-f", "json"]).stdout)
    elif kind == "major":
        doc = json.loads(r.invoke(app, ["levels", str(seed), "-f", "json"]).stdout)
        doc["schema_version"] = "2.0"
        path.write_text(json.dumps(doc))
    elif kind == "garbage":
        path.write_text("{not json")
    res = r.invoke(app, ["levels", str(seed), "--baseline", str(path)])
    assert res.exit_code == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "Traceback" not in res.stderr


def test_diff_of_a_missing_index_is_one_line_exit_2(tmp_path):
    res = CliRunner().invoke(app, ["diff", str(FIXTURES / "seed-v3"), str(tmp_path / "nowhere")])
    assert res.exit_code == 2 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1 and "nowhere" in res.stderr


def test_the_diff_schema_is_documented_and_valid():
    jsonschema = pytest.importorskip("jsonschema")
    from graphrag_audit.results.diff import DIFF_SCHEMA_VERSION

    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA.read_text(encoding="utf-8")))
    doc = (Path(__file__).resolve().parents[2] / "docs" / "json-schema.md").read_text(encoding="utf-8")
    assert (
        "graphrag_audit/schema/diff.schema.json" in doc
        and f'`schema_version` is `"{DIFF_SCHEMA_VERSION}"`' in doc
    )


@pytest.mark.parametrize("where", ["seed-v01", "seed-v05", "seed-v1", "seed-v3", "seed-v3-csv", "verbs-v0.5"])
def test_every_generation_against_itself_is_unchanged(where):
    """Every layout (string ids, CSV, a report for community -1 that graphrag < 2.0 sends) against itself."""
    path = shared_index(where) if where == "verbs-v0.5" else FIXTURES / where
    m, r = audit_with_model(path, OPTS)
    d = diff_reports(m, r, m, r)
    assert d.unchanged and not d.regressions and d.communities.matching == "community_id"
    if where == "verbs-v0.5":  # the -1 report is sent by graphrag < 2.0 on both sides: not added nor removed
        assert -1 in r.level(2).selected["v1"].community_ids
    else:  # the same worked example in another generation's layout: the same communities
        m3, r3 = audit_with_model(FIXTURES / "seed-v3", OPTS)
        c = diff_reports(m3, r3, m, r).communities
        assert c.matching == "community_id" and c.matched == len(facts(synthetic.seed_example()))
        assert not len(c.added) and not len(c.removed) and not len(c.changed)


def test_the_same_index_as_parquet_and_csv_differs_in_nothing():
    m1, r1 = audit_with_model(FIXTURES / "seed-v3", OPTS)
    m2, r2 = audit_with_model(FIXTURES / "seed-v3-csv", OPTS)
    d = diff_reports(m1, r1, m2, r2)
    assert d.communities.matched == len(facts(synthetic.seed_example())) and d.unchanged


def test_diff_never_writes_inside_either_index(tmp_path):
    synthetic.write_index(synthetic.seed_example(), tmp_path / "new", "3.x")
    before = sorted(p.name for p in (tmp_path / "new").iterdir())
    for inside in (tmp_path / "new" / "diff.json", FIXTURES / "seed-v3" / "diff.json"):
        res = CliRunner().invoke(
            app, ["diff", str(FIXTURES / "seed-v3"), str(tmp_path / "new"), "-f", "json", "-o", str(inside)]
        )
        assert res.exit_code == 2 and "inside the index" in res.stderr and not inside.exists()
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == before
    out = tmp_path / "diff.json"
    res = CliRunner().invoke(
        app, ["diff", str(FIXTURES / "seed-v3"), str(tmp_path / "new"), "-f", "json", "-o", str(out)]
    )
    assert res.exit_code == 0 and json.loads(out.read_text())["unchanged"] is True
