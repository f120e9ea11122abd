"""Checks for the damage `graphrag update` (incremental indexing) leaves in one merged index.

graphrag's merge (``graphrag/index/update/communities.py`` @ v3.3.0, v2.7.2, v1.2.0;
``graphrag/index/update/incremental_index.py`` @ v0.9.0) concatenates the previous communities
table with the delta run's, after shifting every delta community number by the previous
maximum + 1 (``v + old_max_community_id + 1``; −1 stays −1). It remaps ``community`` and
``parent`` only: ``children`` keep the delta run's numbers, and the delta communities'
``entity_ids`` keep the delta run's entity ids even where the entity merge
(``graphrag/index/update/entities.py``: grouped by title, ``"id": "first"``) kept the previous
run's id for that title. The two runs differ only in ``period`` (the UTC date of each run,
``create_communities.py`` @ v3.3.0: ``datetime.now(timezone.utc).date().isoformat()``).

The ``children`` / ``parent`` disagreement is ``children-parent-mismatch`` and the two runs
``multiple-periods`` (analysis/integrity.py); this module adds the id offset, memberships
naming entities that are not in the entities table, and node rows whose level disagrees with
the communities table.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from graphrag_audit.findings import Finding, finding, preview
from graphrag_audit.model.index import IndexModel


def update_findings(model: IndexModel) -> list[Finding]:
    out: list[Finding] = []
    out.extend(_delta_offset(model))
    out.extend(_dangling_members(model))
    out.extend(_membership_levels(model))
    return out


def period_runs(communities: pd.DataFrame) -> list[tuple[str, np.ndarray]]:
    """(period, community numbers) per non-empty period value, oldest first (ISO dates sort as
    strings); rows without a period are left out."""
    per = communities.loc[communities["period"].astype(str) != "", ["period", "community"]]
    runs = []
    for p in sorted(set(per["period"].astype(str))):
        runs.append((p, np.sort(per.loc[per["period"].astype(str) == p, "community"].to_numpy(dtype=np.int64))))
    return runs


def offset_violations(runs: list[tuple[str, np.ndarray]]) -> list[dict]:
    """For each run after the first, whether its numbers follow graphrag's offset rule: every
    number above the previous runs' maximum, the first one exactly that maximum + 1 (hierarchical
    Leiden numbers each run's communities from 0). One dict per run that does not."""
    bad = []
    prior_max = None
    for period, ids in runs:
        if prior_max is not None and len(ids):
            expected = prior_max + 1
            clash = ids[ids <= prior_max]
            if len(clash) or int(ids[0]) != expected:
                bad.append({"period": period, "expected_first": int(expected), "first": int(ids[0]),
                            "at_or_below_previous_max": int(len(clash)),
                            "examples": [int(x) for x in clash[:8]]})
        if len(ids):
            prior_max = int(ids[-1]) if prior_max is None else max(prior_max, int(ids[-1]))
    return bad


#: graphrag's period: ``datetime.now(timezone.utc).date().isoformat()``
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _delta_offset(model: IndexModel) -> list[Finding]:
    runs = period_runs(model.communities)
    if len(runs) < 2 or not all(ISO_DATE.match(p) for p, _ in runs):
        return []  # graphrag writes ISO dates: other values give no order of the runs
    bad = offset_violations(runs)
    if not bad:
        return []
    ids = sorted({x for b in bad for x in b["examples"]})
    parts = [f"{b['period']} starts at {b['first']} (expected {b['expected_first']}"
             + (f", {b['at_or_below_previous_max']} at or below the earlier runs' maximum)"
                if b["at_or_below_previous_max"] else ")") for b in bad]
    return [finding("delta-id-offset", "community numbers of a later run do not follow graphrag update's offset "
                    "(previous maximum + 1): " + "; ".join(parts), ids, runs=bad)]


def _member_found(model: IndexModel) -> np.ndarray | None:
    """Per membership row, whether its entity key is in the entities table (None: no table)."""
    if model.entities is None:
        return None
    if model.key_match is not None:
        return model.key_match.member_row >= 0
    keys = model.entities["id" if model.member_key == "id" else "title"]
    return model.members["entity"].isin(pd.Index(keys.dropna().unique())).to_numpy(dtype=bool)


def _dangling_members(model: IndexModel) -> list[Finding]:
    found = _member_found(model)
    if found is None or found.all():
        return []
    m = model.members
    lost = ~found
    comms = np.unique(m["community"].to_numpy(dtype=np.int64)[lost]).tolist()
    keys = pd.unique(m["entity"][lost].astype(object).to_numpy())
    column = "entity_ids" if model.member_key == "id" else "create_final_nodes titles"
    return [finding("dangling-membership", f"{int(lost.sum())} membership rows of {len(comms)} communities "
                    f"({column}) name {len(keys)} entities that are not in the entities table: {preview(comms)}",
                    comms, rows=int(lost.sum()), entities=len(keys), count=len(comms), key=model.member_key,
                    examples=[str(k) for k in keys[:5]])]


def _membership_levels(model: IndexModel) -> list[Finding]:
    """create_final_nodes rows (graphrag < 2.0's per-level membership) whose level is not the
    level of their community in the communities table."""
    if "nodes" not in model.files or "communities" not in model.files:
        return []
    r = model.rollup_rows
    comm = r["community"].to_numpy(dtype=np.int64)
    keep = comm >= 0
    c = model.communities
    last = pd.Series(c["level"].to_numpy(dtype=np.int64), index=c["community"].to_numpy(dtype=np.int64))
    last = last[~last.index.duplicated(keep="last")]
    at = last.index.get_indexer(comm[keep])
    node_level = r["level"].to_numpy(dtype=np.int64)[keep]
    table_level = np.where(at >= 0, last.to_numpy()[np.maximum(at, 0)], -1)
    bad = (at >= 0) & (node_level != table_level)
    if not bad.any():
        return []
    comms = np.unique(comm[keep][bad]).tolist()
    pairs = pd.Series(list(zip(node_level[bad].tolist(), table_level[bad].tolist()))).value_counts().sort_index()
    runs = period_runs(c)
    prior_max = [int(np.max(np.concatenate([ids for _, ids in runs[:k]]))) for k in range(1, len(runs))]
    shifted = int(np.isin(comm[keep][bad], np.array(prior_max, dtype=np.int64)).sum())
    return [finding("membership-level-mismatch", f"{int(bad.sum())} create_final_nodes rows put an entity in a "
                    f"community at another level than the communities table gives it ({len(comms)} communities): "
                    f"{preview(comms)}", comms, rows=int(bad.sum()), count=len(comms),
                    node_vs_table_levels={f"{a}->{b}": int(n) for (a, b), n in pairs.items()},
                    shifted_minus_one=shifted)]
