"""Runs in a side interpreter with graphrag installed (tests/bundle/test_bundle.py): for each index given,
graphrag's own ``read_indexer_reports`` at every community_level (the community numbers it returns)
and graphrag_audit.verify's comparison, which runs graphrag's ``build_community_context`` over that
selection (its batches, map calls and token counts per level).

Usage: ``python bundle_graphrag_runner.py OUT.json INDEX...``; one process for all indexes.
"""

from __future__ import annotations

import json
import sys

import pandas as pd
from graphrag.query.indexer_adapters import read_indexer_reports

from graphrag_audit.analysis.audit import audit_with_model
from graphrag_audit.verify import _select, verify_with_graphrag

_PATHS = ("path", "output_dir", "load_paths")


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items() if k not in _PATHS}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def one(index: str) -> dict:
    model, report = audit_with_model(index)
    verify = verify_with_graphrag(report, model).to_dict()
    behaviour = verify.get("behaviour")
    second = model.files.get("communities" if behaviour == "v2" else "nodes")
    reports_df = pd.read_parquet(model.files["reports"])
    other_df = pd.read_parquet(second)
    selections = {}
    for lv in report.levels:
        ids, _, err = _select(read_indexer_reports, reports_df, other_df, lv.community_level)
        selections[str(lv.community_level)] = {
            "ids": [str(i) for i in ids] if ids is not None else None,
            "error": None if err is None else str(err)[:200],
        }
    return {"selections": selections, "verify": _plain(verify)}


def main(out_path: str, *indexes: str) -> None:
    json.dump({i: one(i) for i in indexes}, open(out_path, "w"), default=str)


if __name__ == "__main__":
    main(*sys.argv[1:])
