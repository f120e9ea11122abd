"""Audit the three indexes of one `graphrag update` run together: the index before the update
(previous), the new documents' index (delta) and the merged one, and check that the merged
communities are previous + delta shifted by graphrag's offset.

graphrag's offset: ``v + old_max_community_id + 1`` for every delta community, where the maximum
is the previous communities' (``graphrag/index/update/communities.py`` @ v2.7.2, v3.3.0) or the
previous create_final_nodes' (``_merge_and_resolve_nodes`` there @ v1.2.0 and v0.9.0).
"""

from __future__ import annotations

import os

import numpy as np

from graphrag_audit.analysis.audit import audit_with_model
from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.locate import ROLES, locate_update_run
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import AuditOptions
from graphrag_audit.results.update_run import OffsetCheck, UpdatePart, UpdateRunReport

_SHOWN = 50  # missing/extra numbers listed at most


def offset_check(previous: IndexModel, delta: IndexModel, merged: IndexModel) -> OffsetCheck:
    def numbers(model: IndexModel) -> np.ndarray:
        return np.unique(model.communities["community"].to_numpy(dtype=np.int64))

    if "nodes" in previous.files:  # graphrag < 2.0 takes the maximum of the previous nodes
        old_max, source = int(previous.rollup_rows["community"].max()), "create_final_nodes"
    else:
        old_max, source = int(previous.communities["community"].max()), "communities"
    expected = np.union1d(numbers(previous), numbers(delta) + old_max + 1)
    found = numbers(merged)
    missing = np.setdiff1d(expected, found, assume_unique=True)[:_SHOWN]
    extra = np.setdiff1d(found, expected, assume_unique=True)[:_SHOWN]
    return OffsetCheck(
        old_max + 1, source, len(expected), len(found), tuple(missing.tolist()), tuple(extra.tolist())
    )


def _part(role: str, path, queried: bool, options: AuditOptions) -> tuple[UpdatePart, IndexModel | None]:
    if path is None:
        return UpdatePart(role, None, queried, "absent"), None
    try:
        model, report = audit_with_model(path, options)
    except IndexInputError as exc:
        return UpdatePart(role, str(path), queried, "unreadable", problem=str(exc)), None
    per_level = tuple(t.communities for t in report.tree_levels)
    periods = tuple(sorted({str(p) for p in model.communities["period"].tolist() if p}))
    return UpdatePart(
        role,
        str(path),
        queried,
        "audited",
        generation=model.generation.label,
        communities=len(model.communities),
        reports=len(model.reports),
        entities=None if model.entities is None else len(model.entities),
        per_level=per_level,
        periods=periods,
        findings=tuple(report.findings),
    ), model


def audit_update_run(path: str | os.PathLike, options: AuditOptions | None = None) -> UpdateRunReport:
    """previous, delta and merged of the newest update run reachable from ``path``
    (:func:`~graphrag_audit.io.locate.locate_update_run`), each audited with ``options``
    (costs off unless asked for), and the offset check when all three could be read."""
    options = options or AuditOptions(costs=False)
    run = locate_update_run(path)
    parts, models = zip(*(_part(role, run.folder(role), run.queried == role, options) for role in ROLES))
    offset, why = None, ""
    prev, delta, merged = models
    if prev is None or delta is None or merged is None:
        why = "needs previous, delta and merged: " + ", ".join(
            f"{p.role} {p.status}" for p in parts if p.status != "audited"
        )
    elif any(m.id_kind == "string" for m in (prev, delta, merged)):
        why = "string community ids (graphrag 0.1-0.4): graphrag's merge casts them to int"
    else:
        offset = offset_check(prev, delta, merged)
    return UpdateRunReport(
        str(run.requested),
        run.layout,
        run.run,
        run.runs,
        run.queried,
        options.level,
        tuple(parts),
        offset,
        why,
        run.notes,
    )
