"""``plan -f markdown`` hides absolute paths like ``levels -f markdown`` (a plan is pasted into
issues); ``--include-titles`` shows them; text and JSON keep them (issue 17)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from conftest import FIXTURES

SEED = FIXTURES / "seed-v3"
REPO = FIXTURES.parent
NOTE = "report titles, entity names and absolute paths are hidden (ids stay); --include-titles shows them"


def plan(*args, cwd=None):
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    p = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "plan", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd or REPO,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def _private_copy(tmp_path):
    """The seed under a folder whose name is 'private' (a client's name in a real path)."""
    idx = tmp_path / "acme-confidential" / "output"
    shutil.copytree(SEED, idx)
    return idx


def test_markdown_hides_absolute_paths_by_default(tmp_path):
    idx = _private_copy(tmp_path)
    out_dir = tmp_path / "acme-confidential" / "planned"
    md = plan(idx, "--reports", "3", "-f", "markdown", "--write", out_dir)
    assert (out_dir / "community_reports.parquet").is_file()  # the write happened; only its name is hidden
    assert "acme-confidential" not in md and str(tmp_path) not in md
    assert md.startswith("## graphrag-audit plan: (absolute path hidden)\n")
    assert "tables in (absolute path hidden)" in md
    assert f"Privacy: {NOTE}" in md
    handoff = [ln for ln in md.splitlines() if ln.startswith("- Wrote 3 reports")]
    assert len(handoff) == 1 and " to (absolute path hidden) (" in handoff[0]


def test_include_titles_shows_them(tmp_path):
    idx = _private_copy(tmp_path)
    md = plan(idx, "--reports", "3", "-f", "markdown", "--include-titles")
    assert md.startswith(f"## graphrag-audit plan: {idx}\n")
    assert f"tables in {idx}" in md and "Privacy:" not in md and "hidden" not in md


def test_the_rest_of_the_markdown_is_the_same(tmp_path):
    idx = _private_copy(tmp_path)
    hidden = plan(idx, "--reports", "3", "-f", "markdown").splitlines()
    shown = plan(idx, "--reports", "3", "-f", "markdown", "--include-titles").splitlines()
    at = hidden.index(f"Privacy: {NOTE}")
    assert hidden[at + 1] == ""
    del hidden[at : at + 2]
    diff = [(a, b) for a, b in zip(hidden, shown) if a != b]
    assert len(hidden) == len(shown)
    assert diff == [
        ("## graphrag-audit plan: (absolute path hidden)", f"## graphrag-audit plan: {idx}"),
        ("tables in (absolute path hidden)", f"tables in {idx}"),
    ]


def test_a_relative_path_stays_as_typed(tmp_path):
    idx = _private_copy(tmp_path)
    md = plan("acme-confidential/output", "--reports", "3", "-f", "markdown", cwd=tmp_path)
    assert md.startswith("## graphrag-audit plan: acme-confidential/output\n")
    assert str(tmp_path) not in md and idx.is_dir()


def test_text_and_json_keep_the_path(tmp_path):
    idx = _private_copy(tmp_path)
    assert json.loads(plan(idx, "--reports", "3", "-f", "json"))["index"]["path"] == str(idx)
    assert str(idx) in plan(idx, "--reports", "3", "--width", "300")
