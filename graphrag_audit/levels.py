"""Per-level analyses: the tree level by level, and what each community_level sends."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from graphrag_audit.compat import Outcome, behaviour_outcomes
from graphrag_audit.model import IndexModel
from graphrag_audit.normalise import EntityKeyMatch, key_codes, match_entity_keys, sorted_unique
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


class CommunityIds(list):
    """A sorted list of community numbers, every item a Python ``int`` (from ``ndarray.tolist``).

    A plain list to every caller; the JSON renderer passes it through unchecked (a 1M-entity
    index has millions of them)."""


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
    outcome: Outcome | None = None  # what graphrag actually does for this behaviour (compat.py)
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
        if self.outcome is not None:
            d.update(self.outcome.to_dict())
        return d


def _first_parents(links, index: pd.Index) -> np.ndarray:
    """Code of each community's first parent (its first edge in ``links``), −1 for none."""
    parent = np.full(len(index), -1, dtype=np.int64)
    kids, firsts = links.children, links.parents
    if len(kids):
        once = ~pd.Index(kids).duplicated()  # the first edge into each child
        kids, firsts = kids[once], firsts[once]
        kc, pc_ = index.get_indexer(kids), index.get_indexer(firsts)
        if (kc < 0).any() or (pc_ < 0).any():  # a tree node without a communities row
            for child, first in zip(kids.tolist(), firsts.tolist()):
                parent[index.get_loc(child)] = index.get_loc(first)  # raises KeyError, as it always did
        parent[kc] = pc_
    return parent


def entity_key_match(model: IndexModel) -> EntityKeyMatch | None:
    """:class:`~graphrag_audit.normalise.EntityKeyMatch` of ``model`` (cached; ``load_index``
    may have started it in its read thread), or None without an entities table or when the keys
    are not dictionary-encoded arrow strings without gaps (callers then use pandas)."""
    got = model.extra.get("_entity_key_match", _UNSET)
    if isinstance(got, Future):
        got = got.result()
        model.extra["_entity_key_match"] = got
    if got is not _UNSET:
        return got
    with _KEY_MATCH_LOCK:  # audit's costs worker and the integrity checks both ask: hash once
        if "_entity_key_match" in model.extra:
            return model.extra["_entity_key_match"]
        out = None
        if model.entities is not None:
            out = match_entity_keys(model.members["entity"],
                                    model.entities["id" if model.member_key == "id" else "title"])
        model.extra["_entity_key_match"] = out
        return out


_KEY_MATCH_LOCK = threading.Lock()
_UNSET = object()


class TreeIndex:
    """Dense community codes, parent codes and membership codes for vectorised analyses."""

    def __init__(self, model: IndexModel):
        c = model.communities.drop_duplicates("community")
        self.index = pd.Index(c["community"].to_numpy())
        self.level = c["level"].to_numpy()
        self.n_entities = c["n_entities"].to_numpy()
        self.parent = _first_parents(model.tree_links, self.index)
        self.children_count = np.bincount(self.parent[self.parent >= 0], minlength=len(self.index))
        m = model.members
        self.mem_ccode = self.index.get_indexer(m["community"].to_numpy())
        ok = self.mem_ccode >= 0
        self.mem_ccode = self.mem_ccode[ok]
        ent = m["entity"].array
        self.mem_ecode, self.n_member_entities = key_codes(ent if ok.all() else ent[ok])
        rep = model.reports["community"].to_numpy()
        self.rep_ccode = self.index.get_indexer(rep)
        self.rep_level = model.reports["level"].to_numpy()
        rep_n = np.zeros(len(rep), dtype=np.int64)
        has = self.rep_ccode >= 0
        rep_n[has] = self.n_entities[self.rep_ccode[has]]
        self.rep_n_entities = rep_n
        self._covered: dict[bytes, int] = {}

    def covered(self, ccodes: np.ndarray) -> int:
        """Distinct entities of the communities ``ccodes`` (remembered per community set: the
        behaviours and levels often select the same set)."""
        mask = np.zeros(len(self.index), dtype=bool)
        mask[ccodes[ccodes >= 0]] = True
        key = np.packbits(mask).tobytes()
        got = self._covered.get(key)
        if got is None:
            ent = np.zeros(self.n_member_entities, dtype=bool)
            ent[self.mem_ecode[mask[self.mem_ccode]]] = True
            got = self._covered[key] = int(ent.sum())
        return got

    def ancestors_in(self, ccodes: np.ndarray) -> np.ndarray:
        """Codes among ``ccodes`` that are a proper ancestor of another code in ``ccodes``."""
        sel = np.zeros(len(self.index), dtype=bool)
        sel[ccodes[ccodes >= 0]] = True
        is_anc = np.zeros(len(self.index), dtype=bool)
        cur = np.flatnonzero(sel)  # the distinct codes, sorted
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
        community_ids=CommunityIds(np.sort(comm).tolist()),
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
    outcomes = behaviour_outcomes(model)
    for n, by_b in selections.items():
        stats = {b: selection_stats(model, ti, by_b[b]) for b in BEHAVIOURS}
        for b, s in stats.items():
            s.outcome = outcomes[b]
        v2, v1 = stats["v2"], stats["v1"]
        a2 = np.asarray(v2.community_ids, dtype=np.int64)
        only_v2 = sorted_unique(a2[~np.isin(a2, np.asarray(v1.community_ids, dtype=np.int64))]).tolist()
        v2.extra["extra_vs_v1"] = {"count": v2.count - v1.count, "community_ids": CommunityIds(only_v2)}
        out.append({"community_level": n, "selected": stats})
    return out
