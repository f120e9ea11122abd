"""``--price-in/--price-out`` (USD per million tokens): one global-search query's estimated cost per
community_level and graphrag line. Input: the map calls' report context (``Costs.tokens``), not the map
prompt, the query or the reduce input. Output: an upper bound, :data:`MAP_OUTPUT_TOKENS` per map call and
:data:`REDUCE_OUTPUT_TOKENS` for the reduce call (graphrag 1.2.0 ``config/defaults.py`` token caps; 2.7.2/3.3.0
``query/structured_search/global_search/search.py`` ask for as many *words*: approximate). Dynamic
selection's rating calls are not included."""

from __future__ import annotations

MAP_OUTPUT_TOKENS = 1000
REDUCE_OUTPUT_TOKENS = 2000
ASSUMPTION_IN = (
    "input = the map calls' report context tokens (not the map prompt, the query or the reduce input)"
)
ASSUMPTION_OUT = (
    f"output = at most {MAP_OUTPUT_TOKENS:,} tokens per map call and {REDUCE_OUTPUT_TOKENS:,} for the "
    "reduce call (graphrag 1.x's caps; 2.x/3.x ask for at most as many words)"
)
ASSUMPTION_REST = "the rating calls of dynamic selection are not included"
ASSUMPTION = "; ".join((ASSUMPTION_IN, ASSUMPTION_OUT, ASSUMPTION_REST))
#: the graphrag lines priced (the level_only view is no graphrag behaviour)
PRICED = ("v2", "v1")


def priced(options) -> bool:
    return getattr(options, "price_in", None) is not None or getattr(options, "price_out", None) is not None


def query_cost(cost, price_in: float | None, price_out: float | None) -> dict | None:
    """One query's estimate for one selection's ``Costs`` (None without costs)."""
    if cost is None:
        return None
    out_tokens = cost.map_calls * MAP_OUTPUT_TOKENS + cost.reduce_calls * REDUCE_OUTPUT_TOKENS
    usd_in = None if price_in is None else round(cost.tokens * price_in / 1e6, 8)
    usd_out = None if price_out is None else round(out_tokens * price_out / 1e6, 8)
    total = round(sum(v for v in (usd_in, usd_out) if v is not None), 8)
    return {
        "input_tokens": int(cost.tokens),
        "output_tokens_max": int(out_tokens),
        "usd_in": usd_in,
        "usd_out_max": usd_out,
        "usd": total,
        "tokens_exact": bool(cost.tokens_exact),
    }


def money(report) -> dict | None:
    """The ``money`` section of the JSON document (None when no price was given)."""
    opts = report.options
    if not priced(opts):
        return None
    pi, po = opts.price_in, opts.price_out
    levels = [
        {"community_level": r.community_level}
        | {b: query_cost(getattr(r.selected.get(b), "cost", None), pi, po) for b in PRICED}
        for r in report.levels
    ]
    return {
        "price_in_per_million": opts.price_in,
        "price_out_per_million": opts.price_out,
        "currency": "USD",
        "assumption": ASSUMPTION,
        "levels": levels,
    }


def usd(value: float | None) -> str:
    """``$0.0123``: four significant decimals below a dollar, cents above."""
    if value is None:
        return "—"
    if value >= 1:
        return f"${value:,.2f}"
    return f"${value:.4f}" if value >= 0.0001 or value == 0 else "<$0.0001"
