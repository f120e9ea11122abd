"""A community number written ``1_0`` is not 10 (issue 38). Python's ``int()`` and ``float()``,
``ast.literal_eval`` and pydantic (typer's option coercion) all read ``1_0`` as 10; graphrag never
writes an id so. Wherever the tool reads a community number from text (a table's id columns, a
list cell, ``--relevant``, ``tree --root``, the tables ``plan --write`` filters, the ids graphrag
returns to ``--verify``) such a value is refused, or kept as the text it is, never read as 10."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from graphrag_audit.cli import app
from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.coerce import int_ids, int_lists, parse_list_cell


def _cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _one_error_line(res) -> str:
    assert res.exit_code == 2 and res.stdout == "", (res.exit_code, res.stdout[-500:], res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphrag-audit: error: "), res.stderr
    return lines[0]


# ---- table text ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["1_0", " 1_0 ", "-1_0", "1_0.0", "1_000"])
def test_an_id_column_refuses_underscored_numbers(text):
    with pytest.raises(IndexInputError, match="non-numeric value"):
        int_ids(pd.Series(["5", text], dtype=object), Path("t.parquet"), "community")
    # the same column without it reads as before
    assert int_ids(
        pd.Series(["5", "10", " 7 ", "3.0", None], dtype=object), Path("t.parquet"), "community"
    ).tolist() == [5, 10, 7, 3, -1]


@pytest.mark.parametrize(
    "cell, items",
    [
        ("[1_0, 2]", ["1_0", 2]),  # a Python list literal (ast.literal_eval reads 1_0 as 10)
        ("[-1_0, 2, -3]", ["-1_0", 2, -3]),
        ("[1_0 21]", ["1_0", 21]),  # numpy's str(array), graphrag 3's CSV children
        ("['a_1', 3]", ["a_1", 3]),  # text keeps its underscore, numbers are numbers
        ("[10, 21]", [10, 21]),
        ("[10 21]", [10, 21]),
    ],
)
def test_list_cells_keep_underscored_numbers_as_text(cell, items):
    assert parse_list_cell(cell) == items


def test_a_children_cell_with_an_underscored_number_is_refused():
    with pytest.raises(IndexInputError, match="'1_0' where community numbers belong"):
        int_lists(pd.Series(["[1_0, 21]"], dtype=object), Path("communities.csv"), "children")
    assert (
        int_lists(pd.Series(["[10, 21]", "[10 21]"], dtype=object), Path("c.csv"), "children")
        == [[10, 21]] * 2
    )


def _csv_copy(tmp_path: Path, column: str, old: str, new: str) -> Path:
    """fixtures/seed-v3-csv with the first ``communities.csv`` cell of ``column`` holding ``old`` changed."""
    d = tmp_path / "csv"
    shutil.copytree(FIXTURES / "seed-v3-csv", d)
    path = d / "communities.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index(column)
    hits = [r for r in rows[1:] if r[col] == old]
    assert hits
    hits[0][col] = new
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return d


@pytest.mark.parametrize(
    "column, old, new, message",
    [
        ("community", "20", "2_0", "communities.csv: column 'community' has non-numeric value '2_0'"),
        ("parent", "20", "2_0", "communities.csv: column 'parent' has non-numeric value '2_0'"),
        (
            "children",
            "[20 21]",
            "[2_0 21]",
            "communities.csv: column 'children' holds '2_0' where community numbers",
        ),
    ],
)
def test_a_csv_index_with_an_underscored_id_is_refused(tmp_path, column, old, new, message):
    """The seed's community 20 written 2_0: read as 20 before (the seed's audit, unchanged); now
    one line naming the file and the value, exit 2, for levels and tree."""
    d = _csv_copy(tmp_path, column, old, new)
    for args in (("levels", d, "--no-costs", "-f", "json"), ("tree", d, "-f", "json")):
        assert message in _one_error_line(_cli(*args))


def test_a_string_id_index_with_an_underscored_id_is_refused(tmp_path):
    """graphrag 0.1-0.4 stores community ids as strings: a report of community "7_7" (not 77)."""
    d = tmp_path / "v01"
    shutil.copytree(FIXTURES / "seed-v01", d)
    path = d / "create_final_community_reports.parquet"
    t = pq.read_table(path)
    ids = ["7_7" if c == "77" else c for c in t.column("community").to_pylist()]
    pq.write_table(t.set_column(t.schema.get_field_index("community"), "community", pa.array(ids)), path)
    line = _one_error_line(_cli("levels", d, "--no-costs"))
    assert "create_final_community_reports.parquet: column 'community' has non-numeric value '7_7'" in line


# ---- user input ------------------------------------------------------------------------------------
def test_relevant_refuses_an_underscored_number():
    line = _one_error_line(_cli("levels", FIXTURES / "seed-v3", "--no-costs", "--relevant", "5,2_0"))
    assert line == "graphrag-audit: error: --relevant: '2_0' is not a community number"
    ok = _cli("levels", FIXTURES / "seed-v3", "--no-costs", "-f", "json", "--relevant", "5,20")
    assert ok.exit_code in (0, 1), ok.stderr


def test_tree_root_refuses_an_underscored_number():
    line = _one_error_line(_cli("tree", FIXTURES / "seed-v3", "--root", "2_0"))
    assert line == (
        "graphrag-audit: error: --root: must be a whole number (got '2_0'); "
        "graphrag-audit tree --help lists the options"
    )
    # what typer's integer coercion took before still reads the same
    want = _cli("tree", FIXTURES / "seed-v3", "--root", "20", "-f", "json")
    assert want.exit_code == 0 and '"community":20' in want.stdout.replace(" ", "")
    for text in (" 20", "+20", "20.0", "020"):
        assert _cli("tree", FIXTURES / "seed-v3", "--root", text, "-f", "json").stdout == want.stdout, text
    for text in ("20.5", "0x14", "abc", "", "٢٠"):
        assert f"--root: must be a whole number (got {text!r})" in _one_error_line(
            _cli("tree", FIXTURES / "seed-v3", "--root", text)
        ), text


# ---- the tables plan --write filters; the ids graphrag returns to --verify -------------------------
def test_plan_write_and_verify_do_not_read_underscored_ids_as_numbers():
    from graphrag_audit.handoff import _community_number
    from graphrag_audit.verify import id_key

    assert [_community_number(v) for v in ("10", " 10", "10.0", "1_0", "1_0.0")] == [10, 10, 10, None, None]
    assert [_community_number(v) for v in (10, "10", "1_0", None)] == [10, 10, None, None]
    assert [id_key(v) for v in ("10", 10, "10.0", "1_0")] == [10, 10, 10, "1_0"]
