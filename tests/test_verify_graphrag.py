"""--verify against graphrag's own read_indexer_reports and build_community_context, on every real index.

graphrag is an optional extra and not installed by the test extra. These tests run in the
interpreters listed in GRAPHRAG_VERIFY_PYTHONS (tests/graphrag_side.py), which .ci/run builds with
graphrag 3.3.0 and 1.2.0; without them they skip, and fail under CI.

Where graphrag raises at a level (an index it cannot read), the level must be reported as
"graphrag_raised", never as agreement, and the audit must have predicted it.
"""

from __future__ import annotations

import json

import pytest

from conftest import real_index_params, shared_index
from graphrag_side import ROOT, need, run_tool, side_params


def _check_levels(v: dict) -> None:
    """Every level either agrees or is a raise the audit predicted; ``agree`` says which."""
    raised = [r for r in v["levels"] if r["status"] == "graphrag_raised"]
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
    assert v["agree"] is (not raised and all(r["agree"] for r in v["levels"])), v


@pytest.mark.parametrize("python", side_params())
@pytest.mark.parametrize("name", real_index_params())
def test_graphrag_agrees_on_real_index(python, name):
    python = need(python)
    folder = shared_index(name)
    proc = run_tool(python, "levels", str(folder), "--verify", "--no-costs", "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr[-2000:]
    v = json.loads(proc.stdout)["verify"]
    if not v["available"]:
        assert "lacks the tables" in v["reason"], v
        return
    _check_levels(v)


def _verify_json(python, folder, *extra):
    proc = run_tool(python, "levels", str(folder), "--verify", "-f", "json", "--fail-on", "never", *extra)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)["verify"]


@pytest.mark.parametrize("python", side_params())
def test_side_interpreter_runs_this_checkout(python):
    """The side environments have the project installed from wherever .ci/run ran; the tests must
    run this checkout's graphrag_audit in them."""
    python = need(python)
    import subprocess

    from graphrag_side import side_env

    proc = subprocess.run([python, "-c", "import graphrag_audit; print(graphrag_audit.__file__)"], cwd=ROOT,
                          env=side_env(), capture_output=True, text=True, timeout=120)
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
        if "map_calls_skipped" in row:  # only where graphrag raised or selects another set than the costed one
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
    mc = {"compared": True, "levels_compared": 2, "tokenizer": "cl100k_base", "max_context_tokens": 12000}
    report = report.with_verify({"available": True, "graphrag_version": "1.2.0", "behaviour": "v1", "agree": False,
                     "map_calls": mc, "levels": [
                         {"community_level": 0, "agree": False, "selection_agree": True, "graphrag_count": 17,
                          "audit_count": 17, "graphrag_map_calls": 1, "audit_map_calls": 1,
                          "map_calls_agree": True, "graphrag_context_tokens": 7441, "audit_context_tokens": 7436,
                          "context_tokens_agree": False, "batches_agree": False, "first_differing_batch": 0},
                         {"community_level": 1, "agree": False, "selection_agree": True, "graphrag_count": 53,
                          "audit_count": 53, "graphrag_map_calls": 3, "audit_map_calls": 2,
                          "map_calls_agree": False, "graphrag_context_tokens": 22572,
                          "audit_context_tokens": 22562, "context_tokens_agree": False, "batches_agree": False}]})
    text = render(report, "text", width=400, color=False)
    assert "DISAGREES" in text and "N=0: same 1 map calls but graphrag counts 7,441 vs audit 7,436 tokens" in text
    assert "N=1: graphrag 3 vs audit 2 map calls" in text
    md = render(report, "markdown")
    assert "graphrag map calls" in md and "| 3 | 2 |" in md and "22,572" in md
    report = report.with_verify(dict(report.verify, agree=True, levels=[]))
    assert "makes the same map calls (same reports, tokens and text in every batch; cl100k_base, 12,000" \
        in render(report, "text", width=400, color=False)
    assert ("agrees with the graphrag &lt; 2.0 selection at every community_level, and its "
            "build_community_context makes the same map calls") in render(report, "markdown")


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
    assert v["available"] is False and "not installed" in v["reason"]
