"""--verify against graphrag's own read_indexer_reports, build_community_context and
DynamicCommunitySelection, on every real index.

graphrag is an optional extra and not installed by the test extra. These tests run in the
interpreters listed in GRAPHRAG_VERIFY_PYTHONS (tests/graphrag_side.py), which .ci/run builds with
graphrag 3.3.0, 2.7.2 and 1.2.0; without them they skip, and fail under CI.

Where graphrag raises at a level (an index it cannot read), the level must be reported as
"graphrag_raised", never as agreement, and the audit must have predicted it. The dynamic-selection
comparison (verify.py) must agree at every level the audit simulated for the installed
graphrag's line, in the scenarios none relevant, all relevant and a what-if with non-default
settings, or be a raise the audit predicted (KeyError: '0' without a level-0 report).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import real_index_params, shared_index
from graphrag_side import ROOT, major, need, run_script, run_tool, side_params, versions


def _check_levels(v: dict) -> None:
    """Every level either agrees or is a raise the audit predicted; ``agree`` says which."""
    raised = [r for r in v["levels"] if r["status"] == "graphrag_raised"]
    dynamic_bad = [
        r for r in v["levels"] if r.get("dynamic", {}).get("status") in ("differs", "graphrag_raised")
    ]
    for row in v["levels"]:
        assert row["status"] in ("agrees", "graphrag_raised"), row
        if row["status"] == "graphrag_raised":
            assert row["graphrag_error"] and row["graphrag_count"] is None and not row["agree"], row
            assert row.get("expected", "").startswith("an error"), row  # the audit predicted it
        else:
            assert row["graphrag_count"] == row["audit_count"] and "graphrag_error" not in row, row
            assert not row.get("expected", "").startswith("an error"), row
        q = row.get("graphrag_query")
        if q is not None:  # graphrag query's typed loader: ids cast to int64, so no int32 trap there
            assert q["status"] == "agrees" and q["graphrag_count"] == row["audit_count"], row
    assert v["agree"] is (not raised and not dynamic_bad and all(r["agree"] for r in v["levels"])), v


@pytest.mark.parametrize("python", side_params())
@pytest.mark.parametrize("name", real_index_params())
def test_graphrag_agrees_on_real_index(python, name):
    python = need(python)
    folder = shared_index(name)
    proc = run_tool(
        python, "levels", str(folder), "--verify", "--no-costs", "-f", "json", "--fail-on", "never"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    v = doc["verify"]
    if not v["available"]:
        assert "lacks the tables" in v["reason"], v
        return
    _check_levels(v)
    _check_dynamic(doc, versions(python)[0])


def _expected_family(version: str) -> str | None:
    """The simulated line a graphrag release belongs to (issue 16: 1.1.1-1.2.x, 2.0.0-2.7.2, >= 3.0.0)."""
    v = tuple(int(x) for x in version.split(".")[:3])
    if (1, 1, 1) <= v < (1, 3, 0):
        return "1.x"
    if (2, 0, 0) <= v <= (2, 7, 2):
        return "2.x"
    return "3.x" if v >= (3, 0, 0) else None


def _check_dynamic(doc: dict, graphrag_version: str, num_repeats: int = 1) -> None:
    """graphrag's own DynamicCommunitySelection against the audit's simulation of its line, at every
    level: where the audit simulates this line on this layout the comparison ran and agrees (or graphrag
    raised exactly the error the audit predicted, reported as a raise); elsewhere it is "not run" with a
    reason. The audit's numbers in ``verify`` are the ones the audit reports in ``levels[]``."""
    import jsonschema

    jsonschema.validate(
        doc,
        json.loads(
            (ROOT / "graphrag_audit" / "schema" / "audit-report.schema.json").read_text(encoding="utf-8")
        ),
    )
    v = doc["verify"]
    dyn = v["dynamic"]
    fam = _expected_family(graphrag_version)
    assert dyn["family"] == fam, dyn
    sims = {
        x["community_level"]: (x["selected"]["dynamic"].get("by_version") or {}).get(fam)
        for x in doc["levels"]
    }
    lacks = "lacks the tables" in dyn.get("reason", "")  # e.g. 0.1 layout without create_final_communities
    assert dyn["compared"] is (fam is not None and any(s is not None for s in sims.values()) and not lacks), (
        dyn
    )
    if not dyn["compared"]:
        assert dyn["reason"] and dyn["agree"] is None, dyn
        assert all(r["dynamic"]["status"] == "not_run" for r in v["levels"]), v["levels"]
        return
    assert dyn["settings"]["num_repeats"] == num_repeats
    for row in v["levels"]:
        d, sim = row["dynamic"], sims[row["community_level"]]
        if sim is None:
            assert d["status"] == "not_run" and d["reason"], d
            continue
        if sim["error"]:
            assert d["status"] == "graphrag_raised" and d["expected"] == sim["error"], d
            for sc in d["scenarios"].values():
                assert sc["status"] == "graphrag_raised" and sc["graphrag_error"] == sim["error"], d
            continue
        assert d["status"] == "agrees", (row["community_level"], d)
        assert set(d["scenarios"]) == set(dyn["scenarios"]), d
        for name, sc in d["scenarios"].items():
            audit = sim[name]
            assert sc["status"] == "agrees", (name, sc)
            assert sc["audit_rating_calls"] == audit["rating_calls"] == sc["graphrag_rating_calls"], sc
            assert sc["audit_waves"] == audit["waves"] == sc["graphrag_waves"], sc
            assert sc["audit_kept"] == len(audit["kept_ids"]) == sc["graphrag_kept"], sc
            assert sc["graphrag_rating_calls"] == sum(sc["graphrag_waves"]) * num_repeats, sc
            assert sc["graphrag_waves"][:1] == ([len(sim["start_ids"])] if sim["start_ids"] else []), sc
    statuses = {r["dynamic"]["status"] for r in v["levels"]}
    assert dyn["agree"] is (statuses <= {"agrees", "not_run"} and "agrees" in statuses), dyn
    assert dyn["levels_compared"] == sum(r["dynamic"]["status"] != "not_run" for r in v["levels"])


def _verify_json(python, folder, *extra):
    proc = run_tool(python, "levels", str(folder), "--verify", "-f", "json", "--fail-on", "never", *extra)
    assert proc.returncode == 0, proc.stderr[-2000:]
    v = json.loads(proc.stdout)["verify"]
    return v


@pytest.mark.parametrize("python", side_params())
def test_side_interpreter_runs_this_checkout(python):
    """The side environments have the project installed from wherever .ci/run ran; the tests must
    run this checkout's graphrag_audit in them."""
    python = need(python)
    import subprocess

    from graphrag_side import side_env

    proc = subprocess.run(
        [python, "-c", "import graphrag_audit; print(graphrag_audit.__file__)"],
        cwd=ROOT,
        env=side_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(ROOT / "graphrag_audit" / "__init__.py")


@pytest.mark.parametrize("python", side_params())
@pytest.mark.parametrize("name", real_index_params())
def test_graphrag_map_calls_agree_on_real_index(python, name):
    """With costs (cl100k_base, 12 000 tokens): graphrag's own build_community_context, run as
    global search runs it on graphrag's own selection, gives the audit's map calls at every level,
    batch by batch (reports, tokens counted, text sent)."""
    python = need(python)
    v = _verify_json(python, shared_index(name))
    if not v["available"]:
        assert "lacks the tables" in v["reason"], v
        return
    _check_levels(v)
    mc = v["map_calls"]
    assert mc["compared"], mc
    assert mc["tokenizer"] == "cl100k_base" and mc["max_context_tokens"] == 12000
    for row in v["levels"]:
        if (
            "map_calls_skipped" in row
        ):  # only where graphrag raised or selects another set than the costed one
            assert row["status"] == "graphrag_raised" or row.get("expected"), row
            continue
        assert row["graphrag_map_calls"] == row["audit_map_calls"], row
        assert row["map_calls_agree"] and row["context_tokens_agree"], row
        assert row["batches_agree"] and row["texts_agree"], row
        assert row["agree"] or row["status"] == "graphrag_raised", row
    assert mc["levels_compared"] == sum("map_calls_skipped" not in r for r in v["levels"])


@pytest.mark.parametrize("python", side_params())
def test_map_calls_not_compared_with_the_estimate(python):
    """The byte estimate is no tokenizer graphrag has: the map-call comparison says why it did not run,
    and --verify still compares the selections."""
    python = need(python)
    v = _verify_json(python, shared_index("verbs-v1"), "--tokenizer", "estimate")
    assert v["available"] and v["agree"], v
    assert v["map_calls"]["compared"] is False and "approximation" in v["map_calls"]["reason"]
    assert not any("map_calls_agree" in r for r in v["levels"])


def test_verify_renderers_show_map_call_disagreements(tmp_path):
    """Text and Markdown name the level and the numbers when graphrag's map calls or tokens differ."""
    pytest.importorskip("pandas")
    from builders import SEED, write_v3

    from graphrag_audit.analysis.audit import AuditOptions, audit
    from graphrag_audit.render import render

    report = audit(write_v3(tmp_path / "i", SEED), AuditOptions(costs=False))
    from graphrag_audit.results.verify import (
        LevelCheck,
        MapCallCheck,
        MapCallSummary,
        SelectionCheck,
        VerifyResult,
    )

    def level(n, count, calls, tokens, **kw):
        (g_calls, a_calls), (g_tokens, a_tokens) = calls, tokens
        mc = MapCallCheck(
            audit_map_calls=a_calls,
            audit_context_tokens=a_tokens,
            graphrag_map_calls=g_calls,
            map_calls_agree=g_calls == a_calls,
            graphrag_context_tokens=g_tokens,
            context_tokens_agree=False,
            batches_agree=False,
            **kw,
        )
        return LevelCheck(n, SelectionCheck("agrees", count), audit_count=count, agree=False, map_calls=mc)

    summary = MapCallSummary(
        compared=True, levels_compared=2, tokenizer="cl100k_base", max_context_tokens=12000
    )
    report = report.with_verify(
        VerifyResult(
            available=True,
            graphrag_version="1.2.0",
            behaviour="v1",
            agree=False,
            map_calls=summary,
            levels=(
                level(0, 17, (1, 1), (7441, 7436), first_differing_batch=0),
                level(1, 53, (3, 2), (22572, 22562)),
            ),
        )
    )
    text = render(report, "text", width=400, color=False)
    assert (
        "DISAGREES" in text and "N=0: same 1 map call but graphrag counts 7,441 vs audit 7,436 tokens" in text
    )
    assert "N=1: graphrag 3 vs audit 2 map calls" in text
    md = render(report, "markdown")
    assert "graphrag map calls" in md and "| 3 | 2 |" in md and "22,572" in md
    report = report.with_verify(replace(report.verify, agree=True, levels=()))
    assert (
        "makes the same map calls (same reports, tokens and text in every batch; cl100k_base, 12,000"
        in render(report, "text", width=400, color=False)
    )
    assert (
        "agrees with the graphrag &lt; 2.0 selection at every community_level, and its "
        "build_community_context makes the same map calls"
    ) in render(report, "markdown")


def test_verify_without_graphrag_says_so(tmp_path):
    pytest.importorskip("pandas")
    try:
        import graphrag  # noqa: F401

        pytest.skip("graphrag is installed here")
    except ImportError:
        pass
    from builders import SEED, write_v3

    from graphrag_audit.analysis.audit import AuditOptions, audit_with_model
    from graphrag_audit.verify import verify_with_graphrag

    model, report = audit_with_model(write_v3(tmp_path / "i", SEED), AuditOptions(costs=False))
    v = verify_with_graphrag(report, model)
    assert v.available is False and "not installed" in v.reason


# ---- dynamic community selection: graphrag's own DynamicCommunitySelection ---------------------

#: (index, layout) per graphrag line for the what-if runs: two of each layout
WHAT_IF_INDEXES = {"v2": ("verbs-v3", "real-b2b-gaps-v2"), "v1": ("verbs-v1", "real-textbook-v1")}


def _relevant_sample(folder, seed: int) -> list[int]:
    """A random 30 % of the reports (seeded) plus the deepest one: the what-if relevance set (read with
    the audit in this process; only graphrag needs the side interpreter)."""
    import random

    from graphrag_audit.io.load import load_index

    model = load_index(folder)
    ids = sorted(set(model.reports["community"].astype(int).tolist()) - {-1})
    deepest = max(
        ids, key=lambda c: (int(model.reports.loc[model.reports["community"] == c, "level"].max()), c)
    )
    rng = random.Random(seed)
    return sorted(set(rng.sample(ids, max(1, len(ids) * 3 // 10))) | {deepest})


@pytest.mark.parametrize("python", side_params())
def test_dynamic_what_if_and_settings_agree(python, tmp_path):
    """--relevant (a random 30 % plus one deep report, from a file) with --num-repeats 2, --keep-parent,
    --threshold 3 and --max-level 1: graphrag's selector, given those settings, makes the audit's waves,
    rating calls and kept reports in every scenario, the what-if included, on two indexes of the layout
    this graphrag reads."""
    python = need(python)
    gv = versions(python)[0]
    for k, name in enumerate(WHAT_IF_INDEXES["v2" if major(gv) >= 2 else "v1"]):
        folder = shared_index(name)
        rel = tmp_path / f"relevant-{k}.txt"
        rel.write_text("\n".join(str(c) for c in _relevant_sample(folder, k)), encoding="utf-8")
        proc = run_tool(
            python,
            "levels",
            str(folder),
            "--verify",
            "--no-costs",
            "-f",
            "json",
            "--fail-on",
            "never",
            "--relevant",
            f"@{rel}",
            "--num-repeats",
            "2",
            "--keep-parent",
            "--threshold",
            "3",
            "--max-level",
            "1",
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        doc = json.loads(proc.stdout)
        dyn = doc["verify"]["dynamic"]
        assert dyn["compared"], dyn
        assert dyn["settings"] == {"threshold": 3, "keep_parent": True, "num_repeats": 2, "max_level": 1}, dyn
        assert dyn["scenarios"] == ["none_relevant", "all_relevant", "what_if"], dyn
        _check_dynamic(doc, gv, num_repeats=2)
        assert doc["verify"]["agree"] is True, doc["verify"]
        kept = [
            r["dynamic"]["scenarios"]["what_if"]["graphrag_kept"]
            for r in doc["verify"]["levels"]
            if r["dynamic"]["status"] == "agrees"
        ]
        assert kept and max(kept) > 0, kept  # the what-if keeps something somewhere: not a vacuous run


RENDER_ALL_SCRIPT = r"""
import json, sys
from graphrag_audit.analysis.audit import AuditOptions, audit_with_model
from graphrag_audit.render import render
from graphrag_audit.verify import verify_with_graphrag

model, report = audit_with_model(sys.argv[1], AuditOptions(costs=False))
report = report.with_verify(verify_with_graphrag(report, model))
print(json.dumps({"json": render(report, "json"), "text": render(report, "text", width=400, color=False),
                  "markdown": render(report, "markdown")}))
"""


def _no_level0_index(tmp_path, layout: str):
    from builders import SEED, write_v1, write_v3

    reports = [(c, lv) for c, (lv, _, _) in SEED.items() if lv > 0]
    return (write_v3 if layout == "v2" else write_v1)(tmp_path / "no-level-0", SEED, reports=reports)


@pytest.mark.parametrize("python", side_params())
def test_dynamic_without_level0_report_is_graphrag_raised(python, tmp_path):
    """No report at level 0: graphrag's selector raises KeyError: '0' at every level (every line); the
    audit predicted it, and --verify reports a raise, never agreement, in JSON, text and Markdown."""
    python = need(python)
    gv = versions(python)[0]
    folder = _no_level0_index(tmp_path, "v2" if major(gv) >= 2 else "v1")
    proc = run_script(python, RENDER_ALL_SCRIPT, str(folder))  # one graphrag run, every format
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    doc = json.loads(out["json"])
    v = doc["verify"]
    _check_dynamic(doc, gv)
    assert v["dynamic"]["agree"] is False and v["agree"] is False, v
    for row in v["levels"]:
        d = row["dynamic"]
        assert d["status"] == "graphrag_raised" and d["expected"] == "KeyError: '0'", d
        assert all(sc["graphrag_error"] == "KeyError: '0'" for sc in d["scenarios"].values()), d
        assert row["status"] == "agrees", row  # the static selection is unaffected
    assert (
        "graphrag raised KeyError: '0' at every community_level; the audit predicted KeyError: '0'"
        in out["text"]
    )
    assert "agrees at" not in out["text"].split("verify dynamic:", 1)[1].split("\n\n", 1)[0]
    md = out["markdown"]
    assert "#### Dynamic community selection checked against graphrag's own DynamicCommunitySelection" in md
    assert "**does not select at every community_level**" in md and "| **graphrag raised** |" in md


DIFFERS_SCRIPT = r"""
import dataclasses, json, sys
from graphrag_audit.analysis.audit import AuditOptions, audit_with_model
from graphrag_audit.verify import GraphragDynamic, _read, compare_level, family_of
from importlib.metadata import version

model, report = audit_with_model(sys.argv[1], AuditOptions(costs=False))
fam = family_of(version("graphrag"))[0]
frames = {"reports": _read(model.files["reports"]), "communities": _read(model.files["communities"])}
if "nodes" in model.files:
    frames["nodes"] = _read(model.files["nodes"])
settings = {"threshold": 1, "keep_parent": False, "num_repeats": 1, "max_level": 2}
runner = GraphragDynamic(fam, frames, settings)
row = next(r for r in report.levels if r.community_level == 2)
true = row.selected["dynamic"].by_version.versions[fam]
a = true.all_relevant
wrong = dataclasses.replace(true, all_relevant=dataclasses.replace(
    a, rating_calls=a.rating_calls + 1, waves=a.waves + (1,), kept_ids=tuple(sorted(a.kept_ids + (999999,)))))
print(json.dumps({"right": compare_level(true, runner.run, 2, None).to_dict(),
                  "wrong": compare_level(wrong, runner.run, 2, None).to_dict()}))
"""


@pytest.mark.parametrize("python", side_params())
def test_dynamic_wrong_expectation_differs(python):
    """The comparison is not a rubber stamp: the audit's own expectation agrees with graphrag's selector,
    and the same expectation with one more wave, one more rating call and one extra kept report, fed
    to the comparison directly, is "differs", naming the scenario and the extra report."""
    python = need(python)
    name = "verbs-v3" if major(versions(python)[0]) >= 2 else "verbs-v1"
    proc = run_script(python, DIFFERS_SCRIPT, str(shared_index(name)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["right"]["status"] == "agrees", got["right"]
    wrong = got["wrong"]
    assert wrong["status"] == "differs", wrong
    assert wrong["scenarios"]["none_relevant"]["status"] == "agrees", wrong
    sc = wrong["scenarios"]["all_relevant"]
    assert (
        sc["status"] == "differs" and sc["only_audit_kept"] == [999999] and sc["only_graphrag_kept"] == []
    ), sc
    assert sc["audit_rating_calls"] == sc["graphrag_rating_calls"] + 1, sc
    assert sc["audit_waves"] == sc["graphrag_waves"] + [1], sc


def test_dynamic_comparison_differs_and_raises_without_graphrag():
    """compare_scenario on hand-made results: equal numbers agree; any of waves, calls or kept reports
    off is "differs"; a graphrag error is "graphrag_raised" with the prediction kept; an error the audit
    predicted that graphrag did not raise is "differs"."""
    from graphrag_audit.results.audit import DynamicScenario
    from graphrag_audit.verify import combine, compare_scenario

    audit = DynamicScenario(rating_calls=5, kept_ids=(3, 4), waves=(2, 3))
    same = {"rating_calls": 5, "waves": [2, 3], "kept_ids": [3, 4]}
    assert compare_scenario(audit, same, None).status == "agrees"
    for bad in ({**same, "rating_calls": 6}, {**same, "waves": [3, 2]}, {**same, "kept_ids": [3, 5]}):
        out = compare_scenario(audit, bad, None)
        assert out.status == "differs", (bad, out)
    out = compare_scenario(audit, {**same, "kept_ids": [3, 5]}, None)
    assert out.only_graphrag_kept == (5,) and out.only_audit_kept == (4,)
    raised = compare_scenario(None, {"error": "KeyError: '0'"}, "KeyError: '0'")
    assert raised.to_dict() == {
        "status": "graphrag_raised",
        "graphrag_error": "KeyError: '0'",
        "expected": "KeyError: '0'",
    }
    missed = compare_scenario(None, same, "KeyError: '0'")
    assert missed.status == "differs" and missed.expected_error_not_raised is True
    agrees = compare_scenario(audit, same, None)
    assert combine({"a": agrees, "b": raised}) == "graphrag_raised"
    assert combine({"a": agrees, "b": missed}) == "differs"
    assert combine({"a": agrees}) == "agrees"


@pytest.mark.parametrize(
    "version, family",
    [
        ("1.1.1", "1.x"),
        ("1.2.0", "1.x"),
        ("1.2.2", "1.x"),
        ("2.0.0", "2.x"),
        ("2.7.2", "2.x"),
        ("3.0.0", "3.x"),
        ("3.3.0", "3.x"),
        ("0.5.0", None),
        ("0.9.0", None),
        ("1.0.1", None),
        ("1.1.0", None),
        ("2.8.0", None),
        ("dev", None),
    ],
)
def test_dynamic_family_of_graphrag_release(version, family):
    from graphrag_audit.verify import family_of

    fam, why = family_of(version)
    assert fam == family and (why is None) is (family is not None), (version, fam, why)


@pytest.mark.parametrize(
    "version, why",
    [("1.0.1", "older than 1.1.1"), ("0.5.0", "older than 1.1.1"), ("2.8.0", "does not cover")],
)
def test_dynamic_not_run_for_uncovered_graphrag(tmp_path, version, why):
    """A graphrag line the simulator does not cover: every level "not_run" with the reason, never
    "agrees", and no graphrag code is needed to say so."""
    from builders import SEED, write_v1, write_v3

    from graphrag_audit.analysis.audit import AuditOptions, audit_with_model
    from graphrag_audit.verify import _read, verify_dynamic

    layout = "v1" if version.startswith(("0.", "1.")) else "v2"
    folder = (write_v1 if layout == "v1" else write_v3)(tmp_path / "i", SEED)
    model, report = audit_with_model(folder, AuditOptions(costs=False))
    frames = {k: _read(model.files[f]) for k, f in (("reports", "reports"), ("communities", "communities"))}
    if layout == "v1":
        frames["nodes"] = _read(model.files["nodes"])
    summary, rows = verify_dynamic(report, version, frames)
    assert summary.compared is False and summary.agree is None and why in summary.reason, summary
    assert set(rows) == {r.community_level for r in report.levels}
    assert all(r.status == "not_run" and why in r.reason for r in rows.values()), rows


def test_verify_renderers_show_dynamic_per_level(tmp_path):
    """Text and Markdown show the dynamic comparison level by level: agreement with the rating calls,
    a difference naming the scenario and the numbers, a raise with the prediction, a level not run."""
    pytest.importorskip("pandas")
    from builders import SEED, write_v3

    from graphrag_audit.analysis.audit import AuditOptions, audit
    from graphrag_audit.render import render

    report = audit(write_v3(tmp_path / "i", SEED), AuditOptions(costs=False))
    from graphrag_audit.results.verify import (
        DynamicCheckSummary,
        DynamicLevelCheck,
        DynamicScenarioCheck,
        DynamicSettings,
        LevelCheck,
        MapCallSummary,
        SelectionCheck,
        VerifyResult,
    )

    ok = DynamicScenarioCheck(
        "agrees",
        graphrag_rating_calls=2,
        audit_rating_calls=2,
        graphrag_waves=(2,),
        audit_waves=(2,),
        graphrag_kept=2,
        audit_kept=2,
    )
    bad = DynamicScenarioCheck(
        "differs",
        graphrag_rating_calls=5,
        audit_rating_calls=2,
        graphrag_waves=(2, 3),
        audit_waves=(2,),
        graphrag_kept=3,
        audit_kept=2,
        only_graphrag_kept=(20,),
        only_audit_kept=(),
    )
    err = DynamicScenarioCheck("graphrag_raised", graphrag_error="KeyError: '0'")

    def level(n, dynamic):
        return LevelCheck(n, SelectionCheck("agrees", 2), audit_count=2, agree=True, dynamic=dynamic)

    v = VerifyResult(
        available=True,
        graphrag_version="3.3.0",
        behaviour="v2",
        agree=False,
        map_calls=MapCallSummary(compared=False, reason="costs were not computed (--no-costs)"),
        dynamic=DynamicCheckSummary(
            compared=True,
            agree=False,
            family="3.x",
            graphrag="3.0.0-3.x",
            settings=DynamicSettings(threshold=1, keep_parent=False, num_repeats=1, max_level=2),
            scenarios=("none_relevant", "all_relevant"),
            levels_compared=3,
        ),
        levels=(
            level(0, DynamicLevelCheck("agrees", "3.x", scenarios={"none_relevant": ok, "all_relevant": ok})),
            level(
                1, DynamicLevelCheck("differs", "3.x", scenarios={"none_relevant": ok, "all_relevant": bad})
            ),
            level(
                2,
                DynamicLevelCheck(
                    "graphrag_raised",
                    "3.x",
                    expected="KeyError: '0'",
                    scenarios={"none_relevant": err, "all_relevant": err},
                ),
            ),
            level(None, DynamicLevelCheck("not_run", reason="a deep tree")),
        ),
    )
    report = report.with_verify(v)
    text = " ".join(render(report, "text", width=400, color=False).split())
    assert "verify dynamic: graphrag 3.3.0's DynamicCommunitySelection (the 3.x line" in text
    assert "DISAGREES with the audit's simulation" in text
    assert "N=0 agrees (none relevant 2, all relevant 2 rating calls)" in text
    assert (
        "N=1 DIFFERS: all relevant: graphrag 5 vs audit 2 rating calls; waves [2, 3] vs [2]; kept 3 vs 2 "
        "reports (1 only graphrag's, 0 only the audit's)"
    ) in text
    assert "graphrag raised KeyError: '0' at N=2; the audit predicted KeyError: '0'" in text
    assert "N=None not run (a deep tree)" in text
    # the static selection agreed everywhere: its sentence still says so
    assert "verify: graphrag 3.3.0's read_indexer_reports agrees with the graphrag >= 2.0 selection" in text
    md = render(report, "markdown")
    assert (
        "graphrag 3.3.0's DynamicCommunitySelection" in md
        and "**disagrees** with the audit's simulation" in md
    )
    assert "| 1 | all relevant | **differs** | 5 | 2 | 2, 3 | 2 | 3 | 2 |  |" in md
    assert "| 2 | none relevant | **graphrag raised** | — | — | — | — | — | — | KeyError: '0' |" in md
    assert "| None | — | **not run** |" in md
    not_compared = replace(
        v,
        agree=True,
        dynamic=DynamicCheckSummary(compared=False, agree=None, reason="graphrag 1.0.1 is older"),
        levels=(level(0, DynamicLevelCheck("not_run", reason="graphrag 1.0.1 is older")),),
    )
    report = report.with_verify(not_compared)
    assert "verify dynamic: dynamic selection not compared: graphrag 1.0.1 is older" in " ".join(
        render(report, "text", width=400, color=False).split()
    )
    assert "Not run: graphrag 1.0.1 is older." in render(report, "markdown")
