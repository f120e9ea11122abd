""".ci/run fails, before running the tests, when the graphrag side environments cannot be built or
when the installed product fails its smoke step (.ci/installed_smoke.py); then it runs the default
tier and the heavy tiers, and fails when either fails."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import pytest
from graphrag_side import ROOT

#: what .ci/run runs once the side environments and the smoke step are ready: ruff, the lancedb extra, the
#: two tiers
TAIL = [
    "-m pip install -q .[lint]",
    "-m ruff check .",
    "-m ruff format --check .",
    "-m mypy graphrag_audit",
    "-m pip install -q .[lancedb]",
    "-m pip install .[test]",
    "-m pytest",
    "-m pytest -n 2 -m side or emulator or browser or hostile or large",
]

#: ``npm install azurite`` stand-in: an azurite-blob that answers --version
STAND_IN_NPM = (
    "mkdir -p node_modules/.bin && printf '#!/bin/sh\\nexit 0\\n' > node_modules/.bin/azurite-blob"
    " && chmod +x node_modules/.bin/azurite-blob\n"
)


def _script(path, body):
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.mark.skipif(
    sys.platform == "win32" or shutil.which("bash") is None, reason=".ci/run is a bash script"
)
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
    _script(bin_dir / "npm", STAND_IN_NPM)  # no npm registry from a test
    side = tmp_path / "tmp" / "graphrag-audit-ci"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "TMPDIR": str(tmp_path / "tmp"),
        "CI_RETRY_PAUSE": "0",
    }
    (tmp_path / "tmp").mkdir()
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1, (proc.stdout[-3000:], proc.stderr[-3000:])
    assert not calls.exists(), calls.read_text()  # neither pip install ".[test]" nor pytest ran
    attempts = sorted(venvs.read_text().split("\n")[:-1])
    assert attempts == sorted(
        [f"-m venv {side / 'gr3'}"] * 2 + [f"-m venv {side / 'gr27'}"] * 2 + [f"-m venv {side / 'gr12'}"] * 2
    )
    for version, env_dir in (("3.3.0", "gr3"), ("2.7.2", "gr27"), ("1.2.0", "gr12")):
        assert f"ci: graphrag {version}: install failed; retrying once" in proc.stdout
        assert (
            f"ci: error: the graphrag {version} side environment ({side / env_dir}) could not be built: "
            f"installing graphrag=={version} failed twice; last lines of {side / env_dir}.log:"
        ) in proc.stdout
    assert "ci:   stand-in: no venv here" in proc.stdout
    assert "graphrag side environment(s) not built: gr3 gr27 gr12" in proc.stderr
    assert [p.name for p in side.glob("*.ok")] == ["azurite.ok"]  # (the stand-in npm worked)


@pytest.mark.skipif(
    sys.platform == "win32" or shutil.which("bash") is None, reason=".ci/run is a bash script"
)
@pytest.mark.parametrize("npm_works", [True, False])
def test_ci_run_retries_once_then_runs_the_readme_command_with_the_side_interpreters(tmp_path, npm_works):
    """The first graphrag install fails (pip's transient failures), the retry works: .ci/run goes
    on to the README's test command with GRAPHRAG_VERIFY_PYTHONS naming the three side interpreters and
    CI=true. Stand-ins: ``python3 -m venv DIR`` makes DIR/bin/python, a script that fails its first
    ``pip install graphrag==...`` and succeeds otherwise; ``python`` records its calls."""
    bin_dir, calls = tmp_path / "bin", tmp_path / "python-calls"
    bin_dir.mkdir()
    _script(
        bin_dir / "python",
        f"echo \"$* | $GRAPHRAG_VERIFY_PYTHONS | $GRAPHRAG_DYNAMIC_PYTHONS | $CI\" >> '{calls}'\nexit 0\n",
    )
    _side_env_stand_ins(bin_dir, npm_works)
    side = tmp_path / "tmp" / "graphrag-audit-ci"
    (tmp_path / "tmp").mkdir()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "TMPDIR": str(tmp_path / "tmp"),
        "CI_RETRY_PAUSE": "0",
    }
    env.pop("CI", None)
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=300
    )
    if not npm_works:  # Azurite is required: no skipping remote-index tests under CI
        assert proc.returncode == 1, (proc.stdout[-3000:], proc.stderr[-3000:])
        assert (
            "Azurite (npm) not installed" in proc.stderr and "ci:   stand-in npm: ECONNRESET" in proc.stdout
        )
        assert not calls.exists()  # neither pip install ".[test]" nor pytest ran
        return
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    assert f"ci: Azurite: {side / 'azurite'}" in proc.stdout
    pythons = (
        f"{side / 'gr3' / 'bin' / 'python'}:{side / 'gr27' / 'bin' / 'python'}:"
        f"{side / 'gr12' / 'bin' / 'python'} | {side / 'gr27' / 'bin' / 'python'}"
    )
    # the test extra (the smoke step's emulators), the smoke step, ruff, then both tiers
    assert calls.read_text().split("\n")[:-1] == [
        f"{call} | {pythons} | true"
        for call in ["-m pip install -q .[test]", ".ci/installed_smoke.py", *TAIL]
    ]
    for version in ("3.3.0", "2.7.2", "1.2.0"):
        assert f"ci: graphrag {version}: install failed; retrying once" in proc.stdout
    assert "ci: error" not in proc.stdout + proc.stderr
    assert sorted(p.name for p in side.glob("*.ok")) == ["azurite.ok", "gr12.ok", "gr27.ok", "gr3.ok"]


def _side_env_stand_ins(bin_dir, npm_works=True):
    """``python3 -m venv DIR`` makes DIR/bin/python, a script that fails its first ``pip install
    graphrag==...`` and succeeds otherwise; chromium and npm (a stand-in azurite-blob, or a failure)."""
    side_python = (
        'd=$(dirname "$0"); once="$(dirname "$d").failed-once"  # beside the venv: it is rebuilt\n'
        'case "$*" in\n'
        '  *"install -q graphrag=="*) if [ ! -e "$once" ]; then touch "$once"; '
        'echo "stand-in pip: connection reset" >&2; exit 1; fi; touch "$d/graphrag"; exit 0;;\n'
        '  *"-c import graphrag"*) [ -e "$d/graphrag" ] && exit 0; exit 1;;\n'
        "  *) exit 0;;\n"
        "esac\n"
    )
    _script(
        bin_dir / "python3",
        'if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then\n'
        '  mkdir -p "$3/bin" && cat > "$3/bin/python" <<\'EOS\'\n#!/bin/sh\n' + side_python + "EOS\n"
        '  chmod +x "$3/bin/python"; exit 0\nfi\nexit 1\n',
    )
    _script(bin_dir / "chromium", "exit 0\n")
    # npm: installs a stand-in azurite-blob, or fails (a registry down): then .ci/run fails before the tests
    _script(bin_dir / "npm", STAND_IN_NPM if npm_works else "echo 'stand-in npm: ECONNRESET' >&2\nexit 1\n")


@pytest.mark.skipif(
    sys.platform == "win32" or shutil.which("bash") is None, reason=".ci/run is a bash script"
)
@pytest.mark.parametrize("failing", ["smoke", "test-extra", "default-tier", "heavy-tiers"])
def test_ci_run_fails_when_the_installed_product_or_the_tests_fail(tmp_path, failing):
    """The side environments build; then the smoke step fails (a stand-in ``python`` exiting 1 on
    ``.ci/installed_smoke.py``), or ``pip install -q .[test]`` fails twice: .ci/run says so on
    stderr and exits 1 without running pytest. A failing default tier (the heavy tiers then do not
    run) or failing heavy tiers after a passing smoke step: exit 1 too. The real smoke step:
    .ci/installed_smoke.py (a fresh venv per install, too slow for the test suite; .ci/run runs it
    for real)."""
    bin_dir, calls = tmp_path / "bin", tmp_path / "python-calls"
    bin_dir.mkdir()
    fails_on = {
        "smoke": ".ci/installed_smoke.py",
        "test-extra": "-m pip install -q .[test]",
        "default-tier": TAIL[-2],
        "heavy-tiers": TAIL[-1],
    }[failing]
    _script(
        bin_dir / "python",
        f"echo \"$*\" >> '{calls}'\n"
        f'[ "$*" = "{fails_on}" ] && {{ echo \'stand-in: failed\' >&2; exit 1; }}\nexit 0\n',
    )
    _side_env_stand_ins(bin_dir)
    (tmp_path / "tmp").mkdir()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "TMPDIR": str(tmp_path / "tmp"),
        "CI_RETRY_PAUSE": "0",
    }
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1, (proc.stdout[-3000:], proc.stderr[-3000:])
    ran = calls.read_text().split("\n")[:-1]
    if failing in ("default-tier", "heavy-tiers"):
        assert ran == [
            "-m pip install -q .[test]",
            ".ci/installed_smoke.py",
            *TAIL[: TAIL.index(fails_on) + 1],
        ]
        assert "ci: error" not in proc.stdout + proc.stderr
        return
    assert "-m pytest" not in ran
    if failing == "smoke":
        assert ran == ["-m pip install -q .[test]", ".ci/installed_smoke.py"]
        assert "ci: error: the installed product failed (.ci/installed_smoke.py, listed above)" in proc.stderr
    else:
        assert ran == ["-m pip install -q .[test]"] * 2  # tried twice, like the side environments
        assert "ci: pip install .[test] failed; retrying once" in proc.stdout
        assert 'ci: error: pip install ".[test]" failed twice' in proc.stderr
