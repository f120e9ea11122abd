"""Issue 38, section 5 (levels, tree, plan, report, --verify): what a user meets in the first hour.

* tree at 80 columns keeps the parent id of every "… N more" row; plan's text has no trailing blanks;
* levels --brief (the answer, one row per N, the findings) and --hide-hypothetical;
* levels -f html points to report;
* --verify does not pass graphrag's pandas FutureWarnings to stderr (other warnings still show);
* PYTHONIOENCODING=ascii: the footnote markers and our own '…' are ASCII, the columns stay aligned;
* thousands separators and plurals; --level beyond the tree says no row is marked.

Expectations come from the index's own tables (the tree view's rows, the counts the JSON reports) or
from the issue's wording, never from the text renderer under test.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings

import pytest
from conftest import FIXTURES, ROOT, shared_index

SEED_V3 = FIXTURES / "seed-v3"
SEED_V1 = FIXTURES / "seed-v1"


def run(*args, env: dict | None = None, check_rc=(0, 1)) -> subprocess.CompletedProcess:
    e = {
        k: v
        for k, v in os.environ.items()
        if k not in ("COLUMNS", "GRAPHRAG_AUDIT_WIDTH", "PYTHONIOENCODING")
    }
    e["PYTHONPATH"] = str(ROOT)
    e.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        cwd=ROOT,
        env=e,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=300,
    )
    if check_rc is not None:
        assert proc.returncode in check_rc, proc.stderr[-2000:]
    return proc


# ---- tree: the "… N more" rows keep their parent id at 80 columns -------------------------------
@pytest.mark.parametrize("name", ["real-climate-update-v09", "real-genesis-zh-deep", "real-textbook-v1"])
@pytest.mark.parametrize("how", ["COLUMNS", "--width"])
def test_tree_more_rows_keep_the_parent_id_at_80_columns(name, how):
    folder = shared_index(name)
    # the parents of the hidden children, from the tree's own JSON (not the text renderer)
    doc = json.loads(run("tree", folder, "-f", "json").stdout)
    args = ["tree", folder, "--level", "2"] + (["--width", "80"] if how == "--width" else [])
    out = run(*args, env={"COLUMNS": "80"} if how == "COLUMNS" else {"COLUMNS": "200"}).stdout
    more = [ln for ln in out.splitlines() if "more" in ln and "…" in ln and "roots" not in ln]
    assert more, out
    with_children = {int(c["community"]) for c in doc["communities"] if c.get("children")}
    for ln in more:
        assert len(ln) <= 80, ln
        m = re.search(r"under (\d+)$", ln.rstrip())
        assert m, f"parent id lost: {ln!r}"
        assert int(m.group(1)) in with_children, ln


def test_tree_more_row_label_keeps_the_parent_when_very_narrow():
    from graphrag_audit.render.text import _fitted_more
    from graphrag_audit.results.tree import Row

    row = Row(
        kind="more",
        depth=9,
        community=123456,
        last=True,
        guides=(),
        more=3,
        more_communities=4321,
        more_leaves=4000,
    )
    assert _fitted_more(row, 200) == "… 4,321 more communities (4,000 leaves) under 123456"
    for cells in (60, 30, 18, 12):
        label = _fitted_more(row, cells)
        assert len(label) <= cells and label.endswith("123456"), (cells, label)


# ---- plan: no trailing blanks ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["verbs-v3", "real-textbook-v1", "real-golf-zh-v1"])
@pytest.mark.parametrize("how", ["COLUMNS", "--width"])
def test_plan_text_has_no_trailing_blanks(name, how):
    args = ["plan", shared_index(name), "--reports", "40"] + (["--width", "80"] if how == "--width" else [])
    out = run(*args, env={"COLUMNS": "80"} if how == "COLUMNS" else {}).stdout
    assert out.count("\n") > 40
    padded = [ln for ln in out.splitlines() if ln != ln.rstrip()]
    assert not padded, padded[:5]


# ---- levels --brief and --hide-hypothetical --------------------------------------------------------
def test_brief_prints_the_answer_one_table_and_the_findings():
    full = run("levels", SEED_V3, "--width", "100").stdout
    brief = run("levels", SEED_V3, "--width", "100", "--brief").stdout
    doc = json.loads(run("levels", SEED_V3, "-f", "json").stdout)
    assert brief.splitlines()[0] == full.splitlines()[0]  # the answer line first
    assert len(brief.splitlines()) < len(full.splitlines())
    for part in (
        "Community tree",
        "Coverage per N",
        "Depth and cost",
        "Dynamic selection",
        "Branch depth",
        "tables in",
    ):
        assert part not in brief, part
    assert brief.count("What each community_level N sends to global search") == 1
    table = [ln for ln in brief.splitlines() if re.match(r"^\s*(▶)?\s+(\d+|None)\s{2,}\S", ln)]
    assert [ln.replace("▶", "").split()[0] for ln in table] == [
        "None" if lv["community_level"] is None else str(lv["community_level"]) for lv in doc["levels"]
    ]
    assert f"Findings ({len(doc['findings'])})" in brief
    for f in doc["findings"]:
        assert f"{f['rule']}:" in brief


def test_brief_markdown():
    md = run("levels", SEED_V3, "-f", "markdown", "--brief").stdout
    doc = json.loads(run("levels", SEED_V3, "-f", "json").stdout)
    assert md.startswith("## graphrag-audit report\n\n**at community_level 2 ")
    assert (
        "### Community tree" not in md and "Coverage per N" not in md and "| **python** |" not in md.lower()
    )
    rows = [
        ln
        for ln in md.splitlines()
        if ln.startswith("| ") and ("| None |" in ln or re.match(r"\| (▶)? *\| \**\d", ln))
    ]
    assert len(rows) == len(doc["levels"])
    assert f"### Findings ({len(doc['findings'])})" in md
    assert "--brief" in md.splitlines()[-1]


def test_hide_hypothetical_on_an_index_graphrag_below_2_cannot_read():
    doc = json.loads(run("levels", SEED_V3, "-f", "json").stdout)
    assert {lv["selected"]["v1"]["status"] for lv in doc["levels"]} == {"hypothetical"}  # the premise
    for args in (["--brief"], []):
        out = run("levels", SEED_V3, "--width", "120", "--hide-hypothetical", *args).stdout
        tables = out.split("\n\n", 2)[2].split("Findings")[0]
        assert "hyp." not in tables, tables
        heads = _header_lines(tables)
        assert heads and not any("<2.0" in h for h in heads), heads
        assert "<2.0 columns left out (--hide-hypothetical" in " ".join(out.split())
        md = run("levels", SEED_V3, "-f", "markdown", "--hide-hypothetical", *args).stdout
        table_lines = [ln for ln in md.splitlines() if ln.startswith("|") and "map calls" in ln]
        assert table_lines and all("&lt;2.0" not in ln for ln in table_lines), table_lines
        assert "hyp." not in "".join(ln for ln in md.splitlines() if ln.startswith("| ") and "None" in ln)


def _header_lines(text: str) -> list[str]:
    """The header lines of every rich table in ``text``: the lines above each rule line, up to a blank."""
    lines = text.splitlines()
    out = []
    for i, ln in enumerate(lines):
        if ln.strip() and set(ln.strip()) <= {"─", "-"}:
            j = i - 1
            while j >= 0 and lines[j].strip():
                out.append(lines[j])
                j -= 1
    return out


def test_hide_hypothetical_on_a_1x_index_hides_the_2x_columns():
    doc = json.loads(run("levels", SEED_V1, "-f", "json").stdout)
    assert {lv["selected"]["v2"]["status"] for lv in doc["levels"]} == {"graphrag_cannot_read"}
    for args in (["--brief"], []):
        out = run("levels", SEED_V1, "--width", "120", "--hide-hypothetical", *args).stdout
        tables = out.split("\n\n", 2)[2].split("Findings")[0]
        assert "cannot read" not in tables and "hyp." not in tables, tables
        heads = _header_lines(tables)
        assert heads and not any(">=2.0" in h for h in heads if "map calls" not in h), heads
        assert ">=2.0 columns left out" in " ".join(out.split()), out


def test_json_and_github_ignore_brief_and_hide():
    for fmt in ("json", "github"):
        plain = run("levels", SEED_V3, "-f", fmt).stdout
        assert run("levels", SEED_V3, "-f", fmt, "--brief", "--hide-hypothetical").stdout == plain


def test_brief_is_in_the_help():
    out = run("levels", "--help", env={"COLUMNS": "200"}).stdout
    assert "--brief" in out and "--hide-hypothetical" in out


# ---- levels -f html --------------------------------------------------------------------------------
def test_levels_html_points_to_report():
    proc = run("levels", SEED_V3, "-f", "html", check_rc=(2,))
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "graphrag-audit report DIR -o FILE.html" in lines[0], proc.stderr
    other = run("levels", SEED_V3, "-f", "nope", check_rc=(2,))
    assert "report" not in other.stderr  # only html is pointed elsewhere


# ---- --verify: graphrag's pandas FutureWarnings --------------------------------------------------
def test_verify_filters_only_graphrag_futurewarnings(monkeypatch):
    from graphrag_audit import verify

    def fake(report, model):
        warnings.warn_explicit(
            "Setting an item of incompatible dtype",
            FutureWarning,
            "indexer_adapters.py",
            97,
            module="graphrag.query.indexer_adapters",
        )
        warnings.warn_explicit("ours", FutureWarning, "x.py", 1, module="graphrag_audit.io.load")
        warnings.warn_explicit("a graphrag user warning", UserWarning, "y.py", 1, module="graphrag.config")
        return "result"

    monkeypatch.setattr(verify, "_verify_with_graphrag", fake)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert verify.verify_with_graphrag(None, None) == "result"
    assert sorted(str(w.message) for w in seen) == ["a graphrag user warning", "ours"]


def _gr12():
    from graphrag_side import side_pythons, versions

    for p in side_pythons():
        gv, _ = versions(p)
        if gv and gv.startswith("1."):
            return p
    return None


@pytest.mark.side
def test_verify_under_graphrag_1_2_prints_no_futurewarnings():
    from graphrag_side import need, run_tool

    python = need(_gr12(), reason="graphrag 1.x in GRAPHRAG_VERIFY_PYTHONS")
    # real-golf-zh-v1: int32 parent ids, on which graphrag 1.2's indexer_adapters.py:97 makes pandas warn
    proc = run_tool(
        python, "levels", str(shared_index("real-golf-zh-v1")), "--verify", "--no-costs", "--fail-on", "never"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "verify: " in proc.stdout
    assert "FutureWarning" not in proc.stderr and proc.stderr.strip() == "", proc.stderr[:2000]


# ---- PYTHONIOENCODING=ascii -------------------------------------------------------------------------
def _table_blocks(text: str, title: str) -> list[str]:
    block = text.split(title, 1)[1].split("\n\n")[1]
    return block.splitlines()


@pytest.mark.parametrize("name", ["verbs-v3", "real-textbook-v1"])
def test_ascii_output_footnote_markers_and_alignment(name):
    folder = shared_index(name)
    out = run("levels", folder, "--width", "120", env={"PYTHONIOENCODING": "ascii"}).stdout
    assert out.isascii()
    assert "\\xb9" not in out and "\\u2026" not in out and "\\u2013" not in out
    rows = _table_blocks(out, "What each community_level N sends to global search")
    rule = next(ln for ln in rows if set(ln.strip()) == {"-"})
    body = [ln for ln in rows[rows.index(rule) + 1 :] if ln.strip()]
    heads = rows[: rows.index(rule)]
    # right-aligned columns: every row and the last header line end in the same column
    assert body and {len(ln) for ln in body} == {len(heads[-1])}, (heads, body)
    assert re.search(r"^\^1 \S", out, re.M)  # the footnote under the tables
    plan = run("plan", folder, "--reports", "40", env={"PYTHONIOENCODING": "ascii", "COLUMNS": "80"}).stdout
    assert plan.isascii() and "\\u2026" not in plan and "\\u2013" not in plan and "\\xb7" not in plan


def test_utf8_output_keeps_the_superscripts():
    out = run("levels", SEED_V3, "--width", "120", env={"PYTHONIOENCODING": "utf-8"}).stdout
    assert "hyp. 2¹" in out and "^1" not in out


# ---- numbers, plurals, the level legend --------------------------------------------------------------
def test_thousands_separators_in_finding_messages_everywhere(tmp_path):
    folder = shared_index("real-textbook-v1")
    doc = json.loads(run("levels", folder, "-f", "json").stdout)
    f = next(x for x in doc["findings"] if x["rule"] == "unclustered-entities")
    lost, total = f["evidence"]["count"], f["evidence"]["total"]
    assert total >= 1000
    want = f"{lost:,} of {total:,} entities"
    text = run("levels", folder, "--width", "200").stdout
    md = run("levels", folder, "-f", "markdown").stdout
    run("report", folder, "-o", tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    for where, out in (("text", text), ("markdown", md), ("html", html), ("json", f["message"])):
        assert want in out, where
        assert f"{lost} of {total} entities" not in out, where


def test_plurals_on_a_one_community_index():
    folder = shared_index("output-pr2160")
    text = run("levels", folder, "--width", "120").stdout
    line = next(ln for ln in text.splitlines() if " · tree from " in ln)
    assert "1 community · 1 report · 1 root · 1 level · " in line, line
    tree = run("tree", folder, "--width", "120").stdout
    assert tree.splitlines()[3].startswith("1 community · 1 level · 1 root · 1 report"), tree


def test_single_child_finding_plural():
    out = run("levels", SEED_V3, "--width", "200").stdout
    assert "1 community has exactly one child" in out and "1 communities" not in out


def test_level_beyond_the_tree_says_no_row_is_marked():
    out = run("levels", SEED_V3, "--width", "200", "--level", "9").stdout
    assert "▶" not in out
    assert "No row is marked: --level 9 is deeper than the tree" in " ".join(out.split())
    md = run("levels", SEED_V3, "-f", "markdown", "--level", "9").stdout
    assert "▶" not in md and "No row is marked: `--level 9` is deeper than the tree" in md
    at = run("levels", SEED_V3, "--width", "200", "--level", "2").stdout
    assert "▶ = --level 2." in at


def test_step_summary_follows_brief(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("", encoding="utf-8")
    run("levels", SEED_V3, "-f", "github", "--brief", env={"GITHUB_STEP_SUMMARY": str(summary)})
    page = summary.read_text(encoding="utf-8")
    assert page.startswith("## graphrag-audit report\n") and "### Community tree" not in page
    assert "### Findings (" in page and "--brief" in page
