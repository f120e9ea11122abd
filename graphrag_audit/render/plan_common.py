"""Facts and cells the plan renderers share (plain strings; each renderer escapes paths and notes)."""

from __future__ import annotations

from graphrag_audit.render.cells import BEHAVIOUR_WHO, MISSING, count, hypothetical_rule_note
from graphrag_audit.render.cells import level_label as lvl
from graphrag_audit.render.cells import number as n

STATUS_LABEL = {
    "finest": "at finest",
    "budget": "budget-limited",
    "blocked": "blocked",
    "uncovered": "left out (--allow-uncovered)",
}
SUBTREE_ROWS = 30  # subtrees listed in text/markdown before "… N more (JSON lists all)"
COMPARISON_HEADERS = [
    "N",
    "sends",
    "reports",
    "tokens",
    "map calls",
    "entities",
    "at finest",
    "ancestors",
    "fits",
]
DYNAMIC_HEADERS = ["cap N", "candidate pool", "level-0 reports", "rating calls", "note"]


def levels_text(by_level: dict) -> str:
    return " · ".join(f"L{k}: {v}" for k, v in by_level.items()) or "—"


def ids_text(ids, limit: int = 40) -> str:
    ids = list(ids)
    s = ", ".join(str(i) for i in ids[:limit])
    return s + (f", … ({len(ids):,} in all; the JSON lists them all)" if len(ids) > limit else "")


def settings_line(report) -> str:
    s = report.settings
    parts = [f"budget: {report.plan.budget.describe()}", f"objective {report.plan.objective}"]
    if report.plan.allow_uncovered:
        parts.append("uncovered entities allowed")
    if s.get("tokenizer"):
        parts.append(f"tokenizer {s['tokenizer']}" + ("" if s.get("tokens_exact", True) else " (estimate)"))
    if s.get("max_context_tokens"):
        parts.append(f"{s['max_context_tokens']:,} tokens per map batch")
    return " · ".join(parts)


def plan_headline(plan) -> str:
    cost = ""
    if plan.cost is not None:
        cost = f" · {plan.cost.tokens:,} tokens · {plan.cost.map_calls:,} map calls + {1 if plan.cost.map_calls else 0} reduce"
    if not plan.report_count:
        verdict = "NO REPORTS to send" + ("" if plan.fits else "; DOES NOT FIT the budget")
    else:
        verdict = "fits the budget" if plan.fits else "DOES NOT FIT the budget"
    return f"{plan.report_count:,} reports ({levels_text(plan.levels)}){cost} · {verdict}"


def entity_line(plan) -> str:
    cov = plan.coverage
    line = (
        f"{plan.entities_represented:,} of {plan.entities_clustered:,} clustered entities represented "
        f"exactly once; {plan.entities_at_finest:,} ({'—' if cov is None else f'{cov:.0%}'}) at their "
        f"finest available level"
    )
    if plan.entities_uncoverable:
        line += f"; {plan.entities_uncoverable:,} uncoverable (no report can carry them)"
    if plan.entities_left_uncovered:
        line += (
            f"; {plan.entities_left_uncovered:,} coverable entities left uncovered (--allow-uncovered: "
            f"{len(plan.uncovered_roots):,} report-less roots kept out)"
        )
    if plan.entities_duplicated:
        line += f"; {plan.entities_duplicated:,} held twice or more"
    return line


def check_line(plan) -> str:
    """Each budget: its value, the plan's value, holds or not."""
    parts = []
    for c in plan.checks:
        actual, value = (
            MISSING if v is None else f"{v:.1%}" if c["kind"] == "coverage" else f"{v:,}"
            for v in (c["actual"], c["value"])
        )
        verdict = MISSING if c["holds"] is None else ("holds" if c["holds"] else "FAILS")
        op = ">=" if c["kind"] == "coverage" else "<="
        parts.append(f"{c['kind'].replace('_', ' ')} {actual} {op} {value}: {verdict}")
    return "budgets: " + "; ".join(parts)


def why_lines(plan) -> list[str]:
    return [f"why: {x}" for x in plan.why_not]


def granularity_line(plan, report) -> str:
    if not plan.communities:
        return "no report can be sent"
    best2, best1 = (report.best_level(b) for b in ("v2", "v1"))
    epr = plan.entities_per_report
    return "; ".join(
        [
            f"every entity at level >= min({plan.complete_level}, its finest available level)",
            f"deepest level used {lvl(plan.deepest_level)}",
            "best whole level frontier that fits: "
            + ("none" if plan.baseline_level is None else f"N={plan.baseline_level}"),
            f"best single community_level that fits: >=2.0 {'none' if best2 is None else lvl(best2)}, "
            f"<2.0 {'none' if best1 is None else lvl(best1)}",
            f"entities per report {n(epr['min'])}·{n(epr['median'])}·{n(epr['max'])} (min·median·max)",
        ]
    )


def _comparison_row(n_cell, sends, reports, cost, entities, at_finest, ancestors, fits) -> list[str]:
    tokens, calls = (MISSING, MISSING) if cost is None else (n(cost.tokens), n(cost.map_calls))
    fit = MISSING if fits is None else ("fits" if fits else "over")
    return [n_cell, sends, reports, tokens, calls, n(entities), n(at_finest), ancestors, fit]


def comparison_rows(report) -> list[list[str]]:
    """One row per (N, behaviour); ``hyp.``: not what that graphrag sends (graphrag.compat)."""
    return [
        _comparison_row(
            lvl(o.community_level),
            BEHAVIOUR_WHO[o.behaviour],
            ("" if o.status == "exact" else "hyp. ") + n(o.reports),
            o.cost,
            o.entities_covered,
            o.entities_at_finest,
            n(o.ancestors_sent),
            o.fits,
        )
        for o in report.options
    ]


def comparison_note(report) -> str:
    """The sentence on ``hyp.`` under the comparison table ("" without one)."""
    who = [
        w
        for b, w in (("v2", ">= 2.0"), ("v1", "< 2.0"))
        if any(o.behaviour == b and o.status != "exact" for o in report.options)
    ]
    return hypothetical_rule_note(who) + ("." if who else "")


def plan_row(plan) -> list[str]:
    return _comparison_row(
        "plan",
        "this plan",
        n(plan.report_count),
        plan.cost,
        plan.entities_represented,
        plan.entities_at_finest,
        "0",
        plan.fits,
    )


def subtree_rows(plan) -> list[list[str]]:
    return [
        [
            str(s.root),
            n(s.entities),
            n(s.reports),
            levels_text(s.levels),
            lvl(s.finest_available),
            "yes" if s.coarser_than_target else "",
            STATUS_LABEL[s.status],
        ]
        for s in plan.subtrees
    ]


def subtree_headers(plan) -> list[str]:
    coarser = f"coarser than L{lvl(plan.deepest_level)}"
    return ["root", "entities", "reports", "plan levels", "finest available", coarser, "status"]


def disclosure_lines(plan) -> list[str]:
    """Which subtrees stop short of the plan's deepest level, and why."""
    deepest = lvl(plan.deepest_level)

    def roots(subtrees) -> str:
        return f"(roots {ids_text([s.root for s in subtrees], 20)})."

    out = []
    done = [s for s in plan.subtrees if s.coarser_than_target and s.status == "finest"]
    if done:
        entities = count(sum(s.entities for s in done), "entity")
        are = "is at its" if len(done) == 1 else "are at their"
        out.append(
            f"{len(done):,} of {count(len(plan.subtrees), 'subtree')} ({entities}) {are} finest available report, "
            f"which is coarser than the plan's deepest level {deepest} {roots(done)}"
        )
    short = [s for s in plan.subtrees if s.coarser_than_target and s.status != "finest"]
    if short:
        its, are = ("its", "is") if len(short) == 1 else ("their", "are")
        out.append(
            f"{count(len(short), 'more subtree')} cannot reach level {deepest} at all ({its} finest available "
            f"report is coarser) and {are} not yet at that report {roots(short)}"
        )
    budget = [s for s in plan.subtrees if s.status == "budget"]
    if budget:
        out.append(f"{count(len(budget), 'subtree')} could go finer with a larger budget {roots(budget)}")
    out += [
        f"community {b['community']} (level {b['level']}, subtree {s.root}) is kept whole: {b['reason']}."
        for s in plan.subtrees
        for b in s.blocked
    ]
    return out or ["every subtree is at its finest available report."]


def dynamic_rows(report) -> list[list[str]]:
    return [
        [
            lvl(d["community_level"]),
            n(d["candidates"]),
            n(d["level0_reports"]),
            f"{d['rating_calls']['min']:,}–{d['rating_calls']['max']:,}",
            "KeyError (no level-0 report)" if d["raises_keyerror"] else "",
        ]
        for d in report.dynamic
    ]


def _names(names: list[str], shown: int = 12) -> str:
    if not names:
        return "none"
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more:,} more (the JSON lists them)" if more > 0 else "")


def handoff_lines(report) -> list[str]:
    """The graphrag commands that use the plan (after --write) or how to get there."""
    h = report.handoff
    if not h:
        return [
            "Hand it to graphrag: add --write OUT_DIR to write an index directory whose community_reports "
            "and communities hold exactly this plan (graphrag >= 2.0 parquet or CSV, graphrag 1.x "
            "create_final_*)."
        ]
    tables, lv = h["tables"], h["max_level"]  # (handoff.WriteResult.to_dict())
    size = f"; {h['linked_bytes']:,} bytes" if h["linked_bytes"] else ""
    lines = [
        f"Wrote {h['reports']:,} reports and {h['communities']:,} communities to {h['out_dir']} "
        f"(written: {', '.join(tables.values()) or 'none'}; copied unchanged: {', '.join(h['copied']) or 'none'}).",
        f"Linked to the source, not copied (global search does not read them{size}): {_names(h['linked'])}.",
        f"Left out: {_names(h['left_out'])}.",
    ]
    lines += [
        f"graphrag {c['graphrag']} CLI:  {c['command']}   (any --community-level >= {lv})"
        + (f"; {c['note']}" if c.get("note") else "")
        for c in h["commands"]
    ]
    nodes = f"nodes=<its {tables['nodes']}>, " if "nodes" in tables else ""
    lines.append(
        f"Python API:    graphrag.api.global_search(..., {nodes}communities=<its {tables['communities']}>, "
        f"community_reports=<its {tables['reports']}>, community_level=None, "
        "dynamic_community_selection=False, ...)"
    )
    lines += [f"note: {x}" for x in h["notes"]]
    return lines + ([f"read back: {h['verified']}"] if h.get("verified") else [])
