"""Where the costs' two knobs came from, in words every human format shares: ``o200k_base
(settings.yaml encoding_model)``, ``8,000 (option)``, or the bare value for graphrag's default
(AuditOptions.costs_from)."""

from __future__ import annotations


def cost_source(opts, knob: str) -> str:
    """``option``, ``settings.yaml global_search.max_tokens``, or '' (graphrag's default)."""
    where = dict(getattr(opts, "costs_from", ()) or ()).get(knob, "graphrag default")
    return "" if where == "graphrag default" else where


def with_source(value: str, opts, knob: str, clean=str) -> str:
    """``value`` followed by `` (where it came from)`` (``clean`` escapes that part for the medium)."""
    where = cost_source(opts, knob)
    return f"{value} ({clean(where)})" if where else value


#: trees with more levels list the estimate at --level and None only
MONEY_ALL_LEVELS = 16


def money_lines(report, hide=frozenset()) -> list[str]:
    """``--price-in/--price-out``: the estimated cost of one query per community_level and graphrag
    line, as plain lines (results/money.py says what is counted); [] without prices or costs.
    ``hide``: the graphrag lines left out (``--hide-hypothetical``)."""
    from graphrag_audit.render.numbers import level_label
    from graphrag_audit.results.money import ASSUMPTION_IN, ASSUMPTION_OUT, ASSUMPTION_REST, money, usd

    m = money(report)
    if m is None or not report.options.costs:
        return []
    rates = []
    if m["price_in_per_million"] is not None:
        rates.append(f"${m['price_in_per_million']:g}/M input")
    if m["price_out_per_million"] is not None:
        rates.append(f"${m['price_out_per_million']:g}/M output")
    levels = m["levels"]
    if len(levels) > MONEY_ALL_LEVELS:
        levels = [e for e in levels if e["community_level"] in (report.options.level, None)]
    lines = [f"Estimated cost of one query (USD; {', '.join(rates)}):"]
    approx = False
    for e in levels:
        parts = []
        for b, label in (("v2", ">=2.0"), ("v1", "<2.0")):
            c = e.get(b)
            if c is None or b in hide:
                continue
            approx = approx or not c["tokens_exact"]
            parts.append(f"{label} {usd(c['usd'])}")
        if parts:
            lines.append(f"  N={level_label(e['community_level'])}: " + ", ".join(parts))
    counted = (
        ([ASSUMPTION_IN] if m["price_in_per_million"] is not None else [])
        + ([ASSUMPTION_OUT] if m["price_out_per_million"] is not None else [])
        + [ASSUMPTION_REST]
    )
    lines.append(
        "Counted: "
        + "; ".join(counted)
        + "."
        + (" Token counts are estimates (--tokenizer estimate)." if approx else "")
    )
    return lines
