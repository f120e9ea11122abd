"""Docs stay true to the code."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_rules_doc_is_generated_from_the_rules():
    spec = importlib.util.spec_from_file_location("gen_rules", ROOT / "docs" / "gen_rules.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == mod.render(), \
        "docs/rules.md is stale: run python docs/gen_rules.py"


def test_readme_quick_start_commands_are_the_ci_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_cmd = 'python -m pip install ".[test]" && python -m pytest'
    assert test_cmd in readme and ci.rstrip().endswith(test_cmd)
    assert "python -m pip install . && python -m graphrag_audit levels fixtures/seed-v3" in readme


def test_readme_command_table_lists_every_cli_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "graphrag_audit", "--help"], capture_output=True, text=True,
                         timeout=60).stdout
    from graphrag_audit.cli import app
    import typer.main

    names = sorted(typer.main.get_command(app).commands)
    for name in names:
        assert f"`{name} " in readme or f"`{name}`" in readme, name
        assert name in out
