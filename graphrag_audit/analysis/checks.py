"""Findings that depend on the level you query with (CI mode thresholds)."""

from __future__ import annotations

from collections.abc import Sequence

from graphrag_audit.findings import Finding, counted, finding, preview
from graphrag_audit.graphrag.dynamic import BROKEN_LINES
from graphrag_audit.results.audit import AuditOptions, DepthAnalysis, LevelResult


def _exact(stats) -> bool:
    return stats.outcome is None or stats.outcome.exact


def _at(levels: Sequence[LevelResult], level: int) -> LevelResult | None:
    return next((r for r in levels if r.community_level == level), None)


def level_findings(
    th: AuditOptions,
    depth: DepthAnalysis,
    levels: Sequence[LevelResult],
    clustered: tuple[int, int | None],
    has_reports: bool,
) -> list[Finding]:
    """The findings at ``th.level`` under the thresholds ``th.max_unreachable`` (share of roots or
    entities stuck), ``th.max_inflation`` (v2 / v1 reports) and ``th.min_coverage``."""
    level = th.level
    out: list[Finding] = []
    if depth.max_level < 0:
        return out
    if has_reports:  # without a reports table, no-reports-table says it
        out += coverage_findings(level, depth.max_level, levels, th.min_coverage, clustered)
    if level > depth.max_level:
        out.append(
            finding(
                "level-beyond-max",
                f"community_level {level} is deeper than the tree's deepest "
                f"level {depth.max_level}: it selects the same reports as no level filter",
                level=level,
                max_level=depth.max_level,
            )
        )
    else:
        row = depth.per_level[level]
        root_share = row.roots_stuck / row.roots_total if row.roots_total else 0.0
        ent_share = row.entities_stuck / row.entities_total if row.entities_total else 0.0
        if max(root_share, ent_share) > th.max_unreachable:
            out.append(
                finding(
                    "depth-mismatch",
                    f"at community_level {level}, {row.roots_stuck:,}/{row.roots_total:,} roots "
                    f"({root_share:.0%}) and {row.entities_stuck:,}/{row.entities_total:,} entities "
                    f"({ent_share:.0%}) cannot reach level {level} (threshold {th.max_unreachable:.0%})",
                    sorted(r.community for r in depth.roots if r.deepest_level < level),
                    level=level,
                    roots_stuck=row.roots_stuck,
                    roots_total=row.roots_total,
                    entities_stuck=row.entities_stuck,
                    entities_total=row.entities_total,
                    share_roots=round(root_share, 4),
                    share_entities=round(ent_share, 4),
                    threshold=th.max_unreachable,
                )
            )
    at = _at(levels, min(level, depth.max_level))
    if at is not None:
        v2, v1 = at.selected["v2"], at.selected["v1"]
        if v1.count and v2.count / v1.count > th.max_inflation:
            calls = ""
            if v2.cost and v1.cost:
                calls = f", {v2.cost.map_calls:,} vs {v1.cost.map_calls:,} map call{'' if v1.cost.map_calls == 1 else 's'}"
            # where graphrag does not return a selection as such (compat.py), say whose rule it is
            s2 = "graphrag >= 2.0 sends" if _exact(v2) else "the graphrag >= 2.0 rule selects"
            s1 = "under < 2.0" if _exact(v1) else "under the < 2.0 rule"
            hyp = "" if _exact(v2) else " (hypothetical: graphrag >= 2.0 cannot read this index as written)"
            out.append(
                finding(
                    "v2-inflation",
                    f"at community_level {at.community_level}, {s2} {v2.count:,} reports vs "
                    f"{v1.count:,} {s1} ({v2.count / v1.count:.2f}x{calls}); "
                    + counted(
                        v2.ancestors_sent,
                        "is an ancestor sent with its descendants",
                        "are ancestors sent with their descendants",
                    )
                    + hyp,
                    v2.extra_vs_v1.community_ids if v2.extra_vs_v1 is not None else [],
                    level=at.community_level,
                    v2_reports=v2.count,
                    v1_reports=v1.count,
                    ancestors_sent=v2.ancestors_sent,
                    ratio=round(v2.count / v1.count, 4),
                    threshold=th.max_inflation,
                    v2_map_calls=v2.cost.map_calls if v2.cost else None,
                    v1_map_calls=v1.cost.map_calls if v1.cost else None,
                )
            )
    if depth.single_child:
        out.append(
            finding(
                "single-child-chain",
                f"{counted(len(depth.single_child), 'community has', 'communities have')} exactly one child: "
                f"{preview(depth.single_child)}",
                depth.single_child,
                count=len(depth.single_child),
            )
        )
    for lv in depth.duplicate_levels:
        out.append(
            finding("duplicate-level", f"level {lv} repeats level {lv - 1}'s partition exactly", level=lv)
        )
    return out


def coverage_findings(
    level: int,
    max_level: int,
    levels: Sequence[LevelResult],
    min_coverage: float,
    clustered: tuple[int, int | None],
) -> list[Finding]:
    """low-coverage: at ``level`` (capped at the deepest) the exact behaviours' reports (else graphrag
    >= 2.0's rule's) cover less than ``min_coverage`` of the clustered entities."""
    total, tu_total = clustered
    at = _at(levels, min(level, max_level))
    if at is None or not total:
        return []
    checked = [b for b in ("v2", "v1") if _exact(at.selected[b])] or ["v2"]
    low = [b for b in checked if at.selected[b].entities_covered / total < min_coverage]
    if not low:
        return []
    who = {"v2": "graphrag >= 2.0", "v1": "graphrag < 2.0"}
    parts = []
    for b in low:
        s = at.selected[b]
        verb = "sends" if _exact(s) else "would send (hypothetical)"
        tu = (
            f", {s.text_units_covered:,} of {tu_total:,} text units"
            if tu_total and s.text_units_covered is not None
            else ""
        )
        parts.append(
            f"the {s.count:,} reports {who[b]} {verb} cover {s.entities_covered:,} of {total:,} clustered "
            f"entities ({s.entities_covered / total:.0%}{tu})"
        )
    s = at.selected[low[0]]
    return [
        finding(
            "low-coverage",
            f"at community_level {at.community_level}, "
            + "; ".join(parts)
            + f" (threshold {min_coverage:.0%}): "
            "the rest reach global search through no report",
            level=at.community_level,
            behaviours=low,
            threshold=min_coverage,
            clustered_entities=total,
            entities_covered={b: at.selected[b].entities_covered for b in low},
            share_entities={b: round(at.selected[b].entities_covered / total, 4) for b in low},
            clustered_text_units=tu_total,
            text_units_covered={b: at.selected[b].text_units_covered for b in low},
        )
    ]


def dynamic_findings(level: int, max_level: int, levels: Sequence[LevelResult], already=()) -> list[Finding]:
    """Dynamic selection's findings at the queried level, from each graphrag line's simulation
    (``selected["dynamic"].by_version``); ``already``: rules found before (integrity's)."""
    out: list[Finding] = []
    at = _at(levels, min(level, max(max_level, 0)))
    bv = None if at is None else at.selected["dynamic"].by_version
    if at is None or bv is None or not bv.versions:
        return out
    vs = bv.versions
    failing = [f for f, v in vs.items() if v.error == "KeyError: '0'"]
    if failing and "dynamic-no-level-0-report" not in already:
        out.append(
            finding(
                "dynamic-no-level-0-report",
                "no level-0 community has a report: dynamic community "
                f"selection (graphrag {', '.join(vs[f].graphrag for f in failing)}) raises "
                "KeyError: '0' before rating anything",
                families=failing,
            )
        )
    other = [f for f, v in vs.items() if v.error is not None and v.error != "KeyError: '0'"]
    if other:
        out.append(
            finding(
                "dynamic-fails",
                "; ".join(
                    f"graphrag {vs[f].graphrag}'s dynamic community selection "
                    f"fails on this index: {vs[f].error}"
                    for f in other
                ),
                families=other,
                errors=[vs[f].error for f in other],
            )
        )
    if "1.x" in vs:  # a create_final_* layout: the releases before 1.1.1 read it too
        out.append(
            finding(
                "dynamic-old-graphrag",
                "a create_final_* index: if you query it with graphrag before "
                "1.1.1, its dynamic selection is broken (0.5.x rates nothing, 0.9.0-1.1.0 never descend "
                "below level 0); the numbers above are 1.1.1-1.2.x's",
                lines=[line for line, _why in BROKEN_LINES],
            )
        )
    v2 = vs.get("2.x")
    if v2 is not None and v2.error is None and v2.cut_off_ids:
        assert v2.all_relevant is not None and v2.none_relevant is not None  # set when error is None
        n_cand = len(v2.start_ids) + len(v2.cut_off_ids)
        out.append(
            finding(
                "dynamic-no-descent",
                f"at community_level {at.community_level}, graphrag 2.0.0-2.7.2's dynamic selection never descends "
                f"(microsoft/graphrag#2004): with every report relevant it rates only the {counted(len(v2.start_ids), 'level-0 report', 'level-0 reports')} "
                f"({counted(v2.all_relevant.rating_calls, 'rating call', 'rating calls')}); "
                f"{counted(len(v2.cut_off_ids), 'deeper candidate is', 'deeper candidates are')} "
                f"rated only when nothing is relevant ({counted(v2.none_relevant.rating_calls, 'rating call', 'rating calls')})",
                level=at.community_level,
                start=len(v2.start_ids),
                below_level_0=len(v2.cut_off_ids),
                all_relevant_calls=v2.all_relevant.rating_calls,
                none_relevant_calls=v2.none_relevant.rating_calls,
                candidates=n_cand,
            )
        )
    for f, v in vs.items():
        if f == "2.x" or v.error is not None or not v.cut_off_ids:
            continue
        assert v.all_relevant is not None  # set when error is None
        reached = sum(v.all_relevant.waves)
        why = (
            "the -1 report, which is never rated"
            if v.cut_off_ids == (-1,)
            else "subtrees under communities without a report or without a parent"
            + (", and the -1 report" if -1 in v.cut_off_ids else "")
        )
        out.append(
            finding(
                "dynamic-unreachable",
                f"at community_level {at.community_level}, graphrag {v.graphrag}'s dynamic selection never reaches "
                f"{counted(len(v.cut_off_ids), 'candidate report', 'candidate reports')} even when every report is relevant: {why} "
                f"({preview(v.cut_off_ids)})",
                v.cut_off_ids,
                level=at.community_level,
                family=f,
                cut_off=len(v.cut_off_ids),
                rated_when_all_relevant=reached,
            )
        )
    return out
