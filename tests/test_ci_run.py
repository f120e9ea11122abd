""".ci/run fails, before running the tests, when the graphrag side environments cannot be built."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import pytest

from graphrag_side import ROOT


def _script(path, body):
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.mark.skipif(sys.platform == "win32" or shutil.which("bash") is None, reason=".ci/run is a bash script")
def test_ci_run_fails_when_graphrag_cannot_be_installed(tmp_path):
    """Every install attempt fails (a stand-in ``python3`` whose ``-m venv`` fails, as a broken
    registry or a missing venv module would): both side environments are tried twice, .ci/run
    names them with the end of their logs and exits 1 without reaching the test command (a
    stand-in ``python`` records any call)."""
    bin_dir, calls, venvs = tmp_path / "bin", tmp_path / "python-calls", tmp_path / "python3-calls"
    bin_dir.mkdir()
    _script(bin_dir / "python", f"echo \"$@\" >> '{calls}'\nexit 0\n")
    _script(bin_dir / "python3", f"echo \"$@\" >> '{venvs}'\necho 'stand-in: no venv here' >&2\nexit 1\n")
    _script(bin_dir / "chromium", "exit 0\n")  # no apt-get from a test
    side = tmp_path / "tmp" / "graphrag-audit-ci"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1, (proc.stdout[-3000:], proc.stderr[-3000:])
    assert not calls.exists(), calls.read_text()  # neither pip install ".[test]" nor pytest ran
    attempts = sorted(venvs.read_text().split("\n")[:-1])
    assert attempts == sorted([f"-m venv {side / 'gr3'}"] * 2 + [f"-m venv {side / 'gr12'}"] * 2)
    for version, env_dir in (("3.3.0", "gr3"), ("1.2.0", "gr12")):
        assert f"ci: graphrag {version}: install failed; retrying once" in proc.stdout
        assert (f"ci: error: the graphrag {version} side environment ({side / env_dir}) could not be built: "
                f"installing graphrag=={version} failed twice; last lines of {side / env_dir}.log:") in proc.stdout
    assert "ci:   stand-in: no venv here" in proc.stdout
    assert "graphrag side environment(s) not built: gr3 gr12" in proc.stderr
    assert not list(side.glob("*.ok"))
