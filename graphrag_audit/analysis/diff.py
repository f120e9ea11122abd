"""Compare two indexes (``diff OLD NEW``) and judge regressions against an earlier run (``levels
--baseline``): what each community_level sends, communities added/removed/changed, findings.

Communities match by number when most common numbers keep a similar member set at the same level
(``graphrag update`` keeps numbers), else by identical members at the same level (a re-index).
Entities are told apart by title (ids are new uuids after a re-index) when both indexes have
entities tables, else by the membership's key. Member sets compare through two order-independent
64-bit hashes and the size; Jaccard similarity through one intersection of (community, entity) keys.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from graphrag_audit.errors import IndexInputError
from graphrag_audit.findings import SEVERITY_RANK, Finding, finding
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import EXACT, AuditReport, CommunityIds
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


@dataclass(frozen=True)
class Snapshot:
    """What a regression check compares, from a report or a baseline JSON: {(N, behaviour):
    :class:`SideStats`}, findings as (rule, severity, message), options as ``levels -f json`` has them."""

    stats: dict
    findings: tuple
    options: dict


def option_differences(old: Snapshot, new: Snapshot) -> tuple[tuple[str, object, object], ...]:
    """(name, old value, new value) of each scalar option both runs record with different values."""
    return tuple(
        (k, old.options[k], v)
        for k, v in new.options.items()
        if k in old.options
        and not isinstance(v, dict)
        and not isinstance(old.options[k], dict)
        and old.options[k] != v
    )


def option_note(diffs) -> str | None:
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


def stands_for(level: int | None, levels) -> int | None:
    """The audit row (of ``levels``: 0 … deepest, None) giving what graphrag sends at ``level``: None
    past the deepest, since graphrag/selection.py filters on ``level <= N`` only."""
    if level is None or level in levels:
        return level
    numbered = [n for n in levels if n is not None]
    if None in levels and (not numbered or level > max(numbered)):
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


def snapshot_of_json(doc: dict, path: str | os.PathLike) -> Snapshot:
    """A ``levels -f json`` baseline as a :class:`Snapshot` (a mistyped field: an error naming ``path``)."""
    try:
        clustered = int(doc["index"]["counts"].get("clustered_entities", 0))
        stats = {}
        for lvl in doc["levels"]:
            n = lvl["community_level"]
            for b in DIFF_BEHAVIOURS:
                s = lvl["selected"].get(b)
                if s is None:
                    continue
                stats[(None if n is None else int(n), b)] = SideStats(
                    reports=int(s["count"]),
                    tokens=None if s.get("tokens") is None else int(s["tokens"]),
                    map_calls=None if s.get("map_calls") is None else int(s["map_calls"]),
                    entities_covered=int(s["entities_covered"]),
                    clustered_entities=clustered,
                    status=s.get("status"),
                )
        findings = tuple(
            (str(f["rule"]), str(f["severity"]), str(f.get("message", ""))) for f in doc["findings"]
        )
        options = doc.get("options")
        options = dict(options) if isinstance(options, dict) else {}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise IndexInputError(
            path,
            f"the baseline's levels JSON lacks or mistypes a field "
            f"({exc.__class__.__name__}: {str(exc)[:80]})",
        ) from None
    return Snapshot(stats, findings, options)


def judge_regressions(
    old: Snapshot, new: Snapshot, level: int, limits: RegressionLimits
) -> tuple[list[Finding], list[Finding]]:
    """(judged, hypothetical) regression-* findings of NEW against OLD at ``level``: map calls up or
    coverage down by more than allowed, one regression-new-finding per rule only NEW reports. Map-call
    and coverage findings no real graphrag would meet on both go to the second list (unless asked)."""
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
        where = None  # where no real graphrag runs this selection
        if not exact_on_both(o.status, n.status):
            off = [name for name, side in (("old", o), ("new", n)) if side.status not in (None, EXACT)]
            where = "either index" if len(off) != 1 else f"the {off[0]} index"
        hyp = "" if where is None else f"; hyp.: no real {who} sends this selection on {where}"
        mark = {} if where is None else {"hypothetical": True}
        flagged = []  # (rule, message, old value, new value)
        om, nm = o.map_calls, n.map_calls
        if om is not None and nm is not None and nm > om:
            up = (nm - om) / om if om else float("inf")
            if up > limits.max_map_calls_increase + 1e-12:
                pct = "from none" if om == 0 else f"+{up:.1%}"
                allowed = f"allowed +{limits.max_map_calls_increase:.1%}"
                calls = f"{nm:,} map call{'s' if nm != 1 else ''}"
                text = f"at community_level {level}, {who} makes {calls}, {om:,} before ({pct}; {allowed})"
                flagged.append(("regression-map-calls", text, om, nm))
        oc, nc = o.coverage, n.coverage
        if oc is not None and nc is not None and oc - nc > limits.max_coverage_drop + 1e-12:
            text = (
                f"at community_level {level}, the reports {who} sends cover {nc:.1%} of the clustered "
                f"entities, {oc:.1%} before (allowed drop {limits.max_coverage_drop:.1%})"
            )
            flagged.append(("regression-coverage", text, oc, nc))
        (judged if where is None or limits.include_hypothetical else hypothetical).extend(
            finding(rule, text + hyp, behaviour=b, community_level=level, old=x, new=y, **mark)
            for rule, text, x, y in flagged
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


def _splitmix(x: np.ndarray) -> np.ndarray:
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _as_arrow(series) -> pa.Array:
    """A column as one arrow array (zero-copy for arrow-backed columns); keys arrow cannot hold as
    they are (mixed types) as their strings."""
    try:
        a = pa.array(series)
    except (pa.ArrowException, TypeError, ValueError):
        a = pa.array(series.astype(str))
    if isinstance(a, pa.ChunkedArray):
        a = a.unify_dictionaries().combine_chunks() if pa.types.is_dictionary(a.type) else a.combine_chunks()
    return a


def _strings(a: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    if pa.types.is_dictionary(a.type):
        a = pc.cast(a, a.type.value_type)  # (dictionary_decode, which chunked arrays lack)
    return a if pa.types.is_large_string(a.type) else pc.cast(a, pa.large_string())


def _entity_names(model: IndexModel, keys: pa.Array, by_title: bool) -> pa.Array:
    """The names entities are compared by, for the membership's distinct entity keys ``keys``: the
    title of the first entities row with that id, or the id itself, marked so that it cannot meet a
    title, when there is none."""
    ent = model.entities
    if not by_title or model.member_key == "title" or ent is None:  # (by_title: entities are there)
        return keys
    pos = pc.index_in(keys, value_set=_strings(_as_arrow(ent["id"])))
    named = pc.take(_strings(_as_arrow(ent["title"])), pc.fill_null(pos, 0))
    missing = pc.or_(pc.is_null(pos), pc.is_null(named))
    if not pc.any(missing).as_py():
        return named
    sep = pa.scalar("", pa.large_string())
    marked = pc.binary_join_element_wise(pa.scalar("\x00id:", pa.large_string()), keys, sep)
    return pc.if_else(missing, marked, named)


class _Side:
    """One index's communities as sorted numbers with level, parent, report row and member set."""

    def __init__(self, model: IndexModel):
        comm = model.communities
        mem = model.members
        mem = mem[mem["community"].to_numpy() >= 0]
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
        # each community's first report row (-1: none) and how many rows it has; titles and contents
        # (in their chunks as read: combining would copy them) are compared only for matched pairs
        rep = model.reports
        rc = rep["community"].to_numpy(np.int64)
        rp = np.searchsorted(numbers, rc)
        ok = (rp < n) & (numbers[np.minimum(rp, n - 1)] == rc) if n else np.zeros(len(rc), bool)
        rows = np.flatnonzero(ok)
        self.orphan_reports = np.unique(rc[~ok])  # report numbers outside the tree (-1, orphans)
        self.report_rows = np.bincount(rp[rows], minlength=n).astype(np.int64)
        self.report_row = np.full(n, -1, np.int64)
        self.report_row[rp[rows][::-1]] = rows[::-1]  # the first row wins
        self.report_title, self.report_content = pa.array(rep["title"]), pa.array(rep["content"])
        self.report_level = rep["level"].to_numpy(np.int64)
        self.entity_codes, self.entity_keys = np.zeros(0, np.int64), pa.array([], pa.large_string())
        if len(mem):
            a = _as_arrow(mem["entity"])
            if not pa.types.is_dictionary(a.type):
                a = pc.dictionary_encode(a)
            codes = pc.fill_null(a.indices, -1).to_numpy(zero_copy_only=False)  # -1: no entity key
            self.entity_codes, self.entity_keys = np.asarray(codes, dtype=np.int64), _strings(a.dictionary)
        self.member_comm = np.searchsorted(numbers, mem["community"].to_numpy(np.int64))

    def finish(self, gmap: np.ndarray, n_codes: int):
        """Member sets over the global entity codes: unique (community, entity) keys, sizes, hashes."""
        n = len(self.comms)
        valid = self.entity_codes >= 0
        codes = gmap[self.entity_codes[valid]] if len(self.entity_codes) else np.zeros(0, np.int64)
        keys = np.unique(self.member_comm[valid].astype(np.int64) * n_codes + codes)
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
        del self.entity_codes, self.member_comm, self.entity_keys


def _prepare(old_model: IndexModel, new_model: IndexModel) -> tuple[_Side, _Side, str]:
    by_title = all(
        m.member_key == "title" or (m.entities is not None and {"id", "title"} <= set(m.entities.columns))
        for m in (old_model, new_model)
    )
    sides = [_Side(old_model), _Side(new_model)]
    names = [_entity_names(m, s.entity_keys, by_title) for m, s in zip((old_model, new_model), sides)]
    enc = pc.dictionary_encode(pa.concat_arrays(names))
    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    n_codes = max(len(enc.dictionary), 1)
    at = 0
    for s, nm in zip(sides, names):
        s.finish(codes[at : at + len(nm)], n_codes)
        at += len(nm)
    return sides[0], sides[1], "title" if by_title else "key"


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
    inter = np.bincount(both // n_codes, minlength=len(union))[np.searchsorted(union, common)]
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
        rank = pd.Series(k).groupby(k).cumcount().to_numpy().astype(np.uint64)  # s.comms ascend
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
                block = slice(lo, lo + REPORTS_PER_BLOCK)
                x, y = pc.take(col_o, pa.array(a[block])), pc.take(col_n, pa.array(b[block]))
                if x.type != y.type:
                    x, y = _strings(x), _strings(y)
                eq = pc.or_kleene(pc.equal(x, y), pc.and_(pc.is_null(x), pc.is_null(y)))  # or both missing
                same[block] &= np.asarray(pc.fill_null(eq, False).to_numpy(zero_copy_only=False), bool)
        differ[both] |= ~same
    return differ


#: matched reports whose titles and contents are compared at a time (bounded memory: the texts of
#: every matched pair taken at once were two copies of the contents, 540 MB at 1M entities)
REPORTS_PER_BLOCK = 16384


def _matched(mo: np.ndarray, mn: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(found, the NEW number of each OLD number of ``values``, -2 where it has no match)."""
    if not len(mo):
        return np.zeros(len(values), bool), np.full(len(values), -2, np.int64)
    pos = np.minimum(np.searchsorted(mo, values), len(mo) - 1)
    found = mo[pos] == values
    return found, np.where(found, mn[pos], -2)


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
    # by member entities: the old parent's match in NEW (-1 stays -1; an unmatched parent changed)
    mapped_parent = op if matching == BY_ID else np.where(op < 0, -1, _matched(mo, mn, op)[1])
    parent = mapped_parent != new.parent[inn]
    changed = members | level | report | parent
    # reports outside both trees (a report for community -1, orphans) can only meet by number: they
    # count as the same in a selection, never as an added, removed or changed community
    orphans = np.intersect1d(old.orphan_reports, new.orphan_reports)
    mo_sel, mn_sel = np.concatenate([mo, orphans]), np.concatenate([mn, orphans])
    order = np.argsort(mo_sel, kind="stable")
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
    return changes, mo_sel[order], mn_sel[order]


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
    old_levels = [r.community_level for r in old_report.levels]
    new_levels = [r.community_level for r in new_report.levels]
    selections = []
    # a level past one index's deepest: that index's None row (:func:`stands_for`)
    for n in sorted(set(old_levels + new_levels), key=lambda n: (n is None, -1 if n is None else n)):
        ro, rn = old_report.level(stands_for(n, old_levels)), new_report.level(stands_for(n, new_levels))
        for b in DIFF_BEHAVIOURS:
            old_sel = None if ro is None else ro.selected.get(b)
            new_sel = None if rn is None else rn.selected.get(b)
            if old_sel is None and new_sel is None:
                continue
            so, sn = (
                np.zeros(0, np.int64) if x is None else np.unique(np.asarray(x.community_ids, dtype=np.int64))
                for x in (old_sel, new_sel)
            )
            found, mapped = _matched(mo, mn, so)
            kept_old = np.zeros(len(so), bool)
            kept_old[found] = np.isin(mapped[found], sn)
            in_old = np.isin(sn, mapped[found])
            selections.append(
                SelectionDiff(
                    n,
                    b,
                    None if old_sel is None else side_stats(old_sel, oc),
                    None if new_sel is None else side_stats(new_sel, nc),
                    CommunityIds(sn[~in_old], own=True),
                    CommunityIds(so[~kept_old], own=True),
                    CommunityIds(sn[in_old & np.isin(sn, changed_new)], own=True),
                )
            )
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
