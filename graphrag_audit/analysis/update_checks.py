"""Damage `graphrag update` leaves in one merged index: the delta id offset, memberships naming
entities the entities table lacks, node rows whose level disagrees with the communities table.

graphrag's merge (``graphrag/index/update/communities.py`` @ v3.3.0, v2.7.2, v1.2.0;
``graphrag/index/update/incremental_index.py`` @ v0.9.0) shifts every delta community number by the
previous maximum + 1 (−1 stays −1) in ``community`` and ``parent`` only; delta ``entity_ids`` keep the
delta run's ids (``graphrag/index/update/entities.py``: ``"id": "first"``). Runs differ only in
``period`` (``create_communities.py`` @ v3.3.0: the UTC date)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from graphrag_audit.findings import Finding, finding, preview
from graphrag_audit.model.index import IndexModel


def update_findings(model: IndexModel) -> list[Finding]:
    return _delta_offset(model) + _dangling_members(model) + _membership_levels(model)


class PeriodRuns:
    """Communities grouped by non-empty ``period``, oldest first: run ``i`` is ``ids[bounds[i]:bounds[i + 1]]``
    (sorted), ``first``/``last`` its extremes, ``previous_max`` the earlier runs' maximum (-1 for the first)."""

    def __init__(self, communities: pd.DataFrame):
        per = communities["period"].astype(str).to_numpy()
        keep = per != ""
        codes, uniq = pd.factorize(per[keep], sort=True)
        comm = communities["community"].to_numpy(dtype=np.int64)[keep]
        order = np.lexsort((comm, codes))
        self.periods = [str(p) for p in uniq]
        self.ids = comm[order]
        self.bounds = np.searchsorted(codes[order], np.arange(len(uniq) + 1))
        self.first, self.last = self.ids[self.bounds[:-1]], self.ids[self.bounds[1:] - 1]
        self.previous_max = np.concatenate([[-1], np.maximum.accumulate(self.last)])[:-1].astype(np.int64)

    def __len__(self) -> int:
        return len(self.periods)

    def run(self, i: int) -> np.ndarray:
        return self.ids[self.bounds[i] : self.bounds[i + 1]]


def offset_violations(runs: PeriodRuns) -> list[dict]:
    """One dict per later run breaking graphrag's offset rule: all numbers above the earlier runs'
    maximum, the first exactly that maximum + 1."""
    if len(runs) < 2:
        return []
    lens = np.diff(runs.bounds)
    clash = np.bincount(
        np.repeat(np.arange(len(runs)), lens)[runs.ids <= np.repeat(runs.previous_max, lens)],
        minlength=len(runs),
    )
    clash[0] = 0
    expected = runs.previous_max + 1
    bad = np.flatnonzero((np.arange(len(runs)) > 0) & ((clash > 0) | (runs.first != expected)))
    out = []
    for i in bad.tolist():
        ids = runs.run(i)
        out.append(
            {
                "period": runs.periods[i],
                "expected_first": int(expected[i]),
                "first": int(runs.first[i]),
                "at_or_below_previous_max": int(clash[i]),
                "examples": [int(x) for x in ids[ids <= runs.previous_max[i]][:8]],
            }
        )
    return out


#: graphrag's period: ``datetime.now(timezone.utc).date().isoformat()``
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _delta_offset(model: IndexModel) -> list[Finding]:
    runs = PeriodRuns(model.communities)
    if len(runs) < 2 or not all(ISO_DATE.match(p) for p in runs.periods):
        return []  # graphrag writes ISO dates: other values give no order of the runs
    bad = offset_violations(runs)
    if not bad:
        return []
    ids = sorted({x for b in bad for x in b["examples"]})
    parts = [
        f"{b['period']} starts at {b['first']} (expected {b['expected_first']}"
        + (
            f", {b['at_or_below_previous_max']} at or below the earlier runs' maximum)"
            if b["at_or_below_previous_max"]
            else ")"
        )
        for b in bad[:4]
    ]
    more = f" and {len(bad) - 4} more runs" if len(bad) > 4 else ""
    return [
        finding(
            "delta-id-offset",
            "community numbers of a later run do not follow graphrag update's offset "
            "(previous maximum + 1): " + "; ".join(parts) + more,
            ids,
            runs=bad[:100],
            runs_off=len(bad),
        )
    ]


def _dangling_members(model: IndexModel) -> list[Finding]:
    if model.entities is None:
        return []
    if model.key_match is not None:
        found = model.key_match.member_row >= 0
    else:
        ent = model.entities["id" if model.member_key == "id" else "title"]
        found = model.members["entity"].isin(pd.Index(ent.dropna().unique())).to_numpy(dtype=bool)
    if found.all():
        return []
    m = model.members
    lost = ~found
    comms = np.unique(m["community"].to_numpy(dtype=np.int64)[lost]).tolist()
    keys = pd.unique(m["entity"][lost].astype(object).to_numpy())
    column = "entity_ids" if model.member_key == "id" else "create_final_nodes titles"
    return [
        finding(
            "dangling-membership",
            f"{int(lost.sum())} membership rows of {len(comms)} communities "
            f"({column}) name {len(keys)} entities that are not in the entities table: {preview(comms)}",
            comms,
            rows=int(lost.sum()),
            entities=len(keys),
            count=len(comms),
            key=model.member_key,
            examples=[str(k) for k in keys[:5]],
        )
    ]


def _membership_levels(model: IndexModel) -> list[Finding]:
    """create_final_nodes rows whose level is not their community's in the communities table."""
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
    table_level = np.where(at >= 0, np.take(last.to_numpy(), at, mode="clip"), -1)  # (clip: no index copy)
    bad = (at >= 0) & (node_level != table_level)
    if not bad.any():
        return []
    comms = np.unique(comm[keep][bad]).tolist()
    pairs = (
        pd.Series(list(zip(node_level[bad].tolist(), table_level[bad].tolist()))).value_counts().sort_index()
    )
    runs = PeriodRuns(c)
    shifted = int(np.isin(comm[keep][bad], runs.previous_max[1:]).sum())
    return [
        finding(
            "membership-level-mismatch",
            f"{int(bad.sum())} create_final_nodes rows put an entity in a "
            f"community at another level than the communities table gives it ({len(comms)} communities): "
            f"{preview(comms)}",
            comms,
            rows=int(bad.sum()),
            count=len(comms),
            node_vs_table_levels={f"{a}->{b}": int(n) for (a, b), n in pairs.items()},
            shifted_minus_one=shifted,
        )
    ]
