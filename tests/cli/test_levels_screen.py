"""issue 17, the levels output's first screen: the one-line answer, coverage per level and behaviour
(with its low-coverage finding), each finding's fix, the marker of the queried level, and text that
fits the width without cutting a number.

Coverage expectations come from a plain-Python reference over the tables (sets of entity ids and
text-unit ids, read with pandas), on real indexes and on hand-made trees; never from the code under
test."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from builders import write_v3
from conftest import ROOT, shared_index

from graphrag_audit.analysis.audit import AuditOptions, audit
from graphrag_audit.rules import RULES


def run(*args, env=None, encoding="utf-8"):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        capture_output=True,
        encoding=encoding,
        timeout=300,
        env=e,
        cwd=ROOT,
    )


# ---- the plain reference -----------------------------------------------------------------------
def _tables(d: Path):
    """(communities, entities) of a communities layout (2.x/3.x) or a create_final_* one (1.x)."""
    for comm, ent in (
        ("communities.parquet", "entities.parquet"),
        ("create_final_communities.parquet", "create_final_entities.parquet"),
    ):
        if (d / comm).exists():
            return pd.read_parquet(d / comm), pd.read_parquet(d / ent)
    raise AssertionError(f"no communities table in {d}")


def reference(d: Path):
    """{community: set of entity ids}, {entity id: set of text unit ids} (first row per id), clustered."""
    comm, ent = _tables(d)
    members = {int(c): set(ids) for c, ids in zip(comm["community"], comm["entity_ids"])}
    units = {}
    for i, tus in zip(ent["id"], ent["text_unit_ids"]):
        if i not in units:
            units[i] = set() if tus is None else {t for t in tus if t is not None}
    clustered = set().union(*members.values()) if members else set()
    return members, units, clustered


def covered(ids, members, units):
    ents = set()
    for c in ids:
        ents |= members.get(int(c), set())
    tus = set()
    for e in ents:
        tus |= units.get(e, set())
    return len(ents), len(tus)


REAL = [
    "verbs-v3",
    "real-b2b-gaps-v2",
    "real-insurance-v3",
    "real-cleanroom-specs-zh",
    "verbs-v1",
    "real-textbook-v1",
]


@pytest.mark.parametrize("name", REAL)
def test_coverage_matches_the_plain_reference_on_real_indexes(name):
    d = shared_index(name)
    report = audit(d, AuditOptions(costs=False))
    members, units, clustered = reference(d)
    c = report.index.counts
    assert c.clustered_entities == len(clustered)
    assert c.clustered_text_units == len(set().union(*(units.get(e, set()) for e in clustered)))
    for r in report.levels:
        for b in ("v2", "v1", "level_only", "dynamic"):
            s = r.selected[b]
            assert (s.entities_covered, s.text_units_covered) == covered(s.community_ids, members, units), (
                name,
                r.community_level,
                b,
            )
    j = json.loads(run("levels", d, "-f", "json", "--no-costs").stdout)
    assert j["index"]["counts"]["clustered_entities"] == len(clustered)
    assert (
        j["levels"][0]["selected"]["v2"]["text_units_covered"]
        == report.levels[0].selected["v2"].text_units_covered
    )


def test_b2b_level_0_covers_772_of_2323_and_low_coverage_fires_there():
    # the hand-checked numbers: the 10 level-0 communities without a report are the largest roots
    d = shared_index("real-b2b-gaps-v2")
    members, units, clustered = reference(d)
    assert len(clustered) == 2323
    at0 = audit(d, AuditOptions(level=0, costs=False))
    assert (at0.levels[0].selected["v2"].entities_covered, at0.index.counts.clustered_entities) == (772, 2323)
    low = [f for f in at0.findings if f.rule == "low-coverage"]
    assert len(low) == 1 and low[0].evidence["entities_covered"] == {"v2": 772}
    assert "772 of 2,323 clustered entities (33%" in low[0].message
    at2 = audit(d, AuditOptions(level=2, costs=False))  # 1,923 of 2,323 (83%) >= 50%
    assert not [f for f in at2.findings if f.rule == "low-coverage"]
    strict = audit(d, AuditOptions(level=2, costs=False, min_coverage=0.9))
    assert [f.evidence["share_entities"] for f in strict.findings if f.rule == "low-coverage"] == [
        {"v2": round(covered(at2.level(2).selected["v2"].community_ids, members, units)[0] / 2323, 4)}
    ]


# ---- hand-made trees ---------------------------------------------------------------------------
#   root 1 (level 0: a b c, no report) -> 3 (level 1: a b)
#   root 2 (level 0: d e)             -> 4 (level 1: d)
#   entity f is in no community; entity g is in community 2 but not in the entities table
TREE = {1: (0, -1, ["a", "b", "c"]), 2: (0, -1, ["d", "e", "g"]), 3: (1, 1, ["a", "b"]), 4: (1, 2, ["d"])}
UNITS = {"a": ["t1", "t2"], "b": ["t2"], "c": ["t3"], "d": ["t4"], "e": None, "f": ["t9"]}


def _hand(tmp_path, reports):
    d = write_v3(tmp_path / "idx", TREE, reports=reports, entities=list(UNITS))
    pd.DataFrame(
        {
            "id": list(UNITS),
            "human_readable_id": range(len(UNITS)),
            "title": list(UNITS),
            "type": "T",
            "description": "d",
            "text_unit_ids": list(UNITS.values()),
            "frequency": 1,
            "degree": 1,
        }
    ).to_parquet(d / "entities.parquet", index=False)
    return d


def test_hand_made_tree_coverage_and_threshold(tmp_path):
    d = _hand(tmp_path, reports=[(2, 0), (3, 1), (4, 1)])  # root 1 has no report
    members, units, clustered = reference(d)
    assert clustered == {"a", "b", "c", "d", "e", "g"}
    r0 = audit(d, AuditOptions(level=0, costs=False))
    c = r0.index.counts
    # by hand: 6 clustered entities (g too: clustered, no text units); text units t1 t2 t3 t4 (t9 is f's)
    assert (c.clustered_entities, c.clustered_text_units) == (6, 4)
    s0 = r0.level(0).selected
    assert (s0["v2"].entities_covered, s0["v2"].text_units_covered) == (3, 1)  # report 2: d e g; t4
    assert covered(s0["v2"].community_ids, members, units) == (3, 1)
    assert [f.rule for f in r0.findings if f.rule == "low-coverage"] == []  # 3/6 = 50% is not below 50%
    s1 = r0.level(1).selected
    assert (s1["v2"].entities_covered, s1["v2"].text_units_covered) == (5, 3)  # + a b; t1 t2
    assert (s1["v1"].entities_covered, s1["v1"].text_units_covered) == (5, 3)  # per entity: 3, 3, -, 4, 2, 2
    assert (s1["level_only"].entities_covered, s1["level_only"].text_units_covered) == (3, 3)  # a b d
    strict = audit(d, AuditOptions(level=0, costs=False, min_coverage=0.6))
    low = [f for f in strict.findings if f.rule == "low-coverage"]
    assert len(low) == 1 and low[0].evidence["text_units_covered"] == {"v2": 1}
    assert "3 of 6 clustered entities (50%, 1 of 4 text units)" in low[0].message


def test_no_text_units_means_null_not_zero(tmp_path):
    d = write_v3(tmp_path / "idx", TREE)
    pd.read_parquet(d / "entities.parquet").drop(columns=["text_unit_ids"]).to_parquet(d / "entities.parquet")
    j = json.loads(run("levels", d, "-f", "json", "--no-costs").stdout)
    assert "clustered_text_units" not in j["index"]["counts"]
    assert j["levels"][0]["selected"]["v2"]["text_units_covered"] is None
    assert j["levels"][0]["selected"]["v2"]["entities_covered"] == 6
    out = run("levels", d, "--no-costs", "--width", "80", "--color", "never").stdout
    assert "text units" not in out.split("Coverage per N", 1)[1].split("\n\n", 2)[1]


def test_the_answer_names_the_missing_coverage(tmp_path):
    d = _hand(tmp_path, reports=[(2, 0), (3, 1), (4, 1)])
    out = run("levels", d, "--level", "0", "--no-costs", "--width", "200", "--color", "never").stdout
    assert _paragraph(out) == (
        "at community_level 0 graphrag >= 2.0 sends 1 report, covering 3 of 6 clustered entities (50%); "
        "graphrag < 2.0 would send 1 (hypothetical: it cannot read this index); it is a level-0 report"
    )


# ---- the acceptance test: 80 columns ----------------------------------------------------------
ELLIPSISED_NUMBER = re.compile(r"[\d,.]…")


def _paragraph(text: str) -> str:
    return " ".join(text.split("\n\n", 1)[0].split("\n"))


@pytest.mark.parametrize("name", ["verbs-v3", "real-b2b-gaps-v2", "real-genesis-zh-deep"])
def test_levels_text_at_80_columns(name):
    d = shared_index(name)
    j = json.loads(run("levels", d, "-f", "json").stdout)
    for width in (80, 60, 40):
        res = run("levels", d, "--width", width, env={"NO_COLOR": "1"})
        assert res.returncode in (0, 1), res.stderr
        lines = res.stdout.splitlines()
        for line in lines:
            assert len(line) <= width, (width, line)
            assert line == line.rstrip(), (width, line)
            assert not ELLIPSISED_NUMBER.search(line), (width, line)
        if width != 80:
            continue
        answer = _paragraph(res.stdout)
        assert lines[0].startswith("at community_level 2 ")
        if not j["levels"] or not j["index"]["counts"]["reports"]:
            assert (
                answer == "at community_level 2 global search sends nothing: this index has no "
                "community_reports table"
            )
            continue
        at = next(r for r in j["levels"] if r["community_level"] == 2)["selected"]
        v2, v1 = at["v2"], at["v1"]
        total = j["index"]["counts"]["clustered_entities"]
        assert answer.startswith(
            f"at community_level 2 graphrag >= 2.0 sends {v2['count']:,} reports in {v2['map_calls']:,} map calls "
            f"({v2['tokens']:,} tokens), covering {v2['entities_covered']:,} of {total:,} clustered entities"
        )
        assert f"graphrag < 2.0 would send {v1['count']:,} in {v1['map_calls']:,}" in answer
        assert answer.endswith(f"only {at['level_only']['count']:,} are level-2 reports")


def test_estimate_tokens_are_marked_approximate():
    d = shared_index("verbs-v3")
    out = run("levels", d, "--tokenizer", "estimate", "--width", "200", "--color", "never").stdout
    j = json.loads(run("levels", d, "--tokenizer", "estimate", "-f", "json").stdout)
    v2 = next(r for r in j["levels"] if r["community_level"] == 2)["selected"]["v2"]
    assert v2["tokens_exact"] is False
    assert f"({'~'}{v2['tokens']:,} tokens, estimate)" in out.splitlines()[0]


# ---- the marker, the fixes -------------------------------------------------------------------
def _level_rows(text: str, title: str) -> list[str]:
    block = text.split(title, 1)[1].split("\n\n", 2)[1]
    return [line for line in block.splitlines() if re.match(r"^ *[▶>]? *(\d+|None) ", line)]


@pytest.mark.parametrize("encoding,marker", [("utf-8", "▶"), ("ascii", ">"), ("cp1252", ">")])
def test_the_queried_level_is_marked_without_colour(encoding, marker):
    d = shared_index("verbs-v3")
    res = run(
        "levels",
        d,
        "--level",
        "1",
        "--width",
        "100",
        env={"NO_COLOR": "1", "PYTHONIOENCODING": encoding, "TERM": "dumb"},
        encoding=encoding,
    )
    assert "\x1b[" not in res.stdout
    for title in ("What each community_level N sends", "Coverage per N", "Depth and cost per N"):
        rows = _level_rows(res.stdout, title)
        assert [r.split()[0] for r in rows] == ["0", marker, "2", "3", "None"], (title, rows)
        assert rows[1].split()[1] == "1"
        # the marker takes a column of its own: N stays right-aligned in every row
        assert len({re.match(r"^ *[▶>]? *(\S+)", r).end(1) for r in rows}) == 1, rows
    md = run("levels", d, "--level", "1", "-f", "markdown").stdout
    assert md.splitlines()[2].startswith("**at community_level 1 graphrag &gt;= 2.0 sends 88 reports")
    assert "| ▶ | **1** | **88** |" in md


def test_every_finding_shows_its_fix_in_text_and_html(tmp_path):
    d = shared_index("real-b2b-gaps-v2")
    res = run("levels", d, "--level", "0", "--width", "120", "--color", "never")
    tail = res.stdout.split("\nFindings (", 1)[1]
    rules = re.findall(r"^  (?:ERROR|WARNING|INFO) +([a-z0-9-]+):", tail, re.M)
    assert "low-coverage" in rules and len(rules) >= 3
    flat = " ".join(tail.split())
    for rule in rules:
        assert f"fix: {' '.join(RULES[rule].fix.split())}" in flat, rule
    html_out = tmp_path / "r.html"
    rep = run("report", d, "--level", "0", "-o", html_out)
    assert rep.returncode in (0, 1), rep.stderr
    page = html_out.read_text(encoding="utf-8")
    import html as _html

    for rule in rules:
        assert (
            f'<span class="fix">fix: {_html.escape(RULES[rule].fix, quote=False)}' in page
            or f'<span class="fix">fix: {_html.escape(RULES[rule].fix)}' in page
        ), rule
