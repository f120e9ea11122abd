"""Start-up and JSON size (issue 22): how long the CLI takes to answer ``--version``/``--help``
and to audit the 7-community seed example, and how big ``levels -f json`` is at 100k/1M entities
with each ``--json-ids`` form.

Every measurement is a fresh process (``bench_levels.run_child``'s way: wall clock, user + sys
CPU, peak RSS), run ``--repeat`` times; the tables give the best and the median wall time and the
best CPU time. Two ways in are measured:

* ``python -m graphrag_audit ...``;
* the console script's Python entry point, run directly: the script pip writes for
  ``graphrag-audit`` (``from graphrag_audit.cli import main; sys.exit(main())``), written to a
  temporary file and run by this interpreter, so that it imports this checkout. A pyenv shim in
  front of the installed script adds ~0.2 s of bash and is not measured.

The floor is the interpreter's own bare start-up, ``python -c pass``; two more rows split the seed
audit's time: importing only its third-party dependencies (numpy, pandas, pyarrow, rich, typer),
then those and the package's modules a ``levels`` run imports, without running anything. Targets (issue 22): each
``--help``/``--version`` under 0.15 s (issue 40), the seed example end to end under 1 s.

JSON size: ``levels DIR -f json --tokenizer estimate --json-ids MODE`` on the cached default-shape
indexes of ``bench_levels.py`` (``--cache``; run it first to make them), bytes written to stdout.

    python benchmarks/bench_startup.py                       # start-up + JSON at 100k and 1m
    python benchmarks/bench_startup.py --sizes 100k          # skip 1m
    python benchmarks/bench_startup.py --sizes ''            # start-up only
    python benchmarks/bench_startup.py --base 7e365a7        # and the start-up of another revision
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import bench_levels  # noqa: E402 - the data cache and the machine line

SEED = "fixtures/seed-v3"
COMMANDS = ["levels", "tree", "report", "plan", "explain", "diff", "update-run", "bundle"]
JSON_IDS = ["full", "level"]
HELP_TARGET_S = 0.15  # issue 40
#: the third-party modules the seed audit imports (``python -X importtime``): a floor for any run of it
DEPS_CODE = "import numpy, pandas, pyarrow.parquet, rich.console, rich.table, typer"
DEPS_LABEL = "dependencies only: " + DEPS_CODE.removeprefix("import ")
#: the dependencies and the modules a text ``levels`` run imports, without running anything
IMPORTS_CODE = (
    DEPS_CODE + "; import graphrag_audit.cli.levels, graphrag_audit.analysis.audit, "
    "graphrag_audit.io.load, graphrag_audit.render.text"
)
IMPORTS_LABEL = "dependencies and the levels modules imported, nothing run"
#: the rows not run for a base revision (the import row names modules an older revision may lack)
FLOOR_LABELS = ("python -c pass (floor)", DEPS_LABEL, IMPORTS_LABEL)
SEED_TARGET_S = 1.0

#: what pip writes as the console script (pip's wrapper, less its shebang line)
CONSOLE_SCRIPT = """import re
import sys
from graphrag_audit.cli import main
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""


#: where the children keep this checkout's bytecode (set by main(); None: no bytecode, every
#: module compiled from source in every process)
PYCACHE: Path | None = None


def child_env(code: Path = REPO) -> dict:
    env = dict(os.environ)
    env.setdefault("PYTHONHASHSEED", "0")
    env["PYTHONPATH"] = os.pathsep.join([str(code)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("GRAPHRAG_AUDIT_MAX_DECODED_BYTES", None)
    if PYCACHE is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:  # as after pip install: compiled once, outside the checkout
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE / ("base" if code != REPO else "this"))
    return env


def timed(argv: list[str], stdout=subprocess.DEVNULL, code: Path = REPO) -> dict:
    """``argv`` in a fresh process importing the checkout ``code`` (run in it): wall s, user + sys
    CPU s, peak RSS, exit code."""
    env = child_env(code)
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=stdout, stderr=err, cwd=str(code), env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if code not in (0, 1):  # 1: findings at or above --fail-on, a normal outcome
        raise RuntimeError(f"{' '.join(argv)} exited {code}:\n{stderr[-2000:]}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_bytes": usage.ru_maxrss * 1024,
        "code": code,
    }


def startup_cases(script: Path) -> list[tuple[str, str, list[str], float | None]]:
    """(label, way in, argv, target seconds or None)."""
    py = sys.executable
    m = [py, "-m", "graphrag_audit"]
    s = [py, str(script)]
    cases: list[tuple[str, str, list[str], float | None]] = [
        ("python -c pass (floor)", "-m", [py, "-c", "pass"], None),
        # what a pandas-based audit cannot go under, and what importing the audit's own modules adds
        (DEPS_LABEL, "-m", [py, "-c", DEPS_CODE], None),
        (IMPORTS_LABEL, "-m", [py, "-c", IMPORTS_CODE], None),
    ]
    for way, pre in (("-m", m), ("script", s)):
        cases += [
            ("--version", way, pre + ["--version"], HELP_TARGET_S),
            ("--help", way, pre + ["--help"], HELP_TARGET_S),
        ]
        cases += [(f"{c} --help", way, pre + [c, "--help"], HELP_TARGET_S) for c in COMMANDS]
    cases += [
        (f"levels {SEED} (README quick start: exact cl100k_base)", "-m", m + ["levels", SEED], SEED_TARGET_S),
        (
            f"levels {SEED} --tokenizer estimate",
            "-m",
            m + ["levels", SEED, "--tokenizer", "estimate"],
            SEED_TARGET_S,
        ),
        (
            f"levels {SEED} --tokenizer estimate -f json",
            "-m",
            m + ["levels", SEED, "--tokenizer", "estimate", "-f", "json"],
            SEED_TARGET_S,
        ),
        (
            f"levels {SEED} --tokenizer estimate",
            "script",
            s + ["levels", SEED, "--tokenizer", "estimate"],
            SEED_TARGET_S,
        ),
    ]
    return cases


def _stats(runs: list[dict]) -> dict:
    walls = [r["wall_s"] for r in runs]
    return {
        "min_s": min(walls),
        "median_s": statistics.median(walls),
        "cpu_s": min(r["cpu_s"] for r in runs),
        "rss_bytes": max(r["rss_bytes"] for r in runs),
    }


def measure_startup(repeat: int, cold: bool = False, base: Path | None = None) -> list[dict]:
    """Every case ``repeat`` times after one warm-up run each (which compiles the bytecode);
    ``cold``: without bytecode (--version, levels --help and the seed example only). With
    ``base`` (another checkout), its runs alternate with this one's, so both see the same load."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "graphrag-audit"
        script.write_text(CONSOLE_SCRIPT, encoding="utf-8")
        out = []
        for label, way, argv, target in startup_cases(script):
            if cold and not (
                way == "-m"
                and (
                    label in (*FLOOR_LABELS, "--version", "levels --help", "--help")
                    or label == f"levels {SEED} --tokenizer estimate"
                )
            ):
                continue
            codes = [REPO] + (
                [base] if base is not None and way == "-m" and label not in FLOOR_LABELS else []
            )
            runs: dict = {c: [] for c in codes}
            for c in codes:
                timed(argv, code=c)  # warm-up: bytecode, page cache
            for _ in range(repeat):
                for c in codes:
                    runs[c].append(timed(argv, code=c))
            r = _stats(runs[REPO])
            row = {"label": label, "way": way, "target_s": target, "cold": cold, **r}
            if base is not None and base in runs:
                row["base"] = _stats(runs[base])
            out.append(row)
            extra = (
                f"  (base: min {row['base']['min_s']:.3f} s, cpu {row['base']['cpu_s']:.3f} s)"
                if "base" in row
                else ""
            )
            print(
                f"  {way:6} {label:62} min {r['min_s']:.3f} s  median {r['median_s']:.3f} s  cpu {r['cpu_s']:.3f} s"
                + extra,
                file=sys.stderr,
                flush=True,
            )
    return out


def measure_json(cache: Path, sizes: list[str]) -> list[dict]:
    out = []
    for label in sizes:
        index_dir = cache / f"{label}-mcs{bench_levels.MAX_CLUSTER_SIZE}-seed{bench_levels.SEED}" / "3.x"
        if not index_dir.is_dir():  # never made (nor rewritten) here: the cache may be shared
            raise SystemExit(
                f"{index_dir} is absent: make it with benchmarks/bench_levels.py --sizes {label} "
                f"--cache {cache}"
            )
        bench_levels.warm_page_cache(index_dir)
        for mode in JSON_IDS:
            with tempfile.TemporaryFile() as f:
                r = timed(
                    [
                        sys.executable,
                        "-m",
                        "graphrag_audit",
                        "levels",
                        str(index_dir),
                        "-f",
                        "json",
                        "--tokenizer",
                        "estimate",
                        "--json-ids",
                        mode,
                    ],
                    stdout=f,
                )
                size = f.seek(0, os.SEEK_END)
            out.append({"size": label, "mode": mode, "bytes": size, **r})
            print(
                f"  {label:5} --json-ids {mode:7} {size / 1e6:8.2f} MB  wall {r['wall_s']:.2f} s  cpu {r['cpu_s']:.2f} s"
                f"  rss {r['rss_bytes'] / 2**20:.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
    return out


def table_startup(rows: list[dict], floor: float, floor_cpu: float) -> str:
    has_base = any("base" in r for r in rows)
    head = "| command | way in | best wall | median wall | best CPU | CPU − floor CPU |"
    sep = "|---|---|---:|---:|---:|---:|"
    if has_base:
        head += " base: best wall | base: best CPU |"
        sep += "---:|---:|"
    lines = [head + " target (wall) | holds |", sep + "---:|---|"]
    for r in rows:
        target = "" if r["target_s"] is None else f"< {r['target_s']:g} s"
        holds = "" if r["target_s"] is None else ("yes" if r["min_s"] < r["target_s"] else "**no**")
        line = (
            f"| `{r['label']}` | {r['way']} | {r['min_s']:.3f} s | {r['median_s']:.3f} s | {r['cpu_s']:.3f} s "
            f"| {r['cpu_s'] - floor_cpu:+.3f} s |"
        )
        if has_base:
            b = r.get("base")
            line += f" {b['min_s']:.3f} s | {b['cpu_s']:.3f} s |" if b else " | |"
        lines.append(line + f" {target} | {holds} |")
    return "\n".join(lines)


def table_json(rows: list[dict]) -> str:
    full = {r["size"]: r["bytes"] for r in rows if r["mode"] == "full"}
    lines = [
        "| index | `--json-ids` | bytes | vs full | wall | CPU | peak RSS |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']} 3.x | {r['mode']} | {r['bytes']:,} ({r['bytes'] / 1e6:.1f} MB) "
            f"| {r['bytes'] / full[r['size']]:.3f} | {r['wall_s']:.2f} s | {r['cpu_s']:.2f} s "
            f"| {r['rss_bytes'] / 2**20:.0f} MiB |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs per start-up measurement (best and median)")
    ap.add_argument(
        "--sizes",
        default="100k,1m",
        help="JSON size: comma list of " + ", ".join(bench_levels.SIZES) + " ('' to skip)",
    )
    ap.add_argument(
        "--cache",
        default=os.path.join(os.environ.get("TMPDIR", tempfile.gettempdir()), "graphrag-audit-bench"),
        help="where bench_levels.py keeps the generated indexes (read only here)",
    )
    ap.add_argument(
        "--base",
        metavar="REV",
        help="also measure the start-up of git revision REV (exported to a "
        "temporary folder), alternating with this checkout's runs",
    )
    ap.add_argument("--no-cold", action="store_true", help="skip the runs without bytecode")
    args = ap.parse_args(argv)
    sizes = [s for s in args.sizes.split(",") if s]
    print(f"# {bench_levels.machine()}", flush=True)
    print(
        f"# load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}",
        flush=True,
    )
    global PYCACHE
    with (
        tempfile.TemporaryDirectory(prefix="bench-startup-pyc-") as pyc,
        tempfile.TemporaryDirectory(prefix="bench-startup-base-") as base_dir,
    ):
        base = None
        if args.base:
            base = Path(base_dir)
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", args.base], check=True, capture_output=True
            )
            subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
            (base / "fixtures").exists() or sys.exit(f"{args.base} has no fixtures/")
        PYCACHE = Path(pyc)
        rows = measure_startup(args.repeat, base=base)
        jrows = measure_json(Path(args.cache), sizes) if sizes else []
        PYCACHE = None
        cold = [] if args.no_cold else measure_startup(args.repeat, cold=True, base=base)
    print(
        f"\n## Start-up ({args.repeat} runs each, after a warm-up run; bytecode compiled once, as pip install does)\n"
    )
    if args.base:
        print(f"\n(base: `{args.base}`, runs alternating with this checkout's)")
    print(table_startup(rows, rows[0]["min_s"], rows[0]["cpu_s"]))
    if cold:
        print(
            "\n## Without bytecode (PYTHONDONTWRITEBYTECODE=1: the package compiled from source in every process)\n"
        )
        print(table_startup(cold, cold[0]["min_s"], cold[0]["cpu_s"]))
    if jrows:
        print("\n## JSON size (`levels -f json --tokenizer estimate`)\n")
        print(table_json(jrows))
    print(f"\n# load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
