"""Each integrity rule fires on the defect fixture made for it, and not on the clean seed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from graphrag_audit.analysis.audit import AuditOptions, audit
from graphrag_audit.analysis.integrity import check_integrity
from graphrag_audit.io.load import load_index
from graphrag_audit.rules import RULES

DEFECTS = FIXTURES / "defects"

# fixture folder -> (rule id, communities the finding must name (None: don't check))
EXPECTED = {
    "no-level-0": ("no-level-0", None),
    "level-gap": ("level-gap", None),
    "parent-cycle": ("parent-cycle", None),
    "multi-parent": ("multiple-parents", None),
    "level-not-parent-plus-one": ("level-not-parent-plus-one", None),
    "child-not-subset": ("child-not-subset", None),
    "children-mismatch": ("children-parent-mismatch", None),
    "two-forests": ("multiple-periods", None),
    "duplicate-numbers": ("duplicate-community", None),
    "missing-report": ("community-without-report", None),
    "orphan-report": ("report-without-community", None),
    "report-level-mismatch": ("report-level-mismatch", None),
    "minus-one-report": ("minus-one-report", (-1,)),
    "unclustered-entities": ("unclustered-entities", None),
    "non-depth-ordered": ("ids-not-depth-ordered", None),
}

TREE_RULES = {r for r, _ in EXPECTED.values()} | {
    "missing-parent",
    "duplicate-report",
    "string-community-ids",
    "v2-unreadable",
    "dynamic-no-level-0-report",
}


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_defect_fixture_triggers_its_rule(folder):
    rule, communities = EXPECTED[folder]
    findings = check_integrity(load_index(DEFECTS / folder))
    hits = [f for f in findings if f.rule == rule]
    assert len(hits) == 1, [f.rule for f in findings]
    f = hits[0]
    assert f.severity == RULES[rule].severity
    assert "\n" not in f.message and f.message
    if communities is not None:
        assert f.communities == communities


@pytest.mark.parametrize("folder", ["seed-v3", "seed-v1", "seed-v05", "seed-v3-csv", "balanced-v3"])
def test_clean_fixtures_have_no_tree_findings(folder):
    findings = check_integrity(load_index(FIXTURES / folder))
    assert {f.rule for f in findings} & TREE_RULES == set()


def test_seed_v01_is_flagged_as_string_ids_trap():
    rules = {f.rule for f in check_integrity(load_index(FIXTURES / "seed-v01"))}
    assert {"string-community-ids", "v2-unreadable"} <= rules


def test_parent_cycle_names_the_cycle(tmp_path):
    from builders import write_v3

    tree = {1: (0, 3, ["A"]), 2: (1, 1, ["A"]), 3: (2, 2, ["A"]), 9: (0, -1, ["B"]), 10: (1, 10, ["B"])}
    f = next(
        f for f in check_integrity(load_index(write_v3(tmp_path / "i", tree))) if f.rule == "parent-cycle"
    )
    assert f.communities == (1, 2, 3, 10)  # the 3-cycle and the self-parent


def test_children_parent_mismatch(tmp_path):
    from builders import SEED, write_v3

    kids = {5: [20, 21], 6: [22], 20: [77]}  # 78 missing from 20's children
    f = [
        f
        for f in check_integrity(load_index(write_v3(tmp_path / "i", SEED, children=kids)))
        if f.rule == "children-parent-mismatch"
    ]
    assert len(f) == 1 and f[0].communities == (20,)


def test_balanced_fixture_has_no_depth_mismatch_at_its_max_level():
    report = audit(FIXTURES / "balanced-v3", AuditOptions(level=2, costs=False))
    assert report.depth.max_level == 2
    assert "depth-mismatch" not in {f.rule for f in report.findings}
    assert report.depth.asymmetry == 0.0


def test_every_rule_is_documented():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule_id in RULES:
        assert f"`{rule_id}`" in doc, rule_id
