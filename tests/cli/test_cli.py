"""The CLI end to end, in a fresh process: exit codes, streams, env vars, locating the index."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

SEED = FIXTURES / "seed-v3"


def run(*args, env=None, cwd=None):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=e,
        cwd=cwd,
    )


def snapshot(d: Path):
    return sorted((str(p.relative_to(d)), p.stat().st_size, p.stat().st_mtime_ns) for p in d.rglob("*"))


def test_text_output_and_exit_zero():
    p = run("levels", SEED)
    assert p.returncode == 0, p.stderr
    assert "generation 3.x" in p.stdout and "What each community_level N sends" in p.stdout
    assert p.stderr == ""  # no progress output when stderr is not a terminal


def test_json_on_stdout_only():
    p = run("levels", SEED, "-f", "json", "--tokenizer", "estimate")
    assert p.returncode == 0 and p.stderr == ""
    d = json.loads(p.stdout)
    assert d["schema_version"] and d["index"]["generation"] == "3.x"
    assert d["levels"][1]["selected"]["v2"]["community_ids"] == [5, 6, 20, 21, 22]
    assert d["levels"][1]["selected"]["v1"]["community_ids"] == [20, 21, 22]


# severities present: level-gap fixture has an error; the seed has warnings and an info;
# the seed with loose thresholds has only the info (single-child-chain).
LOOSE = ("--max-unreachable", "1", "--max-inflation", "100")


@pytest.mark.parametrize(
    "fixture,extra,fail_on,code",
    [
        ("defects/level-gap", (), "error", 1),
        ("defects/level-gap", (), "never", 0),
        ("seed-v3", (), "error", 0),
        ("seed-v3", (), "warning", 1),
        ("seed-v3", LOOSE, "warning", 0),
        ("seed-v3", LOOSE, "info", 1),
        ("seed-v3", LOOSE, "never", 0),
    ],
)
def test_fail_on_maps_severity_to_exit_code(fixture, extra, fail_on, code):
    p = run("levels", FIXTURES / fixture, "--no-costs", "--fail-on", fail_on, *extra, "-f", "json")
    assert p.returncode == code, p.stderr
    sev = {f["severity"] for f in json.loads(p.stdout)["findings"]}
    rank = {"info": 1, "warning": 2, "error": 3}
    expect = 0 if fail_on == "never" else int(any(rank[s] >= rank[fail_on] for s in sev))
    assert expect == code


def test_options_from_environment():
    p = run("levels", SEED, "--no-costs", env={"GRAPHRAG_AUDIT_FAIL_ON": "warning"})
    assert p.returncode == 1
    p = run(
        "levels",
        SEED,
        "--no-costs",
        env={"GRAPHRAG_AUDIT_FAIL_ON": "warning", "GRAPHRAG_AUDIT_LEVEL": "0"},
    )
    assert p.returncode == 0, p.stdout  # at N=0 nothing is stuck and v2 == v1


@pytest.mark.parametrize(
    "make,expect",
    [
        (lambda t: t / "missing", "no such file or directory"),
        (lambda t: (t / "f.txt").write_text("x") and t / "f.txt", "not a directory"),
        (lambda t: t, "no GraphRAG index tables found"),
    ],
)
def test_unreadable_paths_exit_2_with_one_line(tmp_path, make, expect):
    target = make(tmp_path)
    before = snapshot(tmp_path)
    p = run("levels", target)
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0] and "Traceback" not in p.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "damage,expect",
    [
        ("zero", "file is empty (0 bytes)"),
        ("truncate", "truncated"),
        ("text", "not a parquet file (bad magic bytes)"),
        ("drop-level", "required column 'level' missing"),
        ("string-level", "column 'level' has non-numeric value"),
    ],
)
def test_bad_tables_exit_2_naming_the_file(tmp_path, damage, expect):
    idx = tmp_path / "idx"
    shutil.copytree(SEED, idx)
    target = idx / "communities.parquet"
    if damage == "zero":
        target.write_bytes(b"")
    elif damage == "truncate":
        target.write_bytes(target.read_bytes()[:200])
    elif damage == "text":
        target.write_text("id,community\n1,2\n")
    else:
        import pandas as pd

        df = pd.read_parquet(target)
        if damage == "drop-level":
            df = df.drop(columns=["level"])
        else:
            df["level"] = df["level"].map(lambda v: f"level {v}")
        df.to_parquet(target, index=False)
    before = snapshot(tmp_path)
    p = run("levels", idx)
    assert p.returncode == 2, p.stdout
    line = p.stderr.strip()
    assert "\n" not in line and "Traceback" not in p.stderr
    assert str(target) in line and expect in line, line
    assert snapshot(tmp_path) == before


def test_output_file_and_refusal_inside_index(tmp_path):
    idx = tmp_path / "idx"
    shutil.copytree(SEED, idx)
    before = snapshot(idx)
    out = tmp_path / "report.json"
    p = run("levels", idx, "-f", "json", "-o", out, "--no-costs")
    assert p.returncode == 0 and p.stdout == "" and json.loads(out.read_text())["schema_version"]
    p = run("levels", idx, "-f", "json", "-o", idx / "audit.json", "--no-costs")
    assert p.returncode == 2 and "refusing to write inside the index directory" in p.stderr
    assert snapshot(idx) == before


def test_project_root_settings_and_timestamped_layout(tmp_path):
    # a graphrag project root whose settings.yaml points at a custom output dir
    root = tmp_path / "proj"
    shutil.copytree(SEED, root / "custom_out")
    (root / "settings.yaml").write_text('models:\n  x: 1\noutput:\n  type: file\n  base_dir: "custom_out"\n')
    p = run("levels", root, "-f", "json", "--no-costs")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["index"]["output_dir"].endswith("custom_out") and "settings.yaml" in d["index"]["notes"][0]
    # a 0.x timestamped layout: the newest run is used and named
    ts = tmp_path / "old"
    shutil.copytree(FIXTURES / "seed-v05", ts / "output" / "20240801-101010" / "artifacts")
    shutil.copytree(FIXTURES / "seed-v1", ts / "output" / "20240902-090909" / "artifacts")
    p = run("levels", ts, "-f", "json", "--no-costs")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["index"]["generation"] == "1.0-1.2"
    assert any("20240902-090909" in n and "of 2" in n for n in d["index"]["notes"])


def test_console_scripts_and_help():
    for exe in ("graphrag-audit", "audit"):
        path = shutil.which(exe)
        if path is None:
            pytest.skip(f"{exe} console script not on PATH (install the package with pip)")
        p = subprocess.run([path, "levels", "--help"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and "--fail-on" in p.stdout and "Exit codes" not in p.stderr
    p = run("--help")
    assert "Exit codes: 0" in p.stdout.replace("\n", " ") or "Exit codes:" in p.stdout
    assert run("--version").stdout.startswith("graphrag-audit ")


def test_unknown_tokenizer_is_a_usage_error():
    p = run("levels", SEED, "--tokenizer", "gpt2")
    assert p.returncode == 2 and "unknown encoding" in p.stderr


def test_out_of_memory_is_said_plainly(monkeypatch):
    """arrow's out-of-memory error is an ArrowException as well as a MemoryError: the loaders must
    not turn it into 'unreadable parquet data', nor fall back to a slower path."""
    import pyarrow as pa
    from typer.testing import CliRunner

    import graphrag_audit.io.tables as tables
    from graphrag_audit.cli import app

    def oom(*_a, **_k):
        raise pa.ArrowMemoryError("malloc of size 1073741824 failed")

    monkeypatch.setattr(tables, "_read_parquet", oom)
    with pytest.raises(MemoryError):
        tables.read_table(SEED / "communities.parquet", ["community", "level"])
    res = CliRunner().invoke(app, ["levels", str(SEED), "-f", "json"])
    assert res.exit_code == 2
    assert "out of memory" in res.output and "unreadable" not in res.output and "Traceback" not in res.output
