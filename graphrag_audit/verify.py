"""--verify: run the installed graphrag's own ``read_indexer_reports`` and compare, level by level.

graphrag is an optional extra (``pip install graphrag-audit[graphrag]``), never a dependency.
graphrag >= 2.0 is compared with the ``v2`` selection (it reads the communities table),
graphrag < 2.0 with ``v1`` (it reads ``create_final_nodes``).
"""

from __future__ import annotations

import copy
from importlib import metadata

import pandas as pd



def installed_graphrag_version() -> str | None:
    try:
        return metadata.version("graphrag")
    except metadata.PackageNotFoundError:
        return None


def _read(path) -> pd.DataFrame:
    if path.suffix == ".csv":
        return pd.read_csv(path)
    return pd.read_parquet(path)


def verify_with_graphrag(report) -> dict:
    version = installed_graphrag_version()
    if version is None:
        return {"available": False, "reason": "graphrag is not installed in this environment "
                "(pip install 'graphrag-audit[graphrag]')"}
    try:
        from graphrag.query.indexer_adapters import read_indexer_reports
    except Exception as exc:  # noqa: BLE001 - any import failure of an optional extra
        return {"available": False, "graphrag_version": version,
                "reason": f"cannot import graphrag.query.indexer_adapters ({type(exc).__name__}: {exc})"}
    model = report.model
    major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
    behaviour = "v2" if major >= 2 else "v1"
    second = model.files.get("communities") if behaviour == "v2" else model.files.get("nodes")
    if second is None or "reports" not in model.files:
        return {"available": False, "graphrag_version": version, "behaviour": behaviour,
                "reason": "this index lacks the tables graphrag "
                          f"{version} reads ({'communities' if behaviour == 'v2' else 'create_final_nodes'})"}
    from graphrag_audit.integrity import v2_readable

    # what the audit predicts graphrag does on this index
    string_trap = behaviour == "v1" and model.id_kind == "string" and major >= 1
    int32_trap = (model.extra.get("schemas", {}).get("communities", {}).get("community") == "int32"
                  and int(pd.__version__.split(".")[0]) >= 3)
    predicts_error = behaviour == "v2" and (not v2_readable(model) or int32_trap)
    reports_df = _read(model.files["reports"])
    other_df = _read(second)
    rows = []
    for r in report.levels:
        n = r["community_level"]
        ours = [] if string_trap else r["selected"][behaviour].community_ids
        try:
            got = read_indexer_reports(copy.deepcopy(reports_df), copy.deepcopy(other_df), n)
            theirs = sorted(int(x.community_id if hasattr(x, "community_id") else x.short_id) for x in got)
            err = None
        except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
            theirs, err = None, f"{type(exc).__name__}: {exc}"[:300]
        agree = (theirs is None) if predicts_error else (theirs == ours)
        row = {"community_level": n, "agree": agree, "graphrag_count": None if theirs is None else len(theirs),
               "audit_count": None if predicts_error else len(ours)}
        if string_trap:
            row["expected"] = "0 reports: graphrag >= 1.0 on string community ids (string-community-ids)"
        if predicts_error:
            row["expected"] = ("an error: graphrag >= 2.0 cannot read this index ("
                               + ("int32-community-ids with pandas >= 3" if int32_trap else "v2-unreadable") + ")")
        if err:
            row["graphrag_error"] = err
        elif theirs is not None and theirs != ours:
            row["only_graphrag"] = sorted(set(theirs) - set(ours))
            row["only_audit"] = sorted(set(ours) - set(theirs))
        rows.append(row)
    return {"available": True, "graphrag_version": version, "behaviour": behaviour,
            "agree": all(x["agree"] for x in rows), "levels": rows}
