"""``diff`` and ``levels --baseline`` judge map calls and coverage only on the selections a real
graphrag sends on both indexes (issue 38, part 2); ``diff`` text follows ``--width``/``COLUMNS``
(part 5); its numbers carry thousands separators and plurals.

The pairs are real indexes against a copy changed in a temporary folder, the change chosen from
the raw tables: verbs-v3 (3.x: graphrag < 2.0 cannot read it) without the report of its level-2
leaf 88, whose parent 27 keeps a report; verbs-v0.5 (0.5-0.9: graphrag >= 2.0 cannot read it) with
longer reports for the communities only graphrag >= 2.0's rule sends at level 2 (graphrag < 2.0's
rule, from create_final_nodes: per entity the largest community number at level <= 2).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conftest import shared_index
from typer.testing import CliRunner

from graphrag_audit.cli import app

EST = ("--tokenizer", "estimate")
SCHEMA = Path(__file__).resolve().parents[2] / "graphrag_audit" / "schema" / "diff.schema.json"


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True)
    for f in src.glob("*.parquet"):
        shutil.copyfile(f, dst / f.name)
    return dst


@pytest.fixture(scope="module")
def pair_v3(tmp_path_factory):
    """verbs-v3 and a copy without the report of community 88 (a level-2 leaf of 38 entities under 27)."""
    old = shared_index("verbs-v3")
    comm = pq.read_table(old / "communities.parquet").to_pandas()
    row = comm.loc[comm["community"] == 88].iloc[0]
    assert (int(row["level"]), int(row["parent"]), len(row["children"])) == (2, 27, 0)
    parent = comm.loc[comm["community"] == 27].iloc[0]
    assert set(row["entity_ids"]) <= set(parent["entity_ids"])  # 27 covers all of 88's entities
    new = _copy(old, tmp_path_factory.mktemp("v3") / "new")
    t = pq.read_table(new / "community_reports.parquet")
    assert 27 in pc.cast(t["community"], pa.int64()).to_pylist()
    pq.write_table(
        t.filter(pc.not_equal(pc.cast(t["community"], pa.int64()), 88)), new / "community_reports.parquet"
    )
    return old, new, len(set(row["entity_ids"]))


def _v1_sent(folder: Path, level: int) -> set:
    """graphrag < 2.0's selection from create_final_nodes: per entity the largest community number at level <= N."""
    nodes = pq.read_table(folder / "create_final_nodes.parquet").to_pandas()
    nodes = nodes.loc[nodes["level"] <= level].dropna(subset=["community"])
    nodes["community"] = nodes["community"].astype(int)
    return set(nodes.groupby("title")["community"].max())


@pytest.fixture(scope="module")
def pair_v05(tmp_path_factory):
    """verbs-v0.5 and a copy whose reports sent by graphrag >= 2.0's rule only, at level 2, are longer."""
    old = shared_index("verbs-v0.5")
    rep = pq.read_table(old / "create_final_community_reports.parquet").to_pandas()
    at_most_2 = set(rep.loc[rep["level"].astype(int) <= 2, "community"].astype(int))
    only_v2 = at_most_2 - _v1_sent(old, 2)
    assert only_v2  # the ancestors graphrag >= 2.0 sends with their descendants
    new = _copy(old, tmp_path_factory.mktemp("v05") / "new")
    p = new / "create_final_community_reports.parquet"
    t = pq.read_table(p)
    com = pc.cast(t["community"], pa.int64()).to_pylist()
    longer = [
        x + (" More text." * 400 if c in only_v2 else "") for c, x in zip(com, t["full_content"].to_pylist())
    ]
    i = t.schema.get_field_index("full_content")
    pq.write_table(t.set_column(i, "full_content", pa.array(longer, t.schema.field(i).type)), p)
    return old, new


def _diff(old, new, *args):
    return CliRunner().invoke(app, ["diff", str(old), str(new), *EST, *args])


def _by(doc) -> dict:
    return {(s["community_level"], s["behaviour"]): s for s in doc["selections"]}


def test_a_3x_pair_does_not_fail_on_the_hypothetical_v1_coverage(pair_v3):
    old, new, dropped = pair_v3
    res = _diff(old, new, "-f", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    pytest.importorskip("jsonschema").validate(doc, json.loads(SCHEMA.read_text(encoding="utf-8")))
    s1, s2 = _by(doc)[(2, "v1")], _by(doc)[(2, "v2")]
    # graphrag < 2.0 cannot read a 3.x layout: hypothetical on both sides; >= 2.0 exact on both
    assert (s1["old"]["status"], s1["new"]["status"], s1["hypothetical"]) == (
        "hypothetical",
        "hypothetical",
        True,
    )
    assert (s2["old"]["status"], s2["new"]["status"], s2["hypothetical"]) == ("exact", "exact", False)
    # the hand-worked change: < 2.0 loses 88's 38 entities, >= 2.0 still covers them through 27
    assert s1["old"]["entities_covered"] - s1["new"]["entities_covered"] == dropped == 38
    assert s2["old"]["entities_covered"] == s2["new"]["entities_covered"]
    assert [(f["rule"], f["evidence"]["behaviour"]) for f in doc["hypothetical_changes"]] == [
        ("regression-coverage", "v1")
    ]
    assert doc["hypothetical_changes"][0]["evidence"]["hypothetical"] is True
    # what is judged: the new finding (a warning, below --fail-on error), nothing on coverage
    assert [f["rule"] for f in doc["regressions"]] == ["regression-new-finding"]
    assert doc["limits"]["include_hypothetical"] is False
    res = _diff(old, new, "-f", "github")
    assert res.exit_code == 0 and "::error" not in res.stdout
    assert "::notice title=regression-coverage (hyp.)::" in res.stdout
    text = _diff(old, new, "--width", "200").stdout
    row = next(line for line in text.splitlines() if line.startswith("2 ") and "< 2.0" in line)
    assert "hyp. 97 -> hyp. 96" in row  # 98 reports at level <= 2 before, 88's gone
    assert "hyp. = hypothetical" in text and "1 hypothetical change not judged" in text
    md = _diff(old, new, "-f", "markdown").stdout
    assert "| 2 | graphrag &lt; 2.0 | hyp. 97 -&gt; hyp. 96 |" in md and "Hypothetical changes" in md
    # asked for: judged as before, exit 1 with the ::error annotation
    res = _diff(old, new, "-f", "github", "--include-hypothetical")
    assert res.exit_code == 1 and "::error title=regression-coverage::" in res.stdout
    doc = json.loads(_diff(old, new, "-f", "json", "--include-hypothetical").stdout)
    assert doc["limits"]["include_hypothetical"] is True and doc["hypothetical_changes"] == []
    assert {f["rule"] for f in doc["regressions"]} == {"regression-new-finding", "regression-coverage"}


def test_a_0_9_pair_does_not_fail_on_the_hypothetical_v2_map_calls(pair_v05, tmp_path):
    old, new = pair_v05
    doc = json.loads(_diff(old, new, "-f", "json").stdout)
    s1, s2 = _by(doc)[(2, "v1")], _by(doc)[(2, "v2")]
    assert (s2["old"]["status"], s2["hypothetical"]) == ("graphrag_cannot_read", True)
    assert (s1["old"]["status"], s1["hypothetical"]) == ("exact", False)
    # only reports < 2.0 does not send grew: its tokens are unchanged, >= 2.0's map calls rose
    assert s1["old"]["tokens"] == s1["new"]["tokens"] and s1["old"]["map_calls"] == s1["new"]["map_calls"]
    assert s2["new"]["map_calls"] > s2["old"]["map_calls"] * 1.1
    assert doc["regressions"] == [] and [f["rule"] for f in doc["hypothetical_changes"]] == [
        "regression-map-calls"
    ]
    res = _diff(old, new, "-f", "github")
    assert res.exit_code == 0 and "::error" not in res.stdout
    res = _diff(old, new, "-f", "github", "--include-hypothetical")
    assert res.exit_code == 1 and "::error title=regression-map-calls::" in res.stdout
    # levels --baseline: the same judgement
    base = tmp_path / "base.json"
    r = CliRunner()
    assert (
        r.invoke(
            app, ["levels", str(old), "-f", "json", "-o", str(base), "--fail-on", "never", *EST]
        ).exit_code
        == 0
    )
    res = r.invoke(app, ["levels", str(new), "--baseline", str(base), "-f", "github", *EST])
    assert res.exit_code == 0 and "::error title=regression" not in res.stdout
    assert "regression-map-calls not judged" in res.stderr
    res = r.invoke(
        app, ["levels", str(new), "--baseline", str(base), "-f", "github", "--include-hypothetical", *EST]
    )
    assert res.exit_code == 1 and "::error title=regression-map-calls::" in res.stdout


def test_levels_baseline_on_the_3x_pair(pair_v3, tmp_path):
    old, new, _ = pair_v3
    base = tmp_path / "base.json"
    r = CliRunner()
    assert (
        r.invoke(
            app, ["levels", str(old), "-f", "json", "-o", str(base), "--fail-on", "never", *EST]
        ).exit_code
        == 0
    )
    res = r.invoke(app, ["levels", str(new), "--baseline", str(base), "-f", "github", *EST])
    assert res.exit_code == 0 and "::error title=regression" not in res.stdout
    assert "regression-coverage not judged" in res.stderr
    res = r.invoke(
        app, ["levels", str(new), "--baseline", str(base), "-f", "github", "--include-hypothetical", *EST]
    )
    assert res.exit_code == 1 and "::error title=regression-coverage::" in res.stdout


def test_a_generation_change_judges_neither_behaviour():
    """1.x -> 2.x (43 reports -> 787): graphrag >= 2.0 cannot read the old index, graphrag < 2.0 the new
    one: a behaviour counts as exact only when graphrag runs it on both sides, so none is judged."""
    res = _diff(shared_index("verbs-v1"), shared_index("real-technip-safety-v2"), "-f", "json")
    doc = json.loads(res.stdout)
    for s in doc["selections"]:
        if s["old"] is not None and s["new"] is not None:
            assert s["hypothetical"] is True, s
    assert not any(f["rule"] in ("regression-map-calls", "regression-coverage") for f in doc["regressions"])
    judged = json.loads(
        _diff(
            shared_index("verbs-v1"),
            shared_index("real-technip-safety-v2"),
            "-f",
            "json",
            "--include-hypothetical",
        ).stdout
    )
    moved = {f["rule"] for f in doc["hypothetical_changes"]}
    assert (
        moved and moved <= {f["rule"] for f in judged["regressions"]} and judged["hypothetical_changes"] == []
    )


@pytest.mark.parametrize(
    "old,new,want",
    [
        ("exact", "exact", True),
        ("exact", "hypothetical", False),
        ("hypothetical", "exact", False),
        ("graphrag_cannot_read", "exact", False),
        ("hypothetical", "hypothetical", False),
        (None, "exact", True),
        (None, "hypothetical", False),
        ("graphrag_cannot_read", None, False),
        (None, None, True),
    ],
)
def test_exact_on_both(old, new, want):
    from graphrag_audit.results.diff import exact_on_both

    assert exact_on_both(old, new) is want


def test_a_baseline_without_statuses_takes_the_new_index_status(pair_v3, tmp_path):
    """A levels JSON of schema 1.0 has no status per selection: the new index's decides."""
    old, new, _ = pair_v3
    base = tmp_path / "base.json"
    r = CliRunner()
    r.invoke(app, ["levels", str(old), "-f", "json", "-o", str(base), "--fail-on", "never", *EST])
    doc = json.loads(base.read_text())
    for lvl in doc["levels"]:
        for sel in lvl["selected"].values():
            sel.pop("status", None)
    doc["schema_version"] = "1.0"
    base.write_text(json.dumps(doc))
    res = r.invoke(app, ["levels", str(new), "--baseline", str(base), "-f", "github", *EST])
    assert res.exit_code == 0 and "regression-coverage not judged" in res.stderr


# ---- width, separators, plurals ------------------------------------------------------------------
def _numbers(text: str) -> set:
    return {w.strip("();,:") for w in text.split() if any(ch.isdigit() for ch in w) and "/" not in w}


@pytest.mark.parametrize(
    "old,new",
    [
        ("verbs-v3", "real-insurance-v3"),
        ("real-csekg-v1", "real-climate-update-v09"),
        ("real-cleanroom-specs-zh", "real-golf-zh-v1"),
    ],
)
def test_diff_text_fits_the_width(old, new, monkeypatch):
    """At COLUMNS=80 and at --width 80 (and 40, the smallest) no line is wider, in terminal cells."""
    from graphrag_audit.render.cells import cell_width

    a, b = shared_index(old), shared_index(new)
    wide = _diff(a, b, "--width", "400").stdout
    assert max(len(line) for line in wide.splitlines()) > 80  # the table and the sentences need more
    monkeypatch.setenv("COLUMNS", "80")
    outs = {"COLUMNS=80": _diff(a, b), "--width 80": _diff(a, b, "--width", "80")}
    monkeypatch.delenv("COLUMNS")
    outs["--width 40"] = _diff(a, b, "--width", "40")
    for how, res in outs.items():
        limit = 40 if how.endswith("40") else 80
        over = [line for line in res.stdout.splitlines() if cell_width(line) > limit]
        assert not over, (how, over)
        # nothing lost: every number of the wide output is still there (paths may be cut at 40)
        assert _numbers(wide) <= _numbers(res.stdout), how


def test_diff_text_counts_read_as_words():
    """output-pr2160 holds 1 community and 1 report: the singular; thousands separators on large counts."""
    one = _diff(shared_index("output-pr2160"), shared_index("output-pr2160")).stdout
    assert "(generation 2.x, 1 community, 1 report," in one and "1 communities" not in one
    big = _diff(
        shared_index("real-technip-safety-v2"), shared_index("real-insurance-v3"), "--width", "400"
    ).stdout
    assert "787 reports" in big and "2,340 clustered entities" in big
    # real-ralad-large's 1,240 communities all removed (matched by members against verbs-v3's 122)
    res = _diff(shared_index("real-ralad-large"), shared_index("verbs-v3"), "-f", "github")
    assert "communities 122 added, 1,240 removed, 0 changed" in res.stdout.splitlines()[-1]


def test_diff_help_names_only_its_own_options():
    res = CliRunner().invoke(app, ["diff", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    assert "--list-reports" not in res.stdout
    assert "--include-hypothetical" in res.stdout and "--width" in res.stdout
    res = CliRunner().invoke(app, ["levels", "--help"], env={"COLUMNS": "200"})
    assert "--include-hypothetical" in res.stdout and "--list-reports" in res.stdout


def test_text_lines_wrap_by_hand():
    from graphrag_audit.render.cells import cell_width, count, wrap

    assert wrap("aaa bbb ccc", 7) == ["aaa bbb", "  ccc"]
    assert wrap("aaa bbb ccc", 7, "- ", "  ") == ["- aaa", "  bbb", "  ccc"]
    assert wrap("x" * 10, 4) == ["xxxx", "  xx", "  xx", "  xx"]  # a word wider than the line is cut
    assert cell_width("中文a") == 5 and wrap("中文中文 中", 5) == ["中文", "  中", "  文", "  中"]
    assert [count(n, "community") for n in (0, 1, 2, 1234)] == [
        "0 communities",
        "1 community",
        "2 communities",
        "1,234 communities",
    ]
    assert count(1, "map call") == "1 map call" and count(2, "key") == "2 keys"
    assert count(3, "clustered entity", "clustered entities") == "3 clustered entities"


def test_a_cut_path_never_starts_a_line_with_a_workflow_command(tmp_path):
    """An index folder named with '::' inside a word: wherever the path is cut to fit, no line of the
    text starts (after blanks) with '::' (a GitHub Actions log would run it as a workflow command)."""
    from conftest import FIXTURES

    where = tmp_path / ("a" * 7 + "::error::pwned" + "b" * 30)
    shutil.copytree(FIXTURES / "seed-v3", where)
    started = []
    for width in range(40, 100):
        out = _diff(where, where, "--width", str(width)).stdout
        assert "aaaaaaa::error::pwned" in "".join(out.replace("\\x3a", ":").split())  # the path is shown
        started += [(width, line) for line in out.splitlines() if line.lstrip().startswith("::")]
    assert not started
