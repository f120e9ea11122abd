"""The dynamic-selection phase of ``levels --tokenizer estimate`` on its own, in CPU seconds.

Each index is audited in a fresh child process (``audit(IDX, tokenizer="estimate")``, as ``levels
-f json --tokenizer estimate`` runs it); the child reports the CPU time of the thread that runs
``analysis.audit.dynamic_levels`` (a costs worker since S13, the main thread without costs) and its
wall time, the whole audit's CPU time (user + sys, getrusage) and the 1-minute load average. CPU time is what a shared machine disturbs least (docs/performance.md, "Dynamic-selection
phase (S7)").

    python benchmarks/dynamic_phase.py IDX [IDX ...] [--code OTHER_CHECKOUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, resource, sys, time
import graphrag_audit.analysis.audit as A

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

got = {}
orig = A.dynamic_levels

def timed(*a, **k):
    c, t = time.thread_time(), time.perf_counter()
    try:
        return orig(*a, **k)
    finally:
        got["dynamic_cpu_s"], got["dynamic_wall_s"] = time.thread_time() - c, time.perf_counter() - t

A.dynamic_levels = timed
load = os.getloadavg()[0]
c = cpu()
A.audit(sys.argv[1], A.AuditOptions(tokenizer="estimate"))
got["audit_cpu_s"], got["load"] = cpu() - c, load
print(json.dumps(got))
"""


def measure(index: str, code: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, index], env=env, cwd=code, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("indexes", nargs="+")
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout holding the graphrag_audit package")
    args = ap.parse_args()
    print("| index | dynamic cpu s | dynamic wall s | audit cpu s | load |")
    print("|---|---|---|---|---|")
    for idx in args.indexes:
        r = measure(idx, args.code.resolve())
        print(
            f"| {idx} | {r['dynamic_cpu_s']:.2f} | {r['dynamic_wall_s']:.2f} | {r['audit_cpu_s']:.2f} | {r['load']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
