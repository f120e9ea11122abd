"""Structural checks of the community tree, reports and entities, and the damage ``graphrag update`` leaves.

graphrag's merge (``graphrag/index/update/communities.py`` @v3.3.0, v2.7.2, v1.2.0; ``incremental_index.py``
@v0.9.0) shifts delta community numbers by the previous maximum + 1 in ``community`` and ``parent`` only;
delta ``entity_ids`` keep their ids (``update/entities.py``). Runs differ in ``period`` (the UTC date)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from graphrag_audit.findings import Finding, counted, finding, preview
from graphrag_audit.graphrag.compat import v2_readable
from graphrag_audit.model.index import IndexModel
from graphrag_audit.model.keys import sorted_unique


def _listed(rule: str, ids: list, one: str, many: str) -> list[Finding]:
    """``rule``'s "N <one|many>: 3, 5, ..." finding for non-empty ``ids``."""
    return (
        [finding(rule, f"{counted(len(ids), one, many)}: {preview(ids)}", ids, count=len(ids))] if ids else []
    )


def check_integrity(model: IndexModel) -> list[Finding]:
    out: list[Finding] = []
    c = model.communities
    forest = model.forest
    comm = c["community"].to_numpy()
    lev = c["level"].to_numpy()
    level_of = dict(zip(comm.tolist(), lev.tolist()))

    present = sorted(set(lev.tolist()))
    if present and present[0] != 0:
        msg = f"no community has level 0; the shallowest level is {present[0]}"
        out.append(finding("no-level-0", msg, levels=present))
    gaps = sorted(set(range(present[0], present[-1] + 1)) - set(present)) if present else []
    if gaps:
        msg = f"no communities at level(s) {preview(gaps)} between {present[0]} and {present[-1]}"
        out.append(finding("level-gap", msg, missing_levels=gaps))

    if dup := _repeated(comm):
        msg = f"{len(dup):,} community number(s) appear in several rows: {preview(dup)}"
        out.append(finding("duplicate-community", msg, dup, count=len(dup)))

    if missing := forest.missing_parents:
        kids = sorted(missing)
        msg = (
            f"{counted(len(kids), 'community names', 'communities name')} a parent with no row: "
            f"{preview(f'{k}->{missing[k]}' for k in kids)}"
        )
        out.append(finding("missing-parent", msg, kids, parents={str(k): missing[k] for k in kids}))
    u, v = forest.edge_parents, forest.edge_children
    if cyc_nodes := forest.cycle_nodes:
        through = counted(len(cyc_nodes), "community", "communities")
        msg = f"parent links form a cycle through {through}: {preview(cyc_nodes)}"
        out.append(finding("parent-cycle", msg, cyc_nodes))
    out += _listed(
        "multiple-parents",
        forest.multi_parent,
        "community sits under several parents",
        "communities sit under several parents",
    )
    known = pd.Index(np.fromiter(level_of, dtype=np.int64, count=len(level_of)))  # each community once
    known_level = np.append(np.fromiter(level_of.values(), dtype=np.int64, count=len(level_of)), -99)
    iu, iv = known.get_indexer(u), known.get_indexer(v)
    lv_u, lv_v = known_level[iu], known_level[iv]  # -99: no row
    out += _listed(
        "level-not-parent-plus-one",
        sorted_unique(v[(u != v) & ((iv < 0) | (lv_v != lv_u + 1))]).tolist(),
        "community is not one level below its parent",
        "communities are not one level below their parent",
    )
    out += _listed(
        "ids-not-depth-ordered",
        sorted_unique(v[v < u]).tolist(),
        "community has a smaller number than its parent",
        "communities have a smaller number than their parent",
    )

    out.extend(_containment(model, u, v))

    if model.has_children_column and model.tree_source == "parent":
        diff, only_children, only_parent = _children_vs_parent(
            comm, c["children"].tolist(), c["parent"].to_numpy(dtype=np.int64)
        )
        if diff:
            who = counted(len(diff), "community disagree", "communities disagree")
            msg = f"the children lists of {who} with the parent column: {preview(diff)}"
            ev = {"only_in_children": only_children, "only_in_parent": only_parent}
            out.append(finding("children-parent-mismatch", msg, diff, **ev))

    periods = sorted({p for p in c["period"].tolist() if p})
    if len(periods) > 1:
        per = c.groupby("period").size()
        by_level = c[c["period"] != ""].groupby(["period", "level"]).size()
        levels_per_period: dict[str, dict[str, int]] = {}
        for (p, lv), n in by_level.items():
            levels_per_period.setdefault(str(p), {})[str(int(lv))] = int(n)
        msg = (
            f"communities carry {len(periods)} period values ({preview(periods, 4)}): an incremental update "
        )
        msg += "merged several runs"
        counts = {str(k): int(v) for k, v in per.items() if k}
        out.append(finding("multiple-periods", msg, periods=counts, levels_per_period=levels_per_period))

    out += _delta_offset(model) + _dangling_members(model) + _membership_levels(model)

    out.extend(_reports(model, level_of, known, known_level))

    n_lost, examples = 0, {}
    if model.entities is not None and len(model.entities):
        keys = model.entities["id" if model.member_key == "id" else "title"]
        if model.key_match is not None:
            lost = ~model.key_match.clustered
        else:
            lost = ~keys.isin(pd.Index(model.members["entity"].unique())).to_numpy(dtype=bool)
        n_lost, n_all = int(lost.sum()), int(len(keys))
        examples = {"examples": model.entities["title"][lost].head(5).tolist()}
    elif model.member_key == "title" and len(model.rollup_rows):
        r = model.rollup_rows
        codes, n_all = model.rollup_key_codes()
        if (codes < 0).any():  # missing titles: let Python sets decide, as always
            all_e = set(r["entity"])
            n_all, n_lost = len(all_e), len(all_e - set(r.loc[r["community"] >= 0, "entity"]))
        else:
            n_lost = n_all - len(sorted_unique(codes[r["community"].to_numpy() >= 0]))
    if n_lost:
        fate = (
            "is in no community and never reaches" if n_lost == 1 else "are in no community and never reach"
        )
        message = f"{n_lost:,} of {n_all:,} entities {fate} global search"
        out.append(finding("unclustered-entities", message, count=n_lost, total=n_all, **examples))

    if model.id_kind == "string":
        msg = "community ids are stored as strings: graphrag >= 1.0 selects 0 reports from this index at "
        msg += "every community_level"
        out.append(finding("string-community-ids", msg))
    if model.schemas.get("communities", {}).get("community") == "int32":
        msg = "communities.community is int32: under pandas >= 3, graphrag >= 2.0's Python API (tables read "
        msg += "with pd.read_parquet) raises TypeError in read_indexer_reports; graphrag query (graphrag >= "
        msg += "3.0.2) casts the ids to int64 as it loads the tables, so this column does not stop it"
        out.append(finding("int32-community-ids", msg, dtype="int32"))
    if not v2_readable(model):
        has = "communities" in model.files
        what = "its communities table has no entity_ids column" if has else "no communities table"
        out.append(finding("v2-unreadable", f"graphrag >= 2.0 cannot read this index: {what}"))
    return out


def _repeated(values: np.ndarray) -> list[int]:
    """The values that occur more than once, ascending."""
    vc = pd.Series(values).value_counts()
    return sorted(int(x) for x in vc[vc > 1].index)


def _children_vs_parent(comm: np.ndarray, children: list, parent: np.ndarray) -> tuple[list[int], int, int]:
    """(parents whose (parent, child) pairs differ between the columns, pairs only in children, only in
    parent)."""
    comm_ = comm.tolist()
    listed = {(p, int(k)) for p, kids in zip(comm_, children) if kids for k in kids}
    linked = {(p, c) for p, c in zip(parent.tolist(), comm_) if p >= 0}
    only_listed, only_linked = listed - linked, linked - listed
    return sorted({p for p, _ in only_listed | only_linked}), len(only_listed), len(only_linked)


def _containment(model: IndexModel, u: np.ndarray, v: np.ndarray) -> list[Finding]:
    """Children holding an entity their parent (any of their parents) lacks."""
    keep = u != v
    u, v = u[keep], v[keep]
    if not len(u):
        return []
    m = model.members
    ecode, n_ent = model.member_key_codes()
    ecode = np.where(ecode < 0, n_ent, ecode)  # a missing key matches a missing key, as in a merge
    pairs = pd.DataFrame(
        {"c": m["community"].to_numpy(dtype=np.int64), "e": ecode}
    ).drop_duplicates()  # (community, entity) of the membership
    want = pd.DataFrame({"p": u, "c": v}).merge(pairs, on="c")  # each child's entities, with its parent
    found = want.merge(pairs.rename(columns={"c": "p"}), on=["p", "e"], how="left", indicator=True)
    lacking = found.loc[found["_merge"] == "left_only", "c"].to_numpy(dtype=np.int64)
    return _listed(
        "child-not-subset",
        sorted_unique(lacking).tolist(),
        "community holds entities its parent lacks",
        "communities hold entities their parent lacks",
    )


def _reports(model: IndexModel, level_of: dict, known: pd.Index, level: np.ndarray) -> list[Finding]:
    """Report findings; ``known``: the community numbers, ``level``: their levels."""
    if not model.has_reports_table:
        return [finding("no-reports-table", "no community_reports table: global search has nothing to send")]
    out: list[Finding] = []
    r = model.reports
    rc = r["community"].to_numpy()
    rl = r["level"].to_numpy()
    no_report = sorted(set(level_of) - set(rc.tolist()))
    if no_report:
        by_level = pd.Series([level_of[c] for c in no_report]).value_counts().sort_index()
        out.append(
            finding(
                "community-without-report",
                f"{counted(len(no_report), 'community has', 'communities have')} no report "
                f"(per level: {', '.join(f'L{k}: {v}' for k, v in by_level.items())}): "
                f"{preview(no_report)}",
                no_report,
                count=len(no_report),
                per_level={str(k): int(v) for k, v in by_level.items()},
            )
        )
    if (rc == -1).any():
        msg = "a report exists for community -1 ('no community'); graphrag < 2.0 sends it at every "
        msg += "community_level"
        out.append(finding("minus-one-report", msg, [-1], rows=int((rc == -1).sum())))
    at = known.get_indexer(rc)
    out += _listed(
        "report-without-community",
        sorted_unique(rc[(at < 0) & (rc != -1)]).tolist(),
        "report names a community with no communities row",
        "reports name communities with no communities row",
    )
    out += _listed(
        "report-level-mismatch",
        sorted_unique(rc[(at >= 0) & (level[at] != rl)]).tolist(),
        "report carries a level different from its community's",
        "reports carry a level different from their community's",
    )
    out += _listed(
        "duplicate-report",
        _repeated(rc),
        "community has several reports",
        "communities have several reports",
    )
    if len(r) and not (rl == 0).any():
        msg = "no report at level 0: dynamic community selection raises KeyError (microsoft/graphrag#2382)"
        out.append(finding("dynamic-no-level-0-report", msg))
    return out


#: graphrag's period: ``datetime.now(timezone.utc).date().isoformat()``
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _period_runs(communities: pd.DataFrame) -> tuple[list[str], list[np.ndarray], list[int]]:
    """(non-empty periods, oldest first; each one's sorted community numbers; the earlier runs' maximum)."""
    per = communities["period"].astype(str).to_numpy()
    keep = per != ""
    df = pd.DataFrame({"p": per[keep], "c": communities["community"].to_numpy(dtype=np.int64)[keep]})
    runs = {str(p): np.sort(g.to_numpy()) for p, g in df.groupby("p", sort=True)["c"]}
    previous_max = np.maximum.accumulate([-1] + [int(ids[-1]) for ids in runs.values()])[:-1]
    return list(runs), list(runs.values()), previous_max.tolist()


def _delta_offset(model: IndexModel) -> list[Finding]:
    """Later runs not numbered from the earlier runs' maximum + 1."""
    periods, runs, previous_max = _period_runs(model.communities)
    if len(runs) < 2 or not all(ISO_DATE.match(p) for p in periods):
        return []  # graphrag writes ISO dates: other values give no order of the runs
    bad = []
    for p, ids, prev in list(zip(periods, runs, previous_max))[1:]:
        clash = ids[ids <= prev]
        if len(clash) or ids[0] != prev + 1:
            bad.append(
                {
                    "period": p,
                    "expected_first": prev + 1,
                    "first": int(ids[0]),
                    "at_or_below_previous_max": len(clash),
                    "examples": clash[:8].tolist(),
                }
            )
    if not bad:
        return []
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
    msg = "community numbers of a later run do not follow graphrag update's offset (previous maximum + 1): "
    examples = sorted({x for b in bad for x in b["examples"]})
    return [
        finding("delta-id-offset", msg + "; ".join(parts) + more, examples, runs=bad[:100], runs_off=len(bad))
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
    msg = f"{int(lost.sum())} membership rows of {len(comms)} communities ({column}) name {len(keys)} "
    msg += f"entities that are not in the entities table: {preview(comms)}"
    ev = {"rows": int(lost.sum()), "entities": len(keys), "count": len(comms), "key": model.member_key}
    return [finding("dangling-membership", msg, comms, **ev, examples=[str(k) for k in keys[:5]])]


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
    shifted = int(np.isin(comm[keep][bad], _period_runs(c)[2][1:]).sum())
    msg = f"{int(bad.sum())} create_final_nodes rows put an entity in a community at another level than the "
    msg += f"communities table gives it ({len(comms)} communities): {preview(comms)}"
    levels = {f"{a}->{b}": int(n) for (a, b), n in pairs.items()}
    ev = {
        "rows": int(bad.sum()),
        "count": len(comms),
        "node_vs_table_levels": levels,
        "shifted_minus_one": shifted,
    }
    return [finding("membership-level-mismatch", msg, comms, **ev)]
