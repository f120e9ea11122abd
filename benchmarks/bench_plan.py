#!/usr/bin/env python
"""Benchmark ``plan`` against the static audit (``levels``) on synthetic indexes (issue 18).

Usage (from the repository root)::

    python benchmarks/bench_plan.py                 # 100k and 1m, 3.x layout, one run each
    python benchmarks/bench_plan.py --sizes 100k    # skip the slow 1M case

Data: the same cached ``synthetic.leiden_like`` indexes as ``bench_levels.py`` (its
``ensure_data``; cache ``$TMPDIR/graphrag-audit-bench``). Each measurement is one fresh child
process (wall time around it), with ``--tokenizer estimate``:

* **static audit**: ``levels DIR -f json --fail-on never``;
* **plan** with ``--reports K``, ``--tokens T``, ``--coverage 0.9``, ``--reports K --tokens T
  --coverage 0.9`` and ``--objective rank --reports K`` (K = half the reports, 4/5 of them in the combination, T = 400 tokens a
  report on average), each ``-f json``.

Printed: wall seconds and plan / static-audit ratios. ``plan`` computes the static audit's
per-level selections and costs too (its comparison table), so a ratio near 1 means the planner
itself costs little. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_levels import SIZES, ensure_data, run_child, warm_page_cache  # noqa: E402


def plan_cases(reports: int, map_calls: int | None = None) -> dict[str, tuple[str, list[str]]]:
    """{case: (label, plan arguments)} for an index of ``reports`` reports: K = half the reports
    (4/5 of them in the combination), T = 400 tokens a report on average; with ``map_calls`` (the
    map calls of sending every report) also ``--map-calls`` half of those (used by bench_commands.py)."""
    k = max(1, reports // 2)
    k2 = max(1, reports * 4 // 5)
    t = 400 * reports
    cases = {
        "reports": (f"--reports {k}", ["--reports", str(k)]),
        "tokens": (f"--tokens {t}", ["--tokens", str(t)]),
        "coverage": ("--coverage 0.9", ["--coverage", "0.9"]),
        "combo": (
            f"--reports {k2} --tokens {t} --coverage 0.9",
            ["--reports", str(k2), "--tokens", str(t), "--coverage", "0.9"],
        ),
        "rank": (f"--objective rank --reports {k}", ["--objective", "rank", "--reports", str(k)]),
    }
    if map_calls is not None:
        m = max(1, map_calls // 2)
        cases["map-calls"] = (f"--map-calls {m}", ["--map-calls", str(m)])
    return cases


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100k,1m", help="comma list of " + ", ".join(SIZES))
    ap.add_argument(
        "--cache",
        default=os.path.join(os.environ.get("TMPDIR", tempfile.gettempdir()), "graphrag-audit-bench"),
    )
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument(
        "--cases",
        default="reports,tokens,coverage,combo,rank",
        help="comma list of plan cases to time: reports, tokens, coverage, combo, rank",
    )
    args = ap.parse_args(argv)
    rows = []
    for label in args.sizes.split(","):
        info = ensure_data(Path(args.cache), label, SIZES[label], ["3.x"], args.regenerate)
        d = Path(info["dir"]) / "3.x"
        warm_page_cache(d)
        py = [sys.executable, "-m", "graphrag_audit"]
        common = ["--tokenizer", "estimate"]
        with tempfile.TemporaryDirectory() as tmp:
            audit = run_child(
                py + ["levels", str(d), "-f", "json", "-o", f"{tmp}/a.json", "--fail-on", "never", *common]
            )
            cases = plan_cases(info["reports"])
            for key in args.cases.split(","):
                name, extra = cases[key]
                out = f"{tmp}/p.json"
                t0 = time.perf_counter()
                try:
                    r = run_child(py + ["plan", str(d), *extra, "-f", "json", "-o", out, *common])
                    plan = json.loads(Path(out).read_text())["plan"]
                    what = f"{plan['reports']} reports, fits={plan['fits']}"
                except RuntimeError as exc:  # exit 1 (no plan fits): timed around the child all the same
                    r = {"wall_s": time.perf_counter() - t0}
                    what = "exit != 0: " + str(exc).splitlines()[-1][:60]
                rows.append((label, info["communities"], name, audit["wall_s"], r["wall_s"], what))
                print(
                    f"{label:>5} {info['communities']:>8,} communities  {name:<45} audit {audit['wall_s']:7.1f} s  "
                    f"plan {r['wall_s']:7.1f} s  ratio {r['wall_s'] / audit['wall_s']:5.2f}  ({what})",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
