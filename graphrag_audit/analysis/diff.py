"""Compare two indexes (``graphrag-audit diff OLD NEW``) and check regressions against an earlier
run (``levels --baseline``): what each community_level sends before and after, which communities
were added, removed or changed, and which findings appeared or disappeared.

Communities are matched in one of two ways (:class:`~graphrag_audit.results.diff.CommunityChanges`):
by community number when the hierarchy is comparable (most numbers both indexes hold keep a
similar member entity set at the same level: ``graphrag update`` keeps the old numbers and appends
new ones), else by member entities (a re-index that reallocated the numbers: a community matches
the one with exactly the same member entities at the same level). Entities are told apart by
title (graphrag's entity identity; entity ids are new uuids after a re-index) when both indexes
have entities tables, else by the membership's own entity key.

Everything is vectorised over numpy arrays: member sets are compared through two order-independent
64-bit hashes and the size, and Jaccard similarity through one intersection of sorted
(community, entity) keys, so a diff costs little beside its two audits.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from graphrag_audit.findings import SEVERITY_RANK, Finding, finding
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import EXACT, AuditOptions, AuditReport, CommunityIds
from graphrag_audit.results.diff import (
    BY_ID,
    BY_MEMBERS,
    DIFF_BEHAVIOURS,
    CommunityChanges,
    IndexDiff,
    RegressionLimits,
    SelectionDiff,
    SideStats,
    exact_on_both,
)

#: a common community number keeps "a similar member set" at Jaccard similarity >= this
SIMILAR = 0.5
#: match by number when at least this share of the numbers both indexes hold keep a similar set
COMPARABLE = 0.5
REGRESSION_RULES = frozenset({"regression-map-calls", "regression-coverage", "regression-new-finding"})


# ---- what one audit says, in the shape both a report and a baseline JSON give ---------------
@dataclass(frozen=True)
class Snapshot:
    """The figures a regression check compares: per (community_level, behaviour) a
    :class:`SideStats`, and the findings as (rule, severity, message) triples."""

    stats: dict = field(default_factory=dict)
    findings: tuple = ()
    #: the options the audit ran with, as ``levels -f json`` writes them (``options``): empty when unknown
    options: dict = field(default_factory=dict)


def option_differences(old: Snapshot, new: Snapshot) -> tuple[tuple[str, object, object], ...]:
    """(name, old value, new value) of each option both runs record and that differs (the queried
    level, tokenizer, max_context_tokens, thresholds, ...; not where a value came from, ``*_from``):
    a changed number may come from the options, not from the index."""
    return tuple(
        (k, old.options[k], v)
        for k, v in new.options.items()
        if k in old.options
        and not isinstance(v, dict)
        and not isinstance(old.options[k], dict)
        and old.options[k] != v
    )


def option_note(diffs) -> str | None:
    """One sentence naming each option that differs between the two runs (None when none does)."""
    if not diffs:
        return None
    named = "; ".join(f"{k} {_option_value(a)} -> {_option_value(b)}" for k, a, b in diffs)
    return (
        f"the two runs used different options ({named}): a change may come from the options, "
        f"not from the index"
    )


def _option_value(v) -> str:
    text = (
        "none"
        if v is None
        else str(v).lower()
        if isinstance(v, bool)
        else f"{v:,}"
        if isinstance(v, int)
        else str(v)
    )
    return text if len(text) <= 40 else text[:39] + "…"


def last_level(levels) -> int | None:
    """The deepest numbered community_level among ``levels`` (None when there is none)."""
    numbered = [n for n in levels if n is not None]
    return max(numbered) if numbered else None


def stands_for(level: int | None, levels) -> int | None:
    """The row of an audit (its community_levels ``levels``: 0 … deepest, then None) that gives what
    graphrag sends at ``level``: ``level`` itself, or None (no level filter) for a level past the
    deepest. graphrag/selection.py filters on ``level <= N`` only (communities, reports and the
    roll-up rows), so an N at or past the deepest level of them all keeps every row, exactly as
    N = None does, for graphrag >= 2.0 (v2), graphrag < 2.0 (v1) and dynamic selection's pool; the
    audit's rows go as deep as the communities and reports, and every graphrag writes its roll-up
    rows (create_final_nodes) at the clustering's levels, the communities' (a hand-made roll-up row
    deeper than every community is the one exception: its N would differ from None). The documented
    ``level_only`` rule (reports at exactly N) is the only one that differs (it sends nothing past
    the tree): it is not compared here. Never a row for a level that is not past the deepest."""
    if level is None or level in levels:
        return level
    deepest = last_level(levels)
    if None in levels and (deepest is None or level > deepest):
        return None
    return level


def side_stats(sel, clustered: int) -> SideStats:
    cost = sel.cost
    return SideStats(
        reports=int(sel.count),
        tokens=None if cost is None else int(cost.tokens),
        map_calls=None if cost is None else int(cost.map_calls),
        entities_covered=int(sel.entities_covered),
        clustered_entities=int(clustered),
        status=None if sel.outcome is None else sel.outcome.status,
    )


def snapshot_of_report(report: AuditReport) -> Snapshot:
    clustered = report.index.counts.clustered_entities
    stats = {
        (r.community_level, b): side_stats(r.selected[b], clustered)
        for r in report.levels
        for b in DIFF_BEHAVIOURS
        if b in r.selected
    }
    return Snapshot(
        stats, tuple((f.rule, f.severity, f.message) for f in report.findings), report.options.to_dict()
    )


def _hypothetical_where(o: SideStats, n: SideStats) -> str | None:
    """None when a real graphrag runs the selection on both indexes (:func:`exact_on_both`), else
    where it does not: "either index", "the old index", "the new index"."""
    if exact_on_both(o.status, n.status):
        return None
    off = [
        name for name, side in (("old", o), ("new", n)) if side.status is not None and side.status != EXACT
    ]
    return "either index" if len(off) != 1 else f"the {off[0]} index"


def judge_regressions(
    old: Snapshot, new: Snapshot, level: int, limits: RegressionLimits
) -> tuple[list[Finding], list[Finding]]:
    """(judged, hypothetical): the regression-* findings of NEW against OLD at ``level``: map calls
    up by more than the allowed share, coverage down by more than the allowed drop (per behaviour,
    v2 and v1), and one regression-new-finding per rule NEW reports and OLD does not (with that
    finding's worst severity). A map-call or coverage finding on a behaviour that a real graphrag
    does not run on both indexes (its status is not ``exact`` on a side: the numbers are its rule
    applied to the rebuilt tree, marked ``hyp.``) goes to the second list, never judged, unless
    ``limits.include_hypothetical``; its message says so either way."""
    judged: list = []
    hypothetical: list = []
    # a level past one index's deepest: that index sends what it sends with no level filter
    old_at = stands_for(level, {n for n, _b in old.stats})
    new_at = stands_for(level, {n for n, _b in new.stats})
    for b in DIFF_BEHAVIOURS:
        o, n = old.stats.get((old_at, b)), new.stats.get((new_at, b))
        if o is None or n is None:
            continue
        who = "graphrag >= 2.0" if b == "v2" else "graphrag < 2.0"
        where = _hypothetical_where(o, n)
        hyp = "" if where is None else f"; hyp.: no real {who} sends this selection on {where}"
        mark = {} if where is None else {"hypothetical": True}
        out = judged if where is None or limits.include_hypothetical else hypothetical
        if o.map_calls is not None and n.map_calls is not None and n.map_calls > o.map_calls:
            up = (n.map_calls - o.map_calls) / o.map_calls if o.map_calls else float("inf")
            if up > limits.max_map_calls_increase + 1e-12:
                pct = "from none" if o.map_calls == 0 else f"+{up:.1%}"
                out.append(
                    finding(
                        "regression-map-calls",
                        f"at community_level {level}, {who} makes {n.map_calls:,} map "
                        f"call{'s' if n.map_calls != 1 else ''}, {o.map_calls:,} before ({pct}; allowed "
                        f"+{limits.max_map_calls_increase:.1%}){hyp}",
                        behaviour=b,
                        community_level=level,
                        old=o.map_calls,
                        new=n.map_calls,
                        **mark,
                    )
                )
        oc, nc = o.coverage, n.coverage
        if oc is not None and nc is not None and oc - nc > limits.max_coverage_drop + 1e-12:
            out.append(
                finding(
                    "regression-coverage",
                    f"at community_level {level}, the reports {who} sends cover {nc:.1%} of the "
                    f"clustered entities, {oc:.1%} before (allowed drop "
                    f"{limits.max_coverage_drop:.1%}){hyp}",
                    behaviour=b,
                    community_level=level,
                    old=oc,
                    new=nc,
                    **mark,
                )
            )
    before = {r for r, _s, _m in old.findings}
    new_rules: dict[str, list] = {}
    for rule, sev, msg in new.findings:
        if rule not in before and rule not in REGRESSION_RULES:
            new_rules.setdefault(rule, []).append((sev, msg))
    for rule, items in sorted(new_rules.items()):
        sev = max((s for s, _m in items), key=lambda s: SEVERITY_RANK[s])
        more = f" (and {len(items) - 1:,} more)" if len(items) > 1 else ""
        judged.append(
            Finding(
                "regression-new-finding",
                sev,
                f"new finding {rule}: {items[0][1]}{more}",
                (),
                {"rule": rule, "count": len(items)},
            )
        )
    return judged, hypothetical


def regressions(old: Snapshot, new: Snapshot, level: int, limits: RegressionLimits) -> list[Finding]:
    """The judged regression-* findings of NEW against OLD at ``level`` (:func:`judge_regressions`)."""
    return judge_regressions(old, new, level, limits)[0]


# ---- one side of the comparison -----------------------------------------------------------------
def _splitmix(x: np.ndarray) -> np.ndarray:
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _as_arrow(series) -> pa.Array:
    """A column as one arrow array (zero-copy for arrow-backed columns)."""
    a = pa.array(series)
    if isinstance(a, pa.ChunkedArray):
        a = a.unify_dictionaries().combine_chunks() if pa.types.is_dictionary(a.type) else a.combine_chunks()
    return a


def _chunks_of(series) -> pa.ChunkedArray:
    """A column as arrow, in the chunks it has (zero-copy for arrow-backed columns)."""
    a = pa.array(series)
    return a if isinstance(a, pa.ChunkedArray) else pa.chunked_array([a])


def _strings(a: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    if pa.types.is_dictionary(a.type):
        a = pc.cast(a, a.type.value_type)  # (dictionary_decode, which chunked arrays lack)
    return a if pa.types.is_large_string(a.type) else pc.cast(a, pa.large_string())


def _entity_codes_arrow(mem_entity) -> tuple[np.ndarray, pa.Array]:
    """(local code per membership row, the distinct entity keys) from the membership's entity column."""
    a = _as_arrow(mem_entity)
    if not pa.types.is_dictionary(a.type):
        a = pc.dictionary_encode(a)
    codes = pc.fill_null(a.indices, -1).to_numpy(zero_copy_only=False)  # -1: no entity key
    return np.asarray(codes, dtype=np.int64), _strings(a.dictionary)


def _first_entity_rows(
    model: IndexModel, kept: np.ndarray, codes: np.ndarray, n_keys: int
) -> np.ndarray | None:
    """Per distinct entity key of the membership rows ``kept`` (their ``codes`` as
    :func:`_entity_codes_arrow` gives them): the first entities row with that id, -1 when none
    (or when no membership row has the key); None without the load's key match. The load matched
    every key once already (``model.key_match``), so no key is hashed again."""
    match = model.key_match
    if match is None or model.member_key != "id" or len(match.member_row) != len(kept):
        return None
    rows = np.full(n_keys, -1, np.int64)
    valid = codes >= 0
    rows[codes[valid]] = match.member_row[kept][valid]  # (rows with one key share one first row)
    return rows


def _entity_names_arrow(
    model: IndexModel, keys: pa.Array, by_title: bool, rows: np.ndarray | None = None
) -> pa.Array:
    """The names entities are compared by, for the membership's distinct entity keys ``keys``;
    ``rows``: each key's first entities row (-1: none), as :func:`_first_entity_rows` gives them,
    or None to look the keys up here."""
    ent = model.entities
    if not by_title or model.member_key == "title" or ent is None:  # (by_title: entities are there)
        return keys
    titles = _strings(_as_arrow(ent["title"]))
    if rows is None:
        pos = pc.index_in(keys, value_set=_strings(_as_arrow(ent["id"])))  # the first entities row of each id
    else:
        pos = pa.array(rows, mask=rows < 0)
    named = pc.take(titles, pc.fill_null(pos, 0))
    # an id without an entities row (or a title) keeps its id, marked so that it cannot meet a title
    missing = pc.or_(pc.is_null(pos), pc.is_null(named))
    if not pc.any(missing).as_py():
        return named
    sep = pa.scalar("", pa.large_string())
    marked = pc.binary_join_element_wise(pa.scalar("\x00id:", pa.large_string()), keys, sep)
    return pc.if_else(missing, marked, named)


def _entity_names(model: IndexModel, uniques: np.ndarray, by_title: bool) -> np.ndarray:
    """The names entities are compared by, for the membership's distinct entity keys."""
    keys = np.asarray(uniques, dtype=object)
    ent = model.entities
    if not by_title or model.member_key == "title" or ent is None:  # (by_title: entities are there)
        return keys
    pos = (
        pd.Index(ent["id"].astype(object)).get_indexer(keys)
        if ent["id"].is_unique
        else pd.Index(ent["id"].astype(object).drop_duplicates()).get_indexer(keys)
    )
    titles = ent["title"].astype(object).to_numpy()
    if not ent["id"].is_unique:
        titles = ent.drop_duplicates("id")["title"].astype(object).to_numpy()
    out = keys.copy()
    hit = pos >= 0
    out[hit] = titles[pos[hit]]
    # an id without an entities row keeps its id, marked so that it cannot meet a title
    out[~hit] = np.array(["\x00id:" + str(k) for k in keys[~hit]], dtype=object)
    return out


def _can_title(model: IndexModel) -> bool:
    if model.member_key == "title":
        return True
    return model.entities is not None and {"id", "title"} <= set(model.entities.columns)


class _Side:
    """One index's communities as sorted numbers with level, parent, report row and member set."""

    def __init__(self, model: IndexModel):
        comm = model.communities
        mem = model.members
        kept = mem["community"].to_numpy() >= 0 if len(mem) else None
        mem = mem[kept] if len(mem) else mem
        numbers = np.union1d(comm["community"].to_numpy(np.int64), mem["community"].to_numpy(np.int64))
        self.comms = numbers
        n = len(numbers)
        first = comm.drop_duplicates("community")
        pos = np.searchsorted(numbers, first["community"].to_numpy(np.int64))
        self.level = np.full(n, -1, np.int64)
        self.parent = np.full(n, -1, np.int64)
        self.level[pos] = first["level"].to_numpy(np.int64)
        self.parent[pos] = first["parent"].to_numpy(np.int64)
        if len(mem):  # communities only the membership knows: its level
            mf = mem.drop_duplicates("community")
            mp = np.searchsorted(numbers, mf["community"].to_numpy(np.int64))
            unknown = self.level[mp] < 0
            self.level[mp[unknown]] = mf["level"].to_numpy(np.int64)[unknown]
        # the report of each community: its first report row (-1: none) and how many rows it has;
        # titles and contents are compared only for matched pairs (arrow take + equal)
        self.report_row = np.full(n, -1, np.int64)
        self.orphan_reports = np.zeros(0, np.int64)  # report numbers outside the tree (-1, orphans)
        self.report_rows = np.zeros(n, np.int64)
        rep = model.reports
        self.report_title = self.report_content = pa.array([], pa.large_string())
        self.report_level = np.zeros(0, np.int64)
        if rep is not None and len(rep):
            rc = rep["community"].to_numpy(np.int64)
            rp = np.searchsorted(numbers, rc)
            ok = (rp < n) & (numbers[np.minimum(rp, n - 1)] == rc) if n else np.zeros(len(rc), bool)
            rows = np.flatnonzero(ok)
            self.orphan_reports = np.unique(rc[~ok])
            self.report_rows = np.bincount(rp[rows], minlength=n).astype(np.int64)
            self.report_row[rp[rows][::-1]] = rows[::-1]  # the first row wins
            # kept in their chunks as read (combining the contents would copy them: 270 MB at 1M)
            self.report_title = _chunks_of(rep["title"])
            self.report_content = _chunks_of(rep["content"])
            self.report_level = rep["level"].to_numpy(np.int64)
        self.arrow = True
        self.entity_rows = None
        if kept is not None and len(mem):
            try:
                self.entity_codes, self.entity_uniques = _entity_codes_arrow(mem["entity"])
            except (pa.ArrowException, TypeError, ValueError):  # keys arrow cannot hold as strings
                self.arrow = False
                self.entity_codes, self.entity_uniques = pd.factorize(mem["entity"])
            else:
                self.entity_rows = _first_entity_rows(
                    model, kept, self.entity_codes, len(self.entity_uniques)
                )
        else:
            self.entity_codes, self.entity_uniques = np.zeros(0, np.int64), pa.array([], pa.large_string())
        self.member_comm = (
            np.searchsorted(numbers, mem["community"].to_numpy(np.int64))
            if len(mem)
            else np.zeros(0, np.int64)
        )

    def finish(self, gmap: np.ndarray, n_codes: int):
        """Member sets over the global entity codes: unique (community, entity) keys, sizes, hashes."""
        n = len(self.comms)
        valid = self.entity_codes >= 0
        codes = gmap[self.entity_codes[valid]] if len(self.entity_codes) else np.zeros(0, np.int64)
        keys = np.sort(self.member_comm[valid].astype(np.int64) * n_codes + codes)
        keys = keys[np.r_[True, keys[1:] != keys[:-1]]] if len(keys) else keys
        self.n_codes = n_codes
        ci = keys // n_codes if n_codes else keys
        code = keys - ci * n_codes
        self.size = np.bincount(ci, minlength=n).astype(np.int64)
        self.sig1 = np.zeros(n, np.uint64)
        self.sig2 = np.zeros(n, np.uint64)
        if len(keys):
            starts = np.flatnonzero(np.r_[True, ci[1:] != ci[:-1]])
            owners = ci[starts]
            self.sig1[owners] = np.add.reduceat(_splitmix(code), starts)
            self.sig2[owners] = np.add.reduceat(_splitmix(code ^ np.int64(0x5DEECE66D)), starts)
        self.member_ci = ci
        self.member_code = code
        del self.entity_codes, self.member_comm, self.entity_rows


def _prepare(old_model: IndexModel, new_model: IndexModel) -> tuple[_Side, _Side, str]:
    by_title = _can_title(old_model) and _can_title(new_model)
    sides = [_Side(old_model), _Side(new_model)]
    models = (old_model, new_model)
    names = None
    if all(s.arrow for s in sides):
        try:
            names = [
                _entity_names_arrow(m, s.entity_uniques, by_title, s.entity_rows)
                for m, s in zip(models, sides)
            ]
            enc = pc.dictionary_encode(pa.concat_arrays(names))
            codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
            n_codes = max(len(enc.dictionary), 1)
        except (pa.ArrowException, TypeError, ValueError):
            names = None
    if names is None:  # the pandas path: keys of mixed types
        names = [
            _entity_names(m, np.asarray(s.entity_uniques, dtype=object), by_title)
            for m, s in zip(models, sides)
        ]
        codes, uniques = (
            pd.factorize(np.concatenate(names)) if sum(map(len, names)) else (np.zeros(0, np.int64), [])
        )
        n_codes = max(len(uniques), 1)
    at = 0
    for s, nm in zip(sides, names):
        s.finish(codes[at : at + len(nm)].astype(np.int64), n_codes)
        at += len(nm)
        del s.entity_uniques
    return sides[0], sides[1], "title" if by_title else "key"


# ---- matching ------------------------------------------------------------------------------------
def _id_agreement(old: _Side, new: _Side) -> tuple[float | None, np.ndarray]:
    """(share of the numbers both hold whose member sets are similar at the same level, the common numbers)."""
    common = np.intersect1d(old.comms, new.comms, assume_unique=True)
    if not len(common):
        return None, common
    union = np.union1d(old.comms, new.comms)
    n_codes = old.n_codes
    ko = np.searchsorted(union, old.comms[old.member_ci]) * n_codes + old.member_code
    kn = np.searchsorted(union, new.comms[new.member_ci]) * n_codes + new.member_code
    both = np.intersect1d(ko, kn, assume_unique=True)
    inter_all = (
        np.bincount(both // n_codes, minlength=len(union)) if len(both) else np.zeros(len(union), np.int64)
    )
    inter = inter_all[np.searchsorted(union, common)]
    io, inn = np.searchsorted(old.comms, common), np.searchsorted(new.comms, common)
    uni = old.size[io] + new.size[inn] - inter
    jacc = np.where(uni > 0, inter / np.maximum(uni, 1), 1.0)
    similar = (jacc >= SIMILAR) & (old.level[io] == new.level[inn])
    return float(similar.mean()), common


def _match_by_members(old: _Side, new: _Side) -> tuple[np.ndarray, np.ndarray]:
    """(old numbers, new numbers) of the communities whose member sets and levels are identical,
    paired in number order where several share one (duplicates within one index). A community's
    key is one 64-bit hash of its level, size and the two member-set hashes, mixed with its rank
    among the communities of the same key (in number order)."""

    def keys(s: _Side) -> np.ndarray:
        k = _splitmix(
            s.sig1
            ^ _splitmix(
                s.sig2 ^ _splitmix(s.size.astype(np.uint64) ^ (s.level.astype(np.uint64) << np.uint64(40)))
            )
        )
        order = np.lexsort((s.comms, k))
        ks = k[order]
        starts = np.r_[True, ks[1:] != ks[:-1]] if len(ks) else np.zeros(0, bool)
        first = (
            np.maximum.accumulate(np.where(starts, np.arange(len(ks)), 0))
            if len(ks)
            else np.zeros(0, np.int64)
        )
        rank = np.empty(len(ks), np.uint64)
        rank[order] = (np.arange(len(ks)) - first).astype(np.uint64)
        return _splitmix(k + rank * np.uint64(0x9E3779B97F4A7C15))

    _common, io, inn = np.intersect1d(keys(old), keys(new), assume_unique=True, return_indices=True)
    mo, mn = old.comms[io], new.comms[inn]
    order = np.argsort(mo, kind="stable")
    return mo[order], mn[order]


def _reports_differ(old: _Side, new: _Side, io: np.ndarray, inn: np.ndarray) -> np.ndarray:
    """Per matched pair: the reports differ (one has none, several rows, or title, content or level differ)."""
    ro, rn = old.report_row[io], new.report_row[inn]
    differ = (ro < 0) != (rn < 0)
    differ |= old.report_rows[io] != new.report_rows[inn]
    both = np.flatnonzero((ro >= 0) & (rn >= 0))
    if len(both):
        a, b = ro[both], rn[both]
        same = old.report_level[a] == new.report_level[b]
        for col_o, col_n in ((old.report_title, new.report_title), (old.report_content, new.report_content)):
            for lo in range(0, len(a), REPORTS_PER_BLOCK):  # (the texts taken a block at a time)
                hi = min(lo + REPORTS_PER_BLOCK, len(a))
                same[lo:hi] &= _same_texts(
                    pc.take(col_o, pa.array(a[lo:hi])), pc.take(col_n, pa.array(b[lo:hi]))
                )
        differ[both] |= ~same
    return differ


#: matched reports whose titles and contents are compared at a time (bounded memory: the texts of
#: every matched pair taken at once were two copies of the contents, 540 MB at 1M entities)
REPORTS_PER_BLOCK = 16384


def _same_texts(x, y) -> np.ndarray:
    """Per position: equal texts, or both missing."""
    if x.type != y.type:
        x, y = _strings(x), _strings(y)
    eq = pc.equal(x, y)
    both_null = pc.and_(pc.is_null(x), pc.is_null(y))
    return np.asarray(pc.fill_null(pc.or_kleene(eq, both_null), False).to_numpy(zero_copy_only=False), bool)


def compare_communities(
    old: _Side, new: _Side, entity_key: str
) -> tuple[CommunityChanges, np.ndarray, np.ndarray]:
    """The community changes, and the matched pairs (old numbers sorted, new numbers aligned)."""
    agreement, common = _id_agreement(old, new)
    if agreement is not None and agreement >= COMPARABLE:
        matching, mo, mn = BY_ID, common, common
    else:
        matching = BY_MEMBERS
        mo, mn = _match_by_members(old, new)
    io, inn = np.searchsorted(old.comms, mo), np.searchsorted(new.comms, mn)
    members = (
        (old.size[io] != new.size[inn]) | (old.sig1[io] != new.sig1[inn]) | (old.sig2[io] != new.sig2[inn])
    )
    level = old.level[io] != new.level[inn]
    report = _reports_differ(old, new, io, inn)
    op = old.parent[io]
    if matching == BY_ID:
        mapped_parent = op
    else:  # the old parent's match in NEW (-1 stays -1; an unmatched parent counts as changed)
        pos = np.searchsorted(mo, op)
        pos_c = np.minimum(pos, max(len(mo) - 1, 0))
        found = (len(mo) > 0) & (mo[pos_c] == op) if len(mo) else np.zeros(len(op), bool)
        mapped_parent = np.where(op < 0, -1, np.where(found, mn[pos_c] if len(mo) else -2, -2))
    parent = mapped_parent != new.parent[inn]
    changed = members | level | report | parent
    # reports outside both trees (a report for community -1, orphans) can only meet by number: they
    # count as the same in a selection, never as an added, removed or changed community
    orphans = np.intersect1d(old.orphan_reports, new.orphan_reports)
    if len(orphans):
        mo_all, mn_all = np.concatenate([mo, orphans]), np.concatenate([mn, orphans])
        order = np.argsort(mo_all, kind="stable")
        mo_sel, mn_sel = mo_all[order], mn_all[order]
    else:
        mo_sel, mn_sel = mo, mn
    changes = CommunityChanges(
        matching=matching,
        entity_key=entity_key,
        id_agreement=agreement,
        old_communities=len(old.comms),
        new_communities=len(new.comms),
        matched=len(mo),
        added=CommunityIds(np.setdiff1d(new.comms, mn), own=True),
        removed=CommunityIds(np.setdiff1d(old.comms, mo), own=True),
        changed=CommunityIds(np.unique(mn[changed]), own=True),
        reasons={
            "members": int(members.sum()),
            "level": int(level.sum()),
            "parent": int(parent.sum()),
            "report": int(report.sum()),
        },
    )
    return changes, mo_sel, mn_sel


def _sorted_unique(ids) -> np.ndarray:
    """A selection's community numbers (CommunityIds: sorted) without repeats, as int64."""
    a = np.asarray(ids, dtype=np.int64)
    return a[np.r_[True, a[1:] != a[:-1]]] if len(a) else a


def _selection_diff(
    n, b, old_sel, new_sel, old_clustered, new_clustered, mo, mn, changed_new
) -> SelectionDiff:
    so = _sorted_unique(old_sel.community_ids) if old_sel is not None else np.zeros(0, np.int64)
    sn = _sorted_unique(new_sel.community_ids) if new_sel is not None else np.zeros(0, np.int64)
    pos = np.searchsorted(mo, so)
    pos_c = np.minimum(pos, max(len(mo) - 1, 0))
    found = (mo[pos_c] == so) if len(mo) else np.zeros(len(so), bool)
    mapped = mn[pos_c[found]] if len(mo) else np.zeros(0, np.int64)
    kept_old = np.zeros(len(so), bool)
    kept_old[found] = np.isin(mapped, sn)
    removed = so[~kept_old]
    in_old = np.isin(sn, mapped)
    added = sn[~in_old]
    both = sn[in_old]
    changed = both[np.isin(both, changed_new)]
    return SelectionDiff(
        n,
        b,
        None if old_sel is None else side_stats(old_sel, old_clustered),
        None if new_sel is None else side_stats(new_sel, new_clustered),
        CommunityIds(added, own=True),
        CommunityIds(removed, own=True),
        CommunityIds(changed, own=True),
    )


def diff_reports(
    old_model: IndexModel,
    old_report: AuditReport,
    new_model: IndexModel,
    new_report: AuditReport,
    limits: RegressionLimits | None = None,
) -> IndexDiff:
    """Compare two audited indexes (the models give the member sets and reports)."""
    limits = limits or RegressionLimits()
    old, new, entity_key = _prepare(old_model, new_model)
    changes, mo, mn = compare_communities(old, new, entity_key)
    del old, new
    changed_new = np.asarray(changes.changed.array, dtype=np.int64)
    oc, nc = old_report.index.counts.clustered_entities, new_report.index.counts.clustered_entities
    levels = [r.community_level for r in old_report.levels]
    levels += [r.community_level for r in new_report.levels if r.community_level not in levels]
    levels.sort(key=lambda n: (n is None, -1 if n is None else n))
    selections = []
    old_levels = [r.community_level for r in old_report.levels]
    new_levels = [r.community_level for r in new_report.levels]
    for n in levels:  # a level past one index's deepest: that index's None row (:func:`stands_for`)
        ro, rn = old_report.level(stands_for(n, old_levels)), new_report.level(stands_for(n, new_levels))
        for b in DIFF_BEHAVIOURS:
            so = None if ro is None else ro.selected.get(b)
            sn = None if rn is None else rn.selected.get(b)
            if so is None and sn is None:
                continue
            selections.append(_selection_diff(n, b, so, sn, oc, nc, mo, mn, changed_new))
    old_rules = {f.rule for f in old_report.findings}
    new_rules = {f.rule for f in new_report.findings}
    appeared = [f for f in new_report.sorted_findings() if f.rule not in old_rules]
    disappeared = [f for f in old_report.sorted_findings() if f.rule not in new_rules]
    level = new_report.options.level
    old_snap, new_snap = snapshot_of_report(old_report), snapshot_of_report(new_report)
    regs, hyp = judge_regressions(old_snap, new_snap, level, limits)
    return IndexDiff(
        old=old_report.index,
        new=new_report.index,
        level=level,
        limits=limits,
        communities=changes,
        selections=tuple(selections),
        appeared=tuple(appeared),
        disappeared=tuple(disappeared),
        regressions=tuple(regs),
        hypothetical_changes=tuple(hyp),
        option_note=option_note(option_differences(old_snap, new_snap)),
    )


def diff_indexes(
    old: IndexModel | str | os.PathLike,
    new: IndexModel | str | os.PathLike,
    options: AuditOptions | None = None,
    limits: RegressionLimits | None = None,
    progress: Callable[[str], None] | None = None,
) -> IndexDiff:
    """Audit OLD and NEW with the same options and compare them (:func:`diff_reports`)."""
    from graphrag_audit.analysis.audit import audit_with_model

    step = progress or (lambda _m: None)
    step("auditing OLD")
    om, orep = audit_with_model(old, options, progress)
    step("auditing NEW")
    nm, nrep = audit_with_model(new, options, progress)
    step("comparing")
    return diff_reports(om, orep, nm, nrep, limits)
