#!/usr/bin/env python
"""Issue 40's speed targets in one run: whole processes, best of N, wall and CPU time, peak RSS.

    python benchmarks/targets.py [--repeat 5] [--code OTHER_CHECKOUT] [--cache DIR] [--no-1m]

Each row runs in a fresh child process importing the package from a checkout (this one, and with
``--code`` another one beside it), compiled to bytecode beforehand as ``pip install`` leaves it.
CPU is user + sys of that child (``os.wait4``), the primary figure on a shared machine.
The floor / bare read: ``import pyarrow.parquet`` and ``read_table`` of the tables and columns
``graphrag_audit.io.load`` reads (its column lists), in a process of its own. At 1M the bare read
runs with transparent huge pages off (the small-page yardstick of docs/performance.md).
The 1M indexes are bench_levels.py's cache (``bench_levels.py --sizes 1m --shapes
default,deep-narrow --no-exact --no-naive --no-graphrag-naive`` writes them).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "indexes" / "real-ralad-large"
CACHE = Path(tempfile.gettempdir()) / "graphrag-audit-bench"
ONE_M = {"1M default": "1m-mcs24-seed0/3.x", "1M deep-narrow": "1m-deep-narrow-seed0/3.x"}

READ_CODE = """
import json, sys
if sys.argv[2] == "small-pages":  # PR_SET_THP_DISABLE (41)
    import ctypes
    ctypes.CDLL(None).prctl(41, 1, 0, 0, 0)
import pyarrow.parquet as pq
tables = [pq.read_table(path, columns=cols) for path, cols in json.loads(sys.argv[1]).values()]
"""
CLI_CODE = "import sys; from graphrag_audit.cli import main; sys.argv[0] = 'graphrag-audit'; sys.exit(main())"


SPEC_CODE = """
import json, sys
import pyarrow.parquet as pq
from graphrag_audit.io.generation import detect_generation
from graphrag_audit.io.load import COMMUNITY_COLUMNS, ENTITY_COLUMNS, NODE_COLUMNS, REPORT_COLUMNS
from graphrag_audit.io.locate import locate_index
files = locate_index(sys.argv[1])
schemas = {k: {f.name: str(f.type) for f in pq.read_schema(p)} for k, p in files.tables.items()}
wanted = {"communities": COMMUNITY_COLUMNS, "reports": REPORT_COLUMNS, "entities": ENTITY_COLUMNS}
if detect_generation(files.tables, schemas).before_2 or "communities" not in files.tables:
    wanted["nodes"] = NODE_COLUMNS
print(json.dumps({k: (str(files.tables[k]), [c for c in cols if c in schemas[k]])
                  for k, cols in wanted.items() if k in files.tables}))
"""


def read_spec(index_dir: Path) -> str:
    """JSON {table: (path, [the columns load.py reads that the file has])}, as load_index picks them
    (in a child: a child forked from a parent that imported pyarrow would inherit its peak RSS)."""
    argv = [sys.executable, "-c", SPEC_CODE, str(index_dir)]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=True).stdout


def warm(index_dir: Path) -> None:
    """Every file read once, in chunks: no row pays for the disk."""
    for p in index_dir.iterdir():
        with open(p, "rb") as fh:
            while fh.read(1 << 24):
                pass


_compiled: set[Path] = set()


def run(argv: list[str], code: Path) -> dict:
    """One child process importing the package from ``code``: wall s, CPU s, peak RSS MB."""
    env = dict(os.environ, PYTHONPATH=str(code), PYTHONHASHSEED="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if code not in _compiled:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(code / "graphrag_audit")], env=env, check=True
        )
        _compiled.add(code)
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, cwd=code, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: findings at --fail-on's severity
            err.seek(0)
            raise RuntimeError(f"{argv[:5]} exited {status}: {err.read().decode()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024}


def best_of(n: int, argv: list[str], code: Path) -> dict:
    runs = [run(argv, code) for _ in range(n)]
    return {k: (max if k == "rss" else min)(r[k] for r in runs) for k in runs[0]}


Row = tuple[str, list[str], "list[str] | None", float, int]


def rows(args) -> list[Row]:
    """(name, audit argv, floor argv or None, target ratio or wall limit, repeat)."""
    py = sys.executable
    out: list[Row] = []
    for label, index in (("real-ralad-large", REAL), ("seed-v3", REPO / "fixtures" / "seed-v3")):
        floor = [py, "-c", READ_CODE, read_spec(index), "system-pages"]
        for fmt in ([], ["-f", "json"]):
            cmd = [py, "-m", "graphrag_audit", "levels", str(index), *fmt]
            out.append((f"levels {' '.join(fmt) or '(text)'} {label}", cmd, floor, 1.3, args.repeat))
    out.append(("graphrag-audit --help", [py, "-c", CLI_CODE, "--help"], None, 0.15, args.repeat))
    out.append(("levels --help", [py, "-c", CLI_CODE, "levels", "--help"], None, 0.15, args.repeat))
    for label, sub in ONE_M.items() if not args.no_1m else ():
        index = args.cache / sub
        if not index.is_dir():
            print(f"skipped {label}: no {index} (see the module docstring)", file=sys.stderr)
            continue
        warm(index)
        floor = [py, "-c", READ_CODE, read_spec(index), "small-pages"]
        cmd = [py, "-m", "graphrag_audit", "levels", str(index), "-f", "json", "--tokenizer", "estimate"]
        out.append((f"levels -f json {label}", cmd, floor, 3.0, args.repeat_1m or args.repeat))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="best of N runs (default 5)")
    ap.add_argument("--code", type=Path, help="another checkout, measured beside this one")
    ap.add_argument("--cache", type=Path, default=CACHE, help=f"bench_levels.py's cache (default {CACHE})")
    ap.add_argument("--repeat-1m", type=int, help="best of N for the 1M rows (default: --repeat)")
    ap.add_argument("--no-1m", action="store_true", help="leave out the 1M-entity rows")
    args = ap.parse_args(argv)
    codes = {"this": REPO} | ({"other": args.code.resolve()} if args.code else {})
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}, best of {args.repeat}"
    )
    print(f"# this: {REPO}" + (f"; other: {args.code}" if args.code else ""))
    head = f"{'row':38} {'code':5} {'wall s':>7} {'cpu s':>7} {'RSS MB':>7} {'x floor wall':>12} {'x floor cpu':>11}"
    print(head + "  target")
    for name, cmd, floor_argv, target, n in rows(args):
        floor = best_of(n, floor_argv, REPO) if floor_argv else None
        if floor:
            print(f"{name:38} {'floor':5} {floor['wall']:7.3f} {floor['cpu']:7.3f} {floor['rss']:7.0f}")
        for who, code in codes.items():
            r = best_of(n, cmd, code)
            line = f"{name:38} {who:5} {r['wall']:7.3f} {r['cpu']:7.3f} {r['rss']:7.0f}"
            if floor:
                ratio_w, ratio_c = r["wall"] / floor["wall"], r["cpu"] / floor["cpu"]
                met = "met" if ratio_c <= target else "NOT met"
                line += f" {ratio_w:12.2f} {ratio_c:11.2f}  <= {target}x: {met} (cpu)"
            else:
                met = "met" if r["cpu"] < target else "NOT met"  # wall too on a quiet machine
                line += f" {'':12} {'':11}  < {target} s: {met} (cpu)"
            print(line, flush=True)
    print(f"# load after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
