"""The audit's dynamic-selection results per graphrag line (analysis/dynamic.py -> selected.dynamic.by_version).

Expectations are worked by hand from graphrag's dynamic_community_selection.py (the same 5-community
tree as tests/graphrag_tests/test_dynamic_selection.py, whose simulator is checked against the real graphrag there)
or are the numbers issue 16 measured with the real graphrag on verbs-v3 (23 and 120 at N=2).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import shared_index
from test_dynamic_selection import _write_generated
from test_status import validate

from graphrag_audit.analysis.audit import AuditOptions, audit
from graphrag_audit.render import render

# roots 0 and 1; 0 -> 2, 3; 2 -> 4 (levels 0, 0, 1, 1, 2); entities nest, so 1.x's containment
# rebuild finds the same tree
HAND = [
    (0, 0, -1, [2, 3], ["E0", "E1", "E2"]),
    (1, 0, -1, [], ["E3"]),
    (2, 1, 0, [4], ["E0", "E1"]),
    (3, 1, 0, [], ["E2"]),
    (4, 2, 2, [], ["E0"]),
]


def hand_index(tmp: Path, layout: str, drop_reports=(3,), name="hand") -> Path:
    """The hand tree as an index folder of one layout ("v2": communities.parquet, "v1": create_final_*)."""
    src = _write_generated(tmp, name, HAND, drop_reports=drop_reports)
    d = tmp / f"{name}-{layout}"
    d.mkdir()
    for f in src[f"gen/{name}/{layout}"]["files"].values():
        shutil.copy(f, d)
    return d


def by_version(path, level=2, **opts) -> dict:
    doc = json.loads(render(audit(path, AuditOptions(level=level, costs=False, **opts)), "json"))
    validate(doc)
    return {r["community_level"]: r["selected"]["dynamic"].get("by_version") for r in doc["levels"]}


def test_communities_layout_gives_2x_and_3x_by_hand(tmp_path):
    bv = by_version(hand_index(tmp_path, "v2"))
    assert set(bv[2]) == {"2.x", "3.x"}
    v3, v2 = bv[2]["3.x"], bv[2]["2.x"]
    # 3.x: 0 and 1 kept; 0's candidate child 2 queued (3 has no report), 2 kept and 0 dropped; 4 kept, 2 dropped
    assert v3["all_relevant"] == {
        "rating_calls": 4,
        "kept_ids": [1, 4],
        "waves": [2, 1, 1],
        "prompt_tokens": None,
    }
    # nothing relevant: the fallback rates level 1 ([2]) and level 2 ([4]): 4 calls, nothing kept
    assert v3["none_relevant"] == {
        "rating_calls": 4,
        "kept_ids": [],
        "waves": [2, 1, 1],
        "prompt_tokens": None,
    }
    assert (v3["graphrag"], v3["error"], v3["descends"], v3["start_ids"]) == ("3.0.0-3.x", None, True, [0, 1])
    # 2.x never descends (microsoft/graphrag#2004): "all relevant" stops at the roots
    assert v2["all_relevant"] == {"rating_calls": 2, "kept_ids": [0, 1], "waves": [2], "prompt_tokens": None}
    assert v2["none_relevant"] == {
        "rating_calls": 4,
        "kept_ids": [],
        "waves": [2, 1, 1],
        "prompt_tokens": None,
    }
    assert (v2["graphrag"], v2["descends"], v2["cut_off"]) == ("2.0.0-2.7.2", False, 2)
    assert "what_if" not in v2
    # community_level 1 caps the candidates: 4 is neither queued nor in the fallback
    assert bv[1]["3.x"]["all_relevant"] == {
        "rating_calls": 3,
        "kept_ids": [1, 2],
        "waves": [2, 1],
        "prompt_tokens": None,
    }


def test_create_final_layout_gives_1x_only(tmp_path):
    bv = by_version(hand_index(tmp_path, "v1"))
    assert set(bv[2]) == {"1.x"}
    v1 = bv[2]["1.x"]
    assert (v1["graphrag"], v1["descends"]) == ("1.1.1-1.2.x", True)
    assert v1["all_relevant"] == {
        "rating_calls": 4,
        "kept_ids": [1, 4],
        "waves": [2, 1, 1],
        "prompt_tokens": None,
    }


def test_settings_and_what_if(tmp_path):
    bv = by_version(hand_index(tmp_path, "v2"), relevant=(0, 2), num_repeats=3, max_level=1)
    # 0 kept -> 2 queued and kept -> 4 queued: max_level does not limit the descent; 3 calls per rating
    assert bv[2]["3.x"]["what_if"] == {
        "relevant_ids": [0, 2],
        "rating_calls": 12,
        "kept_ids": [2],
        "waves": [2, 1, 1],
        "prompt_tokens": None,
    }
    assert bv[2]["2.x"]["what_if"] == {
        "relevant_ids": [0, 2],
        "rating_calls": 6,
        "kept_ids": [0],
        "waves": [2],
        "prompt_tokens": None,
    }
    # nothing relevant: the fallback stops after level max_level = 1
    assert bv[2]["2.x"]["none_relevant"] == {
        "rating_calls": 9,
        "kept_ids": [],
        "waves": [2, 1],
        "prompt_tokens": None,
    }
    bv = by_version(hand_index(tmp_path, "v2", name="kp"), keep_parent=True)
    assert bv[2]["3.x"]["all_relevant"]["kept_ids"] == [0, 1, 2, 4]


def test_no_level0_report_is_an_error_with_null_scenarios(tmp_path):
    bv = by_version(hand_index(tmp_path, "v2", drop_reports=(0, 1)))
    for fam in ("2.x", "3.x"):
        v = bv[2][fam]
        assert (v["error"], v["none_relevant"], v["all_relevant"], v["start_ids"]) == (
            "KeyError: '0'",
            None,
            None,
            [],
        )


def test_verbs_v3_at_2_matches_the_real_graphrag_numbers():
    bv = by_version(shared_index("verbs-v3"))[2]
    assert (bv["2.x"]["all_relevant"]["rating_calls"], bv["2.x"]["none_relevant"]["rating_calls"]) == (
        23,
        120,
    )
    assert bv["2.x"]["descends"] is False and bv["3.x"]["descends"] is True


@pytest.mark.parametrize("name", ["real-b2b-gaps-v2", "real-climate-update-v09"])
def test_issue_16_reachability_numbers(name):
    """3.x on real-b2b-gaps-v2 reaches 177 of 433 candidates when all are relevant; 1.x on the update
    output 541 of 615 (issue 16, measured with the real graphrag)."""
    bv = by_version(shared_index(name))[2]
    fam = "3.x" if name == "real-b2b-gaps-v2" else "1.x"
    v = bv[fam]
    total, reached = {"3.x": (433, 177), "1.x": (615, 541)}[fam]
    assert (v["none_relevant"]["rating_calls"], sum(v["all_relevant"]["waves"]), v["cut_off"]) == (
        total,
        reached,
        total - reached,
    )


# ---- findings -----------------------------------------------------------------------------
def rules(path, level=2) -> dict:
    return {f.rule: f for f in audit(path, AuditOptions(level=level, costs=False)).findings}


def test_findings_on_the_hand_tree(tmp_path):
    got = rules(hand_index(tmp_path, "v2"))
    # 2.x: the level-0 reports 0 and 1 only when all are relevant (2 calls), 2 and 4 below them
    f = got["dynamic-no-descent"]
    assert (
        f.evidence["start"],
        f.evidence["below_level_0"],
        f.evidence["all_relevant_calls"],
        f.evidence["none_relevant_calls"],
    ) == (2, 2, 2, 4)
    # 3.x reaches 2 and 4 through 0 (3 has no report but no candidate hangs under it)
    assert "dynamic-unreachable" not in got and "dynamic-no-level-0-report" not in got


def test_missing_report_cuts_off_its_subtree(tmp_path):
    # 3.x: without 2's report, 4 is never queued (str(child) of 0 is "2", no report) and level 1 has no
    # report-bearing community, so the fallback stops there too: 4 is never rated
    f = rules(hand_index(tmp_path, "v2", drop_reports=(2, 3), name="cut"))["dynamic-unreachable"]
    assert (f.communities, f.evidence["family"], f.evidence["rated_when_all_relevant"]) == ((4,), "3.x", 2)
    # 1.x: the node rows are restricted to communities with a report (0, 1, 4), node levels 0 and 2 are taken
    # pairwise, so 4 ({E0}) becomes a child of 0 ({E0, E1, E2}) and is reached
    bv = by_version(hand_index(tmp_path, "v1", drop_reports=(2, 3), name="cut1"))[2]["1.x"]
    assert bv["all_relevant"] == {
        "rating_calls": 3,
        "kept_ids": [1, 4],
        "waves": [2, 1],
        "prompt_tokens": None,
    }
    assert "dynamic-unreachable" not in rules(tmp_path / "cut1-v1")


def test_no_reports_at_all_is_graphrags_keyerror(tmp_path):
    got = rules(hand_index(tmp_path, "v2", drop_reports=(0, 1, 2, 3, 4)))
    assert got["dynamic-no-level-0-report"].evidence["families"] == ["2.x", "3.x"]
    assert "dynamic-no-descent" not in got and "dynamic-unreachable" not in got


def test_a_create_final_index_has_no_2x_finding(tmp_path):
    assert "dynamic-no-descent" not in rules(hand_index(tmp_path, "v1"))


# ---- the command line ---------------------------------------------------------------------
def cli(*args):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "levels", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_flags_reach_the_simulation(tmp_path):
    d = hand_index(tmp_path, "v2")
    (tmp_path / "rel.txt").write_text("0\n2, 2\n")
    p = cli(
        d,
        "-f",
        "json",
        "--no-costs",
        "--relevant",
        f"@{tmp_path / 'rel.txt'}",
        "--num-repeats",
        "3",
        "--max-level",
        "1",
        "--keep-parent",
        "--threshold",
        "2",
    )
    assert p.returncode in (0, 1) and p.stderr == "", p.stderr
    doc = json.loads(p.stdout)
    validate(doc)
    assert {
        k: doc["options"][k] for k in ("num_repeats", "threshold", "keep_parent", "max_level", "relevant")
    } == {"num_repeats": 3, "threshold": 2, "keep_parent": True, "max_level": 1, "relevant": [0, 2]}
    lv2 = next(r for r in doc["levels"] if r["community_level"] == 2)["selected"]["dynamic"]["by_version"]
    # keep_parent: 0 stays when 2 is kept; 4 (not relevant) is rated as 2's child, max_level notwithstanding
    assert lv2["3.x"]["what_if"] == {
        "relevant_ids": [0, 2],
        "rating_calls": 12,
        "kept_ids": [0, 2],
        "waves": [2, 1, 1],
        "prompt_tokens": None,
    }
    assert lv2["2.x"]["none_relevant"] == {
        "rating_calls": 9,
        "kept_ids": [],
        "waves": [2, 1],
        "prompt_tokens": None,
    }
    # the defaults are graphrag's: no what_if without --relevant
    doc = json.loads(cli(d, "-f", "json", "--no-costs").stdout)
    assert doc["options"]["relevant"] is None and doc["options"]["max_level"] == 2
    assert all(
        "what_if" not in v for r in doc["levels"] for v in r["selected"]["dynamic"]["by_version"].values()
    )


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("3,x", "--relevant: 'x' is not a community number"),
        ("@missing.txt", "missing.txt: cannot read the --relevant list"),
    ],
)
def test_bad_relevant_is_one_line_exit_2(tmp_path, arg, message):
    p = cli(hand_index(tmp_path, "v2"), "--relevant", arg)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and message in p.stderr, p.stderr


@pytest.mark.parametrize("layout", ["v2", "v1"])
def test_relevant_ids_that_are_not_communities_are_a_usage_error(tmp_path, layout):
    """The hand tree has communities 0-4 (3 without a report): any other number would never be
    rated, so --relevant naming one is refused, every such number named, before any output."""
    d = hand_index(tmp_path, layout)
    (tmp_path / "rel.txt").write_text("0\n9\n")
    for arg, message in (
        ("0,2,7,12,7", "--relevant: not communities of this index: 7, 12"),
        (f"@{tmp_path / 'rel.txt'}", "--relevant: not a community of this index: 9"),
        ("-1,0", "--relevant: not a community of this index: -1"),
        (
            ",".join(map(str, range(5, 25))),
            "not communities of this index: 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 and 10 more",
        ),
    ):
        p = cli(d, "-f", "json", "--no-costs", "--relevant", arg)
        assert p.returncode == 2 and p.stdout == "", (arg, p.stderr)
        assert (
            p.stderr.count("\n") == 1
            and p.stderr.startswith("graphrag-audit: error: ")
            and message in p.stderr
        )
    p = cli(d, "-f", "json", "--no-costs", "--relevant", "3,4")  # 3 has no report: a community all the same
    assert p.returncode in (0, 1) and json.loads(p.stdout)["options"]["relevant"] == [3, 4], p.stderr


# ---- text and markdown --------------------------------------------------------------------
def test_text_and_markdown_show_each_version_at_the_level(tmp_path):
    report = audit(hand_index(tmp_path, "v2"), AuditOptions(level=2, costs=False, relevant=(0, 2)))
    text = render(report, "text", width=160, color=False)
    block = text[text.index("Dynamic selection by graphrag version at N=2") :].splitlines()
    # graphrag, descends, all relevant: calls, kept, none relevant: calls, what-if: calls, kept
    # two header lines ("all relevant" over "calls"), then one row per line
    assert block[4].split() == ["2.0.0-2.7.2", "never", "2", "2", "4", "2", "1"]
    assert block[5].split() == ["3.0.0-3.x", "yes", "4", "2", "4", "4", "1"]
    md = render(report, "markdown")
    assert "| 3.0.0-3.x | yes | 4 | 2 | 4 | 4 | 1 |" in md  # tool text: no escapes
    failing = audit(
        hand_index(tmp_path, "v2", drop_reports=(0, 1), name="nl0"), AuditOptions(level=2, costs=False)
    )
    assert "2.0.0-2.7.2  —         fails: KeyError: '0'" in render(failing, "text", width=160, color=False)


def test_a_cycle_in_the_children_is_reported_not_looped(tmp_path):
    # 0 -> 2 -> 0: with 0 and 2 relevant graphrag 3.x queues them forever; the audit says so and ends
    cyc = [(0, 0, -1, [2], ["E0", "E1"]), (1, 0, -1, [], ["E3"]), (2, 1, 0, [0], ["E0"])]
    src = _write_generated(tmp_path, "cyc", cyc)
    d = tmp_path / "cyc-v2"
    d.mkdir()
    for f in src["gen/cyc/v2"]["files"].values():
        shutil.copy(f, d)
    v = by_version(d)[1]
    assert v["3.x"]["error"].startswith("never ends: the children form a cycle")
    assert v["3.x"]["all_relevant"] is None and v["2.x"]["error"] is None


# ---- the dynamic_search_* settings of a project ----------------------------------------------------
def _project(tmp: Path, settings: str) -> Path:
    root = tmp / "project"
    root.mkdir()
    shutil.copytree(hand_index(tmp, "v2"), root / "output")
    (root / "settings.yaml").write_text(settings, encoding="utf-8")
    return root


def test_project_settings_set_the_dynamic_knobs(tmp_path):
    """A project root's global_search.dynamic_search_* are used (a string from the environment too),
    each origin is recorded, and the scenarios equal those of the same values given as options."""
    root = _project(
        tmp_path,
        "global_search:\n  dynamic_search_threshold: 3\n  dynamic_search_keep_parent: true\n"
        "  dynamic_search_num_repeats: '2'\n",
    )
    report = audit(root, AuditOptions(level=2, costs=False))
    o = report.options
    assert (o.threshold, o.keep_parent, o.num_repeats, o.max_level, o.use_summary) == (3, True, 2, 2, False)
    assert dict(o.dynamic_from) == {
        "threshold": "settings.yaml",
        "keep_parent": "settings.yaml",
        "num_repeats": "settings.yaml",
        "max_level": "graphrag default",
        "use_summary": "graphrag default",
    }
    explicit = audit(
        root / "output", AuditOptions(level=2, costs=False, threshold=3, keep_parent=True, num_repeats=2)
    )
    got = [r.selected["dynamic"].by_version for r in report.levels]
    want = [r.selected["dynamic"].by_version for r in explicit.levels]
    assert got == want
    # an option overrides the file
    over = audit(root, AuditOptions(level=2, costs=False, threshold=1))
    assert over.options.threshold == 1 and dict(over.options.dynamic_from)["threshold"] == "option"
    assert dict(over.options.dynamic_from)["keep_parent"] == "settings.yaml"
    # an index folder given directly: graphrag's defaults
    plain = audit(root / "output", AuditOptions(level=2, costs=False))
    assert set(dict(plain.options.dynamic_from).values()) == {"graphrag default"}
    assert (plain.options.threshold, plain.options.num_repeats) == (1, 1)


def test_bad_dynamic_setting_is_a_one_line_error(tmp_path):
    from hostile import run_cli

    root = _project(tmp_path, "global_search:\n  dynamic_search_max_level: deep\n")
    r = run_cli(["levels", root, "--no-costs"])
    assert r.code == 2, r.stderr
    assert (
        r.stderr.count("\n") == 1 and "settings.yaml" in r.stderr and "dynamic_search_max_level" in r.stderr
    ), r.stderr
    assert r.stdout == ""
