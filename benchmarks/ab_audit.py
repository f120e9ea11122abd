#!/usr/bin/env python
"""A/B the full ``levels -f json`` audit of two checkouts on the same index, alternating runs.

    python benchmarks/ab_audit.py BASE_DIR NEW_DIR [--data DIR] [--layouts 3.x,1.0-1.2] [--rounds 3]

BASE_DIR and NEW_DIR are checkouts (e.g. ``git worktree add`` or ``git archive REV | tar -x``); each
run imports the package from its own checkout in a fresh process. The index defaults to
bench_levels.py's cached 1M-entity synthetic index (``$TMPDIR/graphrag-audit-bench/1m-mcs24-seed0``;
run ``benchmarks/bench_levels.py --sizes 1m`` once to create it). Runs alternate BASE, NEW, NEW,
BASE, ... so that a machine whose load drifts treats both alike; wall time is taken around the
child, CPU time (user + sys) and peak RSS come from ``os.wait4``. It prints per layout the best wall
and CPU time, the largest peak RSS, and the NEW/BASE ratios. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_levels import bytecode_env  # noqa: E402


def run(code: Path, index: Path) -> tuple[float, float, float]:
    env = bytecode_env(code, dict(os.environ, PYTHONPATH=str(code), PYTHONHASHSEED="0"))
    with tempfile.TemporaryDirectory() as tmp:
        argv = [
            sys.executable,
            "-m",
            "graphrag_audit",
            "levels",
            str(index),
            "-f",
            "json",
            "-o",
            str(Path(tmp) / "out.json"),
            "--fail-on",
            "never",
            "--tokenizer",
            "estimate",
        ]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=str(code), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err = proc.stderr.read().decode("utf-8", "replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{code}: the audit of {index} failed:\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("TMPDIR", tempfile.gettempdir()))
        / "graphrag-audit-bench"
        / "1m-mcs24-seed0",
    )
    ap.add_argument("--layouts", default="3.x,1.0-1.2")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    codes = {"base": args.base.resolve(), "new": args.new.resolve()}
    for layout in args.layouts.split(","):
        index = args.data / layout
        got: dict[str, list[tuple[float, float, float]]] = {"base": [], "new": []}
        for r in range(args.rounds):
            order = ["base", "new"] if r % 2 == 0 else ["new", "base"]
            for name in order:
                got[name].append(run(codes[name], index))
        best = {k: (min(x[0] for x in v), min(x[1] for x in v), max(x[2] for x in v)) for k, v in got.items()}
        for name in ("base", "new"):
            w, c, m = best[name]
            print(
                f"{layout:8} {name:4}  wall {w:7.2f} s  cpu {c:7.2f} s  peak RSS {m:7.0f} MB  "
                f"(walls {', '.join(f'{x[0]:.2f}' for x in got[name])})"
            )
        (bw, bc, bm), (nw, nc, nm) = best["base"], best["new"]
        print(f"{layout:8} new/base  wall {nw / bw:.3f}  cpu {nc / bc:.3f}  peak RSS {nm / bm:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
