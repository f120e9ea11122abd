"""``diff`` and ``levels --baseline`` at a community_level past one index's deepest level: graphrag
sends there what it sends with no level filter (graphrag/selection.py filters on ``level <= N``
only), so that index's None row is compared, never skipped. The numbers are hand-read from the
indexes' own ``levels -f json`` (default tokenizer, cl100k_base, 12,000-token context):

- dulce-v3 (deepest level 1): N = 1 and None: graphrag >= 2.0 sends 10 reports, 1 map call;
  graphrag < 2.0's rule 9 reports, 1 map call.
- verbs-v3 (deepest level 3): N = 2: graphrag >= 2.0 sends 120 reports in 11 map calls.
- dulce-v1 (deepest level 2): N = 2: graphrag >= 2.0's rule 72 reports (4 map calls),
  graphrag < 2.0 56 reports (3 map calls).
"""

from __future__ import annotations

import json

from conftest import shared_index
from typer.testing import CliRunner

from graphrag_audit.analysis.diff import stands_for
from graphrag_audit.cli import app


def _json(res) -> dict:
    return json.loads(res.stdout)


def _row(doc: dict, n, b) -> dict:
    return next(s for s in doc["selections"] if s["community_level"] == n and s["behaviour"] == b)


def test_stands_for_by_hand():
    levels = [0, 1, None]
    assert [stands_for(n, levels) for n in (0, 1, 2, 7, None)] == [0, 1, None, None, None]
    assert stands_for(2, [0, 1, 2, 3, None]) == 2
    assert stands_for(0, [None]) is None  # an empty tree: every N sends what None sends
    assert stands_for(-1, [0, 1, None]) == -1  # never a row for a level that is not past the deepest


def test_baseline_shallower_than_the_level_is_judged(tmp_path):
    base = tmp_path / "base.json"
    r = CliRunner()
    assert (
        r.invoke(app, ["levels", str(shared_index("dulce-v3")), "-f", "json", "-o", str(base)]).exit_code == 0
    )
    assert not any(row["community_level"] == 2 for row in json.loads(base.read_text())["levels"])
    res = r.invoke(
        app,
        [
            "levels",
            str(shared_index("verbs-v3")),
            "--baseline",
            str(base),
            "--max-map-calls-increase",
            "10%",
            "-f",
            "json",
        ],
    )
    assert res.exit_code == 1, res.stderr
    regs = [f for f in _json(res)["findings"] if f["rule"] == "regression-map-calls"]
    assert [
        (f["severity"], f["evidence"]["behaviour"], f["evidence"]["old"], f["evidence"]["new"]) for f in regs
    ] == [("error", "v2", 1, 11)]


def test_diff_compares_a_level_past_the_tree_as_its_none_row():
    r = CliRunner()
    v3, v1 = str(shared_index("dulce-v3")), str(shared_index("dulce-v1"))
    doc = _json(r.invoke(app, ["diff", v3, v1, "-f", "json", "--fail-on", "never"]))
    s = _row(doc, 2, "v1")
    assert (s["old"]["reports"], s["old"]["map_calls"], s["new"]["reports"], s["new"]["map_calls"]) == (
        9,
        1,
        56,
        3,
    )
    s = _row(doc, 2, "v2")
    assert (s["old"]["reports"], s["old"]["map_calls"], s["new"]["reports"], s["new"]["map_calls"]) == (
        10,
        1,
        72,
        4,
    )
    # both map-call rises are hypothetical on one side (3.x: no graphrag < 2.0; 1.x: no graphrag >= 2.0)
    hyp = sorted(
        (f["evidence"]["behaviour"], f["evidence"]["old"], f["evidence"]["new"])
        for f in doc["hypothetical_changes"]
        if f["rule"] == "regression-map-calls"
    )
    assert hyp == [("v1", 1, 3), ("v2", 1, 4)]
    back = _json(r.invoke(app, ["diff", v1, v3, "-f", "json", "--fail-on", "never"]))
    s = _row(back, 2, "v2")
    assert (s["old"]["reports"], s["new"]["reports"], s["new"]["map_calls"]) == (72, 10, 1)
    text = r.invoke(app, ["diff", v1, v3, "--width", "300", "--fail-on", "never"]).stdout
    level2 = [line for line in text.splitlines() if line.startswith("2 ") and "graphrag" in line]
    assert len(level2) == 2 and not any("—" in line for line in level2), level2
