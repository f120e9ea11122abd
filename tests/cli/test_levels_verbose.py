"""``levels --verbose``: the generation evidence is shown only on request (text and markdown); the
one-word generation stays without it, and the JSON is the same either way (issue 17)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import FIXTURES

SEED = FIXTURES / "seed-v3"


def run(*args):
    env = {**os.environ, "NO_COLOR": "1"}
    p = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "levels", str(SEED), "--no-costs", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert p.returncode in (0, 1), p.stderr
    return p.stdout


def _evidence() -> list[str]:
    ev = json.loads(run("-f", "json"))["index"]["generation_evidence"]
    assert ev  # the fixture's generation is decided by named tables and columns
    return ev


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_text_shows_the_evidence_only_with_verbose():
    ev = _evidence()
    quiet = run("--width", "200")
    lines = quiet.splitlines()
    assert "generation 3.x" in lines
    assert not any(e in quiet for e in ev)
    loud = run("--width", "200", "--verbose")
    assert _flat("generation 3.x  ·  " + "; ".join(ev)) in _flat(loud)
    assert "generation 3.x" not in loud.splitlines()
    short = run("--width", "200", "-v")
    assert short == loud
    # nothing else changes: the quiet output is the loud one minus the evidence
    assert quiet == loud.replace("  ·  " + "; ".join(ev), "")


def test_markdown_shows_the_evidence_only_with_verbose():
    ev = _evidence()
    quiet = run("-f", "markdown")
    assert "| **generation** | 3.x |" in quiet.splitlines()
    assert not any(e.split(" (")[0] in quiet for e in ev)
    loud = run("-f", "markdown", "--verbose")
    row = next(line for line in loud.splitlines() if line.startswith("| **generation** |"))
    assert row.startswith("| **generation** | 3.x (") and row.endswith(") |")
    for e in ev:
        assert e.replace(">", "&gt;").replace("<", "&lt;") in row
    assert loud.rstrip().endswith("-f markdown --verbose`_")


def test_json_is_the_same_with_and_without_verbose():
    assert run("-f", "json", "--verbose") == run("-f", "json")
