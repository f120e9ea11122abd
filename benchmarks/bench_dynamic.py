#!/usr/bin/env python
"""Dynamic community selection's share of the audit: the simulation of every graphrag line (none /
all relevant, and one what-if) against the static audit, in one run per index.

    python benchmarks/bench_dynamic.py [--data DIR] [--layouts 3.x,1.0-1.2] [--extra INDEX ...]

Each index is audited in a fresh process (``levels``'s library path: ``audit_with_model`` with
``--tokenizer estimate``, as bench_levels.py measures) with a what-if of a seeded random 30 % of the
report communities; the audit's own phase timings split the wall time into the static audit (load,
tree, selection, costs, depth) and the dynamic phase (every line's prepare + scenarios + the what-if's
map step). Printed: both times and dynamic/static. The default index is bench_levels.py's cached
1M-entity synthetic index (run ``benchmarks/bench_levels.py --sizes 1m`` once to create it); add
real indexes with ``--extra``. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
import numpy as np
from graphrag_audit import AuditOptions
from graphrag_audit.analysis.audit import audit_with_model
from graphrag_audit.io.load import load_index
index = sys.argv[1]
model = load_index(index)
ids = np.unique(model.reports["community"].to_numpy())
rng = np.random.default_rng(0)
relevant = tuple(int(x) for x in ids[rng.random(ids.size) < 0.3])
del model
t0 = time.perf_counter()
_, report = audit_with_model(index, AuditOptions(tokenizer="estimate", relevant=relevant))
wall = time.perf_counter() - t0
t = dict(report.timings)
levels = [r for r in report.levels if r.selected["dynamic"].by_version is not None]
lines = sorted({f for r in levels for f in r.selected["dynamic"].by_version.versions})
print(json.dumps({"wall": wall, "timings": t, "levels_simulated": len(levels), "lines": lines,
                  "reports": int(report.index.counts.reports), "relevant": len(relevant)}))
"""


def measure(index: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="0")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(index)],
        cwd=str(ROOT),
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{index}: the audit failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("TMPDIR", tempfile.gettempdir()))
        / "graphrag-audit-bench"
        / "1m-mcs24-seed0",
    )
    ap.add_argument("--layouts", default="3.x,1.0-1.2")
    ap.add_argument("--extra", type=Path, nargs="*", default=[])
    args = ap.parse_args()
    indexes = [(f"{args.data.name} {lay}", args.data / lay) for lay in args.layouts.split(",") if lay]
    indexes += [(p.name, p) for p in args.extra]
    print(
        f"{'index':28} {'reports':>9} {'levels':>6} {'lines':>9} {'static s':>9} {'dynamic s':>9} {'dyn/static':>10}"
    )
    for label, index in indexes:
        got = measure(index)
        t = got["timings"]
        dynamic = t.get("dynamic", 0.0)
        static = got["wall"] - dynamic
        print(
            f"{label:28} {got['reports']:>9,} {got['levels_simulated']:>6} {'+'.join(got['lines']):>9} "
            f"{static:>9.2f} {dynamic:>9.2f} {dynamic / static:>10.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
