"""Per-level analyses: the tree level by level, and what each community_level sends."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from graphrag_audit.model import IndexModel
from graphrag_audit.selection import BEHAVIOURS, Selection


@dataclass(frozen=True)
class TreeLevel:
    level: int
    communities: int
    leaves: int
    reports: int
    entities: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class SelectionStats:
    behaviour: str
    count: int
    community_ids: list[int]
    by_level: dict[str, int]
    ancestors_sent: int
    entities_covered: int
    mean_reports_per_entity: float | None
    entities_per_report: dict[str, float | int | None]
    cost: dict | None = None  # tokens / map calls, see costs.py
    extra: dict = field(default_factory=dict)
    rows: np.ndarray | None = field(default=None, repr=False)  # report rows, parquet order
    row_tokens: np.ndarray | None = field(default=None, repr=False)  # tokens of each row's context line

    def to_dict(self) -> dict:
        d = {
            "count": self.count,
            "community_ids": self.community_ids,
            "by_level": self.by_level,
            "ancestors_sent": self.ancestors_sent,
            "entities_covered": self.entities_covered,
            "mean_reports_per_entity": self.mean_reports_per_entity,
            "entities_per_report": self.entities_per_report,
        }
        if self.cost is not None:
            d.update(self.cost)
        d.update(self.extra)
        return d


class TreeIndex:
    """Dense community codes, parent codes and membership codes for vectorised analyses."""

    def __init__(self, model: IndexModel):
        c = model.communities.drop_duplicates("community")
        self.index = pd.Index(c["community"].to_numpy())
        self.level = c["level"].to_numpy()
        self.n_entities = c["n_entities"].to_numpy()
        parent = np.full(len(self.index), -1, dtype=np.int64)
        tree = model.tree
        for child in tree.nodes:
            preds = list(tree.predecessors(child))
            if preds:
                parent[self.index.get_loc(child)] = self.index.get_loc(preds[0])
        self.parent = parent
        self.children_count = np.bincount(parent[parent >= 0], minlength=len(self.index))
        m = model.members
        self.mem_ccode = self.index.get_indexer(m["community"].to_numpy())
        ok = self.mem_ccode >= 0
        self.mem_ccode = self.mem_ccode[ok]
        self.mem_ecode, uniques = pd.factorize(m["entity"].to_numpy()[ok])
        self.n_member_entities = len(uniques)
        rep = model.reports["community"].to_numpy()
        self.rep_ccode = self.index.get_indexer(rep)
        self.rep_level = model.reports["level"].to_numpy()
        rep_n = np.zeros(len(rep), dtype=np.int64)
        has = self.rep_ccode >= 0
        rep_n[has] = self.n_entities[self.rep_ccode[has]]
        self.rep_n_entities = rep_n

    def covered(self, ccodes: np.ndarray) -> int:
        mask = np.zeros(len(self.index), dtype=bool)
        mask[ccodes[ccodes >= 0]] = True
        ent = np.zeros(self.n_member_entities, dtype=bool)
        ent[self.mem_ecode[mask[self.mem_ccode]]] = True
        return int(ent.sum())

    def ancestors_in(self, ccodes: np.ndarray) -> np.ndarray:
        """Codes among ``ccodes`` that are a proper ancestor of another code in ``ccodes``."""
        sel = np.zeros(len(self.index), dtype=bool)
        sel[ccodes[ccodes >= 0]] = True
        is_anc = np.zeros(len(self.index), dtype=bool)
        cur = np.unique(ccodes[ccodes >= 0])
        seen = np.zeros(len(self.index), dtype=bool)
        for _ in range(len(self.index)):  # bounded: cycles stop via `seen`
            cur = self.parent[cur]
            cur = cur[cur >= 0]
            cur = cur[~seen[cur]]
            if not len(cur):
                break
            seen[cur] = True
            is_anc[cur[sel[cur]]] = True
        return np.flatnonzero(is_anc)


def tree_levels(model: IndexModel, ti: TreeIndex) -> list[TreeLevel]:
    out = []
    for lv in model.levels:
        codes = np.flatnonzero(ti.level == lv)
        out.append(TreeLevel(
            level=lv,
            communities=int(len(codes)),
            leaves=int((ti.children_count[codes] == 0).sum()),
            reports=int((model.reports["level"].to_numpy() == lv).sum()),
            entities=ti.covered(codes),
        ))
    return out


def selection_stats(model: IndexModel, ti: TreeIndex, sel: Selection) -> SelectionStats:
    rows = sel.rows
    ccodes = ti.rep_ccode[rows]
    comm = model.reports["community"].to_numpy()[rows]
    lv = ti.rep_level[rows]
    by_level = {str(int(k)): int(v) for k, v in zip(*np.unique(lv, return_counts=True))}
    covered = ti.covered(ccodes)
    n_ent = ti.rep_n_entities[rows]
    anc = ti.ancestors_in(ccodes)
    anc_rows = int(np.isin(ccodes, anc).sum()) if len(anc) else 0
    epr = ({"min": int(n_ent.min()), "median": float(np.median(n_ent)), "max": int(n_ent.max())}
           if len(n_ent) else {"min": None, "median": None, "max": None})
    return SelectionStats(
        behaviour=sel.behaviour,
        count=int(len(rows)),
        community_ids=sorted(int(x) for x in comm),
        by_level=by_level,
        ancestors_sent=anc_rows,
        entities_covered=covered,
        mean_reports_per_entity=(round(float(n_ent.sum()) / covered, 3) if covered else None),
        entities_per_report=epr,
        rows=rows,
    )


def level_results(model: IndexModel, ti: TreeIndex, selections: dict) -> list[dict]:
    """One dict per N: {"community_level": N, "selected": {behaviour: SelectionStats}}."""
    out = []
    for n, by_b in selections.items():
        stats = {b: selection_stats(model, ti, by_b[b]) for b in BEHAVIOURS}
        v2, v1 = stats["v2"], stats["v1"]
        only_v2 = sorted(set(v2.community_ids) - set(v1.community_ids))
        v2.extra["extra_vs_v1"] = {"count": v2.count - v1.count, "community_ids": only_v2}
        out.append({"community_level": n, "selected": stats})
    return out
