"""Project hygiene (issue 17): licence, project URLs, changelog, the README's test-suite notes,
and how the example GitHub workflow and every install hint install graphrag-audit.

graphrag-audit is not published on PyPI and the project does not own that name there, so nothing
may tell a user to install it by name: the workflow installs from a source the user controls,
pinned to a commit (a git URL at a 40-hex SHA, or a checkout in the audited repository).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "examples" / "github-actions" / "graphrag-audit.yml"
SHA = "0123456789abcdef0123456789abcdef01234567"

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = None


def _pyproject() -> dict:
    if tomllib is None:
        pytest.skip("tomllib needs Python >= 3.11")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


# ---- licence, URLs, changelog, README ------------------------------------------------------------
def test_license_file_matches_pyproject():
    declared = _pyproject()["project"]["license"]
    assert declared == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in text and "WITHOUT WARRANTY OF ANY KIND" in text


def test_project_urls():
    urls = _pyproject()["project"]["urls"]
    assert {"Homepage", "Documentation", "Changelog", "Issues"} <= set(urls)
    assert all(u.startswith("https://") for u in urls.values())
    assert urls["Changelog"].endswith("/CHANGELOG.md")


def test_changelog_has_an_entry_per_resolved_issue():
    log = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headed = set(int(n) for n in re.findall(r"^### Issue (\d+):", log, re.M))
    assert {2, 3, 4, 5, 6, 7, 8, 13, 14, 15, 16, 17} <= headed


def test_readme_says_how_to_run_the_heavy_tiers_and_what_skips():
    """The heavy tiers the README and .ci/run select are the markers pyproject.toml registers and
    the default tier deselects."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Running the tests", 1)[1].split("\n## ", 1)[0]
    ini = _pyproject()["tool"]["pytest"]["ini_options"]
    tiers = " or ".join(m.split(":")[0] for m in ini["markers"])
    assert f"-m 'not ({tiers})'" in ini["addopts"]
    heavy = f'python -m pytest -n 2 -m "{tiers}"'
    assert heavy in section and (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith(heavy)
    assert "../shared/indexes" in section and "skip" in section
    assert "GRAPHRAG_VERIFY_PYTHONS" in section and "Chromium" in section


# ---- install hints -------------------------------------------------------------------------------
BARE_INSTALLS = [
    re.compile(p)
    for p in (
        r"pip install ['\"]?graphrag-audit\b(?![/\w])",  # by name from a package index
        r"graphrag-audit\[",  # an extra of the package by name
        r"graphrag-audit==",  # a pinned version from a package index
    )
]


def _tracked_text_files() -> list[Path]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: cannot list the repository's tracked files")
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, timeout=60)
    if proc.returncode != 0:
        pytest.skip("not a git checkout")
    out = []
    for name in proc.stdout.decode("utf-8").split("\0"):
        p = ROOT / name
        if (
            name
            and p.is_file()
            and p.suffix in (".md", ".py", ".yml", ".yaml", ".toml", ".txt", "")
            and p.resolve() != Path(__file__).resolve()
        ):
            out.append(p)
    return out


def test_no_install_hint_names_an_unowned_pypi_package():
    bad = []
    for f in _tracked_text_files():
        text = f.read_bytes().decode("utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            if any(p.search(line) for p in BARE_INSTALLS):
                bad.append(f"{f.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_verify_hint_installs_graphrag_itself(monkeypatch):
    from graphrag_audit import verify

    monkeypatch.setattr(verify, "installed_graphrag_version", lambda: None)
    reason = verify.graphrag_unusable_reason()
    assert "python -m pip install graphrag)" in reason and not any(p.search(reason) for p in BARE_INSTALLS)


# ---- the example workflow ------------------------------------------------------------------------
def _install_step(doc: dict) -> dict:
    steps = doc["jobs"]["audit"]["steps"]
    found = [s for s in steps if "pip install" in s.get("run", "")]
    assert len(found) == 1, found
    return found[0]


def _ci_md_workflow() -> dict:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    docs = [yaml.safe_load(b) for b in blocks]
    found = [d for d in docs if isinstance(d, dict) and "jobs" in d]
    assert len(found) == 1
    return found[0]


def test_workflow_reads_the_source_from_a_variable_without_a_fallback():
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    env = doc["jobs"]["audit"]["env"]
    assert env == {"GRAPHRAG_AUDIT_SOURCE": "${{ vars.GRAPHRAG_AUDIT_SOURCE }}"}  # no "|| 'name'" fallback
    assert _ci_md_workflow()["jobs"]["audit"]["env"] == env
    # docs/ci.md shows the same install step as the example
    assert _install_step(_ci_md_workflow())["run"] == _install_step(doc)["run"]


def _run_install(source: str | None, tmp_path: Path) -> tuple[int, str, list[str]]:
    """Run the workflow's install step with bash; ``python`` is a stub recording its arguments."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    script = _install_step(yaml.safe_load(WORKFLOW.read_text(encoding="utf-8")))["run"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    stub = bin_dir / "python"
    stub.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{calls}"\n')
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    if source is not None:
        env["GRAPHRAG_AUDIT_SOURCE"] = source
    proc = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    recorded = calls.read_text().splitlines() if calls.exists() else []
    calls.unlink(missing_ok=True)
    return proc.returncode, proc.stdout, recorded


@pytest.mark.parametrize(
    "source",
    [
        f"git+https://github.com/someone/graphrag-audit@{SHA}",
        "./tools/graphrag-audit",
    ],
)
def test_workflow_installs_a_pinned_source(source, tmp_path):
    code, out, calls = _run_install(source, tmp_path)
    assert code == 0, out
    assert calls == [f"-m pip install {source}"]


@pytest.mark.parametrize(
    "source",
    [
        None,
        "",
        "graphrag-audit",
        "graphrag-audit==0.1.0",
        "git+https://github.com/someone/graphrag-audit",  # no commit
        "git+https://github.com/someone/graphrag-audit@v0.1.0",  # a movable tag
        "git+https://github.com/someone/graphrag-audit@main",
        f"git+https://github.com/someone/graphrag-audit@{SHA[:12]}",  # an abbreviated SHA
        f"git+http://github.com/someone/graphrag-audit@{SHA}",  # not https
        f"git+https://github.com/someone/graphrag-audit@{SHA} graphrag-audit",
        "/abs/path",
    ],
)
def test_workflow_refuses_anything_else(source, tmp_path):
    code, out, calls = _run_install(source, tmp_path)
    assert code == 2 and calls == []
    assert out.startswith("::error title=graphrag-audit::") and "GRAPHRAG_AUDIT_SOURCE" in out


def test_every_test_conftest_moves_to_large_exists():
    """A renamed or deleted test left in tests/conftest.py's LARGE_TESTS would let its new name fall
    back into the default tier unnoticed."""
    import ast

    from conftest import LARGE_TESTS

    tests = Path(__file__).resolve().parent
    stale = []
    for file, names in LARGE_TESTS.items():
        path = next(tests.rglob(file), None)
        defs = (
            set()
            if path is None
            else {
                n.name
                for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(n, ast.FunctionDef)
            }
        )
        stale += [f"{file}::{n}" for n in names if n not in defs]
    assert not stale, stale
