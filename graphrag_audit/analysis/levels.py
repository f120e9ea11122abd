"""Per-level analyses: the tree level by level, and what each community_level sends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from graphrag_audit.graphrag.compat import Outcome, behaviour_outcomes
from graphrag_audit.model.index import IndexModel
from graphrag_audit.model.keys import key_codes, sorted_unique
from graphrag_audit.graphrag.selection import BEHAVIOURS, Selection


@dataclass(frozen=True)
class TreeLevel:
    level: int
    communities: int
    leaves: int
    reports: int
    entities: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


_I32 = np.iinfo(np.int32)


class CommunityIds(Sequence):
    """A sorted sequence of community numbers held as one numpy array (``array``: int32 when
    every id fits, else int64).

    Reads like a list of Python ``int`` (len, indexing, slicing to a list, iteration, ``==`` with
    a list or tuple, ``tolist()``) while costing 8 bytes an id: a 1,000-level index selects
    millions of ids over its levels, which as Python lists need ~36 bytes each. The JSON
    renderer writes the array in chunks."""

    __slots__ = ("array",)

    def __init__(self, values=(), *, own: bool = False):
        """``own``: ``values`` is a fresh int64 array nobody else holds (taken, not copied)."""
        a = np.asarray(values, dtype=np.int64).ravel() if own else np.array(values, dtype=np.int64).ravel()
        if len(a) and _I32.min <= a.min() and a.max() <= _I32.max:
            a = a.astype(np.int32)  # half the memory; the ids read the same
        a.flags.writeable = False
        self.array = a

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.array[i].tolist()
        return int(self.array[i])

    def __iter__(self):
        a = self.array
        for start in range(0, len(a), 65536):
            yield from a[start:start + 65536].tolist()

    def __contains__(self, x) -> bool:
        try:
            return bool((self.array == int(x)).any())
        except (TypeError, ValueError, OverflowError):
            return False

    def __eq__(self, other) -> bool:
        if isinstance(other, CommunityIds):
            return bool(np.array_equal(self.array, other.array))
        if isinstance(other, (list, tuple)):
            return len(other) == len(self.array) and self.tolist() == list(other)
        return NotImplemented

    __hash__ = None  # mutable-sequence semantics, like the list it stands for

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)

    def __repr__(self) -> str:
        return f"CommunityIds({self.tolist()!r})"

    def tolist(self) -> list[int]:
        return self.array.tolist()


@dataclass
class SelectionStats:
    behaviour: str
    count: int
    community_ids: CommunityIds  # a sequence of int (see CommunityIds)
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




@dataclass(eq=False)
class _Covered:
    """A set of community codes (sorted), its entities (``mask``) and how many they are."""

    codes: np.ndarray
    mask: np.ndarray
    count: int


class TreeIndex:
    """Membership and report rows as codes of ``model.forest`` (the one community tree), for
    vectorised analyses. ``index``, ``level``, ``n_entities``, ``parent`` (first parents) and
    ``children_count`` are the forest's own arrays."""

    def __init__(self, model: IndexModel):
        forest = self.forest = model.forest
        self.index = forest.index
        self.level = forest.level
        self.n_entities = forest.n_entities
        self.parent = forest.first_parent
        self.children_count = forest.n_children
        m = model.members
        self.mem_ccode = self.index.get_indexer(m["community"].to_numpy())
        ok = self.mem_ccode >= 0
        self.mem_ccode = self.mem_ccode[ok]
        ent = m["entity"].array
        self.mem_ecode, self.n_member_entities = key_codes(ent if ok.all() else ent[ok])
        rep = self.rep_comm = model.reports["community"].to_numpy()
        self.rep_ccode = self.index.get_indexer(rep)
        self.rep_level = model.reports["level"].to_numpy()
        rep_n = np.zeros(len(rep), dtype=np.int64)
        has = self.rep_ccode >= 0
        rep_n[has] = self.n_entities[self.rep_ccode[has]]
        self.rep_n_entities = rep_n
        self._covered: list[_Covered] = []  # the last few sets asked about (covered)
        self._members = None

    def members_of(self, ccodes: np.ndarray) -> np.ndarray:
        """Entity codes of the membership rows of the distinct communities ``ccodes`` (sorted,
        non-negative): O(their rows), through the rows grouped by community."""
        if self._members is None:
            by_comm = np.argsort(self.mem_ccode, kind="stable")
            start = np.searchsorted(self.mem_ccode[by_comm], np.arange(len(self.index) + 1))
            self._members = (self.mem_ecode[by_comm], start)
        ents, start = self._members
        lens = start[ccodes + 1] - start[ccodes]
        total = int(lens.sum())
        pos = np.repeat(start[ccodes] - (np.cumsum(lens) - lens), lens) + np.arange(total, dtype=np.int64)
        return ents[pos]

    def covered(self, ccodes: np.ndarray) -> int:
        """Distinct entities of the communities ``ccodes``. A set that holds one asked about
        recently (>= 2.0 at N+1 holds >= 2.0 at N) costs only its new communities' membership
        rows; any other set, its own rows: never O(index) per set."""
        codes = sorted_unique(ccodes[ccodes >= 0])
        best = None
        for i, st in enumerate(self._covered):
            if len(st.codes) == len(codes) and np.array_equal(st.codes, codes):
                self._covered.insert(0, self._covered.pop(i))
                return st.count
            if len(st.codes) < len(codes) and (best is None or len(st.codes) > len(best.codes)) \
                    and np.isin(st.codes, codes, assume_unique=True).all():
                best = st
        if best is None:
            best = _Covered(codes[:0], np.zeros(self.n_member_entities, dtype=bool), 0)
        else:
            self._covered.remove(best)
        new = codes[~np.isin(codes, best.codes, assume_unique=True)]
        ents = self.members_of(new)
        if len(ents):
            ents = np.where(ents < 0, ents + len(best.mask), ents)  # a missing key (-1): the last slot
            ents = sorted_unique(ents[~best.mask[ents]])
            best.mask[ents] = True
            best.count += int(len(ents))
        best.codes = codes
        self._covered = [best] + self._covered[:2]  # the last three sets, newest first
        return best.count

    def ancestors_in(self, ccodes: np.ndarray) -> np.ndarray:
        """Codes among ``ccodes`` that are a proper ancestor of another code in ``ccodes`` (a
        community on a parent cycle is its own ancestor): :class:`~graphrag_audit.model.forest.Ancestry`
        of the first-parent forest, whatever its depth."""
        return self.forest.ancestry.ancestors_in(ccodes)


def tree_levels(model: IndexModel, ti: TreeIndex) -> list[TreeLevel]:
    levels = model.levels
    top = len(levels)
    by_level = np.argsort(ti.level, kind="stable")  # each level's codes: one slice, ascending
    bounds = np.searchsorted(ti.level[by_level], np.arange(top + 1))
    leaves = np.bincount(ti.level[ti.children_count == 0], minlength=top)
    rep_lev = model.reports["level"].to_numpy()
    reports = np.bincount(rep_lev[(rep_lev >= 0) & (rep_lev < top)], minlength=top)
    out = []
    for lv in levels:
        codes = by_level[bounds[lv]:bounds[lv + 1]]
        out.append(TreeLevel(
            level=lv,
            communities=int(len(codes)),
            leaves=int(leaves[lv]),
            reports=int(reports[lv]),
            entities=ti.covered(codes),
        ))
    return out


_LEVEL_KEYS = [str(k) for k in range(1001)]  # one string per level, shared by every by_level dict


def _level_key(k: int) -> str:
    return _LEVEL_KEYS[k] if 0 <= k < len(_LEVEL_KEYS) else str(k)


def selection_stats(model: IndexModel, ti: TreeIndex, sel: Selection) -> SelectionStats:
    rows = sel.rows
    ccodes = ti.rep_ccode[rows]
    comm = ti.rep_comm[rows]
    lv = ti.rep_level[rows]
    per = np.bincount(lv) if len(lv) else np.zeros(0, dtype=np.int64)  # levels are >= 0
    present = np.flatnonzero(per)
    by_level = {_level_key(k): v for k, v in zip(present.tolist(), per[present].tolist())}
    covered = ti.covered(ccodes)
    n_ent = ti.rep_n_entities[rows]
    anc = ti.ancestors_in(ccodes)
    anc_rows = int(np.isin(ccodes, anc).sum()) if len(anc) else 0
    epr = ({"min": int(n_ent.min()), "median": float(np.median(n_ent)), "max": int(n_ent.max())}
           if len(n_ent) else {"min": None, "median": None, "max": None})
    return SelectionStats(
        behaviour=sel.behaviour,
        count=int(len(rows)),
        community_ids=CommunityIds(np.sort(comm), own=True),
        by_level=by_level,
        ancestors_sent=anc_rows,
        entities_covered=covered,
        mean_reports_per_entity=(round(float(n_ent.sum()) / covered, 3) if covered else None),
        entities_per_report=epr,
        rows=rows,
    )


def level_results(model: IndexModel, ti: TreeIndex, selections: dict) -> list[dict]:
    """One dict per N: {"community_level": N, "selected": {behaviour: SelectionStats}}.

    Behaviours that select the very same rows array (``select_all`` hands out one array when
    two selections are equal, as >= 2.0 and the dynamic pool usually are) share one id array
    and their statistics are computed once."""
    out = []
    outcomes = behaviour_outcomes(model)
    for n, by_b in selections.items():
        stats: dict[str, SelectionStats] = {}
        for b in BEHAVIOURS:
            rows = by_b[b].rows
            same = next((s for s in stats.values() if s.rows is rows), None)
            if same is None:
                stats[b] = selection_stats(model, ti, by_b[b])
            else:
                stats[b] = replace(same, behaviour=b, cost=None, extra={}, row_tokens=None)
        for b, s in stats.items():
            s.outcome = outcomes[b]
        v2, v1 = stats["v2"], stats["v1"]
        a2 = v2.community_ids.array
        only_v2 = sorted_unique(a2[~np.isin(a2, v1.community_ids.array)])
        v2.extra["extra_vs_v1"] = {"count": v2.count - v1.count, "community_ids": CommunityIds(only_v2, own=True)}
        out.append({"community_level": n, "selected": stats})
    return out
