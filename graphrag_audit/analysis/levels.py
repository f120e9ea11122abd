"""Per-level analyses: the tree level by level, and what each community_level sends."""

from __future__ import annotations

import numpy as np

from graphrag_audit.analysis.coverage import TextUnitCover, text_unit_cover
from graphrag_audit.graphrag.compat import behaviour_outcomes
from graphrag_audit.graphrag.selection import BEHAVIOURS, Selection
from graphrag_audit.model.index import IndexModel
from graphrag_audit.model.keys import key_codes, sorted_unique
from graphrag_audit.results.audit import (
    CommunityIds,
    EntitySpread,
    ExtraVsV1,
    LevelResult,  # noqa: F401
    ListedReports,
    RatingCalls,
    ReportListing,
    SelectionStats,
    TreeLevel,
)


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
        self.mem_rows = None if ok.all() else np.flatnonzero(ok)  # the membership rows coded here
        self.mem_ecode, self.n_member_entities = model.member_key_codes() if ok.all() else key_codes(ent[ok])
        #: the text units of each clustered entity (analysis/coverage.py), set by
        #: :meth:`with_text_units`; None: not asked for, or the entities carry none
        self.text_units: TextUnitCover | None = None
        rep = self.rep_comm = model.reports["community"].to_numpy()
        self.rep_ccode = self.index.get_indexer(rep)
        self.rep_level = model.reports["level"].to_numpy()
        rep_n = np.zeros(len(rep), dtype=np.int64)
        has = self.rep_ccode >= 0
        rep_n[has] = self.n_entities[self.rep_ccode[has]]
        self.rep_n_entities = rep_n
        self._mask = np.zeros(self.n_member_entities, dtype=bool)  # entities of the last covered()
        self._members: tuple[np.ndarray, np.ndarray] | None = None

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
        """Distinct entities of the communities ``ccodes`` (-1: not in the tree, ignored); a
        membership key the entities do not hold (code -1) counts in the last slot."""
        self._mask = np.zeros(self.n_member_entities, dtype=bool)
        self._mask[self.members_of(sorted_unique(ccodes[ccodes >= 0]))] = True
        return int(np.count_nonzero(self._mask))

    def covered_mask(self) -> np.ndarray:
        """The entities (one flag per membership entity code) of the set :meth:`covered` was
        last asked about; valid until the next call of :meth:`covered`."""
        return self._mask

    def covered_text_units(self) -> int | None:
        """Distinct text units of the entities of the set :meth:`covered` was last asked about
        (None: not counted)."""
        return None if self.text_units is None else self.text_units.count(self._mask)

    def with_text_units(self, model: IndexModel) -> TreeIndex:
        """Count covered text units too (``selection_stats``' ``text_units_covered``)."""
        self.text_units = text_unit_cover(model, self.mem_rows, self.mem_ecode, self.n_member_entities)
        return self

    def clustered(self) -> tuple[int, int | None]:
        """(clustered entities: the distinct entities of every community, their distinct text
        units or None when not counted)."""
        n = self.covered(np.arange(len(self.index), dtype=np.int64))
        return n, self.covered_text_units()

    def ancestors_in(self, ccodes: np.ndarray) -> np.ndarray:
        """Codes among ``ccodes`` that are a proper ancestor of another code in ``ccodes`` (a
        community on a parent cycle is its own ancestor): :class:`~graphrag_audit.model.forest.Ancestry`
        of the first-parent forest, whatever its depth."""
        return self.forest.ancestry.ancestors_in(ccodes)

    def ancestor_rows(self, ccodes: np.ndarray) -> int:
        """How many entries of ``ccodes`` (a selection's community codes, -1: not in the tree)
        are a proper ancestor of another code in ``ccodes``."""
        anc = self.ancestors_in(ccodes)
        return int(np.isin(ccodes, anc).sum()) if len(anc) else 0


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
        codes = by_level[bounds[lv] : bounds[lv + 1]]
        out.append(
            TreeLevel(
                level=lv,
                communities=int(len(codes)),
                leaves=int(leaves[lv]),
                reports=int(reports[lv]),
                entities=ti.covered(codes),
            )
        )
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
    tu_covered = ti.covered_text_units()
    n_ent = ti.rep_n_entities[rows]
    anc_rows = ti.ancestor_rows(ccodes)
    epr = (
        EntitySpread(int(n_ent.min()), float(np.median(n_ent)), int(n_ent.max()))
        if len(n_ent)
        else EntitySpread(None, None, None)
    )
    return SelectionStats(
        behaviour=sel.behaviour,
        count=int(len(rows)),
        community_ids=CommunityIds(np.sort(comm), own=True),
        by_level=by_level,
        ancestors_sent=anc_rows,
        entities_covered=covered,
        text_units_covered=tu_covered,
        mean_reports_per_entity=(round(float(n_ent.sum()) / covered, 3) if covered else None),
        entities_per_report=epr,
        rows=rows,
    )


def level_stats(model: IndexModel, ti: TreeIndex, selections: dict) -> dict:
    """{N: {behaviour: SelectionStats}} without outcome, costs or extras (see :func:`level_results`).

    Behaviours that select the very same rows array (``select_all`` hands out one array when
    two selections are equal, as >= 2.0 and the dynamic pool usually are) share one id array
    and their statistics are computed once."""
    out = {}
    for n, by_b in selections.items():
        stats: dict[str, SelectionStats] = {}
        for b in BEHAVIOURS:
            rows = by_b[b].rows
            same = next(
                (s for s in stats.values() if s.rows is rows or (s.rows is not None and s.rows.base is rows)),
                None,
            )
            stats[b] = selection_stats(model, ti, by_b[b]) if same is None else same.with_(behaviour=b)
        out[n] = stats
    return out


def level_results(
    model: IndexModel,
    ti: TreeIndex,
    selections: dict,
    *,
    costs: dict | None = None,
    num_repeats: int = 1,
    stats: dict | None = None,
) -> list[LevelResult]:
    """One :class:`LevelResult` per N, each selection built whole: its statistics (``stats``:
    :func:`level_stats`, computed here when not given), graphrag's outcome for the behaviour
    (compat.py), ``costs`` ({(N, behaviour): (Costs, tokens of each row)}, from
    ``costs.level_costs``; None: costs off), graphrag >= 2.0's extra reports over < 2.0, and
    dynamic selection's rating calls (``num_repeats`` per community)."""
    stats = level_stats(model, ti, selections) if stats is None else stats
    outcomes = behaviour_outcomes(model)
    costs = costs or {}
    out = []
    for n, by_b in stats.items():
        v2, v1 = by_b["v2"], by_b["v1"]
        a2 = v2.community_ids.array
        only_v2 = sorted_unique(a2[~np.isin(a2, v1.community_ids.array)])
        l0 = int(by_b["dynamic"].by_level.get("0", 0))
        selected = {}
        for b, s in by_b.items():
            cost, tokens = costs.get((n, b), (None, None))
            selected[b] = s.with_(
                outcome=outcomes[b],
                cost=cost,
                row_tokens=tokens,
                extra_vs_v1=(
                    ExtraVsV1(v2.count - v1.count, CommunityIds(only_v2, own=True)) if b == "v2" else None
                ),
                rating_calls=(
                    RatingCalls(num_repeats * l0, num_repeats * s.count, num_repeats)
                    if b == "dynamic"
                    else None
                ),
            )
        out.append(LevelResult(community_level=n, selected=selected))
    return out


#: reports listed per behaviour at the audited level (text lists 200, Markdown 100 by default)
LISTED_ROWS = 200
LISTED_BEHAVIOURS = ("v2", "v1", "level_only")


def report_listing(
    model: IndexModel,
    ti: TreeIndex,
    levels: list[LevelResult],
    community_level: int,
    limit: int = LISTED_ROWS,
) -> ReportListing | None:
    """The first ``limit`` reports of each of v2, v1 and level_only at ``community_level``, by
    level then community id (a stable sort of the selection's rows), with their titles, entities
    and tokens; None when the level is not one of ``levels``."""
    at = next((r for r in levels if r.community_level == community_level), None)
    if at is None:
        return None
    comm_all, lev_all = ti.rep_comm, ti.rep_level
    titles = model.reports["title"]
    v1_rows = at.selected["v1"].rows
    out = {}
    for b in LISTED_BEHAVIOURS:
        s = at.selected[b]
        rows = s.rows if s.rows is not None else np.zeros(0, dtype=np.int64)
        order = np.lexsort((comm_all[rows], lev_all[rows]))[: max(int(limit), 0)]
        shown = rows[order]
        tokens = None if s.row_tokens is None else tuple(int(x) for x in s.row_tokens[order])
        also_v1 = None
        if b == "v2":
            also_v1 = tuple(bool(x) for x in np.isin(shown, v1_rows if v1_rows is not None else shown[:0]))
        out[b] = ListedReports(
            behaviour=b,
            total=int(len(rows)),
            community=tuple(int(x) for x in comm_all[shown]),
            level=tuple(int(x) for x in lev_all[shown]),
            title=tuple(titles.iloc[shown].to_numpy(dtype=object).tolist()),
            entities=tuple(int(x) for x in ti.rep_n_entities[shown]),
            tokens=tokens,
            also_v1=also_v1,
        )
    return ReportListing(community_level=community_level, by_behaviour=out)
