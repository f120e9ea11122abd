"""``levels --baseline`` and ``diff`` name the options that differ between the two runs (the
baseline's recorded ``options`` against this run's; diff: the options each index's audit resolved,
e.g. from a project's settings.yaml): a changed number may come from them, not from the index. The
note never changes the exit code."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from conftest import FIXTURES
from typer.testing import CliRunner

from graphrag_audit.cli import app

SEED = FIXTURES / "seed-v3"
EST = ("--tokenizer", "estimate")
SCHEMA = Path(__file__).resolve().parents[2] / "graphrag_audit" / "schema" / "diff.schema.json"


def _notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "different options" in line]


def _baseline(tmp_path, *args) -> Path:
    base = tmp_path / "base.json"
    res = CliRunner().invoke(
        app, ["levels", str(SEED), "-f", "json", "-o", str(base), "--fail-on", "never", *args]
    )
    assert res.exit_code == 0, res.stderr
    return base


def test_baseline_names_the_context_window_it_was_made_with(tmp_path):
    base = _baseline(tmp_path, *EST)
    assert json.loads(base.read_text())["options"]["max_context_tokens"] == 12000
    r = CliRunner()
    same = r.invoke(app, ["levels", str(SEED), "--baseline", str(base), "-f", "json", *EST])
    assert same.exit_code == 0 and _notes(same.stderr) == []
    res = r.invoke(
        app, ["levels", str(SEED), "--baseline", str(base), "-f", "json", "--max-context-tokens", "130", *EST]
    )
    assert _notes(res.stderr) == [
        "graphrag-audit: note: --baseline: the two runs used different options "
        "(max_context_tokens 12,000 -> 130): a change may come from the options, not from "
        "the index"
    ]
    # the exit still follows --fail-on over the regressions: the same findings without the note's influence
    regs = [f for f in json.loads(res.stdout)["findings"] if f["rule"].startswith("regression-")]
    judged_error = any(f["severity"] == "error" for f in regs)
    assert res.exit_code == (1 if judged_error else 0)


def test_baseline_at_another_level_names_the_level(tmp_path):
    base = _baseline(tmp_path, "--level", "1", *EST)
    res = CliRunner().invoke(app, ["levels", str(SEED), "--baseline", str(base), "-f", "json", *EST])
    assert [n.split("(")[1].split(")")[0] for n in _notes(res.stderr)] == ["level 1 -> 2"]


def test_an_option_the_baseline_does_not_record_is_not_named(tmp_path):
    base = _baseline(tmp_path, *EST)
    doc = json.loads(base.read_text())
    del doc["options"]["max_context_tokens"]
    base.write_text(json.dumps(doc))
    res = CliRunner().invoke(
        app, ["levels", str(SEED), "--baseline", str(base), "--max-context-tokens", "130", "-f", "json", *EST]
    )
    assert _notes(res.stderr) == [] and res.exit_code in (0, 1), res.stderr  # (a baseline it reads)


def test_diff_names_the_options_each_index_resolved(tmp_path):
    """NEW is a project whose settings.yaml points at the same tables with a 130-token context."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "settings.yaml").write_text(
        "completion_models:\n  default_completion_model:\n    model: gpt-4o\noutput_storage:\n  type: file\n"
        f"  base_dir: {json.dumps(str(SEED.resolve()))}\nglobal_search:\n  max_context_tokens: 130\n",
        encoding="utf-8",
    )
    r = CliRunner()
    text = r.invoke(app, ["diff", str(SEED), str(root), "--width", "300", *EST])
    assert [line for line in text.stdout.splitlines() if line.startswith("note:")] == [
        "note: the two runs used different options (max_context_tokens 12,000 -> 130): a change may come from the "
        "options, not from the index"
    ]
    same = r.invoke(app, ["diff", str(SEED), str(SEED), "--width", "300", *EST])
    assert "different options" not in same.stdout and same.exit_code == 0
    md = r.invoke(app, ["diff", str(SEED), str(root), "-f", "markdown", *EST])
    assert "Note: the two runs used different options (max_context_tokens 12,000 -&gt; 130)" in md.stdout
    gh = r.invoke(app, ["diff", str(SEED), str(root), "-f", "github", *EST])
    assert (
        "::notice title=graphrag-audit diff%3A options differ::the two runs used different options"
        in gh.stdout
    )
    assert text.exit_code == md.exit_code == gh.exit_code
    doc = r.invoke(app, ["diff", str(SEED), str(root), "-f", "json", *EST])
    jsonschema.validate(json.loads(doc.stdout), json.loads(SCHEMA.read_text()))
    assert doc.exit_code == text.exit_code
