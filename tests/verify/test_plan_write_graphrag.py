"""Acceptance of ``plan --write`` against the real graphrag (issue 18): for every shared index graphrag
can read, the written directory loaded by graphrag's own code (3.3.0 for >= 2.0 layouts, parquet and
CSV; 1.2.0 for create_final_* layouts) selects exactly the planned reports at community_level=None and
at the printed --community-level, and graphrag's own ``build_community_context`` makes the planned
number of map calls. One side-interpreter subprocess per graphrag line runs every index
(tests/plan_write_runner.py); the shared indexes graphrag cannot be handed a plan from are listed with
the reason, and tests/io/test_plan_write.py checks that --write refuses them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import shared_index
from graphrag_side import ROOT, major, need, side_env, side_params, versions

# graphrag >= 2.0 layouts: the 3.x line reads them (graphrag query's DataReader over the table provider)
V2 = [
    "dulce-v2plus",
    "output-pr2160",
    "verbs-v2",
    "real-b2b-gaps-v2",
    "real-cleanroom-specs-zh",
    "real-technip-safety-v2",
    "dulce-v3",
    "verbs-v3",
    "real-insurance-v3",
    "real-datasaur-medical-v3",
]
V2_CSV = ["verbs-v3"]  # rewritten as CSV first, as graphrag 3.x's CSVTableProvider writes tables
# create_final_* layouts with integer community ids: graphrag 1.2.0's query reads them
V1 = ["dulce-v1", "verbs-v1", "real-textbook-v1", "real-golf-zh-v1", "verbs-v0.5", "real-csekg-v1"]
# why no plan can be handed to graphrag from these (tests/io/test_plan_write.py: --write refuses each)
NOT_HANDED = {
    "real-genesis-zh-deep": "no community_reports table",
    "real-ralad-large": "no community_reports table",
    "real-climate-update-v09": "the planner refuses it: communities under several parents",
    "dulce-v0.1-create_final": "no communities table (and string community ids)",
    "dulce-v0.3-create_final": "string community ids",
    "real-iswc-v0": "string community ids",
}


def test_every_shared_index_is_accounted_for():
    root = shared_index("verbs-v3").parent
    names = {p.name for p in root.iterdir() if p.is_dir()}
    assert names == set(V2) | set(V1) | set(NOT_HANDED), names ^ (set(V2) | set(V1) | set(NOT_HANDED))


def _run(python: str, specs: list[str], tmp_path: Path) -> list[dict]:
    out = tmp_path / "result.json"
    proc = subprocess.run(
        [python, str(ROOT / "tests" / "plan_write_runner.py"), str(tmp_path / "work"), str(out), *specs],
        cwd=ROOT,
        env=side_env(),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0 and out.exists(), proc.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("python", side_params())
def test_graphrag_selects_the_written_plan(python, tmp_path):
    python = need(python)
    m = major(versions(python)[0])
    if m >= 3:
        specs = [f"{n}={shared_index(n)}" for n in V2] + [f"{n}-csv={shared_index(n)}@csv" for n in V2_CSV]
        family = "v2"
    elif m == 1:
        specs = [f"{n}={shared_index(n)}" for n in V1]
        family = "v1"
    else:
        pytest.skip(
            f"graphrag {versions(python)[0]}: the acceptance loads >= 2.0 layouts with 3.x and "
            "create_final_* layouts with 1.x"
        )
    rows = _run(python, specs, tmp_path)
    assert [r["name"] for r in rows] == [s.split("=", 1)[0] for s in specs]
    cross = 0
    for r in rows:
        assert "error" not in r, (r["name"], r.get("error"), r.get("trace"))
        planned = r["planned"]
        assert len(planned) == r["plan_reports"] > 0, r["name"]
        # graphrag's read_indexer_reports: exactly the plan, with no level cap and at the printed level
        assert r["selected"]["None"] == planned, r["name"]
        assert r["selected"][str(r["max_level"])] == planned, r["name"]
        # graphrag's build_community_context: the planned map calls
        assert r["graphrag_map_calls"] == r["plan_map_calls"], r["name"]
        assert f"--community-level {r['max_level']}" in r["commands"][0]["command"]
        assert (
            r["generation"].startswith(("2", "3"))
            if family == "v2"
            else not r["generation"].startswith(("2", "3"))
        )
        cross += len(r["by_level"]) > 1
    assert cross >= len(rows) - 3, [(r["name"], r["by_level"]) for r in rows]  # plans mix levels


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
