"""Compare every output of two revisions byte for byte (the redesign's safety net).

    python benchmarks/compare_outputs.py BASE [OTHER] [--out DIR] [--no-synthetic] [--only SUBSTR]

BASE and OTHER are git revisions of this repository; OTHER defaults to the working tree
(uncommitted changes included). Each revision is exported (``git archive``) into a scratch folder
and run in its own interpreter over the same inputs with the same absolute paths:

* every real index under ``../shared/indexes`` (skipped with a note when absent),
* every folder under ``fixtures/`` (the working tree's copy, so both revisions read the same files),
* a 100k-entity synthetic index (``leiden_like``) generated once by BASE's generator, in both the
  3.x and 1.0-1.2 layouts (``--no-synthetic`` leaves it out),

with every command and format: ``levels`` (text, json, markdown, github, and text with ``--level 1``),
``tree`` (text, mermaid, dot, graphml, json), ``report`` (HTML), and ``plan`` (text, json, markdown
with ``--map-calls 3``; json with ``--reports 10``). A case's record is its exit code, its stdout
and its stderr (a written file counts as stdout). The commands run in one process per revision
through the CLI's own ``typer`` app, which avoids paying the interpreter start-up for each case.

It prints one line per differing case and a count, writes both outputs of each differing case
under ``--out`` for ``diff -r``, and exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "indexes"

COMMANDS: dict[str, list[str]] = {
    "levels-text": ["levels", "{dir}", "--width", "120", "--color", "never"],
    "levels-text-level1": ["levels", "{dir}", "--width", "120", "--color", "never", "--level", "1"],
    "levels-json": ["levels", "{dir}", "-f", "json"],
    "levels-markdown": ["levels", "{dir}", "-f", "markdown"],
    "levels-github": ["levels", "{dir}", "-f", "github"],
    "tree-text": ["tree", "{dir}", "--width", "120", "--color", "never"],
    "tree-mermaid": ["tree", "{dir}", "-f", "mermaid"],
    "tree-dot": ["tree", "{dir}", "-f", "dot"],
    "tree-graphml": ["tree", "{dir}", "-f", "graphml"],
    "tree-json": ["tree", "{dir}", "-f", "json"],
    "report-html": ["report", "{dir}", "-o", "{file}"],
    "plan-text": ["plan", "{dir}", "--map-calls", "3", "--width", "120", "--color", "never"],
    "plan-json": ["plan", "{dir}", "--map-calls", "3", "-f", "json"],
    "plan-markdown": ["plan", "{dir}", "--map-calls", "3", "-f", "markdown"],
    "plan-json-reports": ["plan", "{dir}", "--reports", "10", "-f", "json"],
}
#: commands run on the large synthetic index (the others add little there and cost minutes)
LARGE_COMMANDS = ("levels-json", "levels-text", "levels-markdown", "tree-json", "plan-json")

# Runs inside each revision's interpreter: argv = [cases.json, out_dir]
DRIVER = textwrap.dedent(r"""
    import json, os, sys, traceback
    from pathlib import Path
    os.environ.pop("GITHUB_STEP_SUMMARY", None)
    os.environ["NO_COLOR"] = "1"
    os.environ["COLUMNS"] = "120"
    from typer.testing import CliRunner
    from graphrag_audit.cli import app
    cases = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    runner = CliRunner()
    for case in cases:
        target = out / case["name"]
        target.mkdir(parents=True, exist_ok=True)
        written = target / "written"
        args = [a.replace("{file}", str(written)) for a in case["args"]]
        try:
            res = runner.invoke(app, args, catch_exceptions=True)
            stdout, stderr, code = res.stdout_bytes, res.stderr_bytes or b"", res.exit_code
            if res.exception is not None and not isinstance(res.exception, SystemExit):
                stderr += ("".join(traceback.format_exception(res.exception))).encode()
        except Exception:
            stdout, stderr, code = b"", traceback.format_exc().encode(), "driver-error"
        # each revision writes under its own out folder: the folder's name is not an output
        stdout, stderr = (b.replace(str(out).encode(), b"<out>") for b in (stdout, stderr))
        if written.exists():
            stdout = written.read_bytes() + b"\n--- stdout ---\n" + stdout
            written.unlink()
        (target / "stdout").write_bytes(stdout)
        (target / "stderr").write_bytes(stderr)
        (target / "exit").write_text(str(code))
        print(case["name"], code, file=sys.stderr, flush=True)
""")

GENERATE = textwrap.dedent("""
    import sys
    import os, sys
    sys.path.insert(0, os.path.join(os.getcwd(), "tests"))  # the generator is test infrastructure
    try:  # revisions before the redesign shipped it inside the package
        from graphrag_audit.synthetic import leiden_like, write_index
    except ImportError:
        from synthetic import leiden_like, write_index
    n, out = int(sys.argv[1]), sys.argv[2]
    spec = leiden_like(n, max_cluster_size=10, seed=0)
    for layout in ("3.x", "1.0-1.2"):
        write_index(spec, f"{out}/{layout}", layout)
""")


def export(rev: str | None, dest: Path) -> Path:
    """The files of ``rev`` (None: the working tree, untracked files included) in ``dest``."""
    dest.mkdir(parents=True)
    if rev is None:
        files = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True, check=True
        ).stdout.split(b"\0")
        for f in filter(None, files):
            src = REPO / os.fsdecode(f)
            if src.is_file():
                (dest / os.fsdecode(f)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / os.fsdecode(f))
    else:
        tar = subprocess.run(["git", "archive", rev], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest


def index_dirs(synthetic: Path | None) -> dict[str, Path]:
    found: dict[str, Path] = {}
    if SHARED.is_dir():
        for p in sorted(SHARED.iterdir()):
            if p.is_dir():
                found[f"shared/{p.name}"] = p
    else:
        print(f"note: {SHARED} is absent; real indexes not compared", file=sys.stderr)
    for p in sorted((REPO / "fixtures").rglob("*")):
        if p.is_dir() and any(q.suffix in (".parquet", ".csv") for q in p.iterdir()):
            found[f"fixtures/{p.relative_to(REPO / 'fixtures')}"] = p
    if synthetic is not None:
        for layout in ("3.x", "1.0-1.2"):
            found[f"synthetic-100k/{layout}"] = synthetic / layout
    return found


def cases_for(indexes: dict[str, Path], only: str | None) -> list[dict]:
    cases = []
    for label, path in indexes.items():
        for cmd, args in COMMANDS.items():
            if label.startswith("synthetic") and cmd not in LARGE_COMMANDS:
                continue
            name = f"{label}/{cmd}"
            if only and only not in name:
                continue
            cases.append({"name": name, "args": [a.replace("{dir}", str(path)) for a in args]})
    return cases


def run_revision(code_dir: Path, cases_file: Path, out: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(code_dir), "PYTHONHASHSEED": "0"}
    for var in (
        "GRAPHRAG_AUDIT_LEVEL",
        "GRAPHRAG_AUDIT_FORMAT",
        "GRAPHRAG_AUDIT_TOKENIZER",
        "GRAPHRAG_AUDIT_COLOR",
        "GRAPHRAG_AUDIT_WIDTH",
        "GRAPHRAG_AUDIT_FAIL_ON",
    ):
        env.pop(var, None)
    subprocess.run(
        [sys.executable, "-c", DRIVER, str(cases_file), str(out)],
        cwd=code_dir,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def digest(case_dir: Path) -> str:
    h = hashlib.sha256()
    for part in ("exit", "stdout", "stderr"):
        h.update((case_dir / part).read_bytes() + b"\0")
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="git revision to compare from")
    ap.add_argument(
        "other", nargs="?", default=None, help="git revision to compare to (default: working tree)"
    )
    ap.add_argument("--out", type=Path, default=None, help="where to keep the differing outputs")
    ap.add_argument("--no-synthetic", action="store_true", help="leave out the 100k synthetic index")
    ap.add_argument("--synthetic-size", type=int, default=100_000)
    ap.add_argument("--only", default=None, help="only cases whose name contains this")
    args = ap.parse_args(argv)

    scratch = Path(tempfile.mkdtemp(prefix="compare-outputs-"))
    out = args.out or scratch / "diff"
    try:
        base_dir = export(args.base, scratch / "base")
        other_dir = export(args.other, scratch / "other")
        synthetic = None
        if not args.no_synthetic:
            synthetic = scratch / "synthetic"
            print(
                f"generating the {args.synthetic_size:,}-entity synthetic index with {args.base}'s generator",
                file=sys.stderr,
            )
            subprocess.run(
                [sys.executable, "-c", GENERATE, str(args.synthetic_size), str(synthetic)],
                cwd=base_dir,
                env={**os.environ, "PYTHONPATH": str(base_dir)},
                check=True,
            )
        cases = cases_for(index_dirs(synthetic), args.only)
        cases_file = scratch / "cases.json"
        cases_file.write_text(json.dumps(cases))
        for label, code_dir in (("base", base_dir), ("other", other_dir)):
            print(
                f"running {len(cases)} cases on {label} ({args.base if label == 'base' else args.other or 'working tree'})",
                file=sys.stderr,
            )
            run_revision(code_dir, cases_file, scratch / f"out-{label}")
        differing = []
        for case in cases:
            a, b = scratch / "out-base" / case["name"], scratch / "out-other" / case["name"]
            if digest(a) != digest(b):
                differing.append(case["name"])
                for label, src in (("base", a), ("other", b)):
                    dest = out / label / case["name"]
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copytree(src, dest, dirs_exist_ok=True)
                print(f"DIFFERS {case['name']}")
        print(
            f"{len(cases) - len(differing)} identical, {len(differing)} differing, of {len(cases)} cases"
            + (f"; outputs of the differing cases in {out}" if differing else "")
        )
        return 1 if differing else 0
    finally:
        for sub in ("base", "other", "synthetic", "out-base", "out-other"):
            shutil.rmtree(scratch / sub, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
