#!/usr/bin/env python
"""``bundle`` time against the static audit's, on bench_levels.py's synthetic index.

    python benchmarks/bench_bundle.py [--size 100k|1m] [--layout 3.x] [--cache DIR] [--trust-cache]

The index is bench_levels.py's cached ``leiden_like`` index (generated on first use, into its cache
outside the repository). Each measurement is a fresh child process, wall and CPU time (user +
system, from getrusage of the children) around it: the
static audit ``levels DIR -f json --tokenizer cl100k_base --fail-on never`` (the exact counter,
as the bundle uses it), and ``bundle DIR -o OUT`` (which also audits OUT once, for its audit.json
and audit.md). Printed: both times and bundle/audit (the
issue's target is at most 3x), the peak RSS of one process and the Arrow size of the tables the
bundle reads (issue 22: peak RSS at most 2x that). Nothing is
asserted. Run at 1M once at most (``--size 1m``): it takes many minutes on a busy machine.
``--trust-cache`` uses a cached index of the size as it is, whatever generator digest its stamp names.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_levels  # noqa: E402


def timed(argv: list[str], env: dict | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one child process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return took, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def cached(args) -> dict | None:
    """The cached index of ``--size`` as it is (``--trust-cache``), or None when there is none."""
    base = args.cache / f"{args.size}-mcs{bench_levels.MAX_CLUSTER_SIZE}-seed{bench_levels.SEED}"
    stamp = base / "stamp.json"
    if not stamp.exists() or not (base / args.layout).is_dir():
        return None
    have = json.loads(stamp.read_text())
    if have.get("entities") != bench_levels.SIZES[args.size]:
        return None
    return {"dir": base, **have}


def arrow_bytes(index: Path) -> int:
    """The in-memory Arrow size of the tables ``bundle`` reads from ``index`` (one table at a time)."""
    sys.path.insert(0, str(ROOT))
    from graphrag_audit.bundle.build import plan_bundle
    from graphrag_audit.io.tables import read_arrow_table

    total = 0
    for p, _kind in plan_bundle(index, max_bytes=None).tables:
        if p.suffix == ".parquet":
            table = read_arrow_table(p)
            total += table.nbytes
            del table
    return total


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="100k", choices=sorted(bench_levels.SIZES))
    ap.add_argument("--layout", default="3.x", choices=sorted(bench_levels.LAYOUTS))
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "graphrag-audit-bench")
    ap.add_argument(
        "--trust-cache",
        action="store_true",
        help="use a cached index of this size even when its stamp names another generator digest "
        "(never regenerate it)",
    )
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    data = cached(args) if args.trust_cache else None
    if data is None:
        data = bench_levels.ensure_data(
            args.cache, args.size, bench_levels.SIZES[args.size], [args.layout], False
        )
    index = Path(data["dir"]) / args.layout
    bench_levels.warm_page_cache(index)
    work = Path(tempfile.mkdtemp(prefix="bench-bundle-"))
    try:
        py = sys.executable
        load_before = load()
        (audit_s, audit_cpu) = timed(
            [
                py,
                "-m",
                "graphrag_audit",
                "levels",
                str(index),
                "-f",
                "json",
                "-o",
                str(work / "a.json"),
                "--tokenizer",
                "cl100k_base",
                "--fail-on",
                "never",
            ]
        )
        audit_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        (bundle_s, bundle_cpu) = timed(
            [py, "-m", "graphrag_audit", "bundle", str(index), "-o", str(work / "out")]
        )
        # the largest single process so far; KB on Linux
        peak_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        load_after = load()
        size = sum(p.stat().st_size for p in (work / "out").iterdir())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"index: {args.size} entities, {args.layout} layout ({data.get('reports', '?')} reports)")
    print(f"static audit (levels -f json, cl100k_base): {audit_s:.1f} s wall, {audit_cpu:.1f} s CPU")
    print(
        f"bundle (tables + its own audit):            {bundle_s:.1f} s wall, {bundle_cpu:.1f} s CPU  "
        f"({size / 1e6:.1f} MB written)"
    )
    print(f"bundle / audit: {bundle_s / audit_s:.2f}x wall, {bundle_cpu / audit_cpu:.2f}x CPU (target <= 3x)")
    print(
        f"peak RSS of one process: audit {audit_rss / 1024:.0f} MB; audit and bundle {peak_rss / 1024:.0f} MB"
    )
    read = arrow_bytes(index)
    print(
        f"Arrow size of the tables the bundle reads: {read / 2**20:.0f} MB; peak RSS / Arrow size: "
        f"{peak_rss * 1024 / read:.2f}x (issue 22: at most 2x)"
    )
    print(f"load average (1, 5, 15 min) before: {load_before}; after: {load_after}")


if __name__ == "__main__":
    main()
