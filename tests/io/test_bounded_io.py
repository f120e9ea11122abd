"""Every file the tool reads is bounded; every file it read is protected from its writes (issue 39 part 3).

Reads: FIFOs, devices, huge and deeply nested inputs as the baseline, the ``--relevant`` list,
the ``.env``: one line naming the file, exit 2, never a hang (each run is a child process killed after a timeout, in 2 GiB of address space).
Writes: ``-o``, ``plan --write`` and ``$GITHUB_STEP_SUMMARY`` refuse every file the run read
(settings, ``.env``, baseline, ``--relevant`` list) and hard links to any file under the index
folder, and leave them unchanged.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hostile import REPO, clean_env, run_cli

PREFIX = "graphrag-audit: error: "
TIMEOUT = 60.0
SETTINGS = "output_storage:\n  type: file\n  base_dir: ${OUT_DIR}\nmodels:\n  key: ${API_KEY}\n"
DOTENV = "OUT_DIR=output\nAPI_KEY=sk-secret\n"


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    """A graphrag 3 project: settings.yaml whose output folder comes from .env, a lancedb folder."""
    root = tmp_path / "proj"
    out = root / "output"
    shutil.copytree(REPO / "fixtures" / "seed-v3", out)
    (out / "lancedb").mkdir()
    (out / "lancedb" / "data.lance").write_bytes(b"vectors")
    (root / "settings.yaml").write_text(SETTINGS)
    (root / ".env").write_text(DOTENV)
    return root


def cli(*args, cwd: Path, env: dict | None = None):
    r = run_cli(list(args), timeout=TIMEOUT, cwd=cwd, env=clean_env(env))
    assert not r.timed_out, f"hung: {args}"
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    return r


def refused(r, shown: str, problem: str) -> None:
    """Exit 2 and exactly one line: the file as the user named it, then the problem."""
    assert r.code == 2, (r.code, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"{PREFIX}{shown}: ") and problem in lines[0], lines[0]


# ---- reads ---------------------------------------------------------------------------------------
def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def test_baseline_fifo_is_refused_not_waited_for(proj, tmp_path):
    fifo(tmp_path / "base.json")
    refused(
        cli("levels", proj, "--no-costs", "--baseline", "base.json", cwd=tmp_path),
        "base.json",
        "is a FIFO (named pipe), not a regular file",
    )


def test_baseline_device_is_refused_not_read_forever(proj, tmp_path):
    refused(
        cli("levels", proj, "--no-costs", "--baseline", "/dev/zero", cwd=tmp_path),
        "/dev/zero",
        "the baseline is a character device, not a regular file",
    )


def test_deeply_nested_baseline_is_an_input_error(proj, tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    refused(
        cli("levels", proj, "--no-costs", "--baseline", "deep.json", cwd=tmp_path),
        "deep.json",
        "the baseline is not usable JSON (nested too deeply)",
    )


@pytest.mark.parametrize("command", ["levels", "report"])
def test_relevant_fifo_is_refused(proj, tmp_path, command):
    fifo(tmp_path / "ids.txt")
    refused(
        cli(command, proj, "--no-costs", "--relevant", "@ids.txt", "-o", "out.txt", cwd=tmp_path),
        "ids.txt",
        "is a FIFO (named pipe), not a regular file",
    )


def test_relevant_device_is_refused(proj, tmp_path):
    refused(
        cli("levels", proj, "--no-costs", "--relevant", "@/dev/zero", cwd=tmp_path),
        "/dev/zero",
        "the --relevant list is a character device",
    )


def test_dotenv_fifo_is_an_error_not_absent(proj, tmp_path):
    (proj / ".env").unlink()
    fifo(proj / ".env")
    refused(
        cli("levels", proj, "--no-costs", cwd=tmp_path),
        str(proj / ".env"),
        "the .env file is a FIFO (named pipe), not a regular file",
    )


def test_dotenv_interpolation_bomb_is_refused(proj, tmp_path):
    # 10 x ${previous} per line: 50 characters become 50 x 10^9 after nine lines (graphrag's
    # python-dotenv would build them all); refused once the values pass 16 Mi characters
    bomb = (
        "OUT_DIR=output\nA="
        + "x" * 50
        + "\n"
        + "".join(f"B{i}=" + ("${" + (f"B{i - 1}" if i else "A") + "}") * 10 + "\n" for i in range(9))
    )
    assert len(bomb) < 600
    (proj / ".env").write_text(bomb)
    refused(
        cli("levels", proj, "--no-costs", cwd=tmp_path),
        str(proj / ".env"),
        "expands its ${VAR} references to more than 16,777,216 characters",
    )


def test_dotenv_interpolation_depth_is_capped(proj, tmp_path):
    chain = "A=o\n" + "".join(f"B{i}=${{{f'B{i - 1}' if i else 'A'}}}\n" for i in range(40))
    (proj / ".env").write_text("OUT_DIR=output\n" + chain)
    refused(
        cli("levels", proj, "--no-costs", cwd=tmp_path),
        str(proj / ".env"),
        "nests more than 32 levels deep (at B32)",
    )


def test_huge_dotenv_is_refused_unread(proj, tmp_path):
    with open(proj / ".env", "ab") as fh:  # 1 GiB, sparse: nothing is written to disk
        fh.truncate(1024**3)
    refused(
        cli("levels", proj, "--no-costs", cwd=tmp_path),
        str(proj / ".env"),
        "the .env file is 1,024 MiB, more than the 4 MiB limit",
    )


def test_dotenv_is_read_as_python_dotenv_reads_it(tmp_path):
    """The capped interpolation gives python-dotenv's own values (graphrag's reader)."""
    from dotenv.main import DotEnv

    from graphrag_audit.io.bounded import read_dotenv

    path = tmp_path / ".env"
    path.write_bytes(
        b"A=1\nB=${A}x\r\nC='${B}'\nD=\"${B}${A:-z}\"\nexport E=${HOME}\nF\nG=${F}\n"
        b"H=${NOPE:-d}\n# note\nI=  spaced  \nA=${A}${A}\nJ=${A}\n"
    )
    environ = {"HOME": "/home/u", "B": "from-env"}
    os_environ = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(environ)
        expected = dict(DotEnv(path, interpolate=True, override=False, encoding="utf-8").dict())
    finally:
        os.environ.clear()
        os.environ.update(os_environ)
    assert read_dotenv(path, environ) == expected
    assert expected["D"] == "from-env1" and expected["J"] == "11"  # the environment wins, as in graphrag


# ---- writes --------------------------------------------------------------------------------------
def unchanged(proj: Path) -> None:
    assert (proj / "settings.yaml").read_text() == SETTINGS
    assert (proj / ".env").read_text() == DOTENV
    assert (proj / "output" / "lancedb" / "data.lance").read_bytes() == b"vectors"


@pytest.mark.parametrize("name", ["settings.yaml", ".env"])
def test_output_never_replaces_the_settings_or_env_read(proj, tmp_path, name):
    r = cli("levels", proj, "--no-costs", "-f", "json", "-o", proj / name, cwd=tmp_path)
    refused(
        r, str(proj / name), f"refusing to write over {os.path.realpath(proj / name)}, a file this run reads"
    )
    unchanged(proj)
    assert cli("levels", proj, "--no-costs", cwd=tmp_path).code == 0  # the next run still works


def test_step_summary_never_appends_to_the_settings(proj, tmp_path):
    r = cli(
        "levels",
        proj,
        "--no-costs",
        "-f",
        "github",
        cwd=tmp_path,
        env={"GITHUB_STEP_SUMMARY": str(proj / "settings.yaml")},
    )
    refused(r, str(proj / "settings.yaml"), "a file this run reads ($GITHUB_STEP_SUMMARY)")
    unchanged(proj)


def test_step_summary_never_appends_through_a_hard_link_into_the_index(proj, tmp_path):
    link = tmp_path / "summary.md"
    os.link(proj / "output" / "lancedb" / "data.lance", link)
    r = cli(
        "levels", proj, "--no-costs", "-f", "github", cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(link)}
    )
    real = os.path.realpath(proj / "output" / "lancedb" / "data.lance")
    refused(r, str(link), f"refusing to write over {real}, a file of the index ($GITHUB_STEP_SUMMARY)")
    unchanged(proj)


def test_output_never_replaces_the_baseline_or_relevant_list_read(proj, tmp_path):
    first = cli("levels", proj, "--no-costs", "-f", "json", "-o", "base.json", cwd=tmp_path)
    assert first.code == 0, first.stderr
    before = (tmp_path / "base.json").read_bytes()
    r = cli(
        "levels", proj, "--no-costs", "-f", "json", "--baseline", "base.json", "-o", "base.json", cwd=tmp_path
    )
    refused(
        r,
        "base.json",
        f"refusing to write over {os.path.realpath(tmp_path / 'base.json')}, a file this run reads",
    )
    assert (tmp_path / "base.json").read_bytes() == before
    (tmp_path / "ids.txt").write_text("1\n2\n")
    r = cli("report", proj, "--no-costs", "--relevant", "@ids.txt", "-o", "ids.txt", cwd=tmp_path)
    refused(r, "ids.txt", "a file this run reads")
    assert (tmp_path / "ids.txt").read_text() == "1\n2\n"


def test_plan_write_never_replaces_the_settings(proj, tmp_path):
    """``plan --write OUT --force`` links OUT's other names to the index's files: with OUT the
    project root and a file named settings.yaml in the index folder, that would replace the settings."""
    out = proj / "output"
    (proj / "settings.yaml").write_text(SETTINGS.replace("${OUT_DIR}", "../idx"))
    idx = proj.parent / "idx"
    out.rename(idx)
    (idx / "settings.yaml").write_text("not the project's settings\n")
    (proj / ".env").write_text(DOTENV)
    r = cli("plan", proj, "--map-calls", "100", "--write", proj, "--force", cwd=tmp_path)
    assert r.code == 2 and "a file this run reads" in r.stderr, r.stderr
    assert (proj / "settings.yaml").read_text() == SETTINGS.replace("${OUT_DIR}", "../idx")


def test_update_run_output_never_replaces_the_settings(proj, tmp_path):
    run = proj / "update_output" / "20250101-000000"
    for part in ("previous", "delta"):
        shutil.copytree(REPO / "fixtures" / "seed-v3", run / part)
    r = cli(
        "update-run", run, "-o", proj / "settings.yaml", cwd=tmp_path
    )  # the run folder, inside the project
    refused(r, str(proj / "settings.yaml"), "a file this run reads")
    unchanged(proj)


def test_deeply_nested_pandas_metadata_is_an_input_error(proj, tmp_path):
    """pyarrow parses a table's pandas metadata even with ignore_metadata (so pandas.read_parquet,
    graphrag's reader, fails on it too): one line naming the table, not an internal error."""
    import pyarrow.parquet as pq

    path = proj / "output" / "entities.parquet"
    pq.write_table(pq.read_table(path).replace_schema_metadata({b"pandas": b"[" * 100_000}), path)
    refused(
        cli("levels", proj, "--no-costs", cwd=tmp_path),
        str(path),
        "cannot convert to a table (its pandas metadata is JSON nested too deeply)",
    )
