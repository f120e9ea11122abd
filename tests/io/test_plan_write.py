"""``plan --write`` for every layout graphrag can query (issue 18): graphrag 1.x ``create_final_*``
(create_final_nodes rewritten), graphrag >= 2.0 CSV, siblings linked, the query command per graphrag
CLI generation. Expectations are hand-worked frontiers and a brute-force transcription of graphrag
1.2.0's ``read_indexer_reports`` (graphrag/query/indexer_adapters.py at v1.2.0); the real graphrag
runs in tests/verify/test_plan_write_graphrag.py."""

from __future__ import annotations

import csv
import io
import json
import os

import pandas as pd
import pyarrow.parquet as pq
import pytest
from builders import write_v1, write_v3
from conftest import shared_index
from typer.testing import CliRunner

from graphrag_audit.cli import app
from graphrag_audit.graphrag.selection import select_all
from graphrag_audit.handoff import MANIFEST_NAME, PlanWriteError, query_commands, write_plan
from graphrag_audit.io.load import load_index

# C1{a..h} C2{i,j} at level 0; C3{a..e} C4{f,g,h} under 1, C5{i} C6{j} under 2; C7{a,b,c} C8{d,e} under 3
H1 = {
    1: (0, -1, list("abcdefgh")),
    2: (0, -1, list("ij")),
    3: (1, 1, list("abcde")),
    4: (1, 1, list("fgh")),
    5: (1, 2, ["i"]),
    6: (1, 2, ["j"]),
    7: (2, 3, list("abc")),
    8: (2, 3, list("de")),
}
CROSS = [2, 3, 4]  # a frontier over levels 0 and 1 (graphrag 1.x selects none of its kind alone)


def graphrag_1x_reports(reports: pd.DataFrame, nodes: pd.DataFrame, level) -> list[int]:
    """graphrag 1.2.0 read_indexer_reports (dynamic_community_selection=False), transcribed:
    level filter on both tables, each title's max community (nulls -1), inner join on community."""
    if level is not None:
        nodes = nodes[nodes["level"] <= level]
        reports = reports[reports["level"] <= level]
    nodes = nodes.copy()
    nodes["community"] = nodes["community"].fillna(-1).astype(int)
    keep = nodes.groupby(["title"]).agg({"community": "max"}).reset_index()["community"].drop_duplicates()
    return sorted(reports.merge(keep, on="community", how="inner")["community"].astype(int).tolist())


def test_v1_written_nodes_select_exactly_the_plan(tmp_path):
    model = load_index(write_v1(tmp_path / "src", H1))
    res = write_plan(model, CROSS, tmp_path / "out")
    out = tmp_path / "out"
    assert sorted(os.listdir(out)) == [
        "create_final_communities.parquet",
        "create_final_community_reports.parquet",
        "create_final_entities.parquet",
        "create_final_nodes.parquet",
        MANIFEST_NAME,
    ]
    nodes = pd.read_parquet(out / "create_final_nodes.parquet")
    src_nodes = pd.read_parquet(tmp_path / "src" / "create_final_nodes.parquet")
    # the plan's node rows, unchanged and in source order; nothing else
    expected = src_nodes[src_nodes["community"].isin(CROSS)].reset_index(drop=True)
    pd.testing.assert_frame_equal(nodes, expected)
    reports = pd.read_parquet(out / "create_final_community_reports.parquet")
    assert res.max_level == 1 and res.tables["nodes"].name == "create_final_nodes.parquet"
    for level in (None, 1, 2):  # None (the API) and any --community-level >= the largest written level
        assert graphrag_1x_reports(reports, nodes, level) == CROSS
    # below the largest level the deeper plan reports drop out (the docs say: pass max_level)
    assert graphrag_1x_reports(reports, nodes, 0) == [2]
    # the source selected something else at every level: the rewrite is what makes 1.x take the plan
    src_reports = pd.read_parquet(tmp_path / "src" / "create_final_community_reports.parquet")
    assert all(graphrag_1x_reports(src_reports, src_nodes, n) != CROSS for n in (None, 0, 1, 2))
    back = load_index(out)
    assert back.generation.before_2
    sel = select_all(back)
    assert sel[None]["v1"].community_ids(back) == CROSS and sel[1]["v1"].community_ids(back) == CROSS
    comm = pd.read_parquet(out / "create_final_communities.parquet")
    assert comm["community"].tolist() == CROSS and (comm["parent"] == -1).all()
    assert (out / "create_final_entities.parquet").read_bytes() == (
        tmp_path / "src" / "create_final_entities.parquet"
    ).read_bytes()
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["graphrag_cli"] == (
        f"graphrag query --root <your project> --method global --data {out.resolve()} "
        '--community-level 1 --query "<question>"'
    )


def test_v1_plan_lost_in_the_rollup_is_refused(tmp_path):
    """Entity 'x' sits in plan communities 3 and 4 (a hierarchy graphrag's update can produce): 1.x
    rolls it up to 4 only, and 3 has no other entity, so 1.x could not select 3: nothing is written."""
    tree = {1: (0, -1, ["x", "y"]), 3: (1, 1, ["x"]), 4: (1, 1, ["x", "y"])}
    nodes = [("x", 1, 0), ("y", 1, 0), ("x", 3, 1), ("x", 4, 1), ("y", 4, 1)]
    model = load_index(write_v1(tmp_path / "src", tree, nodes=nodes))
    with pytest.raises(PlanWriteError, match=r"graphrag 1.x would not select plan communities \[3\]"):
        write_plan(model, [3, 4], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_string_id_generations_are_refused(tmp_path):
    model = load_index(shared_index("dulce-v0.3-create_final"))
    with pytest.raises(PlanWriteError, match="community ids are strings"):
        write_plan(model, [], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _to_csv(src, dst):
    dst.mkdir()
    for name in ("entities", "communities", "community_reports"):  # as graphrag 3.x's CSVTableProvider writes
        (dst / f"{name}.csv").write_text(
            pd.read_parquet(src / f"{name}.parquet").to_csv(index=False), encoding="utf-8"
        )
    return dst


def test_csv_layout_written_as_csv(tmp_path):
    write_v3(tmp_path / "pq", H1)
    src = _to_csv(tmp_path / "pq", tmp_path / "src")
    (src / "lancedb").mkdir()
    (src / "lancedb" / "vectors.lance").write_bytes(b"v" * 5000)
    model = load_index(src)
    assert model.table_format == "csv"
    res = write_plan(model, CROSS, tmp_path / "out")
    out = tmp_path / "out"
    assert sorted(os.listdir(out)) == [
        "communities.csv",
        "community_reports.csv",
        "entities.csv",
        "graphrag_audit_plan.json",
        "lancedb",
    ]
    assert res.linked == ["lancedb/"] and res.linked_bytes == 5000 and (out / "lancedb").is_symlink()
    assert res.commands == [
        {
            "graphrag": "3.x",
            "command": f'graphrag query "<question>" --root <your project> '
            f"--method global --data {out.resolve()} --community-level 1",
            "note": "the project's settings need table_provider: {type: csv} (graphrag >= 3.0.2)",
        }
    ]
    # graphrag 3.x reads CSV as pd.read_csv(StringIO(text), keep_default_na=False)
    for name in ("communities.csv", "community_reports.csv"):
        got = pd.read_csv(io.StringIO((out / name).read_text(encoding="utf-8")), keep_default_na=False)
        want = pd.read_csv(io.StringIO((src / name).read_text(encoding="utf-8")), keep_default_na=False)
        want = want[want["community"].isin(CROSS)].reset_index(drop=True)
        assert got["community"].tolist() == CROSS
        for col in want.columns:
            if col not in ("parent", "children"):
                assert got[col].tolist() == want[col].tolist(), (name, col)
        assert (got["parent"] == -1).all()
        if "children" in got:
            assert set(got["children"]) == {"[]"}
    back = load_index(out)
    assert back.table_format == "csv"
    assert select_all(back)[None]["v2"].community_ids(back) == CROSS
    assert (out / "entities.csv").read_bytes() == (src / "entities.csv").read_bytes()


def test_csv_fields_round_trip_quotes_and_newlines(tmp_path):
    """Titles with commas, quotes and newlines survive the CSV rewrite field for field."""
    write_v3(tmp_path / "pq", H1)
    rep = pd.read_parquet(tmp_path / "pq" / "community_reports.parquet")
    rep["title"] = [f'T{c}, "quoted"\nsecond line' for c in rep["community"]]
    rep.to_parquet(tmp_path / "pq" / "community_reports.parquet", index=False)
    src = _to_csv(tmp_path / "pq", tmp_path / "src")
    write_plan(load_index(src), CROSS, tmp_path / "out")
    rows = list(
        csv.DictReader(io.StringIO((tmp_path / "out" / "community_reports.csv").read_text(), newline=""))
    )
    assert [r["title"] for r in rows] == [f'T{c}, "quoted"\nsecond line' for c in CROSS]


def test_query_commands_follow_each_graphrag_cli():
    """graphrag/cli/main.py ``query``: 3.3.0 takes the question as an argument; 2.7.2 and 1.2.0 as --query
    (all: --root, --method, --data, --community-level)."""
    common = "--root <your project> --method global --data OUT --community-level 3"
    assert query_commands("3.x", "parquet", "OUT", 3) == [
        {"graphrag": "3.x", "command": f'graphrag query "<question>" {common}'}
    ]
    assert query_commands("2.x", "parquet", "OUT", 3) == [
        {"graphrag": "2.x", "command": f'graphrag query {common} --query "<question>"'},
        {"graphrag": "3.x", "command": f'graphrag query "<question>" {common}'},
    ]
    assert query_commands("1.0-1.2", "parquet", "OUT", 3) == [
        {"graphrag": "1.x", "command": f'graphrag query {common} --query "<question>"'}
    ]


def test_cli_prints_linked_and_the_version_command(tmp_path):
    src = write_v1(tmp_path / "src", H1)
    pd.DataFrame({"id": ["t"], "text": ["x" * 3000]}).to_parquet(src / "create_final_text_units.parquet")
    (src / "lancedb").mkdir()
    (src / "lancedb" / "a.lance").write_bytes(b"z" * 7000)
    out = tmp_path / "out"
    r = CliRunner().invoke(
        app,
        [
            "plan",
            str(src),
            "--reports",
            "5",
            "--no-costs",
            "--write",
            str(out),
            "--width",
            "400",
            "--color",
            "never",
        ],
    )
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    linked = 7000 + (src / "create_final_text_units.parquet").stat().st_size
    assert f"Linked to the source, not copied (global search does not read them; {linked:,} bytes): " in text
    assert "create_final_text_units.parquet" in text and "lancedb/" in text
    assert (
        f"graphrag 1.x CLI: graphrag query --root <your project> --method global --data {out.resolve()}"
        in text
    )
    assert '--query "<question>"' in text
    assert "graphrag 1.x selects exactly the plan at community_level=None and community_level=" in text
    assert (out / "lancedb").is_symlink() and (out / "create_final_text_units.parquet").is_symlink()
    # what was linked is not copied: only the four tables and the manifest are files in OUT
    files = sorted(p.name for p in out.iterdir() if not p.is_symlink())
    assert files == [
        "create_final_communities.parquet",
        "create_final_community_reports.parquet",
        "create_final_entities.parquet",
        "create_final_nodes.parquet",
        MANIFEST_NAME,
    ]
    assert (
        pq.read_table(out / "create_final_nodes.parquet").num_rows
        < pq.read_table(src / "create_final_nodes.parquet").num_rows
    )


@pytest.mark.parametrize(
    "name,message",
    [
        ("real-genesis-zh-deep", "--write needs both a communities and a community_reports table"),
        ("real-ralad-large", "--write needs both a communities and a community_reports table"),
        ("real-climate-update-v09", "sit under several parents"),
        ("dulce-v0.1-create_final", "--write needs both a communities and a community_reports table"),
        ("dulce-v0.3-create_final", "community ids are strings"),
        ("real-iswc-v0", "community ids are strings"),
    ],
)
def test_write_refuses_before_planning(name, message, tmp_path):
    """The shared indexes no plan can be handed from (tests/verify/test_plan_write_graphrag.py NOT_HANDED) are
    refused with one line, exit 2, nothing written."""
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["plan", str(shared_index(name)), "--reports", "5", "--write", str(out)])
    assert r.exit_code == 2 and message in r.output and not out.exists(), r.output


def test_write_when_the_plan_does_not_fit_shows_the_frontier(tmp_path):
    """Issue 18: --write no longer hides the frontier when the plan does not fit: exit 1, the plan
    rendered on stdout, one warning on stderr, nothing written."""
    src = write_v3(tmp_path / "src", H1)
    out = tmp_path / "out"
    r = CliRunner().invoke(
        app, ["plan", str(src), "--reports", "1", "--no-costs", "--write", str(out), "-f", "json"]
    )
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert doc["plan"]["fits"] is False and doc["plan"]["communities"] == [1, 2] and doc["handoff"] is None
    assert r.stderr == f"graphrag-audit: warning: {out}: nothing written: the plan does not fit the budget\n"
    assert not out.exists()
