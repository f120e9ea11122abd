"""Start-up: what importing the package and running the CLI pull in (issues 15 and 22).

``import graphrag_audit``, ``--help``, ``<command> --help`` and ``--version`` import neither
pandas, pyarrow, numpy nor the tokenizer; the tokenizer (bpe-openai) is imported only when tokens
are counted exactly. Each case runs in a fresh interpreter and reads its ``sys.modules``; nothing
here measures time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "fixtures" / "seed-v3"

HEAVY = ("pandas", "pyarrow", "numpy")
TOKENIZER = ("bpe_openai", "tiktoken")

# Runs the CLI's main() with argv[1] (a JSON list) in this interpreter, then prints the top-level
# names of every module imported, on stderr's last line (stdout carries the command's output).
_PROBE = """
import json, sys
args = json.loads(sys.argv[1])
sys.argv = ["graphrag-audit", *args]
code = 0
try:
    from graphrag_audit.cli import main
    main()
except SystemExit as exc:
    code = exc.code
sys.stderr.write("\\nMODULES " + json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""


def _probe(code: str, *args: str, cwd: Path = ROOT) -> tuple[object, set[str], str]:
    """Run ``code`` in a fresh interpreter: (its exit code, the modules it imported, its stdout)."""
    got = _probe_line(code, *args, cwd=cwd)
    return got["code"], set(got["modules"]), got["stdout"]


def _probe_line(code: str, *args: str, cwd: Path = ROOT) -> dict:
    """:func:`_probe`'s run: the child's MODULES line as a dict, with its ``stdout`` added."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_AUDIT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, proc.stderr[-2000:]
    return dict(json.loads(line[-1][len("MODULES ") :]), stdout=proc.stdout)


def _imported(code: str, *args: str, cwd: Path = ROOT) -> tuple[object, set[str]]:
    return _probe(code, *args, cwd=cwd)[:2]


def _cli(*args: str) -> tuple[object, set[str]]:
    return _probe(_PROBE, json.dumps(list(args)))[:2]


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_import_package_is_light_and_names_resolve_lazily():
    code = (
        "import sys, json, graphrag_audit\n"
        "before = sorted(sys.modules)\n"
        "from graphrag_audit import IndexInputError, load_index\n"
        "import graphrag_audit.errors as e, graphrag_audit.io.load as l, graphrag_audit.analysis.audit as a\n"
        "assert IndexInputError is e.IndexInputError and load_index is l.load_index\n"
        "assert graphrag_audit.audit is a.audit and graphrag_audit.AuditOptions is a.AuditOptions\n"
        "try:\n    graphrag_audit.no_such_name\nexcept AttributeError:\n    pass\n"
        "else:\n    raise SystemExit('no AttributeError')\n"
        "sys.stderr.write('\\nMODULES ' + json.dumps({'code': 0, 'modules': before}) + '\\n')\n"
    )
    code_, modules = _imported(code)
    assert code_ == 0
    assert not _top(modules) & {*HEAVY, *TOKENIZER, "typer", "rich"}
    assert "graphrag_audit" in modules


COMMANDS = ("levels", "tree", "report", "plan", "explain", "diff", "update-run", "bundle")


@pytest.mark.parametrize(
    "args", [["--help"], ["--version"], *([c, "--help"] for c in COMMANDS)], ids=" ".join
)
def test_help_and_version_import_no_data_library_nor_tokenizer(args):
    code, modules = _cli(*args)
    assert code in (0, None)
    # nor pydantic (typer's coercion imports it for a value to convert: entry.py's own --help is False)
    assert not _top(modules) & {*HEAVY, *TOKENIZER, "pydantic"}, sorted(
        _top(modules) & {*HEAVY, *TOKENIZER, "pydantic"}
    )
    # nor a renderer (they import numpy and rich)
    assert not {
        m for m in modules if m.startswith("graphrag_audit.render.") and m != "graphrag_audit.render.formats"
    }
    if args == ["--version"]:  # answered before typer is imported (graphrag_audit.cli.main)
        assert "typer" not in _top(modules)


@pytest.mark.parametrize(
    "args, counts",
    [
        (["levels", str(SEED), "--no-costs", "-f", "json"], False),
        (["levels", str(SEED), "--tokenizer", "estimate", "-f", "json"], False),
        (["report", str(SEED), "--no-costs", "-o", "-"], False),
        (["report", str(SEED), "--tokenizer", "estimate", "-o", "-"], False),
        (["plan", str(SEED), "--reports", "3", "--no-costs", "-f", "json"], False),
        (["plan", str(SEED), "--reports", "3", "--tokenizer", "estimate", "-f", "json"], False),
        (["tree", str(SEED)], False),
        # the probe sees the tokenizer when tokens are counted exactly
        (["levels", str(SEED), "-f", "json"], True),
        (["plan", str(SEED), "--reports", "3", "-f", "json", "--tokenizer", "o200k_base"], True),
    ],
    ids=lambda v: " ".join(v).replace(str(SEED), "seed-v3") if isinstance(v, list) else str(v),
)
def test_tokenizer_is_imported_only_when_tokens_are_counted(args, counts):
    code, modules = _cli(*args)
    assert code in (0, 1)
    assert bool(_top(modules) & {"bpe_openai"}) == counts
    assert "tiktoken" not in _top(modules)  # only graphrag's own code (--verify) uses it
