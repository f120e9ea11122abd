"""Runs in a side interpreter with graphrag installed (tests/graphrag_tests/test_dynamic_selection.py): for one index
and one graphrag line, the audit's what-if (``levels --relevant``) against graphrag's own
``build_community_context`` over the reports the selector keeps.

Usage: ``python dynamic_whatif_runner.py INDEX FAMILY OUT.json``. The relevant set is every community
whose number is not a multiple of 3. graphrag's reports come from its own
``read_indexer_reports(..., dynamic_community_selection=True)``; the kept ones are handed to
``build_community_context`` (through graphrag_audit.verify's context check, which records graphrag's
own token counts per batch) in ascending community order, the order the audit's ``map_calls`` and
``tokens`` are given for. Output: per community_level, graphrag's map calls and tokens and the audit's.
"""

from __future__ import annotations

import json
import sys

import pandas as pd
from graphrag.query.indexer_adapters import read_indexer_reports

from graphrag_audit import AuditOptions
from graphrag_audit.analysis.audit import audit_with_model
from graphrag_audit.verify import _ContextCheck


def main(index: str, family: str, out_path: str) -> None:
    behaviour = "v1" if family == "1.x" else "v2"
    probe, _ = audit_with_model(index, AuditOptions(costs=False))
    ids = sorted(int(c) for c in probe.reports["community"].tolist())
    relevant = tuple(c for c in ids if c % 3)
    model, report = audit_with_model(index, AuditOptions(level=2, relevant=relevant))
    reports_df = pd.read_parquet(model.files["reports"])
    other_df = pd.read_parquet(model.files["communities" if behaviour == "v2" else "nodes"])
    check = _ContextCheck(report, model, behaviour, other_df)
    if check.reason is not None:
        raise SystemExit(f"context check not ready: {check.reason}")
    rows = []
    for lv in report.levels:
        by = lv.selected["dynamic"].by_version
        if by is None or family not in by.versions or by.versions[family].what_if is None:
            continue
        w = by.versions[family].what_if
        got = read_indexer_reports(
            reports_df.copy(), other_df.copy(), lv.community_level, dynamic_community_selection=True
        )
        chosen = {str(r.community_id): r for r in got}  # the selector's self.reports (last row wins)
        kept = [chosen[str(k)] for k in sorted(w.kept_ids)]
        g_ids, g_tokens, _texts = check.graphrag_batches(lv.community_level, kept)
        rows.append(
            {
                "community_level": lv.community_level,
                "kept": len(kept),
                "graphrag": [len(g_ids), int(sum(g_tokens))],
                "audit": [w.kept_costs.map_calls, w.kept_costs.tokens],
            }
        )
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(rows, fh)


if __name__ == "__main__":
    main(*sys.argv[1:4])
