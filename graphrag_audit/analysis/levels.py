"""Per-level analyses: the tree level by level, what each community_level sends, branch depth.

A selection covers the distinct entities of its communities and their text units. An entity's *finest
level* is its deepest community's level; at community_level N it is *stuck* when that is < N. **Depth
asymmetry** = mean over clustered entities of (D - finest level) / D, D the deepest level (0 when D = 0)
(docs/reading-the-table.md).
"""

from __future__ import annotations

from collections import Counter
from types import MappingProxyType

import numpy as np
import pandas as pd

from graphrag_audit.graphrag.compat import behaviour_outcomes
from graphrag_audit.graphrag.context import text_unit_codes
from graphrag_audit.graphrag.selection import BEHAVIOURS, Selection
from graphrag_audit.model.index import IndexModel
from graphrag_audit.model.keys import concat_ranges, key_codes, sorted_unique
from graphrag_audit.results.audit import (
    CommunityIds,
    DepthAnalysis,
    EntitySpread,
    ExtraVsV1,
    LevelDepth,
    LevelResult,
    ListedReports,
    RatingCalls,
    ReportListing,
    RootDepth,
    SelectionStats,
    TreeLevel,
)


class TreeIndex:
    """Membership and report rows as codes of ``model.forest``, for vectorised analyses."""

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
        self.mem_rows = None if ok.all() else np.flatnonzero(ok)  # the membership rows coded here
        self.mem_ecode, self.n_member_entities = (
            model.member_key_codes() if ok.all() else key_codes(m["entity"].array[ok])
        )
        #: (entity code, text unit code) pairs of the clustered entities (:meth:`with_text_units`)
        self.text_units: tuple[np.ndarray, np.ndarray] | None = None
        rep = self.rep_comm = model.reports["community"].to_numpy()
        self.rep_ccode = self.index.get_indexer(rep)
        self.rep_level = model.reports["level"].to_numpy()
        has = self.rep_ccode >= 0
        self.rep_n_entities = np.zeros(len(rep), dtype=np.int64)
        self.rep_n_entities[has] = self.n_entities[self.rep_ccode[has]]
        self._members: tuple[np.ndarray, np.ndarray] | None = None

    def members_of(self, ccodes: np.ndarray) -> np.ndarray:
        """Entity codes of the membership rows of the distinct communities ``ccodes``: O(their rows)."""
        if self._members is None:
            by_comm = np.argsort(self.mem_ccode, kind="stable")
            start = np.searchsorted(self.mem_ccode[by_comm], np.arange(len(self.index) + 1))
            self._members = (self.mem_ecode[by_comm], start)
        ents, start = self._members
        return ents[concat_ranges(start[ccodes], start[ccodes + 1] - start[ccodes])]

    def entity_mask(self, ccodes: np.ndarray) -> np.ndarray:
        """The entities of the communities ``ccodes`` (-1 ignored), as a mask over entity codes."""
        mask = np.zeros(self.n_member_entities, dtype=bool)
        mask[self.members_of(sorted_unique(ccodes[ccodes >= 0]))] = True
        return mask

    def covered(self, ccodes: np.ndarray) -> int:
        """Distinct entities of the communities ``ccodes`` (-1 ignored)."""
        return int(np.count_nonzero(self.entity_mask(ccodes)))

    def covered_text_units(self, mask: np.ndarray) -> int | None:
        """Distinct text units of the entities in ``mask``; None when not counted."""
        if self.text_units is None:
            return None
        owner, items = self.text_units
        if not len(items) or not len(mask):
            return 0
        hit = np.zeros(int(self.n_units), dtype=bool)
        hit[items[mask[owner]]] = True
        return int(hit.sum())

    def with_text_units(self, model: IndexModel) -> TreeIndex:
        """Count covered text units too (a repeated entity key takes its first row's, as graphrag does)."""
        from graphrag_audit.analysis.costs import entity_text_units_absent

        e = model.entities
        if e is None or entity_text_units_absent(model):
            return self
        lens, tu = text_unit_codes(e["text_unit_ids"])
        match = model.key_match
        if match is not None and len(match.member_row) == len(model.members):
            ent_row = np.asarray(match.member_row, dtype=np.int64)
        else:
            key = e["id"] if model.member_key == "id" else e["title"]
            first = ~key.duplicated(keep="first").to_numpy()
            got = pd.Index(key[first].to_numpy(dtype=object)).get_indexer(
                model.members["entity"].to_numpy(dtype=object)
            )
            ent_row = np.where(got >= 0, np.flatnonzero(first)[np.maximum(got, 0)], -1)
        if self.mem_rows is not None:
            ent_row = ent_row[self.mem_rows]
        # each entities row's entity code (-1: no membership row names it); every membership row of
        # one code has the same entities row
        codes = np.asarray(self.mem_ecode, dtype=np.int64)
        found = (codes >= 0) & (ent_row >= 0)
        row_code = np.full(len(lens), -1, dtype=np.int64)
        row_code[ent_row[found]] = codes[found]
        owner = np.repeat(row_code, lens)
        keep = owner >= 0
        self.text_units, self.n_units = (owner[keep], tu[keep]), int(tu.max()) + 1 if len(tu) else 0
        return self

    def clustered(self) -> tuple[int, int | None]:
        """(clustered entities, their distinct text units or None when not counted)."""
        mask = self.entity_mask(np.arange(len(self.index), dtype=np.int64))
        return int(np.count_nonzero(mask)), self.covered_text_units(mask)

    def ancestor_rows(self, ccodes: np.ndarray) -> int:
        """How many entries of ``ccodes`` are a proper ancestor of another (a cycle's own included)."""
        anc = self.forest.ancestry.ancestors_in(ccodes)
        return int(np.isin(ccodes, anc).sum()) if len(anc) else 0


def tree_levels(model: IndexModel, ti: TreeIndex) -> list[TreeLevel]:
    top = len(model.levels)
    by_level = np.argsort(ti.level, kind="stable")  # each level's codes: one slice, ascending
    bounds = np.searchsorted(ti.level[by_level], np.arange(top + 1))
    leaves = np.bincount(ti.level[ti.children_count == 0], minlength=top)
    rep_lev = model.reports["level"].to_numpy()
    reports = np.bincount(rep_lev[(rep_lev >= 0) & (rep_lev < top)], minlength=top)
    return [
        TreeLevel(
            level=lv,
            communities=int(bounds[lv + 1] - bounds[lv]),
            leaves=int(leaves[lv]),
            reports=int(reports[lv]),
            entities=ti.covered(by_level[bounds[lv] : bounds[lv + 1]]),
        )
        for lv in model.levels
    ]


def selection_stats(model: IndexModel, ti: TreeIndex, sel: Selection) -> SelectionStats:
    rows = sel.rows
    ccodes = ti.rep_ccode[rows]
    lv = ti.rep_level[rows]
    per = np.bincount(lv) if len(lv) else np.zeros(0, dtype=np.int64)  # levels are >= 0
    present = np.flatnonzero(per)
    mask = ti.entity_mask(ccodes)
    covered = int(np.count_nonzero(mask))
    n_ent = ti.rep_n_entities[rows]
    return SelectionStats(
        behaviour=sel.behaviour,
        count=int(len(rows)),
        community_ids=CommunityIds(np.sort(ti.rep_comm[rows]), own=True),
        by_level={str(k): v for k, v in zip(present.tolist(), per[present].tolist())},
        ancestors_sent=ti.ancestor_rows(ccodes),
        entities_covered=covered,
        text_units_covered=ti.covered_text_units(mask),
        mean_reports_per_entity=(round(float(n_ent.sum()) / covered, 3) if covered else None),
        entities_per_report=(
            EntitySpread(int(n_ent.min()), float(np.median(n_ent)), int(n_ent.max()))
            if len(n_ent)
            else EntitySpread(None, None, None)
        ),
        rows=rows,
    )


def level_stats(model: IndexModel, ti: TreeIndex, selections: dict) -> dict:
    """{N: {behaviour: SelectionStats}} without outcome, costs or extras; behaviours sharing one rows array
    (``select_all`` shares equal selections) share one computation."""
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


def level_results(model: IndexModel, stats: dict, costs: dict | None, num_repeats: int) -> list[LevelResult]:
    """One :class:`LevelResult` per N: :func:`level_stats`, graphrag's outcome (compat.py), ``costs`` ({(N,
    behaviour): (Costs, row tokens)}), v2's extra reports over v1, and dynamic selection's rating calls."""
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
    """The first ``limit`` reports of v2, v1 and level_only at ``community_level`` by level and id; None
    when the level is not audited."""
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
            tokens=None if s.row_tokens is None else tuple(int(x) for x in s.row_tokens[order]),
            also_v1=also_v1,
        )
    return ReportListing(community_level=community_level, by_behaviour=out)


def _at_least(values: np.ndarray, top: int) -> np.ndarray:
    """``out[k]`` = how many ``values`` are >= k, for k in 0..top-1 (values >= 0)."""
    counts = np.bincount(np.minimum(values, top), minlength=top + 1)
    return np.cumsum(counts[::-1])[::-1][:top]


def analyse_depth(model: IndexModel, ti: TreeIndex, v1_spreads: dict | None = None) -> DepthAnalysis:
    """Branch depth (see the module docstring); ``v1_spreads``: graphrag < 2.0's entities per report per N."""
    n = len(ti.index)
    max_level = int(ti.level.max()) if n else -1
    root = ti.forest.root_code
    deepest = np.full(n, -1, dtype=np.int64)  # deepest level per root subtree
    np.maximum.at(deepest, root, ti.level)
    desc = np.bincount(root, minlength=n) - 1 if n else np.array([], dtype=np.int64)
    leaf = ti.children_count == 0
    ent_finest = np.full(ti.n_member_entities, -1, dtype=np.int64)
    np.maximum.at(ent_finest, ti.mem_ecode, ti.level[ti.mem_ccode])
    ent_root = np.full(ti.n_member_entities, -1, dtype=np.int64)
    top_rows = np.flatnonzero((ti.level == ti.level[root])[ti.mem_ccode])  # rows at their root's level
    ent_root[ti.mem_ecode[top_rows]] = root[ti.mem_ccode[top_rows]]

    root_codes = np.flatnonzero(ti.parent < 0)
    ent_per_root = np.bincount(ent_root[ent_root >= 0], minlength=n)
    per_root: dict[int, dict[str, int]] = {}  # leaves per (root, level)
    for (r, lv), cnt in sorted(Counter(zip(root[leaf].tolist(), ti.level[leaf].tolist())).items()):
        per_root.setdefault(r, {})[str(lv)] = cnt
    reached = deepest[root_codes] - ti.level[root_codes]
    columns = (
        np.asarray(ti.index)[root_codes].astype(np.int64),
        ti.level[root_codes],
        deepest[root_codes],
        reached,
        desc[root_codes],
        ent_per_root[root_codes],
    )
    roots_out = [
        RootDepth(c, lv, dl, dr, ds, en, MappingProxyType(per_root.get(rc, {})))
        for rc, c, lv, dl, dr, ds, en in zip(root_codes.tolist(), *(col.tolist() for col in columns))
    ]
    roots_out.sort(key=lambda r: (-r.depth_reached, -r.entities, r.community))
    hist = {str(k): cnt for k, cnt in enumerate(np.bincount(reached).tolist())} if len(root_codes) else {}

    clustered = ent_finest >= 0
    reach_at = _at_least(deepest[root_codes], max_level + 1)
    served_at = _at_least(ent_finest[clustered], max_level + 1)
    n_roots, n_clustered = int(len(root_codes)), int(clustered.sum())
    per_level = [
        LevelDepth(
            community_level=lv,
            roots_reaching=int(reach_at[lv]),
            roots_stuck=n_roots - int(reach_at[lv]),
            roots_total=n_roots,
            entities_served=int(served_at[lv]),
            entities_stuck=n_clustered - int(served_at[lv]),
            entities_total=n_clustered,
            entities_per_report=v1_spreads.get(lv) if v1_spreads else None,
        )
        for lv in range(max_level + 1)
    ]
    asym = 0.0
    if max_level > 0 and clustered.any():
        asym = round(float(np.mean((max_level - ent_finest[clustered]) / max_level)), 4)
    dup_levels = []
    for lv in range(1, max_level + 1):
        at, above = np.flatnonzero(ti.level == lv), np.flatnonzero(ti.level == lv - 1)
        if (
            len(at)
            and len(at) == len(above)
            and (ti.children_count[above] == 1).all()
            and (ti.n_entities[at] == ti.n_entities[ti.parent[at]]).all()
        ):
            dup_levels.append(lv)
    return DepthAnalysis(
        roots=tuple(roots_out),
        histogram=hist,
        per_level=tuple(per_level),
        asymmetry=asym,
        single_child=tuple(np.sort(ti.index.to_numpy()[ti.children_count == 1]).astype(np.int64).tolist()),
        duplicate_levels=tuple(dup_levels),
        max_level=max_level,
    )
