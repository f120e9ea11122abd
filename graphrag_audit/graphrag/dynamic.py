"""graphrag's dynamic community selection (``DynamicCommunitySelection.select()``) per version family.

The selector is replayed on plain arrays (community numbers, levels, parents, children, report rows)
with every report's relevance given; it returns the waves of rating calls, the call count and the kept
reports. Sources, read at each tag: ``D`` = ``graphrag/query/context_builder/dynamic_community_selection.py``,
``A`` = ``graphrag/query/indexer_adapters.py``, ``L`` = ``graphrag/query/input/loaders/dfs.py``,
``Q`` = ``graphrag/api/query.py``,
``H`` = ``graphrag/index/operations/summarize_communities/restore_community_hierarchy.py``.
``D`` is byte-identical within a family (1.1.1 = 1.2.0; 2.0.0 = 2.7.2 but for logging; 3.0.0 = 3.3.0):

* ``1.x`` (1.1.1-1.2.x): children inferred from entity containment in ``create_final_nodes`` (``A``@v1.2.0
  -> ``H``@v1.2.0), keyed ``str(child)`` (``D``@v1.1.1 L61-67).
* ``2.x`` (2.0.0-2.7.2): children from ``communities.children``, looked up as ints among string keys
  (``D``@v2.0.0 L127-130): the selector never descends (microsoft/graphrag#2004).
* ``3.x`` (3.0.0-): ``str(child)`` (``D``@v3.0.0 L129-132, microsoft/graphrag#2159); descends.

Before 1.1.1 the feature is broken (:data:`BROKEN_LINES`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from graphrag_audit.model.keys import concat_ranges, sorted_unique
from graphrag_audit.results.audit import DynamicScenario, DynamicVersion

#: family -> the graphrag releases it covers
FAMILIES: dict[str, str] = {"1.x": "1.1.1-1.2.x", "2.x": "2.0.0-2.7.2", "3.x": "3.0.0-3.x"}

#: graphrag releases before 1.1.1 that ship the selector, and why it is broken there
BROKEN_LINES: tuple[tuple[str, str], ...] = (
    (
        "0.5.x",
        "levels list community.id but reports are keyed by community number: nothing is ever rated "
        "(dynamic_community_selection.py@v0.5.0)",
    ),
    (
        "0.9.0-1.1.0",
        "node2children is keyed by community.id, the queue holds community numbers: the selector "
        "never descends below the start level (dynamic_community_selection.py@v1.0.0)",
    ),
)

#: ratings beyond which a scenario is abandoned (multi-parent children are queued once per kept parent)
MAX_RATED = 50_000_000


class EndlessSelection(RuntimeError):
    """``select()`` would not end (a cycle in the children) or would rate more than :data:`MAX_RATED`."""


#: The rating prompt of 1.1.1-3.3.0 (``graphrag/query/context_builder/rate_prompt.py``, byte-identical at
#: v1.2.0, v2.7.2, v3.3.0), formatted with the report's text and the query.
RATE_QUERY = """
---Role---
You are a helpful assistant responsible for deciding whether the provided information is useful in answering a given question, even if it is only partially relevant.
---Goal---
On a scale from 0 to 5, please rate how relevant or helpful is the provided information in answering the question.
---Information---
{description}
---Question---
{question}
---Target response length and format---
Please response in the following JSON format with two entries:
- "reason": the reasoning of your rating, please include information that you have considered.
- "rating": the relevancy rating from 0 to 5, where 0 is the least relevant and 5 is the most relevant.
{{
    "reason": str,
    "rating": int.
}}
"""


def rating_prompt_tokens_by_family(
    families: Iterable[str], descriptions: Iterable[str], query: str, counter
) -> dict[str, np.ndarray]:
    """Each report's ``llm_info["prompt_tokens"]`` per rating call, per family: 1.x/2.x count the system
    message only (``rate_relevancy.py``@v1.2.0 L64, @v2.7.2 L66); 3.x ``num_prompt_tokens`` over system and
    user messages (@v3.3.0 L75; ``graphrag_llm/tokenizer/tokenizer.py`` L50): 3, plus 3 + role + content
    each."""
    base = counter.count_many([RATE_QUERY.format(description=d, question=query) for d in descriptions])
    base = np.asarray(base, dtype=np.int64)
    extra_3x = 3 + 3 + counter.count("system") + 3 + counter.count("user") + counter.count(query)
    return {family: base + extra_3x if family == "3.x" else base.copy() for family in families}


@dataclass(frozen=True)
class DynamicSettings:
    """The selector's knobs, graphrag's defaults (``dynamic_search_*``; the CLI passes community_level 2)."""

    community_level: int | None = 2
    threshold: int = 1
    keep_parent: bool = False
    num_repeats: int = 1
    max_level: int = 2


DEFAULTS = DynamicSettings()


@dataclass(frozen=True)
class DynamicInput:
    """The selector's tables in row order: per communities row its number, level, parent (-1: root) and
    children as CSR; per reports row its number and level; ``children_match`` False when the 1.x children
    keys are ``"5.0"`` strings; per family, each report's rating prompt tokens."""

    comm_ids: np.ndarray
    comm_levels: np.ndarray
    comm_parents: np.ndarray
    child_offsets: np.ndarray
    child_values: np.ndarray
    report_ids: np.ndarray
    report_levels: np.ndarray
    children_match: bool = True
    report_prompt_tokens: Mapping[str, np.ndarray] | None = None


def children_csr(children: Iterable) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, values) for a sequence of per-row child lists (None = no children)."""
    rows = list(children)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    lens = np.fromiter((0 if ch is None else len(ch) for ch in rows), dtype=np.int64, count=len(rows))
    np.cumsum(lens, out=offsets[1:])
    values = np.fromiter(
        (x for ch in rows if ch is not None for x in ch), dtype=np.int64, count=int(offsets[-1])
    )
    return offsets, values


def children_from_nodes_v1(
    comm_ids, node_communities, node_levels, node_titles, report_ids
) -> tuple[np.ndarray, np.ndarray, bool]:
    """graphrag 1.1.1-1.2.x: each communities row's ``sub_community_ids`` as ``read_indexer_communities``
    (``A``@v1.2.0) rebuilds them from ``create_final_nodes`` with ``restore_community_hierarchy``
    (``H``@v1.2.0): (offsets, values, children_match) for :class:`DynamicInput`.

    With a community lacking a report, the node rows are first restricted to those with one (``A``). Node
    title sets are grouped by (community, level); for each pair of consecutive levels present, a next-level
    community is a child of every current-level one whose set contains its own (``H``). A number seen at two
    levels gets both child lists (``A``). A float column gives ``"5.0"`` keys (``D``@v1.1.1): no match."""
    cid_int = np.asarray(comm_ids, dtype=np.int64)
    nc = np.asarray(node_communities)
    nl = np.asarray(node_levels, dtype=np.int64)
    titles = np.asarray(node_titles)
    is_float = nc.dtype.kind == "f"
    rep = _uniq(report_ids)
    keep = np.ones(nc.size, dtype=bool)
    if not np.isin(cid_int, rep).all():  # missing_reports non-empty (A@v1.2.0 read_indexer_communities)
        with np.errstate(invalid="ignore"):
            keep &= np.isin(nc, rep)
    if is_float:
        keep &= ~np.isnan(nc)
    nc_i = nc[keep].astype(np.int64)
    nl_k = nl[keep]
    t = titles[keep]
    if t.dtype.kind in "iu":  # already codes (entity row numbers, say)
        tcode = t.astype(np.int64)
    else:
        import pandas as pd

        tcode = pd.factorize(t, use_na_sentinel=False)[0].astype(np.int64)
    n_titles = int(tcode.max()) + 1 if tcode.size else 0
    # one (level, community) group per distinct pair: rows sorted by a combined key
    key = np.zeros(0, dtype=np.int64)
    if nc_i.size:
        c0, l0 = int(nc_i.min()), int(nl_k.min())
        key = (nl_k - l0) * (int(nc_i.max()) - c0 + 1) + (nc_i - c0)
    order = np.argsort(key, kind="stable")
    gk, gl, gc, gt = key[order], nl_k[order], nc_i[order], tcode[order]
    new_group = np.ones(gk.size, dtype=bool)
    new_group[1:] = gk[1:] != gk[:-1]
    gstart = np.flatnonzero(new_group)
    gend = np.append(gstart[1:], gk.size)
    glevel, gcomm = gl[gstart], gc[gstart]
    gid = np.cumsum(new_group) - 1  # group of each member row
    levels_present = _uniq(glevel)
    e_p, e_c = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]  # edges (parent, child)
    for li in range(len(levels_present) - 1):
        cur = np.flatnonzero(glevel == levels_present[li])
        nxt = np.flatnonzero(glevel == levels_present[li + 1])
        cur_rows = concat_ranges(gstart[cur], gend[cur] - gstart[cur])
        owner = np.full(n_titles, -1, dtype=np.int64)
        owner[gt[cur_rows]] = gid[cur_rows]
        if (owner[gt[cur_rows]] == gid[cur_rows]).all():
            # every title in at most one current-level community: a next-level community's only
            # possible parent is the owner of its titles, a parent iff all its titles share it
            sizes = gend[nxt] - gstart[nxt]
            o = owner[gt[concat_ranges(gstart[nxt], sizes)]]
            seg = np.cumsum(sizes) - sizes  # each group's first member in o
            lo, hi = np.minimum.reduceat(o, seg), np.maximum.reduceat(o, seg)
            ok = (lo == hi) & (lo >= 0)
            p, c = gcomm[lo[ok]], gcomm[nxt[ok]]
        else:
            p, c = _subsets_slow(cur, nxt, gstart, gend, gt, gcomm)
        o2 = np.lexsort((c, p))  # H appends for curr ascending, for next ascending
        e_p.append(p[o2])
        e_c.append(c[o2])
    # groupby("community").agg({"sub_community": list}): a stable sort by parent keeps H's order
    ep, ec = np.concatenate(e_p), np.concatenate(e_c)
    o3 = np.argsort(ep, kind="stable")
    ep, ec = ep[o3], ec[o3]
    first = np.searchsorted(ep, cid_int, side="left")
    lens = np.searchsorted(ep, cid_int, side="right") - first
    offsets = np.zeros(cid_int.size + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    return offsets, ec[concat_ranges(first, lens)], not is_float


def _subsets_slow(cur, nxt, gstart, gend, gt, gcomm) -> tuple[np.ndarray, np.ndarray]:
    """(parent, child) community pairs where the child's title set is a subset of the parent's, when
    titles sit in several communities of one level (not Leiden output; ``graphrag update`` merges)."""
    members: dict[int, list[int]] = {}
    sets = {}
    for g in cur.tolist():
        s = _uniq(gt[gstart[g] : gend[g]])
        sets[g] = s
        for t in s.tolist():
            members.setdefault(t, []).append(g)
    ps, cs = [], []
    for h in nxt.tolist():
        s = _uniq(gt[gstart[h] : gend[h]])
        for g in members.get(int(s[0]), ()):
            sg = sets[g]
            if s.size <= sg.size and np.isin(s, sg, assume_unique=True).all():
                ps.append(int(gcomm[g]))
                cs.append(int(gcomm[h]))
    return np.asarray(ps, dtype=np.int64), np.asarray(cs, dtype=np.int64)


def _uniq(a) -> np.ndarray:
    """Sorted distinct int64 values."""
    return sorted_unique(np.asarray(a, dtype=np.int64).ravel())


def _dense(ids: np.ndarray, universe: np.ndarray) -> np.ndarray:
    """Index of each id in the sorted ``universe`` (-1 when absent)."""
    if universe.size == 0:
        return np.full(ids.shape, -1, dtype=np.int64)
    pos = np.searchsorted(universe, ids)
    pos = np.minimum(pos, universe.size - 1)
    return np.where(universe[pos] == ids, pos, -1).astype(np.int64)


class Selector:
    """The selector's state after ``__init__`` for one family and one community_level, on dense keys
    (positions in ``universe``, the sorted community numbers). A report key is ``str(community)``
    (``L`` ``read_community_reports``: ``community_id=to_str(row, "community")``), a community key
    ``str(community)`` (``short_id``), so integer equality is key equality."""

    def __init__(self, family: str, inp: DynamicInput, settings: DynamicSettings = DEFAULTS):
        self.family, self.settings = family, settings
        rep_ids = np.asarray(inp.report_ids, dtype=np.int64)
        cid = np.asarray(inp.comm_ids, dtype=np.int64)
        n = settings.community_level
        # candidates: reports with level <= N, no roll-up, no join (A@v1.2.0 / A@v2.0.0 / A@v3.3.0
        # read_indexer_reports: _filter_under_community_level, then `if not dynamic_community_selection:`
        # skips the roll-up and the merge)
        crow = np.arange(rep_ids.size) if n is None else np.flatnonzero(np.asarray(inp.report_levels) <= n)
        cand = rep_ids[crow]
        # communities handed to the selector: those with a report anywhere in the reports table
        # (A read_indexer_communities@v1.2.0/v2.0.0/v3.3.0: `communities_df.community.isin(reports_df...)`;
        # Q passes the full reports table there, the level-filtered one to read_indexer_reports)
        rows = np.flatnonzero(np.isin(cid, _uniq(rep_ids)))
        self.universe = universe = _uniq(np.concatenate([cid[rows], cand]))
        U = universe.size
        dk = _dense(cid[rows], universe)
        crow_d = _dense(cand, universe)
        self.is_candidate = np.zeros(U, dtype=bool)
        self.is_candidate[crow_d] = True
        self.candidate_ids = universe[self.is_candidate]
        # levels: for community in communities (row order): levels[level] created even when the
        # community is no candidate; appended when `community.short_id in self.reports` (D, all tags)
        lv_rows = np.asarray(inp.comm_levels, dtype=np.int64)[rows]
        order = np.argsort(lv_rows, kind="stable")
        cuts = np.flatnonzero(lv_rows[order][1:] != lv_rows[order][:-1]) + 1
        self.levels: dict[int, np.ndarray] = {}
        for group in np.split(order, cuts) if order.size else ():
            d = dk[group]
            self.levels[int(lv_rows[group[0]])] = d[self.is_candidate[d]]  # row order, duplicates kept
        # start: self.levels["0"] (D@v1.1.1 L87, the same line in every tag): KeyError '0' when no
        # level-0 community has a report
        self.error = None if 0 in self.levels else "KeyError: '0'"
        self.start = self.levels.get(0, np.zeros(0, dtype=np.int64))
        # children of each number's last communities row (dict comprehensions in D: the last row wins)
        last_row = np.full(U, -1, dtype=np.int64)
        last_row[dk] = rows
        nodes = np.flatnonzero(last_row >= 0)
        src = last_row[nodes]
        off = np.asarray(inp.child_offsets, dtype=np.int64)
        lens = off[src + 1] - off[src]
        kids = np.asarray(inp.child_values, dtype=np.int64)[concat_ranges(off[src], lens)]
        owner = np.repeat(nodes, lens)
        kid_d = _dense(kids, universe)
        if family == "2.x":
            # D@v2.0.0 L127-130: `for child in self.communities[community].children: if child in self.reports`
            # children are the stored ints (L@v2.0.0 read_communities: to_list, items not converted),
            # report keys are str: never a match (microsoft/graphrag#2004)
            queued = np.zeros(kids.size, dtype=bool)
        else:
            # 3.x: D@v3.0.0 L129-132 `child_str = str(child); if child_str in self.reports`; 1.x: D@v1.1.1
            # L61-67 node2children = {short_id: [str(x) for x in sub_community_ids]}, L143-146
            # `if sub_community in self.reports` (no match when the 1.x children are "5.0" strings)
            queued = (kid_d >= 0) & self.is_candidate[np.maximum(kid_d, 0)]
            queued &= family == "3.x" or bool(inp.children_match)
        self.ch_off = np.zeros(U + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner[queued], minlength=U), out=self.ch_off[1:])
        self.ch_val = kid_d[queued]  # owner is non-decreasing in dense order, so this is CSR order
        # the parent a kept community discards (-1: none)
        self.parent = np.full(U, -1, dtype=np.int64)
        if family != "1.x":
            # D@v2.0.0/v3.0.0: `if not self.keep_parent and community in self.communities:
            #   relevant_communities.discard(self.communities[community].parent)`; parent = to_str(parent)
            # (L read_communities), so the discard hits the parent's key
            self.parent[nodes] = _dense(np.asarray(inp.comm_parents, dtype=np.int64)[src], universe)
        elif inp.children_match:
            # D@v1.1.1 node2parent = {sub: community for community, subs in node2children.items() for sub
            # in subs}: dict order = first row of each community, its children from its last row; the
            # last write of a child wins (a child outside the universe is never rated: no entry needed)
            first_row = np.full(U, np.iinfo(np.int64).max, dtype=np.int64)
            np.minimum.at(first_row, dk, rows)
            o = np.lexsort((np.arange(kids.size), first_row[owner]))
            ok = kid_d[o] >= 0
            self.parent[kid_d[o][ok]] = owner[o][ok]
        # each rated community's prompt tokens: self.reports[community] is the last candidate row of its
        # number (D: `{report.community_id: report for report in community_reports}`)
        self.prompt_tokens = None
        rpt = (inp.report_prompt_tokens or {}).get(family)
        if rpt is not None:
            self.prompt_tokens = np.zeros(U, dtype=np.int64)
            self.prompt_tokens[crow_d] = np.asarray(rpt, dtype=np.int64)[crow]  # last row wins

    def run(
        self, relevant: np.ndarray, rated: list | None = None, reached: np.ndarray | None = None
    ) -> DynamicScenario:
        """``select()`` with ``relevant`` (bool per dense key) for ``rating >= threshold``; ``rated`` receives
        each wave's rated community numbers, ``reached`` (bool per dense key) is set where one is rated."""
        s = self.settings
        U = self.universe.size
        kept = np.zeros(U, dtype=bool)
        n_kept = 0
        queue = self.start.copy()  # deepcopy(self.starting_communities) (D)
        level = 0
        waves: list[int] = []
        pos_add = np.full(U, -1, dtype=np.int64)
        pos_del = np.full(U, -1, dtype=np.int64)
        max_waves = U + int(s.max_level) + 2  # acyclic children: at most that many waves
        max_rated = min(MAX_RATED, 8 * U + 10_000)
        total = 0
        tokens = 0
        while queue.size:  # `while queue:` (D)
            waves.append(int(queue.size))  # one asyncio.gather over the queue, num_repeats calls each
            total += int(queue.size)
            if len(waves) > max_waves:
                raise EndlessSelection("the children form a cycle: graphrag rates forever")
            if total > max_rated:
                raise EndlessSelection(
                    f"more than {max_rated:,} ratings (children reached through many parents, or a cycle)"
                )
            if rated is not None:
                rated.append(np.sort(self.universe[queue]).tolist())
            if reached is not None:
                reached[queue] = True
            if self.prompt_tokens is not None:
                tokens += int(self.prompt_tokens[queue].sum())
            qi = np.flatnonzero(relevant[queue])
            hits = queue[qi]
            # in queue order: add community, queue its candidate children, discard its parent
            # (add at 2*i, discard at 2*i+1: the last event per key decides)
            if hits.size:
                pos_add[hits] = -1
                np.maximum.at(pos_add, hits, 2 * qi)
                touched = [hits]
                if not s.keep_parent:
                    hp = self.parent[hits] >= 0
                    par = self.parent[hits[hp]]
                    pos_del[par] = -1
                    np.maximum.at(pos_del, par, 2 * qi[hp] + 1)
                    touched.append(par)
                t = _uniq(np.concatenate(touched))
                was = kept[t]
                now = pos_add[t] > pos_del[t]
                kept[t] = now
                n_kept += int(now.sum()) - int(was.sum())
                pos_add[t] = -1
                pos_del[t] = -1
            queue = self.children(hits)
            level += 1
            # fallback (D@v1.1.1 L157-169, the same in every tag to v3.3.0): `len(queue) == 0 and
            # len(relevant_communities) == 0 and str(level) in
            # self.levels and level <= self.max_level` -> queue = self.levels[str(level)]
            if queue.size == 0 and n_kept == 0 and level in self.levels and level <= s.max_level:
                queue = self.levels[level]
        calls = int(sum(waves)) * int(s.num_repeats)  # rate_relevancy: num_repeats calls per community
        kept_ids = tuple(self.universe[np.flatnonzero(kept)].tolist())
        prompt = None if self.prompt_tokens is None else tokens * int(s.num_repeats)
        return DynamicScenario(calls, kept_ids, tuple(waves), prompt_tokens=prompt)

    def rateable(self) -> np.ndarray:
        """Dense keys some relevance assignment gets rated: the start and the fallback levels
        1..max_level (consecutive while present), closed under the queued-children edges."""
        seeds = [self.start]
        lv = 1
        # the fallback rates level lv only after a wave that left the queue empty, so it stops at the
        # first absent or empty level (an empty queue ends `while queue`)
        while seeds[-1].size and lv in self.levels and lv <= self.settings.max_level:
            seeds.append(self.levels[lv])
            lv += 1
        seen = np.zeros(self.universe.size, dtype=bool)
        frontier = _uniq(np.concatenate(seeds))
        while frontier.size:
            frontier = frontier[~seen[frontier]]
            seen[frontier] = True
            frontier = _uniq(self.children(frontier))
        return seen

    def children(self, keys: np.ndarray) -> np.ndarray:
        """The queued children of ``keys``, in order."""
        return self.ch_val[concat_ranges(self.ch_off[keys], self.ch_off[keys + 1] - self.ch_off[keys])]


def simulate(
    prep: Selector,
    relevant_ids: Iterable[int] | None = None,
    ratings: Mapping[int, int] | None = None,
    rated: list | None = None,
) -> DynamicScenario | None:
    """One ``select()``, relevance from ``relevant_ids`` or ``ratings`` (>= threshold); None when graphrag
    raises building the selector. ``rated`` receives each wave's rated community numbers."""
    if prep.error is not None:
        return None
    if relevant_ids is None and ratings is not None:
        relevant_ids = [int(k) for k, v in ratings.items() if v >= prep.settings.threshold]
    ids = None if relevant_ids is None else _uniq(np.fromiter((int(i) for i in relevant_ids), dtype=np.int64))
    relevant = np.zeros(prep.universe.size, dtype=bool)
    if ids is not None:
        d = _dense(ids, prep.universe)
        relevant[d[d >= 0]] = True
    return replace(prep.run(relevant, rated), relevant_ids=None if ids is None else tuple(ids.tolist()))


def simulate_family(
    inp: DynamicInput, family: str, settings: DynamicSettings = DEFAULTS, what_if: Iterable[int] | None = None
) -> DynamicVersion:
    """What ``family`` does on ``inp``: the scenarios none relevant, all relevant and ``what_if``."""
    p = Selector(family, inp, settings)
    if p.error is not None:
        candidates = tuple(p.candidate_ids.tolist())
        return DynamicVersion(
            family, FAMILIES[family], p.error, False, (), candidates, candidates, None, None
        )
    seen = p.rateable()
    reached = np.zeros(p.universe.size, dtype=bool)
    every = p.run(p.is_candidate.copy(), reached=reached)
    return DynamicVersion(
        family,
        FAMILIES[family],
        None,
        descends=bool((p.ch_off[1:] - p.ch_off[:-1])[seen].any()),
        start_ids=tuple(p.universe[p.start].tolist()),
        cut_off_ids=tuple(p.universe[p.is_candidate & ~reached].tolist()),
        unreachable_ids=tuple(p.universe[p.is_candidate & ~seen].tolist()),
        none_relevant=p.run(np.zeros(p.universe.size, dtype=bool)),
        all_relevant=every,
        what_if=None if what_if is None else simulate(p, relevant_ids=what_if),
    )
