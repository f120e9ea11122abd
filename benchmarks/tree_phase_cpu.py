#!/usr/bin/env python
"""CPU seconds (user + sys) of each piece of ``audit()``'s tree and selection phases, in one process,
after the index is loaded (the load is not counted).

Usage (from the repository root)::

    python benchmarks/tree_phase_cpu.py INDEX_DIR                      # this checkout
    python benchmarks/tree_phase_cpu.py INDEX_DIR --code OTHER_CHECKOUT  # another version

Pieces, in ``audit()``'s order: ``TreeIndex`` construction, ``with_text_units``, ``clustered``,
``check_integrity``, location + migration findings, ``tree_levels`` (the tree phase), then
``select_all`` and ``level_stats`` (the selection phase). Prints one line of JSON. CPU time is
what to compare on a shared machine; run base and candidate interleaved and say the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index")
    ap.add_argument(
        "--code",
        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir),
        help="directory holding the graphrag_audit package (default: this checkout)",
    )
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.code))
    from graphrag_audit.analysis.integrity import check_integrity
    from graphrag_audit.analysis.levels import TreeIndex, level_stats, tree_levels
    from graphrag_audit.graphrag.compat import migration_findings
    from graphrag_audit.graphrag.selection import select_all
    from graphrag_audit.io.load import load_index
    from graphrag_audit.io.locate import location_findings

    model = load_index(args.index)
    out: dict[str, float] = {}

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    def timed(name, f):
        c = cpu()
        r = f()
        out[name] = round(cpu() - c, 2)
        return r

    ti = timed("tree_index", lambda: TreeIndex(model))
    timed("text_units", lambda: ti.with_text_units(model))
    timed("clustered", ti.clustered)
    timed("check_integrity", lambda: check_integrity(model))
    timed("location_migration", lambda: location_findings(model) + migration_findings(model))
    timed("tree_levels", lambda: tree_levels(model, ti))
    selections = timed("select_all", lambda: select_all(model))
    timed("level_stats", lambda: level_stats(model, ti, selections))
    out["tree"] = round(
        sum(
            out[k]
            for k in (
                "tree_index",
                "text_units",
                "clustered",
                "check_integrity",
                "location_migration",
                "tree_levels",
            )
        ),
        2,
    )
    out["selection"] = round(out["select_all"] + out["level_stats"], 2)
    out["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
