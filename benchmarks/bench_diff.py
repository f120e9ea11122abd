#!/usr/bin/env python
"""Benchmark ``graphrag-audit diff OLD NEW`` against one ``levels`` audit (issue 21's target: a diff
takes at most 2.5x one audit).

Usage (from the repository root)::

    python benchmarks/bench_diff.py                    # 100k entities
    python benchmarks/bench_diff.py --sizes 100k,1m --tokenizer cl100k_base --repeat 3

Data: ``synthetic.leiden_like(n, max_cluster_size=24, seed=0)`` written in the graphrag 3.x layout
(OLD) and two NEW indexes beside it, in a cache directory outside the repository (default
``$TMPDIR/graphrag-audit-bench-diff``; ``--cache DIR``):

* ``renumbered``: the same communities with their numbers permuted within each level (a re-index
  that reallocated the numbers: the diff matches by member entities, its costlier path), and 1 %
  of the reports rewritten;
* ``updated``: the same numbers with 1 % of the reports rewritten and 1 % of the leaves removed
  (the diff matches by number).

Each measurement is a fresh child process (``-f json -o FILE --fail-on never``); the best of
``--repeat`` wall times is printed: one ``levels`` audit of NEW, the ``diff`` of OLD and NEW, and
their ratio. Nothing here asserts a time; tests never time anything.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def _size(s: str) -> int:
    s = s.lower()
    return (
        int(float(s[:-1]) * 1000)
        if s.endswith("k")
        else int(float(s[:-1]) * 1_000_000)
        if s.endswith("m")
        else int(s)
    )


def _rewrite(spec, rng, share=0.01):
    r = spec.reports
    rows = rng.choice(len(r), max(1, int(len(r) * share)), replace=False)
    col = r.columns.get_loc("full_content")
    for i in rows:
        r.iat[i, col] = str(r.iat[i, col]) + " Revised."


def _renumbered(spec, rng):
    s = spec.copy()
    c = s.communities
    nums = c["community"].to_numpy()
    table = np.arange(int(nums.max()) + 1, dtype=np.int64)
    for lv in np.unique(c["level"].to_numpy()):
        at = nums[c["level"].to_numpy() == lv]
        table[at] = rng.permutation(at)

    def f(a):
        a = np.asarray(a, dtype=np.int64)
        return np.where(a >= 0, table[np.clip(a, 0, None)], a)

    c["community"] = f(c["community"])
    c["parent"] = f(c["parent"])
    s.reports["community"] = f(s.reports["community"])
    _rewrite(s, rng)
    return s


def _updated(spec, rng):
    s = spec.copy()
    c = s.communities
    leaves = c.index[~c["community"].isin(c["parent"])].to_numpy()
    drop = rng.choice(leaves, max(1, len(leaves) // 100), replace=False)
    gone_keys, gone = c.loc[drop, "key"].to_numpy(), c.loc[drop, "community"].to_numpy()
    s.communities = c.drop(index=drop).reset_index(drop=True)
    s.membership = s.membership.loc[~s.membership["key"].isin(gone_keys)].reset_index(drop=True)
    s.reports = s.reports.loc[~s.reports["community"].isin(gone)].reset_index(drop=True)
    _rewrite(s, rng)
    return s


def prepare(n: int, cache: Path) -> Path:
    import synthetic

    base = cache / f"n{n}"
    if (base / "done").exists():
        return base
    spec = synthetic.leiden_like(n, max_cluster_size=24, seed=0)
    rng = np.random.default_rng(21)
    synthetic.write_index(spec, base / "old", "3.x", community_text_units=False)
    synthetic.write_index(_renumbered(spec, rng), base / "renumbered", "3.x", community_text_units=False)
    synthetic.write_index(_updated(spec, rng), base / "updated", "3.x", community_text_units=False)
    (base / "done").write_text("ok")
    return base


def timed(args: list[str], out: Path) -> float:
    t = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *args, "-f", "json", "-o", str(out), "--fail-on", "never"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {res.returncode}: {res.stderr.strip()[:300]}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100k")
    ap.add_argument("--tokenizer", default="estimate")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "graphrag-audit-bench-diff")
    a = ap.parse_args()
    print(f"{'size':>6}  {'pair':<11} {'audit NEW s':>11} {'diff s':>8} {'ratio':>6}")
    for size in a.sizes.split(","):
        base = prepare(_size(size), a.cache)
        out = base / "out.json"
        for pair in ("renumbered", "updated"):
            new = base / pair
            audit = min(timed(["levels", str(new), "--tokenizer", a.tokenizer], out) for _ in range(a.repeat))
            diff = min(
                timed(["diff", str(base / "old"), str(new), "--tokenizer", a.tokenizer], out)
                for _ in range(a.repeat)
            )
            print(f"{size:>6}  {pair:<11} {audit:11.2f} {diff:8.2f} {diff / audit:6.2f}", flush=True)
        os.unlink(out)


if __name__ == "__main__":
    main()
