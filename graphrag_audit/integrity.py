"""Structural checks of the community tree, reports and entities (pure functions of the model)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd

from graphrag_audit.findings import Finding, finding, preview
from graphrag_audit.model import IndexModel


def check_integrity(model: IndexModel) -> list[Finding]:
    out: list[Finding] = []
    c = model.communities
    tree = model.tree
    comm = c["community"].to_numpy()
    lev = c["level"].to_numpy()
    level_of = dict(zip(comm.tolist(), lev.tolist()))

    # ---- levels -------------------------------------------------------------------------
    present = sorted(set(lev.tolist()))
    if present and present[0] != 0:
        out.append(finding("no-level-0", f"no community has level 0; the shallowest level is {present[0]}",
                           levels=present))
    if present:
        gaps = sorted(set(range(present[0], present[-1] + 1)) - set(present))
        if gaps:
            out.append(finding("level-gap", f"no communities at level(s) {preview(gaps)} between "
                               f"{present[0]} and {present[-1]}", missing_levels=gaps))

    # ---- duplicates ---------------------------------------------------------------------
    dup = pd.Series(comm).value_counts()
    dup = sorted(int(x) for x in dup[dup > 1].index)
    if dup:
        out.append(finding("duplicate-community", f"{len(dup)} community number(s) appear in several rows: "
                           f"{preview(dup)}", dup, count=len(dup)))

    # ---- parents ------------------------------------------------------------------------
    missing = tree.graph.get("missing_parents", {})
    if missing:
        kids = sorted(missing)
        out.append(finding("missing-parent", f"{len(kids)} communities name a parent with no row: "
                           f"{preview(f'{k}->{missing[k]}' for k in kids)}", kids,
                           parents={str(k): missing[k] for k in kids}))
    cyc_nodes = sorted({n for comp in nx.strongly_connected_components(tree) if len(comp) > 1 for n in comp}
                       | {u for u, v in nx.selfloop_edges(tree)})
    if cyc_nodes:
        out.append(finding("parent-cycle", f"parent links form a cycle through {len(cyc_nodes)} communities: "
                           f"{preview(cyc_nodes)}", cyc_nodes))
    multi = sorted(n for n in tree.nodes if tree.in_degree(n) > 1)
    if multi:
        out.append(finding("multiple-parents", f"{len(multi)} communities sit under several parents: "
                           f"{preview(multi)}", multi, count=len(multi)))
    bad_level = sorted({v for u, v in tree.edges if u != v and level_of.get(v) != level_of.get(u, -99) + 1})
    if bad_level:
        out.append(finding("level-not-parent-plus-one", f"{len(bad_level)} communities are not one level below "
                           f"their parent: {preview(bad_level)}", bad_level, count=len(bad_level)))
    not_ordered = sorted({v for u, v in tree.edges if v < u})
    if not_ordered:
        out.append(finding("ids-not-depth-ordered", f"{len(not_ordered)} communities have a smaller number than "
                           f"their parent: {preview(not_ordered)}", not_ordered, count=len(not_ordered)))

    # ---- entity containment -------------------------------------------------------------
    out.extend(_containment(model))

    # ---- children column ----------------------------------------------------------------
    if model.has_children_column and model.tree_source == "parent":
        from_children = {(int(p), int(ch)) for p, kids in zip(comm, c["children"]) for ch in (kids or [])
                         if ch is not None and not (isinstance(ch, float) and ch != ch)}
        from_parent = {(int(p), int(ch)) for ch, p in zip(comm, c["parent"].to_numpy()) if p >= 0}
        diff = sorted({p for p, _ in from_children ^ from_parent})
        if diff:
            out.append(finding("children-parent-mismatch",
                               f"the children lists of {len(diff)} communities disagree with the parent column: "
                               f"{preview(diff)}", diff, only_in_children=len(from_children - from_parent),
                               only_in_parent=len(from_parent - from_children)))

    periods = sorted({p for p in c["period"].tolist() if p})
    if len(periods) > 1:
        per = c.groupby("period").size()
        out.append(finding("multiple-periods", f"communities carry {len(periods)} period values "
                           f"({preview(periods, 4)}): an incremental update merged several runs",
                           periods={str(k): int(v) for k, v in per.items() if k}))

    # ---- reports ------------------------------------------------------------------------
    out.extend(_reports(model, level_of))

    # ---- entities -----------------------------------------------------------------------
    if model.entities is not None and len(model.entities):
        keys = model.entities["id" if model.member_key == "id" else "title"]
        clustered = pd.Index(model.members["entity"].unique())
        lost = ~keys.isin(clustered)
        n_lost = int(lost.sum())
        if n_lost:
            out.append(finding("unclustered-entities", f"{n_lost} of {len(keys)} entities are in no community "
                               f"and never reach global search", count=n_lost, total=int(len(keys)),
                               examples=model.entities["title"][lost].head(5).tolist()))
    elif model.member_key == "title" and len(model.rollup_rows):
        r = model.rollup_rows
        clustered = set(r.loc[r["community"] >= 0, "entity"])
        all_e = set(r["entity"])
        n_lost = len(all_e - clustered)
        if n_lost:
            out.append(finding("unclustered-entities", f"{n_lost} of {len(all_e)} entities are in no community "
                               f"and never reach global search", count=n_lost, total=len(all_e)))

    # ---- cross-version traps ------------------------------------------------------------
    if model.id_kind == "string":
        out.append(finding("string-community-ids", "community ids are stored as strings: graphrag >= 1.0 selects "
                           "0 reports from this index at every community_level"))
    ctype = model.extra.get("schemas", {}).get("communities", {}).get("community")
    if ctype == "int32":
        out.append(finding("int32-community-ids", "communities.community is int32: graphrag >= 2.0 running on "
                           "pandas >= 3 raises TypeError in read_indexer_reports", dtype=ctype))
    if not v2_readable(model):
        out.append(finding("v2-unreadable", "graphrag >= 2.0 cannot read this index: "
                           + ("no communities table" if "communities" not in model.files
                              else "its communities table has no entity_ids column")))
    return out


def v2_readable(model: IndexModel) -> bool:
    from graphrag_audit.tables import table_columns

    path = model.files.get("communities")
    if path is None:
        return False
    cols = model.extra.get("_communities_columns")
    if cols is None:
        cols = table_columns(path)
        model.extra["_communities_columns"] = cols
    return "entity_ids" in cols and "community" in cols


def _containment(model: IndexModel) -> list[Finding]:
    tree = model.tree
    edges = [(u, v) for u, v in tree.edges if u != v]
    if not edges:
        return []
    m = model.members[["entity", "community"]]
    e = pd.DataFrame(edges, columns=["parent", "community"])
    child_rows = m.merge(e, on="community")
    parent_rows = m.rename(columns={"community": "parent"}).assign(_in=True)
    j = child_rows.merge(parent_rows, on=["entity", "parent"], how="left")
    bad = sorted(set(j.loc[j["_in"].isna(), "community"].astype(int)))
    if not bad:
        return []
    return [finding("child-not-subset", f"{len(bad)} communities hold entities their parent lacks: {preview(bad)}",
                    bad, count=len(bad))]


def _reports(model: IndexModel, level_of: dict) -> list[Finding]:
    out: list[Finding] = []
    if not model.has_reports_table:
        out.append(finding("no-reports-table", "no community_reports table: global search has nothing to send"))
        return out
    r = model.reports
    rc = r["community"].to_numpy()
    rl = r["level"].to_numpy()
    comm_set = set(level_of)
    have = set(rc.tolist())
    no_report = sorted(comm_set - have)
    if no_report:
        by_level = pd.Series([level_of[c] for c in no_report]).value_counts().sort_index()
        out.append(finding("community-without-report", f"{len(no_report)} communities have no report "
                           f"(per level: {', '.join(f'L{k}: {v}' for k, v in by_level.items())}): "
                           f"{preview(no_report)}", no_report, count=len(no_report),
                           per_level={str(k): int(v) for k, v in by_level.items()}))
    if (rc == -1).any():
        out.append(finding("minus-one-report", "a report exists for community -1 ('no community'); graphrag < 2.0 "
                           "sends it at every community_level", [-1], rows=int((rc == -1).sum())))
    orphans = sorted({int(x) for x in rc if x not in comm_set and x != -1})
    if orphans:
        out.append(finding("report-without-community", f"{len(orphans)} reports name communities with no "
                           f"communities row: {preview(orphans)}", orphans, count=len(orphans)))
    mism = sorted({int(c) for c, lv in zip(rc.tolist(), rl.tolist()) if c in level_of and level_of[c] != lv})
    if mism:
        out.append(finding("report-level-mismatch", f"{len(mism)} reports carry a level different from their "
                           f"community's: {preview(mism)}", mism, count=len(mism)))
    vc = pd.Series(rc).value_counts()
    dups = sorted(int(x) for x in vc[vc > 1].index)
    if dups:
        out.append(finding("duplicate-report", f"{len(dups)} communities have several reports: {preview(dups)}",
                           dups, count=len(dups)))
    if len(r) and not (rl == 0).any():
        out.append(finding("dynamic-no-level-0-report", "no report at level 0: dynamic community selection "
                           "raises KeyError (microsoft/graphrag#2382)"))
    return out
